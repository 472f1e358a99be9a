"""The exactness bound of the soft-count tallies at its edge (review).

A block holds at most 2**16 - 1 values and every value adds ``2**36 +
units`` (``units <= 2**20``) to one float bin of a weighted bincount; the
docstring's bound is ``(2**16 - 1)(2**36 + 2**20) < 2**53``. The edge is
reached with one lane (a grid so fine that lanes are not worth their bins)
and every row of every block in one bin with the largest ramp.
"""

import numpy as np

from skdp.sensitivity import _soft_counts
from skdp.sensitivity._soft_counts import (
    soft_count_layout,
    soft_counts_from_tally,
    tally_columns,
)
from tests._sorted_soft_counts import sorted_soft_counts_above


def test_one_lane_full_blocks_on_one_bin_with_ramp_one_are_exact():
    grid = np.linspace(1.0, 2.0, 5001)  # 5000 bins: one lane per column
    layout = soft_count_layout(grid)
    assert _soft_counts._lane_count(1, layout.n_bins) == 1
    n = 3 * _soft_counts._BLOCK + 7  # full blocks and a partial one
    # above the grid (clipped to its top: ramp exactly 1 in the last bin) and
    # on a grid point (ramp d/d = 1)
    x = np.concatenate([np.full(n, 5.0), np.full(n, grid[2500])])
    tally = tally_columns(x[:, None], layout)
    assert tally.counts[0, -1] == n and tally.units[0, -1] == n << 20
    assert tally.counts[0, 2499] == n and tally.units[0, 2499] == n << 20
    above, _ = soft_counts_from_tally(tally)
    np.testing.assert_array_equal(above[0], sorted_soft_counts_above(x, grid))


def test_eight_columns_share_full_blocks_exactly():
    # 8 columns: 8191 rows of 8 values per block (65528 <= 2**16 - 1)
    grid = np.linspace(-3.0, 3.0, 5001)
    layout = soft_count_layout(grid)
    n = 3 * (_soft_counts._BLOCK // 8) + 5
    X = np.full((n, 8), 10.0)
    X[:, 3] = np.nextafter(grid[10], -np.inf)  # ramp just below 1 in bin 8
    tally = tally_columns(X, layout)
    above, _ = soft_counts_from_tally(tally)
    for f in range(8):
        np.testing.assert_array_equal(above[f], sorted_soft_counts_above(X[:, f], grid))
