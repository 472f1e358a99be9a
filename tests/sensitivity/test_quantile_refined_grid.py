"""The joint quantiles' grid refined with ε: a public rule, exact counts on
grids of any size, and convergence to the sample quantiles as ε grows."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdp.mechanisms._joint_quantile import _uniform_below, joint_quantile_blocks
from skdp.mechanisms._random import check_random_source
from skdp.sensitivity._joint_quantile import (
    SPLIT_BITS,
    rank_blocks,
    refined_split_bits,
    relative_grid_counts,
    sparse_rank_blocks,
    sparse_state_points,
    state_points,
)
from skdp.sensitivity._quantile_grid import (
    MAX_REFINEMENT,
    RelativeGrid,
    refinement_bits,
)
from skdp.stats._quantile_joint import joint_release
from tests.sensitivity._extreme_strategies import extreme_doubles

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def test_refinement_is_zero_at_the_default_epsilon_then_one_bit_per_doubling():
    assert [refinement_bits(e) for e in (1e-3, 0.3, 1.0, 1.99)] == [0, 0, 0, 0]
    assert [refinement_bits(e) for e in (2.0, 3.9, 4.0, 1000.0)] == [1, 1, 2, 9]
    assert refinement_bits(1e6) == refinement_bits(1e300) == MAX_REFINEMENT
    assert refined_split_bits(0) == SPLIT_BITS
    assert refined_split_bits(MAX_REFINEMENT) == SPLIT_BITS + 7


def test_the_default_grid_is_unchanged():
    for lower, upper in [(0.0, 1e5), (-50.0, 150.0), (0.0, 0.01)]:
        old, new = RelativeGrid(lower, upper), RelativeGrid(lower, upper, 0)
        assert (old.bits, old.coarse, old.fine, old.first, old.last) == (
            new.bits,
            new.coarse,
            new.fine,
            new.first,
            new.last,
        )
        assert old.size < 1 << 17  # counted densely, at the old speed


@pytest.mark.parametrize("refine", [0, 1, 3])
@pytest.mark.parametrize(
    "lower, upper",
    [(0.0, 1e5), (-50.0, 150.0), (1e9, 1e9 + 1.0), (0.0, 1e-300), (-3.0, 2.0)],
)
def test_cumulative_is_the_running_sum_of_multiplicities(lower, upper, refine):
    grid = RelativeGrid(lower, upper, refine)
    index = np.arange(grid.first, grid.last + 2)
    running = grid.cumulative(index) - grid.cumulative(grid.first)
    expected = np.concatenate(([0], np.cumsum(grid.multiplicity(index[:-1]))))
    np.testing.assert_array_equal(running, expected)


@pytest.mark.parametrize(
    "lower, upper",
    [(0.0, 1e5), (-1e9, 1e9), (1e9, 1e9 + 1.0), (0.0, 1e-300), (-1.7e308, 1.7e308)],
)
def test_the_finest_grid_has_exact_int64_totals(lower, upper):
    grid = RelativeGrid(lower, upper, MAX_REFINEMENT)
    total = grid.cumulative(grid.last + 1) - grid.cumulative(grid.first)
    assert 0 < total < 2**58  # differences of the wrapped int64 are exact
    # relative resolution 2**-(bits) and a coarse step of width / 2**21
    assert grid.bits == 18
    assert math.ldexp(1.0, grid.coarse) <= max(
        (upper - lower) / 2**21, math.ulp(max(abs(lower), abs(upper)))
    )


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([(0.0, 100.0), (-50.0, 150.0), (-3.0, 2.0), (0.0, 1e6)]),
    st.lists(extreme_doubles, min_size=1, max_size=40),
    st.lists(st.integers(-60, 160), max_size=40),
    st.integers(0, 3),
    st.lists(st.sampled_from([0.3485, 40.1, -7.77, 99.99]), max_size=30),
)
def test_sparse_blocks_are_the_dense_blocks(bounds, values, integers, refine, ties):
    # ties: values between grid points, each counted at its nearest point
    lower, upper = bounds
    column = np.array(values + [float(v) for v in integers] + ties)
    grid = RelativeGrid(lower, upper, refine)
    split = refined_split_bits(refine)
    multiplicity = grid.multiplicity(np.arange(grid.first, grid.last + 1))
    below, atoms = relative_grid_counts(column, grid)
    dense = rank_blocks(below, atoms, split, multiplicity)
    sparse = sparse_rank_blocks(column, grid, split)
    for a, b in zip(dense, sparse, strict=True):
        np.testing.assert_array_equal(a, b.astype(a.dtype))
    _, sizes, points, gap = sparse
    gaps = np.flatnonzero(gap)
    for block in gaps[:5]:  # first, last and middle states of gap blocks
        size = int(sizes[block])
        offsets = np.array([0, size // 2, size - 1], dtype=object)
        where = np.full(3, points[block])
        flags = np.full(3, True)
        np.testing.assert_array_equal(
            sparse_state_points(where, offsets, flags, grid, split),
            state_points(where, offsets, flags, multiplicity, split),
        )


def test_uniform_below_beyond_int64_is_uniform_and_in_range():
    source = check_random_source(0)
    high = 3 * 2**70 + 1
    draws = [_uniform_below(high, source) for _ in range(3000)]
    assert all(0 <= d < high for d in draws)
    thirds = np.bincount([3 * d // high for d in draws], minlength=3)
    assert thirds.min() > 900  # each third near 1000


def test_blocks_of_more_than_int64_states_are_drawn_exactly():
    sizes = np.array([2**80, 1, 2**80], dtype=object)
    blocks, offsets = joint_quantile_blocks(
        np.array([0.0, 5.0, 10.0]), sizes, 10, np.array([0.5]), 1e6, random_state=1
    )
    assert blocks.tolist() == [1] and offsets.tolist() == [0]
    blocks, offsets = joint_quantile_blocks(
        np.array([0.0, 10.0]), sizes[::2], 10, np.array([0.5]), 1e-9, random_state=2
    )
    assert 0 <= offsets[0] < 2**80


# -- convergence as ε grows (issue 27 item 1) --------------------------------


def rank_error(column, value, q):
    n = column.size
    below, upto = np.sum(column < value), np.sum(column <= value)
    return max(0.0, below - q * n, q * n - upto)


@pytest.mark.parametrize("seed", range(5))
def test_a_quantile_after_a_large_atom_converges(seed):
    # 85 % zeros, then a lognormal: the 90 % quantile was 5 to 9 ranks off
    # at ε = 1e6 (a coarse grid and 33 states on the atom)
    rng = np.random.default_rng(seed)
    column = np.where(rng.random(3000) < 0.85, 0.0, rng.lognormal(7, 1, 3000))
    levels = np.array([0.1, 0.5, 0.9])
    released = joint_release(
        column, 0.0, 1e6, levels, 1e6 / 6, check_random_source(seed)
    )
    errors = [rank_error(column, v, q) for v, q in zip(released, levels, strict=True)]
    assert max(errors) <= 1.0


@pytest.mark.parametrize("seed", range(5))
def test_a_continuous_median_converges_with_wide_bounds(seed):
    # a width/2**11 grid leaves the rows of a cell as an error at any ε
    rng = np.random.default_rng(seed)
    column = rng.normal(0.48, 0.16, 17379).clip(0, 1).round(6)
    released = joint_release(
        column, 0.0, 1e3, np.array([0.5]), 1e6, check_random_source(seed)
    )
    assert rank_error(column, released[0], 0.5) <= 1.0


@pytest.mark.parametrize("column", [[], [3.0, 3.0], [-1.0, 2e6]])
def test_sparse_blocks_of_tiny_columns_are_the_dense_blocks(column):
    grid = RelativeGrid(0.0, 1e6, 1)
    column = np.array(column)
    multiplicity = grid.multiplicity(np.arange(grid.first, grid.last + 1))
    dense = rank_blocks(*relative_grid_counts(column, grid), 6, multiplicity)
    for a, b in zip(dense, sparse_rank_blocks(column, grid, 6), strict=True):
        np.testing.assert_array_equal(a, b.astype(a.dtype))


def test_small_ties_cost_blocks_by_their_rows_not_by_the_split_states():
    # Adult's fnlwgt at eps = 167 (12 split bits): every tie of a few rows
    # was 4,097 blocks (33 million for the column, 493 s and 12.5 GB for
    # five levels); a tie of a rows now has min(a, 2**bits) + 1 blocks
    rng = np.random.default_rng(0)
    values = rng.choice(np.arange(100_000.0, 200_000.0, 4.0), 300, replace=False)
    column = np.repeat(values, rng.integers(1, 4, values.size))
    grid = RelativeGrid(0.0, 2e6, 7)
    split = refined_split_bits(7)
    ranks, _, _, _ = sparse_rank_blocks(column, grid, split)
    assert ranks.size <= column.size + 2 * values.size + 1
    # and the quantiles stay exact at that eps
    levels = np.array([0.1, 0.5, 0.9])
    released = joint_release(column, 0.0, 2e6, levels, 167.0, check_random_source(0))
    errors = [rank_error(column, v, q) for v, q in zip(released, levels, strict=True)]
    assert max(errors) <= 1.0
