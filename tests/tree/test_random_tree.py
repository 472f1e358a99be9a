"""Random splits from public bounds, and the path of a row to its leaf."""

import numpy as np
import pytest

from skdp.mechanisms import check_random_source
from skdp.tree._random_tree import draw_random_splits, leaf_indices, split_point

MAX = np.finfo(float).max
TINY = 5e-324  # the smallest subnormal


@pytest.mark.parametrize(
    "lower, upper",
    [(-MAX, MAX), (MAX, MAX), (-MAX, -MAX), (0.0, TINY), (-TINY, TINY), (1.0, 1.0)],
)
def test_split_point_stays_in_the_box_at_the_extremes(lower, upper):
    u = np.array([0.0, 2.0**-53, 0.25, 0.5, 1 - 2.0**-53])
    with np.errstate(all="raise"):  # no overflow, no invalid
        point = split_point(np.full(5, lower), np.full(5, upper), u)
    assert np.all(np.isfinite(point))
    assert np.all((lower <= point) & (point <= upper))
    assert point[0] == lower  # u = 0 is the lower bound itself


def test_split_point_is_the_uniform_interpolation():
    # against the exact value, rounded once (fractions)
    from fractions import Fraction

    lower, upper = np.array([-3.0]), np.array([7.5])
    for u in (0.1, 0.3, 0.77):
        exact = (1 - Fraction(u)) * Fraction(-3.0) + Fraction(u) * Fraction(7.5)
        got = split_point(lower, upper, np.array([u]))[0]
        assert abs(Fraction(got) - exact) <= 2 * Fraction(np.spacing(7.5))


def _check_boxes(features, thresholds, tree, node, low, high, depth, max_depth):
    """Every threshold lies in its node's box (the bounds cut by the splits
    above it), by walking the tree recursively: an independent reference."""
    if depth == max_depth:
        return
    f, t = features[tree, node], thresholds[tree, node]
    assert low[f] <= t <= high[f]
    left_high, right_low = high.copy(), low.copy()
    left_high[f], right_low[f] = t, t
    _check_boxes(
        features, thresholds, tree, 2 * node + 1, low, left_high, depth + 1, max_depth
    )
    _check_boxes(
        features, thresholds, tree, 2 * node + 2, right_low, high, depth + 1, max_depth
    )


def test_every_threshold_lies_in_its_nodes_box():
    lower, upper = np.array([0.0, -5.0, 100.0]), np.array([1.0, 5.0, 1e6])
    features, thresholds = draw_random_splits(
        lower, upper, 5, check_random_source(3), 4
    )
    assert features.shape == thresholds.shape == (4, 31)
    for tree in range(4):
        _check_boxes(features, thresholds, tree, 0, lower, upper, 0, 5)


def test_features_are_drawn_uniformly():
    # 3 features, 20 trees x 255 nodes: each about a third (5 sigma slack)
    lower, upper = np.zeros(3), np.ones(3)
    features, _ = draw_random_splits(lower, upper, 8, check_random_source(0), 20)
    share = np.bincount(features.ravel(), minlength=3) / features.size
    assert np.all(np.abs(share - 1 / 3) < 5 * np.sqrt(2 / 9 / features.size))


def test_splits_depend_on_the_bounds_and_the_seed_only():
    args = (np.zeros(2), np.ones(2), 3)
    a = draw_random_splits(*args, check_random_source(7), 2)
    b = draw_random_splits(*args, check_random_source(7), 2)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


def _walk(row, features, thresholds, tree, max_depth):
    node = 0
    for _ in range(max_depth):
        node = 2 * node + (
            1 if row[features[tree, node]] <= thresholds[tree, node] else 2
        )
    return node - (2**max_depth - 1)


def test_leaf_indices_match_a_row_by_row_walk():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.5, 1.5, size=(200, 3))  # some rows outside the bounds
    X[:5] = [0.0, 0.0, 0.0]  # ties at thresholds are possible at 0
    features, thresholds = draw_random_splits(
        -np.ones(3), np.ones(3), 4, check_random_source(1), 3
    )
    leaves = leaf_indices(X, features, thresholds)
    expected = [[_walk(row, features, thresholds, t, 4) for row in X] for t in range(3)]
    np.testing.assert_array_equal(leaves, expected)


def test_a_depth_zero_tree_has_one_leaf():
    features, thresholds = draw_random_splits(
        np.zeros(2), np.ones(2), 0, check_random_source(0), 3
    )
    assert features.shape == (3, 0)
    leaves = leaf_indices(np.ones((4, 2)), features, thresholds)
    np.testing.assert_array_equal(leaves, np.zeros((3, 4)))


def test_fuzz_extreme_boxes_keep_every_threshold_finite_and_inside():
    # bounds drawn from both ends of the double range and the subnormals,
    # in every order of signs: no overflow, every threshold in its box
    pool = np.array(
        [-MAX, -1e300, -1.0, -TINY, 0.0, TINY, 2 * TINY, 1e-308, 1.0, 1e300, MAX]
    )
    rng = np.random.default_rng(0)
    for seed in range(40):
        ends = np.sort(rng.choice(pool, size=(2, 3)), axis=0)
        with np.errstate(all="raise"):
            features, thresholds = draw_random_splits(
                ends[0], ends[1], 4, check_random_source(seed), 2
            )
        assert np.all(np.isfinite(thresholds))
        for tree in range(2):
            _check_boxes(features, thresholds, tree, 0, ends[0], ends[1], 0, 4)
