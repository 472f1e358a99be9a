"""One tree: the greedy limit, the leaves' sensitivity, one release per level."""

import itertools
import math

import numpy as np
import pytest

from skdp.ensemble._hist_gradient_boosting import grower
from skdp.ensemble._hist_gradient_boosting.grower import (
    MIN_HESSIAN,
    TreePlan,
    exact_leaf_sums,
    grow_tree,
    leaf_sensitivity,
)
from skdp.ensemble._hist_gradient_boosting.loss import on_grid
from skdp.ensemble._hist_gradient_boosting.splitting import NO_SPLIT
from skdp.mechanisms import check_random_source


def greedy_reference(binned, g, h, depth, lam, lr):
    """Brute-force recursive greedy tree (complete, no split = all left)."""
    n_bins = binned.max(axis=0) + 1
    leaf = np.zeros(binned.shape[0], dtype=int)

    def split(rows, level, index):
        if level == depth:
            leaf[rows] = index
            return
        best, choice = 0.0, None
        G, H = g[rows].sum(), h[rows].sum()
        for j in range(binned.shape[1]):
            for t in range(n_bins[j] - 1):
                left = rows[binned[rows, j] <= t]
                right = rows[binned[rows, j] > t]
                gl, hl, gr, hr = (
                    g[left].sum(),
                    h[left].sum(),
                    g[right].sum(),
                    h[right].sum(),
                )
                gain = gl**2 / (hl + lam) + gr**2 / (hr + lam) - G**2 / (H + lam)
                if gain > best + 1e-9:
                    best, choice = gain, (left, right)
        left, right = choice if choice else (rows, rows[:0])
        split(left, level + 1, 2 * index)
        split(right, level + 1, 2 * index + 1)

    split(np.arange(binned.shape[0]), 0, 0)
    n_leaves = 1 << depth
    G = np.bincount(leaf, g, n_leaves)
    H = np.bincount(leaf, h, n_leaves)
    return -lr * G / (H + lam), leaf


@pytest.mark.parametrize("seed", range(3))
def test_noise_free_tree_is_the_greedy_tree(seed):
    rng = np.random.default_rng(seed)
    n = 200
    binned = np.column_stack([rng.integers(0, k, n) for k in (3, 5, 2)]).astype(
        np.uint8
    )
    offsets = np.array([0, 3, 8, 10])
    g = on_grid(np.tanh(binned[:, 0] - 1.0 + rng.normal(size=n)), 1.0)
    h = on_grid(rng.uniform(0, 0.25, n), 0.25)
    plan = TreePlan(3, None, None, 1.0, 0.25, 0.5, 0.1)
    tree, leaf = grow_tree(binned, offsets, g, h, plan, None)
    values, ref_leaf = greedy_reference(binned, g, h, 3, 0.5 + MIN_HESSIAN, 0.1)
    np.testing.assert_allclose(
        tree.predict_binned(binned), values[ref_leaf], rtol=1e-12
    )
    np.testing.assert_array_equal(tree.leaf_of(binned), leaf)


def test_a_row_moves_the_leaf_sums_by_at_most_the_stated_l2_norm():
    """Brute force: datasets of up to two rows over extreme (leaf, g, h)."""
    domain = [
        (lf, gv, hv)
        for lf in range(4)
        for gv, hv in ((-1.0, 0.25), (1.0, 0.0), (0.5, 0.25))
    ]
    bound = leaf_sensitivity(1.0, 0.25)
    worst = 0.0

    def sums(rows):
        if not rows:
            return np.zeros((2, 4))
        a = np.array(rows)
        return exact_leaf_sums(a[:, 0].astype(int), 4, a[:, 1], a[:, 2])

    for size in (0, 1, 2):
        for data in itertools.combinations(domain, size):
            before = sums(list(data))
            for extra in domain:
                moved = math.sqrt(((sums([*data, extra]) - before) ** 2).sum())
                assert moved <= bound
                worst = max(worst, moved)
    assert worst == bound


def test_one_release_per_level_and_one_for_the_leaves(monkeypatch):
    calls = []
    real = grower.release_level_histograms

    def count_levels(sums, sens, multiplier, source, columns=None):
        calls.append(("level", sums.shape, sens, multiplier))
        return real(sums, sens, multiplier, source, columns)

    monkeypatch.setattr(grower, "release_level_histograms", count_levels)
    rng = np.random.default_rng(0)
    binned = rng.integers(0, 4, size=(100, 2)).astype(np.uint8)
    plan = TreePlan(3, 50.0, 20.0, 1.0, 0.25, 0.0, 0.1)
    g, h = (
        on_grid(rng.uniform(-1, 1, 100), 1.0),
        on_grid(rng.uniform(0, 0.25, 100), 0.25),
    )
    tree, _ = grow_tree(
        binned, np.array([0, 4, 8]), g, h, plan, np.random.RandomState(0)
    )
    assert [c[1] for c in calls] == [(2, 1, 8), (2, 2, 8), (2, 4, 8)]
    assert all(c[2] == math.sqrt(2 * (1 + 1 / 16)) and c[3] == 50.0 for c in calls)
    assert tree.leaves.shape == (8,) and np.all(np.isfinite(tree.leaves))


def test_deep_noise_free_tree_is_the_greedy_tree():
    """Depth 6: levels of up to 16 nodes route rows node by node, the
    deeper ones by one gather; both agree with the greedy reference."""
    rng = np.random.default_rng(7)
    n = 600
    binned = rng.integers(0, 4, (n, 3)).astype(np.uint8)
    offsets = np.array([0, 4, 8, 12])
    g = on_grid(np.tanh(binned[:, 0] - 1.5 + rng.normal(size=n)), 1.0)
    h = on_grid(rng.uniform(0, 0.25, n), 0.25)
    plan = TreePlan(6, None, None, 1.0, 0.25, 0.5, 0.1)
    tree, leaf = grow_tree(binned, offsets, g, h, plan, None)
    values, ref_leaf = greedy_reference(binned, g, h, 6, 0.5 + MIN_HESSIAN, 0.1)
    np.testing.assert_allclose(tree.predict_binned(binned), values[ref_leaf])
    np.testing.assert_array_equal(tree.leaf_of(binned), leaf)


def test_each_node_splits_on_one_of_its_sampled_features(monkeypatch):
    """max_features: a node's split (noise-free here, so the greedy one over
    its sampled features) is on a feature the node sampled; the gain of
    the others is never looked at."""
    masks = []
    real = grower.sampled_features

    def record(n_nodes, d, m, source):
        mask = real(n_nodes, d, m, source)
        masks.append(mask)
        return mask

    monkeypatch.setattr(grower, "sampled_features", record)
    rng = np.random.default_rng(3)
    n = 400
    binned = rng.integers(0, 4, (n, 4)).astype(np.uint8)
    g = on_grid(np.tanh(binned.sum(axis=1) - 6.0 + rng.normal(size=n)), 1.0)
    h = on_grid(rng.uniform(0, 0.25, n), 0.25)
    plan = TreePlan(3, None, None, 1.0, 0.25, 0.5, 0.1, max_features=1)
    tree, _ = grow_tree(binned, np.arange(0, 17, 4), g, h, plan, check_random_source(0))
    assert [m.shape for m in masks] == [(1, 4), (2, 4), (4, 4)]
    splits = 0
    for mask, feature, threshold in zip(
        masks, tree.features, tree.thresholds, strict=True
    ):
        split = threshold < NO_SPLIT
        assert np.all(mask[np.flatnonzero(split), feature[split]])
        splits += split.sum()
    assert splits == 7  # every node found a useful split on its one feature


def test_a_leaf_value_is_shrunk_by_two_deviations_of_its_hessian_noise():
    """Hand-derived: leaf multiplier 3, g in [-1, 1], h in [0, 1/4],
    ``l2_regularization`` 0.5: λ = 0.5 + 2 * 3 * sqrt(1 + 1/16) + 1e-3; without
    noise (multiplier None) λ = 0.5 + 1e-3."""
    plan = grower.TreePlan(2, 5.0, 3.0, 1.0, 0.25, 0.5, 0.1)
    assert plan.leaf_lambda() == pytest.approx(0.5 + 6 * math.sqrt(17 / 16) + 1e-3)
    exact = grower.TreePlan(2, None, None, 1.0, 0.25, 0.5, 0.1)
    assert exact.leaf_lambda() == pytest.approx(0.501)
