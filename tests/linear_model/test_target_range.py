"""PrivateLinearRegression without target_bounds: the target's range is
released (a histogram of its binary exponents) inside the fit's budget."""

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression

from skdp import BudgetAccountant, NoiseDominatedWarning, PrivateLinearRegression
from skdp.linear_model._scaling import _ZERO_BIN, N_BINS, exponent_histogram
from skdp.linear_model._target_range import (
    target_range_from_histogram,
    xy_target_histogram,
)
from skdp.model_selection import fit_cost


def _lab():
    return BudgetAccountant(epsilon=1e12, delta=0.5)


def test_no_target_bounds_converges_to_least_squares():
    # unscaled diabetes: it needed target_bounds before (a ValueError)
    X, y = load_diabetes(return_X_y=True, scaled=False)
    reference = LinearRegression().fit(X, y).score(X, y)
    reg = PrivateLinearRegression(1e6, accountant=_lab(), random_state=0).fit(X, y)
    assert reg.score(X, y) == pytest.approx(reference, abs=0.01)


def test_the_range_is_part_of_the_exact_cost():
    X, y = load_diabetes(return_X_y=True, scaled=False)
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    reg = PrivateLinearRegression(0.5, accountant=acc, random_state=0)
    before = fit_cost(reg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        reg.fit(X, y)
    assert acc.total() == (before.epsilon, before.delta) == (0.5, 1e-6)
    assert "target range" in acc.entries[0].label


def test_noiseless_range_is_the_hull_of_the_occupied_binades():
    y = np.array([-3.0, 0.0, 0.7, 5.0, 100.0])  # binades -2..-1 (neg), 2**6
    counts = xy_target_histogram(None, y).astype(float)
    low, high, resolved = target_range_from_histogram(counts, noise_sd=0.0)
    assert resolved and (low, high) == (-4.0, 128.0)
    assert low <= y.min() and y.max() <= high and high <= 2 * np.abs(y).max()


def test_noiseless_range_covers_targets_beyond_the_clamped_exponents():
    # magnitudes above 2**64 share the last bin; its edge is the largest
    # double, not 2**64 (which cut 5e40 down to 1.8e19)
    y = np.array([-1e30, 2.0, 5e40])
    counts = xy_target_histogram(None, y).astype(float)
    low, high, resolved = target_range_from_histogram(counts, noise_sd=0.0)
    assert resolved and low <= y.min() and y.max() <= high


def test_a_range_below_the_noise_is_said_and_falls_back_publicly():
    counts = np.zeros((1, N_BINS))
    counts[0, _ZERO_BIN + 70] = 5.0  # one small bin under 7 deviations of 1
    assert target_range_from_histogram(counts, noise_sd=1.0) == (-1.0, 1.0, False)
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = X @ [1.0, 2.0]
    reg = PrivateLinearRegression(0.01, accountant=_lab(), random_state=0)
    with pytest.warns(NoiseDominatedWarning, match="range of the target"):
        reg.fit(X, y)


def test_histogram_sensitivity_is_one_row_one_count():
    rng = np.random.default_rng(1)
    for _ in range(50):
        y = rng.standard_cauchy(size=20) * 10.0 ** rng.integers(-30, 30)
        y[rng.random(20) < 0.2] = 0.0
        full = exponent_histogram(y[:, None])
        for i in range(y.size):
            less = exponent_histogram(np.delete(y, i)[:, None])
            assert math.isclose(np.sqrt(((full - less) ** 2).sum()), 1.0)
