"""Adversarial review of the stated-``data_norm`` warning of
PrivateLinearRegression (features whose released Gram diagonal is below the
noise floor): each test is a reproducer of a finding (it failed before its
fix) or an attack that held (named so in its comment)."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _floor_warnings import floor_warnings

from skdp import BudgetAccountant, PrivateLinearRegression
from skdp.linear_model import _base


def _floor_messages(X, y, **params):
    model = PrivateLinearRegression(
        target_bounds=(-20, 20),
        accountant=BudgetAccountant(1e12, 0.5),
        random_state=0,
        **params,
    )
    return floor_warnings(model, X, y)


def _standardized(n=2000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, X @ np.arange(1.0, d + 1) + rng.standard_normal(n)


def test_a_ridge_penalty_is_not_reported_as_features_under_the_noise():
    # finding: without an intercept the solver's floor holds the smallest
    # penalty (alpha in the model's units), and the fit compared the
    # released diagonal with it: alpha=1e5 on standardized features at
    # epsilon=100 said "every feature is below the noise floor ... leave
    # data_norm=None ... Or raise epsilon", though the same release with
    # alpha=0 has every feature far above the noise (the cause is alpha,
    # which neither fix touches)
    X, y = _standardized()
    params = dict(epsilon=100.0, data_norm=4 * np.sqrt(5), fit_intercept=False)
    assert _floor_messages(X, y, **params) == []  # the same release, alpha=0
    assert _floor_messages(X, y, alpha=1e5, **params) == []


def test_the_warning_reads_the_released_matrix_only(monkeypatch):
    # held: two data sets (different rows, sizes and scales) whose releases
    # are the same numbers warn alike: nothing but the released Gram matrix
    # and public parameters decides
    size = 4  # three features and the intercept
    matrix = np.diag([5e4, 1e-3, 3e4, 2e3])

    def fixed_gram(gram, size_, noise, source):
        return matrix.copy()

    def fixed_sum(total, noise, source):
        return np.array([1e3, 1.0, -2e3, 5e2])

    monkeypatch.setattr(_base, "noisy_gram", fixed_gram)
    monkeypatch.setattr(_base, "release_sum", fixed_sum)
    rng = np.random.default_rng(0)
    small = rng.uniform(0, 1, size=(40, size - 1))
    large = rng.uniform(0, 100, size=(3000, size - 1)) * [1, 1e-6, 1]
    params = dict(epsilon=10.0, data_norm=200.0)
    first = _floor_messages(small, small.sum(axis=1), **params)
    second = _floor_messages(large, large.sum(axis=1) / 100, **params)
    assert len(first) == 1 and "feature(s) 1 is below" in first[0]
    assert first == second
