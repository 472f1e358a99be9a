"""Binning: the public cell grid, its exact counts, and the bins read off them."""

import itertools

import numpy as np
import pytest

from skdp.ensemble._hist_gradient_boosting import binning
from skdp.ensemble._hist_gradient_boosting.binning import (
    N_CELLS,
    BinMapper,
    cell_counts,
    cell_lower_edges,
    cuts_from_counts,
    grid_cells,
    release_private_bins,
    released_mass,
)
from skdp.mechanisms import check_random_source

BIG = np.finfo(float).max
TINY = 5e-324

EXTREMES = np.array(
    [-BIG, -1e300, -2.0**32, -3.5, -1.0, -1e-310, -TINY, -0.0, 0.0, TINY, 1e-310,
     2.0**-33, 2.0**-32, 0.1, 1.0, 1.124, 1.125, 1.126, 2.0**31, 2.0**32, 1e300, BIG]
)  # fmt: skip


def test_cells_increase_with_the_value_over_extreme_and_random_doubles():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**63, size=20_000, dtype=np.uint64).view(np.float64)
    values = np.sort(np.concatenate([EXTREMES, bits[np.isfinite(bits)]]))
    cells = grid_cells(values)
    assert cells.min() >= 0 and cells.max() < N_CELLS
    assert np.all(np.diff(cells) >= 0)


def test_a_value_lies_between_its_cell_edge_and_the_next():
    """Hand-derived: [1, 1.125) is one cell, 1.125 starts the next (3 bits)."""
    lower = cell_lower_edges()
    assert np.all(np.diff(lower) > 0)
    values = np.array([-3.5, -1.0, 0.0, 1.0, 1.124, 1.125, 6.0, 2.0**-32])
    cells = grid_cells(values)
    upper = lower[cells + 1]
    # positive cells are [low, high), negative ones (low, high], zero {0}
    assert np.all(np.where(values < 0, lower[cells] < values, lower[cells] <= values))
    assert np.all(np.where(values < 0, values <= upper, values < upper))
    assert grid_cells(np.array([1.124]))[0] == grid_cells(np.array([1.0]))[0]
    assert grid_cells(np.array([1.125]))[0] == grid_cells(np.array([1.0]))[0] + 1
    # -0.0 and 0.0 share the zero cell; clamped ends hold ±max
    assert grid_cells(np.array([-0.0]))[0] == grid_cells(np.array([0.0]))[0]
    assert grid_cells(np.array([BIG, -BIG])).tolist() == [N_CELLS - 1, 0]


def test_cell_counts_of_a_neighbour_differ_by_one_count_per_feature():
    """Brute force: every dataset of up to two rows over a small domain of
    extreme values, every added row: the counts move by exactly sqrt(d) in
    L2 norm (one count per feature)."""
    domain = [-BIG, -1e-310, 1.125, BIG]
    rows = [np.array(r) for r in itertools.product(domain, repeat=2)]
    for size in (0, 1, 2):
        for data in itertools.combinations(rows, size):
            base = np.array(data).reshape(size, 2)
            before = cell_counts(base)
            for extra in rows:
                after = cell_counts(np.vstack([base, extra]))
                diff = after - before
                assert np.abs(diff).sum() == 2 and np.sqrt((diff**2).sum()) == np.sqrt(
                    2
                )


def test_cuts_split_the_released_mass_in_equal_parts():
    """Hand-derived: four cells of 100 rows, 2 bins -> cut after the second."""
    noisy = np.zeros((1, N_CELLS))
    noisy[0, [10, 11, 12, 13]] = 100.0
    noisy[0, 50] = 3.0  # under four noise deviations: empty
    (cuts,) = cuts_from_counts(noisy, noise_sd=1.0, max_bins=2)
    assert cuts.tolist() == [12]
    (cuts,) = cuts_from_counts(noisy, noise_sd=1.0, max_bins=4)
    assert cuts.tolist() == [11, 12, 13]
    (none,) = cuts_from_counts(np.zeros((1, N_CELLS)), noise_sd=1.0, max_bins=4)
    assert none.size == 0


def test_a_tail_whose_cells_drown_in_noise_gets_mass_where_a_run_stands_out():
    """Hand-derived (noise deviation 5, threshold 4 deviations): 16 cells of
    10 rows each fail alone (10 < 20), in pairs (20 < 4 * 5 * sqrt(2)) and
    fours (40 = 4 * 5 * 2, not above), and stand out in aligned eights (80
    > 4 * 5 * sqrt(8) = 56.6): each eight's 80 is the mass of its last
    cell. A spike standing out alone keeps its own count; the rest of its
    block counts without it."""
    start = N_CELLS // 2 + 1 + 64  # a positive block of 8 starts here
    noisy = np.zeros((1, N_CELLS))
    noisy[0, start : start + 16] = 10.0
    noisy[0, start + 40] = 100.0
    noisy[0, start + 41] = 15.0  # alone 15 < 20; its block without the spike too
    mass = released_mass(noisy, noise_sd=5.0)[0]
    assert np.flatnonzero(mass).tolist() == [start + 7, start + 15, start + 40]
    assert mass[[start + 7, start + 15, start + 40]].tolist() == [80.0, 80.0, 100.0]
    # the tail alone: two bins split it at its middle (no cut without it)
    tail = np.zeros((1, N_CELLS))
    tail[0, start : start + 16] = 10.0
    (cuts,) = cuts_from_counts(tail, noise_sd=5.0, max_bins=2)
    assert cuts.tolist() == [start + 8]


def test_pure_noise_seldom_makes_a_cut():
    """1,000 features of pure noise (deviation 1): a cell or a block stands
    out by chance in about 6 % of them, but one cell of mass makes no cut;
    two in one feature are rare (seeded: under 1 % of the features)."""
    noisy = np.random.default_rng(0).normal(0.0, 1.0, (1_000, N_CELLS))
    cuts = cuts_from_counts(noisy, noise_sd=1.0, max_bins=8)
    assert np.mean([c.size > 0 for c in cuts]) < 0.01


def test_private_bins_cut_a_thin_tail_above_a_spike_at_zero():
    """A zero-inflated column (Adult's capital gains): 90 % zeros, 10 % spread
    over three binades (about 83 rows per cell), noise deviation 42 (a tail
    cell alone stands out rarely). Seeds 0-4: the tail's rows fall in 2.8
    bins on average (before: 1.4; a single tail bin can not split it)."""
    rng = np.random.default_rng(0)
    X = np.where(rng.random(20_000) < 0.9, 0.0, rng.uniform(1e3, 8e3, 20_000))
    X = X[:, None]
    tail_bins = []
    for seed in range(5):
        _, binned = release_private_bins(X, 2_000 / 48, 32, check_random_source(seed))
        tail_bins.append(np.unique(binned[X[:, 0] > 0]).size)
    assert np.mean(tail_bins) >= 2.5


def test_private_bin_mapper_bins_by_cells():
    mapper = BinMapper(cuts=[np.array([12])])
    X = np.array([[-BIG], [0.0], [BIG]])
    mid = grid_cells(np.array([1.0]))[0]
    mapper = BinMapper(cuts=[np.array([mid])])
    assert mapper.transform(X).ravel().tolist() == [0, 0, 1]
    assert mapper.n_bins.tolist() == [2]
    assert mapper.thresholds()[0].tolist() == [1.0]


def test_public_bins_match_numpy_digitize_with_clipped_ends():
    rng = np.random.default_rng(1)
    X = rng.uniform(-2, 12, size=(500, 2))
    mapper = BinMapper.public(np.array([0.0, 0.0]), np.array([10.0, 10.0]), 5)
    edges = np.linspace(0, 10, 6)
    expected = np.clip(np.digitize(X, edges) - 1, 0, 4)
    np.testing.assert_array_equal(mapper.transform(X), expected)


@pytest.mark.parametrize("max_bins", [2, 255])
def test_bins_fit_their_dtype_at_both_ends_of_max_bins(max_bins):
    mapper = BinMapper.public(np.array([0.0]), np.array([1.0]), max_bins)
    out = mapper.transform(np.array([[-BIG], [0.5], [BIG]]))
    assert out.dtype == np.uint8 and out.ravel().tolist() == [
        0,
        max_bins // 2,
        max_bins - 1,
    ]


def test_release_adds_noise_of_the_stated_sensitivity():
    """The release's noise has deviation multiplier * sqrt(d) (power check,
    seeded: 6,000 values, deviation estimated within 3 %)."""
    counts = np.zeros((3, 2000), dtype=np.int64)
    noisy = binning.release_cell_counts(counts, 2.0, np.random.RandomState(0))
    assert abs(noisy.std() / (2.0 * np.sqrt(3)) - 1) < 0.03


def test_every_nonzero_value_below_the_grid_is_in_the_first_cell_of_its_sign():
    """Subnormals whose leading significand bits are all 0 (the smallest
    one) as well as the largest subnormal and normals below ``2**-32`` share
    the cell next to zero's: cell 0 is ±0 alone, whatever the bits read."""
    below = np.array(
        [5e-324, 2.0**-1060, np.nextafter(2.0**-1022, 0), 2.0**-1022, 2.0**-40]
    )
    zero = N_CELLS // 2
    assert grid_cells(below).tolist() == [zero + 1] * below.size
    assert grid_cells(-below).tolist() == [zero - 1] * below.size
    assert grid_cells(np.array([0.0, -0.0])).tolist() == [zero, zero]


def test_a_fit_reads_each_value_s_grid_cell_once(monkeypatch):
    """The private bins' counts and the binned X share one cell table:
    grid_cells runs once per feature (it ran twice: counts, then bins), and
    binning from the table is binning from the values."""
    from skdp import BudgetAccountant
    from skdp.ensemble import PrivateHistGradientBoostingClassifier

    calls = []
    real = binning.grid_cells

    def count(values):
        calls.append(values.shape)
        return real(values)

    monkeypatch.setattr(binning, "grid_cells", count)
    rng = np.random.default_rng(0)
    X = rng.lognormal(size=(3000, 3)) * np.array([1.0, -1e-6, 1e6])
    y = (X[:, 0] > 1).astype(int)
    clf = PrivateHistGradientBoostingClassifier(
        1e3, classes=[0, 1], max_iter=1, max_depth=1, random_state=0,
        accountant=BudgetAccountant(delta=0.5),
    ).fit(X, y)  # fmt: skip
    assert calls == [(3000,)] * 3
    mapper = clf._bin_mapper
    np.testing.assert_array_equal(
        mapper.transform(X, binning.grid_cell_table(X)), mapper.transform(X)
    )
    assert mapper.n_bins.min() > 1
