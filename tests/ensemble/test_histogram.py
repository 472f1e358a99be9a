"""Level histograms: exact sums per node, feature and bin; their sensitivity."""

import itertools
import math
from fractions import Fraction

import numpy as np

from skdp.ensemble._hist_gradient_boosting.histogram import (
    exact_level_histograms,
    level_sensitivity,
    release_level_histograms,
    sampled_features,
)
from skdp.ensemble._hist_gradient_boosting.loss import GRID_BITS, on_grid
from skdp.mechanisms import check_random_source

OFFSETS = np.array([0, 2, 5])  # feature 0: 2 bins, feature 1: 3 bins


def brute_force_histograms(binned, node, n_nodes, g, h):
    width = OFFSETS[-1]
    out = [[[Fraction(0)] * width for _ in range(n_nodes)] for _ in range(2)]
    for row in range(binned.shape[0]):
        for j in range(binned.shape[1]):
            column = OFFSETS[j] + binned[row, j]
            out[0][node[row]][column] += Fraction(g[row])
            out[1][node[row]][column] += Fraction(h[row])
    return out


def test_sums_are_exact_against_fractions():
    rng = np.random.default_rng(0)
    n = 300
    binned = np.column_stack([rng.integers(0, 2, n), rng.integers(0, 3, n)]).astype(
        np.uint8
    )
    node = rng.integers(0, 4, n)
    g = on_grid(rng.uniform(-1, 1, n), 1.0)
    h = on_grid(rng.uniform(0, 0.25, n), 0.25)
    sums = exact_level_histograms(binned, OFFSETS, node, 4, g, h)
    expected = brute_force_histograms(binned, node, 4, g, h)
    assert [
        [[Fraction(v) for v in row] for row in part] for part in sums.tolist()
    ] == expected


def test_a_row_moves_a_level_by_at_most_the_stated_l2_norm():
    """Brute force over a small domain: datasets of up to two rows, every
    added row (two features, two nodes, extreme gradients and hessians):
    the histograms move by at most sqrt(d (g_max² + h_max²)), with equality
    for a row at both bounds."""
    domain = [
        (b0, b1, nd, gv, hv)
        for b0, b1, nd in itertools.product((0, 1), (0, 2), (0, 1))
        for gv, hv in ((-1.0, 0.25), (1.0, 0.0), (2.0**-GRID_BITS, 2.0**-GRID_BITS))
    ]
    bound = level_sensitivity(2, 1.0, 0.25)
    worst = 0.0

    def hist(rows):
        if not rows:
            return np.zeros((2, 2, OFFSETS[-1]))
        a = np.array(rows)
        binned = a[:, :2].astype(np.uint8)
        return exact_level_histograms(
            binned, OFFSETS, a[:, 2].astype(int), 2, a[:, 3], a[:, 4]
        )

    for size in (0, 1, 2):
        for data in itertools.combinations(domain, size):
            before = hist(list(data))
            for extra in domain[::3]:
                moved = math.sqrt(((hist([*data, extra]) - before) ** 2).sum())
                assert moved <= bound
                worst = max(worst, moved)
    assert worst == bound


def test_sums_stay_exact_for_many_rows_at_the_bound():
    """2**20 rows at g = -1 and at the smallest grid step: exact integers."""
    n = 2**20
    g = np.full(n, -1.0)
    g[::2] = 2.0**-GRID_BITS
    sums = exact_level_histograms(
        np.zeros((n, 1), dtype=np.uint8),
        np.array([0, 1]),
        np.zeros(n, dtype=int),
        1,
        g,
        g,
    )
    assert sums[0, 0, 0] == -(n // 2) + (n // 2) * 2.0**-GRID_BITS


def test_sums_over_groups_of_features_match_one_feature_at_a_time():
    """Features summed in several joint groups (8-bin features, four to a
    group, and a 300-bin uint16 feature alone): each feature's sums equal
    ``numpy.add.at`` over its own bins (on-grid sums: exact in any order)."""
    rng = np.random.default_rng(3)
    n, n_nodes = 5000, 3
    widths = [8] * 9 + [300, 8]
    offsets = np.concatenate([[0], np.cumsum(widths)])
    binned = np.column_stack([rng.integers(0, w, n) for w in widths]).astype(np.uint16)
    node = rng.integers(0, n_nodes, n)
    g = on_grid(rng.uniform(-1, 1, n), 1.0)
    h = on_grid(rng.uniform(0, 0.25, n), 0.25)
    rows = rng.choice(n, 1000, replace=False)
    expected = np.zeros((2, n_nodes, offsets[-1]))
    for j in range(len(widths)):
        for part, w in enumerate((g, h)):
            column = offsets[j] + binned[rows, j].astype(int)
            np.add.at(expected[part], (node[rows], column), w[rows])
    sums = exact_level_histograms(
        binned, offsets, node[rows], n_nodes, g[rows], h[rows], rows
    )
    assert np.array_equal(sums, expected)


def test_release_keeps_the_shape_and_adds_noise():
    sums = np.zeros((2, 4, 5))
    noisy = release_level_histograms(sums, 2.0, 3.0, np.random.RandomState(0))
    assert noisy.shape == sums.shape
    assert 4.0 < noisy.std() < 8.0  # deviation 6 = 3 * 2, 40 values


def test_sampled_features_release_moves_by_the_sampled_sensitivity():
    """Brute force with two of three features sampled per node: the
    released sums (the sampled columns only) move by at most
    sqrt(m (g_max² + h_max²)) with m = 2, not d = 3, with equality."""
    offsets = np.array([0, 2, 4, 6])
    columns = np.repeat(np.array([[True, False, True], [False, True, True]]), 2, 1)
    domain = [
        (b, nd, gv, hv)
        for b, nd in itertools.product((0, 1), (0, 1))
        for gv, hv in ((-1.0, 0.25), (1.0, 0.0))
    ]

    def released(rows):
        if not rows:
            return np.zeros((2, int(columns.sum())))
        a = np.array(rows)
        binned = np.repeat(a[:, :1], 3, axis=1).astype(np.uint8)
        sums = exact_level_histograms(
            binned, offsets, a[:, 1].astype(int), 2, a[:, 2], a[:, 3]
        )
        return sums[:, columns]

    worst = 0.0
    for size in (0, 1, 2):
        for data in itertools.combinations(domain, size):
            for extra in domain:
                moved = released([*data, extra]) - released(data)
                moved = np.sqrt((moved**2).sum())
                worst = max(worst, moved)
    assert worst == level_sensitivity(2, 1.0, 0.25)
    assert level_sensitivity(2, 1.0, 0.25) < level_sensitivity(3, 1.0, 0.25)


def test_sampled_features_are_m_per_node_uniform_and_none_for_all():
    source = check_random_source(0)
    assert sampled_features(4, 5, 5, source) is None
    mask = sampled_features(3000, 5, 2, source)
    assert mask.shape == (3000, 5) and np.all(mask.sum(axis=1) == 2)
    # each feature in 2/5 of the nodes: 1200 ± 4.5 sd (sd = sqrt(3000 .4 .6))
    assert np.all(np.abs(mask.sum(axis=0) - 1200) < 4.5 * np.sqrt(720))


def test_unsampled_columns_are_not_released():
    sums = np.arange(24.0).reshape(2, 2, 6)
    columns = np.zeros((2, 6), dtype=bool)
    columns[0, :2] = columns[1, 4:] = True
    noisy = release_level_histograms(sums, 1.0, 1e-9, check_random_source(0), columns)
    assert np.all(noisy[:, ~columns] == 0.0)
    np.testing.assert_allclose(noisy[:, columns], sums[:, columns], atol=1e-6)


def test_a_group_of_k_rows_moves_a_level_and_the_leaves_by_k_times_a_row():
    """Brute force with groups: adding a group of up to k = 2 rows (any
    nodes, bins, leaves; extreme g, h) to datasets of up to one row moves
    a level's histograms by at most k sqrt(d (g_max² + h_max²)) and the
    leaf sums by at most k sqrt(g_max² + h_max²), with equality (k equal
    rows at the bounds): the noise multipliers scale by k."""
    from skdp.ensemble._hist_gradient_boosting.grower import (
        exact_leaf_sums,
        leaf_sensitivity,
    )

    domain = [
        (b0, b1, nd, gv, hv)
        for b0, b1, nd in itertools.product((0, 1), (0, 2), (0, 1))
        for gv, hv in ((-1.0, 0.25), (1.0, 0.0))
    ]

    def releases(rows):
        if not rows:
            return np.zeros(2 * 2 * OFFSETS[-1]), np.zeros(4)
        a = np.array(rows)
        node = a[:, 2].astype(int)
        hist = exact_level_histograms(
            a[:, :2].astype(np.uint8), OFFSETS, node, 2, a[:, 3], a[:, 4]
        )
        return hist.ravel(), exact_leaf_sums(node, 2, a[:, 3], a[:, 4]).ravel()

    k, worst = 2, [0.0, 0.0]
    for size in (0, 1):
        for data in itertools.combinations(domain[::3], size):
            before = releases(list(data))
            for group in itertools.combinations_with_replacement(domain, k):
                after = releases([*data, *group])
                for i in range(2):
                    moved = np.sqrt(((after[i] - before[i]) ** 2).sum())
                    worst[i] = max(worst[i], moved)
    assert worst[0] == k * level_sensitivity(2, 1.0, 0.25)
    assert worst[1] == k * leaf_sensitivity(1.0, 0.25)


def test_many_one_bin_features_are_summed_without_too_many_axes():
    """85 features of one bin (collapsed private bins): their joint table
    had 86 axes, beyond numpy's 64, and the fit raised after the charge."""
    n, d = 50, 85
    binned = np.zeros((n, d), dtype=np.uint8)
    binned[:, -1] = np.arange(n) % 2  # a last feature of two bins
    offsets = np.concatenate([np.arange(d), [d + 1]])
    g = on_grid(np.linspace(-1, 1, n), 1.0)
    h = np.full(n, 0.25)
    sums = exact_level_histograms(binned, offsets, np.zeros(n, int), 1, g, h)
    expected = brute_force_histograms_for(binned, offsets, g, h)
    np.testing.assert_array_equal(sums[:, 0], expected)


def brute_force_histograms_for(binned, offsets, g, h):
    out = np.zeros((2, offsets[-1]))
    for row in range(binned.shape[0]):
        for j in range(binned.shape[1]):
            out[0, offsets[j] + binned[row, j]] += g[row]
            out[1, offsets[j] + binned[row, j]] += h[row]
    return out
