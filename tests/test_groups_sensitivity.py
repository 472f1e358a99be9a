"""Sensitivities for add/remove of one whole group, by brute force.

On small domains: a base data set of a few groups of several rows, and every
group of 1 to k + 1 rows over a grid of rows (below, at and inside the
bounds; both labels) added to it. Each side is bounded first (at most k
rows per group, ``kept_rows``), then the exact statistic an estimator
releases is formed; the change must be at most the sensitivity the
estimator's noise is calibrated to (``k`` times the row's), and it reaches
it (the bound is tight). Without the bounding, a group of k + 1 equal rows
exceeds it: the check has the power to see a missing bound.
"""

import itertools
import math

import numpy as np
import pytest

from skdp.linear_model._logistic_sums import (
    _clipped_gradient_sum,
    _clipped_gram,
    _row_count,
)
from skdp.linear_model._release import unit_multipliers
from skdp.linear_model._target_range import regression_sums
from skdp.sensitivity import exact_histogram_counts, exact_moment_sums
from skdp.stats._mean_release import mean_statistic, plan_mean_release
from skdp.utils._groups import kept_rows

K = 2
BASE_X = np.array([[0.5, 0.0], [0.5, 2.0], [2.0, 2.0], [0.0, -3.0], [0.0, 0.5]])
BASE_Y = np.array([0, 1, 1, 0, 1])
BASE_GROUPS = np.array([1, 1, 1, 2, 3])  # group 1 has 3 > K rows
ROWS = [
    ((2.0, 2.0), 1),  # beyond both upper bounds: clipped to them
    ((2.0, 2.0), 0),
    ((0.0, 0.0), 0),
    ((0.5, -3.0), 1),
    ((-3.0, 0.5), 0),
    ((0.5, 0.5), 1),
]


def _groups_to_add():
    for size in range(1, K + 2):
        yield from itertools.combinations_with_replacement(ROWS, size)


def _bounded(X, y, groups, seed, bound=True):
    if not bound:
        return X, y
    rows = kept_rows(groups, K, seed, [X, y])
    return X[rows], y[rows]


def _changes(statistic, seed=0, bound=True):
    """Largest L1 and L2 change of ``statistic(X, y)`` (exact integers of a
    FixedPoint grid, or floats) over every added group."""
    base = _exact(statistic(*_bounded(BASE_X, BASE_Y, BASE_GROUPS, seed, bound)))
    worst_l1 = worst_l2 = 0.0
    for added in _groups_to_add():
        X = np.vstack([BASE_X, [row for row, _ in added]])
        y = np.append(BASE_Y, [label for _, label in added])
        groups = np.append(BASE_GROUPS, np.full(len(added), 99))
        grown = _exact(statistic(*_bounded(X, y, groups, seed, bound)))
        diff = [a - b for a, b in zip(grown[0], base[0], strict=True)]
        scale = grown[1]
        worst_l1 = max(worst_l1, float(sum(abs(v) for v in diff)) * scale)
        worst_l2 = max(worst_l2, math.sqrt(sum(v * v for v in diff)) * scale)
    return worst_l1, worst_l2


def _exact(value):
    """``(integers, scale)`` of a FixedPoint (or a tuple of them)."""
    if not hasattr(value, "numerators"):
        parts = [_exact(v) for v in value]
        assert len({s for _, s in parts}) <= 2
        # rescale to a common exponent, exactly
        scale = min(s for _, s in parts)
        ints = [n * round(s / scale) for nums, s in parts for n in nums]
        return ints, scale
    return [int(n) for n in value.numerators], 2.0**value.exponent


LOWER, UPPER = np.array([0.0, 0.0]), np.array([1.0, 1.0])


@pytest.mark.parametrize("paired", [True, False])
def test_mean_statistic_moves_by_k_times_the_rows_bound(paired):
    plan = plan_mean_release(1.0, 0.0, 2, "laplace", unit_rows=K)
    l1, l2 = plan.sensitivities()
    assert (l1, l2) == (2.0 * K, math.sqrt(2.0) * K)

    def statistic(X, y):
        return mean_statistic(X, LOWER, UPPER, paired)

    for seed in range(2):
        worst_l1, worst_l2 = _changes(statistic, seed)
        bound_l1 = l1 + (K if not paired else 0)  # separate: count + sums
        assert worst_l1 <= bound_l1 + 1e-9
        assert worst_l2 <= math.hypot(l2, 0 if paired else K) + 1e-9
        assert worst_l2 == pytest.approx(l2, rel=1e-6) or not paired
    assert _changes(statistic, bound=False)[1] > l2 + 0.5  # no bounding: caught


def test_histogram_moves_by_k_times_the_rows_bound():
    edges = [np.linspace(0.0, 1.0, 4)] * 2

    def statistic(X, y):
        return exact_histogram_counts(X, edges)

    l1, l2 = 2.0 * K, math.sqrt(2.0) * K
    for seed in range(3):
        worst_l1, worst_l2 = _changes(statistic, seed)
        assert worst_l1 == l1 and worst_l2 == pytest.approx(l2)
    assert _changes(statistic, bound=False)[1] > l2 + 0.5


def test_per_class_moment_sums_move_by_k_times_the_rows_bound():
    # PrivateGaussianNB: a group's rows may hold both labels; each adds one
    # Bernstein triple to its class's sums (L1 d, L2 sqrt(d) per row)
    def statistic(X, y):
        return exact_moment_sums(X, LOWER, UPPER, y.astype(np.intp), 2)

    l1, l2 = 2.0 * K, math.sqrt(2.0) * K
    for seed in range(2):
        worst_l1, worst_l2 = _changes(statistic, seed)
        assert worst_l1 <= l1 + 1e-9 and worst_l2 <= l2 + 1e-9
        assert worst_l2 == pytest.approx(l2)  # k equal rows at a bound
    assert _changes(statistic, bound=False)[1] > l2 + 0.5


WEIGHTS = np.array([[0.7], [-1.3], [0.2]])


@pytest.mark.parametrize(
    "what, statistic",
    [
        ("count", lambda X, y: _row_count(X, y)),
        ("curvature", lambda X, y: _clipped_gram(X, y, 2.0, True)),
        (
            "gradient",
            lambda X, y: _clipped_gradient_sum(X, y, WEIGHTS, 1.0, True),
        ),
        (
            "gram and cross products",
            lambda X, y: regression_sums(X, y.astype(float), 2.0, 0.0, 1.0, True),
        ),
    ],
)
def test_linear_model_statistics_move_by_k_in_units_of_the_row(what, statistic):
    # each release's L2 sensitivity is 1 per row in its units (class
    # Notes), so k per group; the Gram matrix and the cross products of the
    # linear regression are two releases, each moving by at most k
    for seed in range(2):
        worst = _changes(statistic, seed)[1]
        limit = K * (math.sqrt(2.0) if what == "gram and cross products" else 1.0)
        assert worst <= limit + 1e-9, what
        assert worst >= 0.5 * K, f"{what}: the bound is not approached"
    assert _changes(statistic, bound=False)[1] > K + 1e-9 or what == "gradient"


def test_group_multipliers_give_the_rows_noise_to_sensitivity_ratio():
    # sigma = multiplier x row bound; the group's bound is k x the row's, so
    # the group's sigma / sensitivity equals the row-level multiplier
    rows = np.array([3.0, 7.5, 11.0])
    group = unit_multipliers(rows, K)
    np.testing.assert_array_equal(group * 1.0 / K, rows)
    assert unit_multipliers(rows, 1) is rows  # k = 1: unchanged, bit for bit
