"""Adversarial review of the forest's post-processing (leaf shrinkage with
``noise_std / n_estimators`` rows, trees weighted by the Gini decrease of
their released counts): each test is a reproducer of a finding (it failed
before its fix) or an attack that held (named so in its comment)."""

import numpy as np

from skdp import BudgetAccountant
from skdp.ensemble import PrivateRandomForestClassifier
from skdp.tree import _fit as tree_fit
from skdp.tree._leaf_counts import tree_weights


def _forest(**params):
    base = dict(
        n_estimators=4,
        bounds=(0, 1),
        classes=[0, 1, 2],
        max_depth=2,
        random_state=0,
        accountant=BudgetAccountant(1e9),
    )
    return PrivateRandomForestClassifier(**{**base, **params})


def _rows(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, 2))
    return X, (3 * X[:, 0]).astype(int)


def test_weights_and_probabilities_depend_on_the_released_counts_only(monkeypatch):
    # held: two data sets of different sizes and labels whose releases are
    # the same numbers get the same weights and probabilities, so nothing
    # after the charge reads the rows, their number or the exact counts
    released = np.random.default_rng(1).normal(5.0, 4.0, size=(4, 4, 3))

    def fixed_release(counts, *args, **kwargs):
        return released.copy(), 1.5

    monkeypatch.setattr(tree_fit, "release_leaf_counts", fixed_release)
    X_test = np.random.default_rng(2).uniform(0, 1, size=(50, 2))
    small = _forest().fit(*_rows(30, 3))
    large = _forest().fit(*_rows(900, 4), sample_weight=np.full(900, 0.5))
    assert small.tree_weights_.std() > 0.01  # the rule is not the uniform one
    np.testing.assert_array_equal(small.tree_weights_, large.tree_weights_)
    np.testing.assert_array_equal(
        small.predict_proba(X_test), large.predict_proba(X_test)
    )


def test_not_a_number_and_minus_infinity_count_as_zero():
    # held: a count that is not a number, or -inf, weighs as a count of 0
    # (the release never gives one; the rule must not turn it into NaN)
    counts = np.random.default_rng(0).uniform(-1, 5, size=(3, 4, 2))
    odd = counts.copy()
    odd[0, 1, 0], odd[2, 3, 1] = np.nan, -np.inf
    zeroed = counts.copy()
    zeroed[0, 1, 0], zeroed[2, 3, 1] = 0.0, 0.0
    with np.errstate(all="raise"):
        np.testing.assert_array_equal(tree_weights(odd), tree_weights(zeroed))
