"""Leaf class counts: exact histogram, sensitivity (brute force), release
and the probabilities read from it."""

import itertools
import math

import numpy as np
import pytest

from skdp.tree._leaf_counts import (
    leaf_class_counts,
    leaf_count_sensitivity,
    leaf_probabilities,
    release_leaf_counts,
    tree_weights,
)
from skdp.tree._random_tree import leaf_indices

# two trees of depth 1 over one feature, thresholds 0.3 and 0.6
FEATURES = np.zeros((2, 1), dtype=np.intp)
THRESHOLDS = np.array([[0.3], [0.6]])


def _counts(rows, tree_rows):
    """Counts of a dataset of (x, label, tree) rows; tree ignored for 'all'."""
    if not rows:
        return np.zeros((2, 2, 2), dtype=np.int64)
    X = np.array([[x] for x, _, _ in rows])
    codes = np.array([c for _, c, _ in rows])
    trees = np.array([t for _, _, t in rows]) if tree_rows == "disjoint" else None
    leaves = leaf_indices(X, FEATURES, THRESHOLDS)
    return leaf_class_counts(leaves, codes, 2, 2, trees)


def test_counts_match_a_row_by_row_tally():
    rng = np.random.default_rng(0)
    leaves = rng.integers(0, 8, size=(3, 500))
    codes = rng.integers(0, 4, size=500)
    trees = rng.integers(0, 3, size=500)
    expected_all = np.zeros((3, 8, 4), dtype=int)
    expected_disjoint = np.zeros((3, 8, 4), dtype=int)
    for i in range(500):
        for t in range(3):
            expected_all[t, leaves[t, i], codes[i]] += 1
        expected_disjoint[trees[i], leaves[trees[i], i], codes[i]] += 1
    np.testing.assert_array_equal(leaf_class_counts(leaves, codes, 8, 4), expected_all)
    np.testing.assert_array_equal(
        leaf_class_counts(leaves, codes, 8, 4, trees), expected_disjoint
    )


def test_the_shape_is_public_when_rows_reach_few_leaves():
    leaves = np.zeros((2, 3), dtype=np.intp)  # every row in leaf 0
    counts = leaf_class_counts(leaves, np.array([0, 0, 1]), 16, 3)
    assert counts.shape == (2, 16, 3) and counts.sum() == 6


@pytest.mark.parametrize("tree_rows, trees_per_row", [("all", 2), ("disjoint", 1)])
def test_sensitivity_brute_force_over_all_add_remove_neighbours(
    tree_rows, trees_per_row
):
    # every dataset of up to 3 rows over x in {0.1, 0.5, 0.9} (each leaf of
    # both trees), 2 labels and (disjoint) 2 trees, and every neighbour
    # obtained by removing one row: the largest L1 and L2 moves of the
    # counts are exactly the stated sensitivities
    domain = list(itertools.product((0.1, 0.5, 0.9), (0, 1), (0, 1)))
    worst_l1 = worst_l2 = 0.0
    for size in range(1, 4):
        for rows in itertools.combinations_with_replacement(domain, size):
            full = _counts(list(rows), tree_rows)
            for k in range(size):
                smaller = _counts(list(rows[:k] + rows[k + 1 :]), tree_rows)
                diff = (full - smaller).ravel()
                worst_l1 = max(worst_l1, np.abs(diff).sum())
                worst_l2 = max(worst_l2, math.sqrt((diff**2).sum()))
    l1, l2 = leaf_count_sensitivity(trees_per_row)
    assert worst_l1 == l1
    assert worst_l2 == pytest.approx(l2, rel=1e-15)


def test_sensitivity_grows_with_the_trees_a_row_is_counted_in():
    assert leaf_count_sensitivity(1) == (1.0, 1.0)
    assert leaf_count_sensitivity(25) == (25.0, 5.0)


def test_release_noise_level_is_that_of_the_sensitivity():
    # Laplace of scale L1/eps: std sqrt(2) * trees/eps; the counts are
    # unbiased (mean of 20,000 draws of a zero count within 5 sigma)
    counts = np.zeros((1, 1000, 2), dtype=np.int64)
    for trees, eps in ((1, 1.0), (4, 2.0)):
        noisy, std = release_leaf_counts(counts, trees, eps, 0.0, 0)
        assert std == pytest.approx(math.sqrt(2) * trees / eps, rel=1e-12)
        assert abs(noisy.std() / std - 1) < 0.05
        assert abs(noisy.mean()) < 5 * std / math.sqrt(noisy.size)


# -- probabilities (post-processing), against hand-derived values ------------

COUNTS = np.array([[[3.0, 1.0], [0.0, 0.0], [-2.0, 5.0], [0.5, -1.0]]])


def test_probabilities_without_noise_are_the_leaf_frequencies():
    # clipped leaves (3,1) (0,0) (0,5) (0.5,0); an empty leaf takes its
    # parent's: the parent of leaves 0 and 1 holds (3,1)
    expected = [[0.75, 0.25], [0.75, 0.25], [0.0, 1.0], [1.0, 0.0]]
    np.testing.assert_allclose(leaf_probabilities(COUNTS, 0.0)[0], expected)


def test_probabilities_shrink_towards_the_parent_by_the_noise_level():
    # weight 1: root (3.5, 6)/9.5; left node ((3, 1) + root)/5, right node
    # ((0.5, 5) + root)/6.5; each leaf (its counts + its parent)/(mass + 1)
    root = np.array([3.5, 6.0]) / 9.5
    left = (np.array([3.0, 1.0]) + root) / 5.0
    right = (np.array([0.5, 5.0]) + root) / 6.5
    expected = [
        (np.array([3.0, 1.0]) + left) / 5.0,
        left,
        (np.array([0.0, 5.0]) + right) / 6.0,
        (np.array([0.5, 0.0]) + right) / 1.5,
    ]
    np.testing.assert_allclose(leaf_probabilities(COUNTS, 1.0)[0], expected)


def test_all_non_positive_counts_give_the_uniform_distribution():
    proba = leaf_probabilities(-np.ones((2, 4, 3)), 1.4)
    np.testing.assert_array_equal(proba, np.full((2, 4, 3), 1 / 3))


@pytest.mark.parametrize("noise_std", [0.0, 5e-324, 1.0, 1e300, np.inf])
@pytest.mark.parametrize("scale", [5e-324, 1.0, 1e308])
def test_probabilities_are_distributions_at_the_extremes(noise_std, scale):
    rng = np.random.default_rng(0)
    noisy = rng.uniform(-1, 1, size=(3, 8, 4)) * scale
    with np.errstate(all="raise"):  # nothing may warn after the charge
        proba = leaf_probabilities(noisy, noise_std)
    assert np.all(np.isfinite(proba)) and np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=-1), 1.0, rtol=1e-12)


# -- the forest's tree weights (post-processing), against hand-derived values


def test_tree_weights_are_the_released_gini_decreases_normalised():
    # Gini decreases: pure leaves 0.5 - 0 = 0.5; (4,1) and (1,4): 0.5 - 0.32
    # = 0.18; (3,3) and (-1,2) clipped to (0,2): root (3,5) 30/64, leaves
    # 6/8 * 0.5 + 2/8 * 0 = 0.375, so 0.09375
    noisy = np.array(
        [[[5.0, 0.0], [0.0, 5.0]], [[4.0, 1.0], [1.0, 4.0]], [[3.0, 3.0], [-1.0, 2.0]]]
    )
    decreases = np.array([0.5, 0.18, 0.09375])
    np.testing.assert_allclose(tree_weights(noisy), decreases / decreases.sum())


def test_trees_without_a_decrease_weigh_the_same():
    np.testing.assert_array_equal(tree_weights(-np.ones((4, 8, 3))), np.full(4, 0.25))
    one_leaf_each = np.array([[[3.0, 1.0]], [[0.0, 7.0]]])  # depth 0
    np.testing.assert_array_equal(tree_weights(one_leaf_each), [0.5, 0.5])


@pytest.mark.parametrize("scale", [5e-324, 1.0, 1e308, np.inf])
def test_tree_weights_are_a_distribution_at_the_extremes(scale):
    rng = np.random.default_rng(0)
    noisy = rng.uniform(-1, 1, size=(5, 8, 3)) * scale
    with np.errstate(all="raise"):  # nothing may warn after the charge
        weights = tree_weights(noisy)
    assert np.all(np.isfinite(weights)) and np.all(weights >= 0)
    np.testing.assert_allclose(weights.sum(), 1.0, rtol=1e-12)
