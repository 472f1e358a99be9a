"""An audit of the random trees' leaf counts with groups as the privacy
unit, and its twin that skips the contribution bounding (every row of the
added group kept, the noise still calibrated to k rows)."""

import numpy as np

from skdp import BudgetAccountant, PrivateDecisionTreeClassifier
from skdp.audit import assert_dp, audit_mechanism
from skdp.mechanisms import check_random_source
from skdp.tree import _fit
from skdp.tree._leaf_counts import release_leaf_counts
from skdp.tree._random_tree import draw_random_splits
from skdp.utils._privacy_unit import PrivacyUnit

# Neighbours: D0, three rows of class 0 (groups 0, 1, 2); D1, D0 plus one
# group of 3k rows of class 1. A tree of depth 0 has one leaf: the group
# moves its class-1 count by k (bounded), at Laplace scale k / epsilon.
# Without the bounding it moves by 3k at the same noise: epsilon 3.
EPS, K = 1.0, 2
AUDIT = {"n_samples": 1_000, "n_pilot": 250, "random_state": 0}
D0 = (np.zeros((3, 1)), np.zeros(3, dtype=int), np.arange(3))
D1 = (
    np.zeros((3 + 3 * K, 1)),
    np.append(D0[1], [1] * 3 * K),
    np.append(D0[2], [9] * 3 * K),
)
BOUNDS = (np.array([-1.0]), np.array([1.0]))


def _released_counts(data, seed):
    # PrivateDecisionTreeClassifier.fit's steps after the charge (public
    # classes and bounds: no draw before the bounding), depth 0
    X, codes, groups = data
    source = check_random_source(seed)
    X, codes, groups = _fit._bounded(PrivacyUnit(groups, K), source, X, codes)
    features, thresholds = draw_random_splits(*BOUNDS, 0, source, 1)
    counts, per_row = _fit.forest_counts(
        X, codes, 2, features, thresholds, "all", source, groups
    )
    noisy, _ = release_leaf_counts(counts, per_row, EPS, 0.0, source, K)
    return noisy.ravel()


def test_the_steps_are_the_estimators():
    tree = PrivateDecisionTreeClassifier(
        EPS, max_depth=0, bounds=BOUNDS, classes=[0, 1], max_rows_per_group=K
    )
    for seed in range(3):
        tree.set_params(accountant=BudgetAccountant(), random_state=seed)
        tree.fit(D1[0], D1[1], groups=D1[2])
        np.testing.assert_array_equal(
            tree.leaf_counts_.ravel(), _released_counts(D1, seed)
        )


def _class_one(data, seed):
    return float(_released_counts(data, seed)[1])


def test_audit_of_the_grouped_leaf_counts_passes():
    assert_dp(_class_one, D0, D1, EPS, **AUDIT)


def test_audit_catches_a_fit_that_skips_the_bounding(monkeypatch):
    monkeypatch.setattr(
        _fit, "_bounded", lambda unit, source, *columns: (*columns, unit.groups)
    )
    mutant = audit_mechanism(_class_one, D0, D1, **AUDIT)
    assert mutant.epsilon_lower_bound > EPS
