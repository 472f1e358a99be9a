"""Soft counts from per-bin tallies: bit for bit the sorted computation.

The reference (tests/_sorted_soft_counts.py) is the implementation of skdp up
to ac0d316 (one sort, prefix sums of the rounded ramps), kept verbatim as the
definition of the released queries: the tallies must reproduce it exactly,
not approximately.
"""

import numpy as np
import pytest
from _sorted_soft_counts import sorted_soft_counts_above

from skdp.sensitivity import soft_counts_above, soft_counts_below
from skdp.sensitivity._soft_counts import (
    GridTally,
    sign_counts_from_tally,
    soft_count_layout,
    soft_count_widths,
    soft_counts_from_tally,
    tally_columns,
)

WIDTHS = 1e9 * np.exp2(-np.arange(160, -1, -1) / 4)  # the default grid
GRIDS = {
    "default widths": WIDTHS,
    "widths at the float limit": 1.7e308 * np.exp2(-np.arange(160, -1, -1) / 4),
    "around -3.5": -3.5 + WIDTHS,
    "around 1000": 1000.0 + WIDTHS,
    "around -1e9": -1e9 + WIDTHS,
    "geomspace 1e4 points": np.geomspace(1e-3, 1e6, 10_000),
    "irregular": np.array([-3.0, 0.0, 0.5, 1.2, 4.1, 4.15, 20.0]),
    "tiny steps": np.array([1.0, 1.0 + 2**-40, 1.0 + 2**-39, 2.0]),
    "huge steps": np.array([-1e300, 0.0, 1e-300, 1e300]),
    "subnormal steps": np.array([0.0, 5e-324, 1e-323, 1e-310, 1.0]),
    "subnormal and halved": np.array([-1.7e308, 0.0, 1e-323, 1.5e-323, 1.7e308]),
    "two points": np.array([1.0, 2.0]),
}
# the public origin of the grids that spread out from one (keys of x - origin)
ORIGINS = {"around -3.5": -3.5, "around 1000": 1000.0, "around -1e9": -1e9}
POSITIVE = [name for name, grid in GRIDS.items() if grid[0] > 0]


def adversarial_column(rng, grid, n):
    """Values on, next to and between grid points, signed zeros, extremes."""
    near = np.concatenate(
        [grid, np.nextafter(grid, -np.inf), np.nextafter(grid, np.inf)]
    )
    # uniform between the grid's ends, halved so that nothing overflows
    inside = (grid[0] / 2 + rng.uniform(0, 1, 64) * (grid[-1] / 2 - grid[0] / 2)) * 2
    pools = [
        near,
        -near,
        np.array([0.0, -0.0, 5e-324, -5e-324, 2.2e-308, -2.2e-308]),
        np.array([1.7e308, -1.7e308, 1e300, -1e300]),
        inside,
        -inside,
        rng.lognormal(0, 30, 64) * rng.choice([-1.0, 1.0], 64),
        rng.standard_normal(64),
    ]
    assert all(np.all(np.isfinite(pool)) for pool in pools)
    weights = rng.dirichlet(np.ones(len(pools)))
    which = rng.choice(len(pools), size=n, p=weights)
    return np.array([rng.choice(pools[i]) for i in which])


def tallied_above(x, grid, lookup, origin=0.0):
    layout = soft_count_layout(grid, origin=origin, lookup=lookup)
    above, below = soft_counts_from_tally(tally_columns(x[:, None], layout))
    assert below is None
    return above[0]


def two_sided(x, grid, lookup):
    layout = soft_count_layout(grid, two_sided=True, lookup=lookup)
    tally = tally_columns(x[:, None], layout)
    above, below = soft_counts_from_tally(tally, two_sided=True)
    negatives, positives = sign_counts_from_tally(tally)
    return above[0], below[0], int(negatives[0]), int(positives[0])


def sizes(rng):
    return [1, 2, int(rng.integers(3, 200)), int(rng.integers(200, 3000))]


@pytest.mark.parametrize("name", list(GRIDS))
def test_tallies_equal_the_sorted_reference_bit_for_bit(name):
    grid = GRIDS[name]
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    for _ in range(6):
        for n in sizes(rng):
            x = adversarial_column(rng, grid, n)
            expected = sorted_soft_counts_above(x, grid)
            for lookup in (True, False):
                for origin in {0.0, ORIGINS.get(name, 0.0)}:
                    got = tallied_above(x, grid, lookup, origin)
                    np.testing.assert_array_equal(got, expected)
            np.testing.assert_array_equal(soft_counts_above(x, grid), expected)


@pytest.mark.parametrize("name", POSITIVE)
def test_two_sided_tally_equals_both_sorted_searches_and_the_signs(name):
    grid = GRIDS[name]
    rng = np.random.default_rng(7)
    for _ in range(6):
        for n in sizes(rng):
            x = adversarial_column(rng, grid, n)
            for lookup in (True, False):
                above, below, negatives, positives = two_sided(x, grid, lookup)
                # the upper search on x, the lower one on -x (as -column[::-1])
                np.testing.assert_array_equal(above, sorted_soft_counts_above(x, grid))
                np.testing.assert_array_equal(below, sorted_soft_counts_above(-x, grid))
                assert (negatives, positives) == ((x < 0).sum(), (x > 0).sum())


def test_columns_all_outside_the_grid():
    grid = GRIDS["default widths"]
    for x in (np.full(50, -1.0), np.full(50, 1e12), np.zeros(3), np.array([-0.0])):
        np.testing.assert_array_equal(
            tallied_above(x, grid, True), sorted_soft_counts_above(x, grid)
        )
        above, below, _, _ = two_sided(x, grid, True)
        np.testing.assert_array_equal(above, sorted_soft_counts_above(x, grid))
        np.testing.assert_array_equal(below, sorted_soft_counts_above(-x, grid))


def test_chunk_tallies_add_up_to_the_whole():
    rng = np.random.default_rng(3)
    grid = GRIDS["default widths"]
    X = np.column_stack([adversarial_column(rng, grid, 5000) for _ in range(3)])
    layout = soft_count_layout(grid, two_sided=True)
    whole = tally_columns(X, layout)
    cuts = np.sort(rng.choice(np.arange(1, 5000), size=6, replace=False))
    parts = [tally_columns(chunk, layout) for chunk in np.split(X, cuts)]
    total = sum(parts[1:], parts[0])
    np.testing.assert_array_equal(total.counts, whole.counts)
    np.testing.assert_array_equal(total.units, whole.units)
    columns = tally_columns(X, layout, [2, 0])
    np.testing.assert_array_equal(columns.counts, whole.counts[[2, 0]])
    with pytest.raises(TypeError):
        whole + 1


def test_many_blocks_and_columns():
    # more rows than one block (2**16 - 1 values), several columns sharing blocks
    rng = np.random.default_rng(4)
    grid = GRIDS["default widths"]
    X = rng.lognormal(0, 3, size=(40_000, 3)) * rng.choice([-1.0, 1.0], (40_000, 3))
    layout = soft_count_layout(grid, two_sided=True)
    above, below = soft_counts_from_tally(tally_columns(X, layout), two_sided=True)
    for f, column in enumerate(X.T):
        np.testing.assert_array_equal(above[f], sorted_soft_counts_above(column, grid))
        np.testing.assert_array_equal(below[f], sorted_soft_counts_above(-column, grid))


def test_one_column_in_runs_of_one_bin_over_many_blocks():
    # runs of equal rows (one bin, many lanes) longer than a block; a block
    # of rows on a grid point adds its largest units, 2**20 per row
    rng = np.random.default_rng(5)
    grid = GRIDS["default widths"]
    x = np.concatenate(
        [
            np.full(70_000, grid[80]),
            np.full(70_000, np.nextafter(grid[81], 0.0)),
            rng.uniform(grid[79], grid[80], 30_000),
            -np.full(70_000, grid[100]),
        ]
    )
    np.testing.assert_array_equal(
        tallied_above(x, grid, True), sorted_soft_counts_above(x, grid)
    )
    above, below, negatives, positives = two_sided(x, grid, True)
    np.testing.assert_array_equal(above, sorted_soft_counts_above(x, grid))
    np.testing.assert_array_equal(below, sorted_soft_counts_above(-x, grid))
    assert (negatives, positives) == (70_000, 170_000)


@pytest.mark.parametrize("name", list(GRIDS))
def test_lookup_table_bins_equal_searchsorted(name):
    # every bucket boundary and its neighbours, binned by the table
    grid = GRIDS[name]
    layout = soft_count_layout(
        grid, two_sided=grid[0] > 0 and name not in ORIGINS, origin=ORIGINS.get(name, 0)
    )
    table = layout.table
    if table is None:
        pytest.skip("no table for this grid: rows are binned by searchsorted")
    keys = np.arange(table.first, table.first + table.base.size, dtype=np.int64)
    starts = (keys << table.shift).view(np.float64)
    starts = starts[np.isfinite(starts)] + table.offset
    values = np.concatenate(
        [starts, np.nextafter(starts, -np.inf), np.nextafter(starts, np.inf)]
    )
    values = np.concatenate([values, layout.breakpoints, [0.0, -0.0]])
    values = np.concatenate([values, np.nextafter(layout.breakpoints, np.inf)])
    values = np.clip(values, layout.low, layout.high)
    keyed = values - table.offset if table.offset != 0 else values
    shifted = (keyed.view(np.int64) >> table.shift) - table.first
    bins = table.base[shifted] + (values > table.edge[shifted])
    expected = np.searchsorted(layout.breakpoints, values, side="left")
    np.testing.assert_array_equal(bins, expected)


def test_sensitivity_one_by_brute_force_on_a_small_domain():
    # every multiset of up to 3 values from a domain with ties at the grid,
    # signed zeros and values outside: adding a value moves every query by a
    # value in [0, 1], all in the same direction
    grid = np.array([0.5, 1.0, 3.0, 3.5])
    domain = [-1.0, -0.0, 0.0, 0.5, 0.75, 1.0, 2.2, 3.0, 3.4, 9.0]
    rng = np.random.default_rng(0)
    for _ in range(300):
        x = rng.choice(domain, size=int(rng.integers(0, 4)))
        for value in domain:
            change = soft_counts_above(np.append(x, value), grid) - soft_counts_above(
                x, grid
            )
            assert np.all((change >= 0) & (change <= 1))
            above, below, _, _ = two_sided(np.append(x, value), grid, False)
            before = two_sided(x, grid, False)
            assert np.all((above - before[0] >= 0) & (above - before[0] <= 1))
            assert np.all((below - before[1] >= 0) & (below - before[1] <= 1))


def test_a_grid_whose_halved_points_merge_is_refused():
    # near the float limit the grid is halved, and 4 and 5 units of 2**-1074
    # both halve to 2 units: a zero width (the sorted computation divided by
    # it and cast NaN to int64)
    merging = np.array([0.0, 2e-323, 2.5e-323, 1.7e308])
    assert soft_count_widths(merging)[1] == 0
    with pytest.raises(ValueError, match="once halved"):
        soft_counts_above([1.0], merging)
    with pytest.raises(ValueError, match="once halved"):
        soft_count_layout(merging[1:], two_sided=True)
    assert np.all(soft_count_widths(merging[:3]) > 0)  # not halved: fine


def test_soft_counts_below_mirror():
    x = np.array([-10.0, -3.0, -1.5, -0.5])
    grid = np.array([-4.0, -2.0, -1.0, 0.0])
    np.testing.assert_array_equal(
        soft_counts_below(x, grid), sorted_soft_counts_above(-x, -grid[::-1])[::-1]
    )


def test_tally_is_a_frozen_pair():
    tally = GridTally(np.zeros(2, dtype=np.int64), np.ones(2, dtype=np.int64))
    doubled = tally + tally
    np.testing.assert_array_equal(doubled.units, [2, 2])


def test_wide_data_in_groups_of_columns():
    # 19 columns: groups of 8, 8 and 3, and an arbitrary column selection
    rng = np.random.default_rng(6)
    grid = GRIDS["default widths"]
    X = rng.standard_t(2, size=(3000, 19)) * 30
    layout = soft_count_layout(grid, two_sided=True, lookup=True)
    whole = tally_columns(X, layout)
    above, below = soft_counts_from_tally(whole, two_sided=True)
    for f in (0, 7, 8, 15, 16, 18):
        np.testing.assert_array_equal(above[f], sorted_soft_counts_above(X[:, f], grid))
        np.testing.assert_array_equal(
            below[f], sorted_soft_counts_above(-X[:, f], grid)
        )
    picked = tally_columns(X, layout, [18, 3, 4, 5, 0])
    np.testing.assert_array_equal(picked.units, whole.units[[18, 3, 4, 5, 0]])
