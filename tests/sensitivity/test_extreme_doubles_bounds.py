"""Clipping to bounds fuzzed with extreme doubles against the stated sensitivities.

The per-feature sums (centred and split sums of the private mean, Bernstein
moment sums of the scaler and naive Bayes, histogram counts, the SVT soft
counts) on rows of subnormals, ±the largest double, zeros and huge values,
with public bounds anywhere the validators accept them (``lower < upper``,
half the width not rounding to 0; a finite width where it is required),
including bounds at ±the largest double and subnormal bounds. One added row
must move the exact sums by at most the stated amount, checked on the
integer numerators.
"""

import numpy as np
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from skdp.sensitivity import (
    exact_centred_sums,
    exact_histogram_counts,
    exact_moment_sums,
    exact_split_sums,
    soft_counts_above,
    soft_counts_below,
)
from skdp.sensitivity._joint_quantile import relative_grid_counts
from skdp.sensitivity._mean import FIXED_POINT_BITS
from skdp.sensitivity._quantile_grid import RelativeGrid
from skdp.sensitivity._soft_counts import (
    soft_count_layout,
    soft_counts_from_tally,
    tally_columns,
)
from skdp.utils._validation import check_bounds, check_required_bounds
from tests.sensitivity._extreme_strategies import extreme_doubles, rows

# No float warning either: these run after an estimator's charge.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
FUZZ = settings(max_examples=200, deadline=None)
ONE = 1 << FIXED_POINT_BITS


@st.composite
def accepted_bounds(draw, d, *, finite_width=False):
    """Per-feature bounds that the estimators' validators accept."""
    pairs = [sorted([draw(extreme_doubles), draw(extreme_doubles)]) for _ in range(d)]
    lower, upper = (np.array(v) for v in zip(*pairs, strict=True))
    check = check_required_bounds if finite_width else check_bounds
    try:
        if finite_width:
            return check((lower, upper), d, "fuzz")
        return check((lower, upper), d)
    except ValueError:
        assume(False)


@st.composite
def data_row_bounds(draw, *, finite_width=False):
    d = draw(st.integers(1, 3))
    n = draw(st.integers(0, 3))
    base = np.array([draw(rows(d)) for _ in range(n)]).reshape(n, d)
    lower, upper = draw(accepted_bounds(d, finite_width=finite_width))
    return base, draw(rows(d)), lower, upper


def added(before, after):
    """The integer numerators the added row contributed."""
    return np.array(after.numerators, dtype=object) - np.array(
        before.numerators, dtype=object
    )


@FUZZ
@given(data_row_bounds())
def test_centred_sums_move_by_at_most_one_per_feature(case):
    base, row, lower, upper = case
    delta = added(
        exact_centred_sums(base, lower, upper),
        exact_centred_sums(np.vstack([base, row]), lower, upper),
    )
    assert all(abs(v) <= ONE for v in delta)


@FUZZ
@given(data_row_bounds())
def test_split_sums_add_a_pair_summing_to_one_per_feature(case):
    base, row, lower, upper = case
    delta = added(
        exact_split_sums(base, lower, upper),
        exact_split_sums(np.vstack([base, row]), lower, upper),
    ).reshape(2, -1)
    # numerators in units of 2**-33: (a, 1 - a) with a in [0, 1]
    assert all(v >= 0 for v in delta.ravel())
    assert all(a + b == 2 * ONE for a, b in delta.T)


@FUZZ
@given(data_row_bounds(), st.integers(1, 3), st.data())
def test_moment_sums_add_a_partition_of_one_in_the_row_group(case, groups, data):
    base, row, lower, upper = case
    codes = np.array(
        [data.draw(st.integers(0, groups - 1)) for _ in range(base.shape[0] + 1)]
    )
    before = exact_moment_sums(base, lower, upper, codes[:-1], groups)
    after = exact_moment_sums(np.vstack([base, row]), lower, upper, codes, groups)
    delta = added(before, after).reshape(groups, 3, -1)
    for group in range(groups):
        if group == codes[-1]:
            assert all(v >= 0 for v in delta[group].ravel())
            assert all(total == ONE for total in delta[group].sum(axis=0))
        else:
            assert all(v == 0 for v in delta[group].ravel())


@FUZZ
@given(data_row_bounds(finite_width=True), st.integers(1, 6))
def test_histogram_adds_one_count_in_the_row_bin_per_feature(case, bins):
    base, row, lower, upper = case
    with np.errstate(over="ignore"):  # as the estimator would build them
        edges = [np.linspace(a, b, bins + 1) for a, b in zip(lower, upper, strict=True)]
    assume(all(np.all(np.diff(e) > 0) for e in edges))  # a public property
    before = exact_histogram_counts(base, edges)
    after = exact_histogram_counts(np.vstack([base, row]), edges)
    delta = added(before, after).reshape(len(edges), bins)
    for j, feature_edges in enumerate(edges):
        expected = np.searchsorted(feature_edges[1:-1], row[j], side="right")
        assert delta[j].tolist() == [int(k == expected) for k in range(bins)]


@st.composite
def increasing_grids(draw):
    grid = np.unique([draw(extreme_doubles) for _ in range(draw(st.integers(2, 6)))])
    assume(grid.size >= 2)
    return grid


@FUZZ
@pytest.mark.parametrize("counts", [soft_counts_above, soft_counts_below])
@given(st.lists(extreme_doubles, max_size=4), extreme_doubles, increasing_grids())
def test_soft_counts_move_by_at_most_one_in_one_direction(counts, x, row, grid):
    try:
        before = counts(np.array(x), grid)
    except ValueError:  # a grid refused for itself (public): no data read
        assume(False)
    after = counts(np.array([*x, row]), grid)
    delta = after - before
    assert np.all((delta >= 0) & (delta <= 1))


@FUZZ
@given(
    st.lists(extreme_doubles, max_size=4),
    extreme_doubles,
    increasing_grids(),
    st.booleans(),
    st.one_of(st.just(0.0), extreme_doubles),
)
def test_soft_counts_by_lookup_table_move_by_at_most_one(
    x, row, grid, two_sided, origin
):
    # the bucket-table binning used from LOOKUP_MIN_ROWS rows on, one- and
    # two-sided, around any public origin
    two_sided = two_sided and grid[0] > 0
    origin = 0.0 if two_sided else origin
    try:
        layout = soft_count_layout(grid, two_sided=two_sided, origin=origin)
    except ValueError:  # a grid refused for itself (public): no data read
        assume(False)
    event(f"bucket table: {layout.table is not None}")
    before = soft_counts_from_tally(
        tally_columns(np.array(x)[:, None], layout), two_sided=two_sided
    )
    after = soft_counts_from_tally(
        tally_columns(np.array([*x, row])[:, None], layout), two_sided=two_sided
    )
    for old, new in zip(before, after, strict=True):
        if old is not None:
            delta = new - old
            assert np.all((delta >= 0) & (delta <= 1))
    expected = soft_counts_above(np.array([*x, row]), grid)
    np.testing.assert_array_equal(after[0][0], expected)


@FUZZ
@given(data_row_bounds())
def test_joint_quantile_rank_counts_move_as_their_definition(case):
    # the joint quantile's sensitivity 2 rests on this: an added row z adds
    # 1 to #{x < c_i} where clip(z) < c_i and to #{x = c_i} where equal
    base, row, lower, upper = case
    lo, hi = float(lower[0]), float(upper[0])
    grid = RelativeGrid(lo, hi)
    column = base[:, 0]
    below0, atoms0 = relative_grid_counts(column, grid)
    below1, atoms1 = relative_grid_counts(np.r_[column, row[0]], grid)
    points = grid.points(np.arange(grid.first, grid.last + 1))
    assert np.all(np.isfinite(points)) and np.all(np.diff(points) > 0)
    assert lo <= points[0] and points[-1] <= hi
    z = min(max(float(row[0]), float(points[0])), float(points[-1]))
    np.testing.assert_array_equal(below1 - below0, (z < points).astype(np.int64))
    np.testing.assert_array_equal(atoms1 - atoms0, (z == points).astype(np.int64))
