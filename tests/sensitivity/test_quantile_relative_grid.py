"""The relative grid of the joint quantiles: a public set, fine near every
scale, never coarser than the uniform grid it replaced, exact at extremes."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdp.sensitivity._joint_quantile import (
    rank_blocks,
    rank_states,
    relative_grid_counts,
    state_points,
)
from skdp.sensitivity._quantile_grid import (
    COARSE_BITS,
    RELATIVE_BINADES,
    RELATIVE_BITS,
    RelativeGrid,
    quantile_grid_exponent,
)
from tests.sensitivity._extreme_strategies import extreme_doubles

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


@st.composite
def bounds(draw):
    low, high = sorted([draw(extreme_doubles), draw(extreme_doubles)])
    if not low < high:
        high = math.nextafter(low, math.inf)
    if not math.isfinite(high):  # both at the largest double
        low, high = math.nextafter(low, 0.0), low
    return low, high


def all_points(grid):
    return grid.points(np.arange(grid.first, grid.last + 1))


@settings(max_examples=300, deadline=None)
@given(bounds(), st.lists(extreme_doubles, min_size=1, max_size=20))
def test_floor_index_brackets_every_value_and_points_round_trip(case, values):
    lower, upper = case
    grid = RelativeGrid(lower, upper)
    points = all_points(grid)
    assert np.all(np.isfinite(points)) and np.all(np.diff(points) > 0)
    assert lower <= points[0] and points[-1] <= upper
    v = np.clip(np.array(values), points[0], points[-1])
    index, on_grid = grid.locate(v)
    assert np.all(index == np.floor(index))
    np.testing.assert_array_equal(points[(index - grid.first).astype(int)] <= v, True)
    after = (index - grid.first + 1).astype(int)
    inside = after < points.size
    assert np.all(points[after[inside]] > v[inside])
    np.testing.assert_array_equal(
        on_grid, points[(index - grid.first).astype(int)] == v
    )
    np.testing.assert_array_equal(
        grid.locate(points)[0], np.arange(grid.first, grid.last + 1)
    )


@pytest.mark.parametrize(
    "lower, upper",
    [(0.0, 100.0), (0.0, 1e5), (-50.0, 50.0), (-1e9, 1e12), (17.0, 90.0), (-3.7, 2.2)],
)
def test_never_coarser_than_the_uniform_grid_and_fine_near_every_scale(lower, upper):
    grid = RelativeGrid(lower, upper)
    points = all_points(grid)
    step = np.diff(points)
    coarse = 2.0 ** quantile_grid_exponent(lower, upper, bits=COARSE_BITS)
    assert step.max() <= coarse  # the old joint grid's step, at most
    magnitude = np.maximum(np.abs(points[:-1]), np.abs(points[1:]))
    relative = magnitude >= 2.0 ** (grid.fine + RELATIVE_BITS + 1)
    assert np.all(step[relative] <= magnitude[relative] * 2.0**-RELATIVE_BITS)
    # every integer of magnitude below 2**(bits + 1) in the bounds is a point
    # (when the finest step is at most 1: bounds up to 2**(12 + binades) wide)
    assert grid.fine <= 0 or upper - lower > 2.0 ** (12 + RELATIVE_BINADES)
    integers = np.arange(
        max(math.ceil(lower), -(2 ** (RELATIVE_BITS + 1)) + 1),
        min(math.floor(upper), 2 ** (RELATIVE_BITS + 1) - 1) + 1,
        dtype=float,
    )
    assert grid.fine > 0 or np.all(grid.locate(integers)[1])
    limit = 2 ** (RELATIVE_BITS + 1) + RELATIVE_BINADES * 2**RELATIVE_BITS + 4096
    assert grid.size <= 2 * limit + 1


def test_forty_is_a_point_whatever_the_upper_bound():
    # the old joint grid's step was (upper - lower) / 2**11: with (0, 1e5)
    # it was 32, and Adult's median hours-per-week (40) could not be released
    for upper in (50.0, 100.0, 1e3, 1e5, 1e7, 1e9):
        assert RelativeGrid(0.0, upper).locate(np.array([40.0]))[1][0]


def test_counts_are_the_definitions_in_chunks():
    rng = np.random.default_rng(0)
    column = np.concatenate([rng.normal(0, 5, 3000), np.full(500, 40.0), [-80, 80]])
    grid = RelativeGrid(-50.0, 50.0)
    points = all_points(grid)
    clipped = np.clip(column, points[0], points[-1])
    for chunk_rows in (1, 7, 1 << 16):
        below, atoms = relative_grid_counts(column, grid, chunk_rows=chunk_rows)
        some = np.flatnonzero(atoms)[:50]
        for i in some:
            assert atoms[i] == np.sum(clipped == points[i])
        probe = rng.integers(0, points.size, 200)
        for i in probe:
            assert below[i] == np.sum(clipped < points[i])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 3), min_size=1, max_size=12),
    st.lists(st.booleans(), min_size=12, max_size=12),
    st.integers(0, 3),
    st.lists(st.integers(1, 4), min_size=12, max_size=12),
)
def test_blocks_expand_to_the_rank_states(
    atom_counts, between_flags, split_bits, copies
):
    atoms = np.array(atom_counts, dtype=np.int64)
    between = np.array(between_flags[: atoms.size], dtype=np.int64)
    between[-1] = 0  # nothing after the last point (clipped)
    below = np.zeros(atoms.size, dtype=np.int64)
    np.cumsum((atoms + between)[:-1], out=below[1:])
    multiplicity = np.array(copies[: atoms.size], dtype=np.int64)
    ranks, sizes, points, gap = rank_blocks(below, atoms, split_bits, multiplicity)
    per_point = (1 << split_bits) + 1
    # every state of point i in multiplicity[i] copies, in order
    states = np.repeat(
        rank_states(below, atoms, split_bits), np.repeat(multiplicity, per_point)
    )
    owner = np.repeat(np.arange(atoms.size), per_point * multiplicity)
    counts = sizes.astype(int)
    np.testing.assert_array_equal(np.repeat(ranks, counts), states)
    block = np.repeat(np.arange(counts.size), counts)
    offsets = np.arange(states.size) - np.repeat(np.cumsum(counts) - counts, counts)
    located = state_points(points[block], offsets, gap[block], multiplicity, split_bits)
    np.testing.assert_array_equal(located, owner)
    # gap blocks are runs of rank-equal states: no two adjacent ones share a rank
    joined = gap[1:] & gap[:-1] & (ranks[1:] == ranks[:-1])
    assert not joined.any()
