"""Soft counts over a public grid from per-bin tallies, without a sort.

The SVT queries of the bound search (ALGORITHMS.md §4.4) are soft counts
``q_j = Σ_i ramp_j(x_i)`` over a public increasing grid ``b_0 < ... <
b_{k-1}``, with ``ramp_j(x) = clip((x - b_j)/(b_{j+1} - b_j), 0, 1)``. A row
in the interval ``(b_j, b_{j+1}]`` adds 1 to every query below ``j``, its ramp
to query ``j`` and nothing above, so all queries follow from two numbers per
interval (bin): how many rows fall in it and the sum of their rounded ramps.
Both are sums over rows, so a chunk of rows gives a :class:`GridTally`,
tallies of chunks add up, and the queries are computed from the reduced tally
(:func:`soft_counts_from_tally`): one pass over the data, no sort, no copy of
the data beyond a block of rows, and the same values bit for bit as the sort
and prefix sums of earlier versions.
"""

from dataclasses import dataclass

import numpy as np

from skdp.sensitivity._float_buckets import bucket_table

__all__ = [
    "LOOKUP_MIN_ROWS",
    "SOFT_COUNT_BITS",
    "GridTally",
    "SoftCountLayout",
    "sign_counts_from_tally",
    "soft_count_layout",
    "soft_count_widths",
    "soft_counts_above",
    "soft_counts_below",
    "soft_counts_from_tally",
    "tally_columns",
]

#: Each row's ramp is rounded to a multiple of ``2**-20`` and the soft counts
#: are summed in integers (see :func:`soft_counts_above`).
SOFT_COUNT_BITS = 20
_ONE = float(1 << SOFT_COUNT_BITS)

# Above this magnitude, differences of two grid points may overflow: the
# grid and the data are halved first, as they always were.
_HALF_MAX = np.finfo(np.float64).max / 4

# Values per block: the most for which the float sums of one block's bins
# are exact (see _tally_block); fewer calls per row than 2**15 values, which
# measured slower although its buffers fit the L2 cache.
_BLOCK = (1 << 16) - 1
# Each row's weight in the one weighted bincount of a block is its ramp in
# units of 2**-20 (at most 2**20) plus this marker: a bin's total is then
# count * 2**36 + units with units < 2**16 * 2**20 = 2**36, below 2**53.
_COUNT_SHIFT = 36
_COUNT_WEIGHT = float(1 << _COUNT_SHIFT)

# Columns read together: each block's bincount has this many times n_bins
# bins (few, however wide X is), and one column gets blocks of 2**16 - 1 rows.
_GROUP = 8
# Independent sub-histograms ("lanes") per block: consecutive values go to
# different lanes, so that a run of rows in one bin is not one chain of
# dependent float additions in bincount (3.5 times slower on one column of
# concentrated data). At least this many lanes, while the lanes' bins stay few.
_LANES = 8
_MAX_LANE_BINS = 1 << 12

#: Below this many rows the lookup table is not worth building.
LOOKUP_MIN_ROWS = 1 << 14


@dataclass(frozen=True)
class GridTally:
    """Per-bin row counts and rounded ramp sums: additive over chunks of rows.

    Parameters
    ----------
    counts : ndarray of int64, shape (..., n_bins)
        Rows per bin.
    units : ndarray of int64, shape (..., n_bins)
        Sum per bin of the rows' ramps, in units of ``2**-20``.

    Notes
    -----
    The tally of the union of two disjoint sets of rows is the sum of their
    tallies (``a + b``), exactly: integers. A tally is not a release; it is
    the data's sufficient statistic for the queries.
    """

    counts: np.ndarray
    units: np.ndarray

    def __add__(self, other):
        if not isinstance(other, GridTally):
            return NotImplemented
        return GridTally(self.counts + other.counts, self.units + other.units)


@dataclass(frozen=True)
class SoftCountLayout:
    """Everything public about binning rows against one grid.

    Built by :func:`soft_count_layout`. A row ``x`` is first clipped to
    ``[low, high]``; its bin is ``#{t : breakpoints[t] < x}``; its ramp is
    ``(x - ramp_origin[bin]) / ramp_width[bin]`` (in units of ``2**-20`` when
    ``folded``), computed on ``x / 2`` and halved tables when ``halved``.
    """

    grid: np.ndarray
    two_sided: bool
    low: float
    high: float
    breakpoints: np.ndarray
    ramp_origin: np.ndarray
    ramp_width: np.ndarray
    halved: bool
    folded: bool
    table: object

    @property
    def n_bins(self):
        return self.breakpoints.size + 1


def _halved(grid):
    """Whether the grid is halved first: an end beyond a quarter of the
    largest double, where differences of grid points could overflow."""
    return max(abs(grid[0]), abs(grid[-1])) > _HALF_MAX


def soft_count_widths(grid):
    """The widths ``b_{j+1} - b_j`` as the soft counts compute them.

    Parameters
    ----------
    grid : ndarray of shape (k,)
        Public strictly increasing candidate bounds, finite.

    Returns
    -------
    widths : ndarray of shape (k - 1,)
        Computed on the halved grid when an end is beyond a quarter of the
        largest double. Halving can merge two subnormal points (``4 * 2**-1074``
        and ``5 * 2**-1074`` both halve to ``2 * 2**-1074``): the grid is usable
        only if every width is positive, which callers check before any
        charge.
    """
    grid = np.asarray(grid, dtype=np.float64)
    return np.diff(grid / 2 if _halved(grid) else grid)


def _ramp_tables(grid, halved, folded):
    """Origins and widths of the k - 1 upper ramps (halved, scaled if asked)."""
    if halved:
        grid = grid / 2
    width = np.diff(grid)
    if folded:
        width = width / _ONE  # exact: every width is >= 2**-1002
    return grid[:-1], width


def soft_count_layout(grid, *, two_sided=False, origin=0.0, lookup=True):
    """The public binning of rows against a strictly increasing grid.

    Parameters
    ----------
    grid : ndarray of shape (k,)
        Public strictly increasing candidate bounds, finite, ``k >= 2``.
    two_sided : bool, default=False
        Also tally ``-x`` against the same grid (the lower-bound search around
        0), and the signs of the rows; needs ``grid[0] > 0``.
    origin : float, default=0.0
        Public point the grid spreads out from (one-sided): rows are binned
        by the top bits of ``x - origin``, so a geometric grid around any
        origin gets a small lookup table. Any value gives the same bins.
    lookup : bool, default=True
        Build the bucket table that bins rows by lookup; without it (worth it
        for small data only) rows are binned by ``searchsorted``. The bins,
        hence the tallies, are the same either way.

    Returns
    -------
    layout : SoftCountLayout

    Notes
    -----
    One-sided, the bins are the k - 1 intervals ``(b_j, b_{j+1}]`` after
    clipping ``x`` to ``[b_0, b_{k-1}]``: a row below ``b_0`` then has ramp
    0 in bin 0 and a row above ``b_{k-1}`` ramp exactly 1 in bin k - 2, the
    contributions it had before clipping. Two-sided, the 2k + 1 bins are, in
    increasing ``x``: ``-x`` in ``(b_j, b_{j+1}]`` for ``j = k-2, ..., 0``;
    then ``(-b_0, 0)``, ``{0}`` and ``(0, b_0]``, whose ramps are 0 and which
    give the sign counts; then ``x`` in ``(b_j, b_{j+1}]``. The ramp of
    ``-x`` is computed as ``(x - (-b_j)) / (-(b_{j+1} - b_j))``, which
    rounds to exactly ``((-x) - b_j) / (b_{j+1} - b_j)``: negation is exact
    and rounding to nearest is symmetric.

    **The same doubles as the sorted computation.** Every rounded ramp is
    the one the sort and prefix sums of earlier versions gave the row:

    * *Bins.* A row with ``b_j < x <= b_{j+1}`` is in bin j, the interval
      whose block of sorted rows held it. A row exactly on ``b_{j+1}`` has
      ramp exactly 1 in bin j (``d / d``) and 0 in bin j + 1, which
      contribute alike, so the side of a boundary never matters.
    * *No clip needed.* Rounding is monotone, so for ``b_j < x <= b_{j+1}``
      the computed ``x - b_j`` lies in ``[0, b_{j+1} - b_j]`` (as computed)
      and the quotient in [0, 1]: the clip of the ramp was the identity.
      Rows below ``b_0`` or above ``b_{k-1}`` are clipped to them first,
      which gives them the ramp 0 or exactly 1 that clipping the ramp gave.
    * *Folded scaling.* With every width at least ``2**-1002``, the width
      times ``2**-20`` is exact and ``(x - b_j) / (w 2**-20)`` rounds to
      ``2**20`` times the rounded quotient whenever that is normal; a
      subnormal or zero quotient rounds to 0 units either way. The rounded
      units are the same integers.
    * *Halved grids* (an end beyond a quarter of the largest double): the
      ramps are computed on the clipped ``x / 2`` and the halved grid, as
      before; bins come from ``x`` itself. Halving is monotone, so the
      ramp stays in [0, 1]; where it merges ``x > b_j`` with ``b_j``
      (subnormal halves), the sorted computation put the row in bin j - 1
      with ramp 1 and this one puts it in bin j with ramp 0: the same
      contributions.

    The tests compare the queries with the sorted computation (kept there as
    the reference) bit for bit on adversarial inputs: grid ties and their
    neighbouring doubles, signed zeros, subnormals, values near the float
    limit, one row, columns entirely outside the grid.
    """
    grid = np.asarray(grid, dtype=np.float64)
    halved = _halved(grid)
    widths = soft_count_widths(grid)
    if not np.all(widths > 0):
        raise ValueError(
            "The grid of the soft counts must be strictly increasing, also "
            "once halved near the float limit (subnormal points may merge)."
        )
    folded = bool(np.min(widths) >= 2.0**-1002)
    ramp_origin, ramp_width = _ramp_tables(grid, halved, folded)
    if not two_sided:
        breakpoints = grid[1:-1]
        low, high = grid[0], grid[-1]
    else:
        if not grid[0] > 0:
            raise ValueError("A two-sided layout needs a positive grid.")
        tiny = np.nextafter(-0.0, -1.0)  # the negative double nearest 0
        breakpoints = np.concatenate([-grid[-2::-1], [tiny, 0.0], grid[:-1]])
        low, high = -grid[-1], grid[-1]
        middle = np.zeros(3)
        ramp_origin = np.concatenate([-ramp_origin[::-1], middle, ramp_origin])
        ramp_width = np.concatenate([-ramp_width[::-1], np.full(3, np.inf), ramp_width])
    table = None
    if lookup:
        offset = 0.0 if two_sided else float(origin)
        table = bucket_table(breakpoints, float(low), float(high), offset)
        if table is None and offset != 0:
            table = bucket_table(breakpoints, float(low), float(high))
    return SoftCountLayout(
        grid,
        two_sided,
        float(low),
        float(high),
        breakpoints,
        ramp_origin,
        ramp_width,
        halved,
        folded,
        table,
    )


def _lane_count(columns, n_bins):
    """Lanes per block: a multiple of the columns, about ``_LANES`` of them
    unless that makes more than ``_MAX_LANE_BINS`` bins."""
    per_column = -(-_LANES // columns)  # ceil
    per_column = max(1, min(per_column, _MAX_LANE_BINS // (columns * n_bins)))
    return columns * per_column


class _Workspace:
    """Buffers for one block of values, allocated once per tally.

    ``lane_offsets`` send value ``p`` of a block (row-major, ``columns``
    wide) to the bins of lane ``p % lanes``; with ``lanes`` a multiple of
    ``columns``, lane ``l`` holds only column ``l % columns``.
    """

    def __init__(self, size, columns, n_bins):
        self.values = np.empty(size)
        self.other = np.empty(size)
        self.keys = np.empty(size, dtype=np.int64)
        self.bins = np.empty(size, dtype=np.intp)
        self.flags = np.empty(size, dtype=bool)
        self.lanes = _lane_count(columns, n_bins)
        self.lane_offsets = (np.arange(size) % self.lanes) * n_bins

    def take(self, size):
        return (
            self.values[:size],
            self.other[:size],
            self.keys[:size],
            self.bins[:size],
            self.flags[:size],
        )


def _bin_values(values, layout, work):
    """Write ``#{t : breakpoints[t] < v}`` of every clipped value into bins."""
    _, other, keys, bins, flags = work
    table = layout.table
    if table is None:
        bins[...] = np.searchsorted(layout.breakpoints, values, side="left")
        return
    keyed = values
    if table.offset != 0:
        keyed = np.subtract(values, table.offset, out=other)
    np.right_shift(keyed.view(np.int64), table.shift, out=keys)
    keys -= table.first
    np.take(table.base, keys, out=bins, mode="clip")
    np.take(table.edge, keys, out=other, mode="clip")
    np.greater(values, other, out=flags)
    bins += flags


def _ramp_weights(values, layout, work):
    """Each value's ramp in units of 2**-20, rounded, plus the count marker."""
    _, other, _, bins, _ = work
    if layout.halved:
        values *= 0.5
    np.take(layout.ramp_origin, bins, out=other, mode="clip")
    values -= other
    np.take(layout.ramp_width, bins, out=other, mode="clip")
    values /= other
    if not layout.folded:
        values *= _ONE
    np.rint(values, out=values)
    values += _COUNT_WEIGHT


def _tally_block(block, layout, work, n_bins):
    """Counts and units per (column, bin) of one block of rows, int64."""
    rows, columns = block.shape
    size = rows * columns
    lanes = work.lanes
    lane_offsets = work.lane_offsets[:size]
    values, _, _, bins, _ = work = work.take(size)
    np.clip(block, layout.low, layout.high, out=values.reshape(rows, columns))
    _bin_values(values, layout, work)
    _ramp_weights(values, layout, work)
    bins += lane_offsets  # lane l's bins after those of lanes 0..l-1
    totals = np.bincount(bins, weights=values, minlength=lanes * n_bins)
    totals = totals.astype(np.int64).reshape(lanes // columns, columns, n_bins)
    totals = totals.sum(axis=0)
    return totals >> _COUNT_SHIFT, totals & ((1 << _COUNT_SHIFT) - 1)


def tally_columns(X, layout, columns=None):
    """The :class:`GridTally` of columns of ``X`` against one layout.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite values.
    layout : SoftCountLayout
        From :func:`soft_count_layout`.
    columns : array-like of int or None, default=None
        The columns to tally (all when None); read block by block.

    Returns
    -------
    tally : GridTally of shape (n_columns, layout.n_bins)

    Notes
    -----
    **Exact.** Each value's ramp is the same double as in a direct
    computation (see :func:`soft_count_layout`), rounded to a multiple of
    ``2**-20`` by ``rint`` as before. In a block of fewer than ``2**16`` values
    every row adds ``2**36 + units`` (``units <= 2**20``) to its bin of one
    weighted ``bincount`` (in one of a few lanes, see below): each partial
    float sum is an integer below ``2**16 (2**36 + 2**20) < 2**53``, hence
    exact in any order. A column's lanes are added in int64; the block's
    units are below ``2**16 2**20 = 2**36``, so the sum splits into the
    bin's count (``>> 36``) and units (the low 36 bits). Blocks are added in
    int64, exact below ``2**43`` rows.

    **Lanes.** Consecutive values of a block go to different copies of the
    bins (lanes) of that ``bincount``: rows that fall in one bin one after
    another (a column concentrated in a few bins) would otherwise be one
    chain of dependent additions, about 3.5 times slower. The lanes are
    summed per column afterwards; which lane a row went to changes no total.

    **Memory.** Six buffers of ``2**16`` values (about 2.6 MiB) and no copy
    of ``X``: one pass over the data in blocks of rows, reading up to 8
    columns together (wider data in groups of 8).
    """
    columns = np.arange(X.shape[1]) if columns is None else np.asarray(columns)
    counts = np.zeros((columns.size, layout.n_bins), dtype=np.int64)
    units = np.zeros((columns.size, layout.n_bins), dtype=np.int64)
    with np.errstate(over="ignore"):  # a value halved past the grid: ramp 0 or 1
        for first in range(0, columns.size, _GROUP):
            group = columns[first : first + _GROUP]
            counts[first : first + group.size], units[first : first + group.size] = (
                _tally_group(X, group, layout)
            )
    return GridTally(counts, units)


def _tally_group(X, group, layout):
    """Counts and units of a few columns, read together block by block."""
    n_rows, n_bins = X.shape[0], layout.n_bins
    if np.array_equal(group, np.arange(group[0], group[0] + group.size)):
        group = slice(group[0], group[0] + group.size)  # a view, not a copy
    size = X[:0, group].shape[1]
    rows = _BLOCK // size
    work = _Workspace(min(rows, n_rows) * size, size, n_bins)
    counts = np.zeros((size, n_bins), dtype=np.int64)
    units = np.zeros((size, n_bins), dtype=np.int64)
    for start in range(0, n_rows, rows):
        block = X[start : start + rows, group]  # a copy of one block at most
        block_counts, block_units = _tally_block(block, layout, work, n_bins)
        counts += block_counts
        units += block_units
    return counts, units


def _queries(counts, units):
    """``q_j = 2**20 #{rows in bins > j} + units_j``, as the nearest doubles
    scaled by ``2**-20`` (int64 arithmetic, then one rounding)."""
    beyond = np.cumsum(counts[..., ::-1], axis=-1)[..., ::-1] - counts
    total = (beyond << SOFT_COUNT_BITS) + units
    return np.ldexp(total.astype(np.float64), -SOFT_COUNT_BITS)


def soft_counts_from_tally(tally, *, two_sided=False):
    """The soft counts above every grid point (and below, two-sided).

    Parameters
    ----------
    tally : GridTally of shape (..., n_bins)
        From :func:`tally_columns` (possibly a sum of chunks' tallies).
    two_sided : bool, default=False
        Whether the layout was two-sided (``n_bins = 2k + 1``; one-sided
        ``n_bins = k - 1``).

    Returns
    -------
    above : ndarray of shape (..., k - 1)
        :func:`soft_counts_above` of the tallied rows.
    below : ndarray of shape (..., k - 1) or None
        Two-sided: :func:`soft_counts_above` of the negated rows against the
        same grid; one-sided: None.

    Notes
    -----
    With ``c_i`` rows and ``u_i`` units in bin i of one side, a row of bin
    ``i > j`` lies above ``b_{j+1}`` and adds exactly ``2**20`` units to
    query j, a row of bin j its rounded ramp, a row of bin ``i < j`` nothing:
    ``q_j = 2**-20 (2**20 sum_{i > j} c_i + u_j)``, formed in int64 and
    rounded to a double once, as the sorted computation did.
    """
    if not two_sided:
        return _queries(tally.counts, tally.units), None
    k = (tally.counts.shape[-1] - 1) // 2
    upper = slice(k + 2, None)
    lower = slice(k - 2, None, -1)  # bin k - 2 - j holds -x in (b_j, b_{j+1}]
    above = _queries(tally.counts[..., upper], tally.units[..., upper])
    below = _queries(tally.counts[..., lower], tally.units[..., lower])
    return above, below


def sign_counts_from_tally(tally):
    """``(negatives, positives)``: rows below and above 0, from a two-sided
    tally (bins ``0..k-1`` hold ``x < 0``, bin k ``x = 0``)."""
    k = (tally.counts.shape[-1] - 1) // 2
    counts = tally.counts
    return counts[..., :k].sum(axis=-1), counts[..., k + 1 :].sum(axis=-1)


def soft_counts_above(x, upper_grid):
    """Normalised 1-sensitive SVT queries: soft counts of rows above each ``b_j``.

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite data values.
    upper_grid : array-like of shape (k,)
        Public strictly increasing candidate bounds ``b_0 < ... < b_{k-1}``.

    Returns
    -------
    counts : ndarray of shape (k - 1,)
        ``q_j = Σ_i clip((x_i - b_j) / (b_{j+1} - b_j), 0, 1)``.

    Notes
    -----
    With ``S(b) = Σ_i min(x_i, b)`` (:func:`upper_clipped_sums`),
    ``min(x, b_{j+1}) - min(x, b_j) = clip(x - b_j, 0, b_{j+1} - b_j)``, so

    ``q_j = (S(b_{j+1}) - S(b_j)) / (b_{j+1} - b_j)``,

    a count of the rows above ``b_{j+1}`` plus a linear ramp for the rows in
    ``(b_j, b_{j+1})``. **Sensitivity 1 under add/remove, for any spacing:**
    adding a row ``z`` changes ``q_j`` by ``clip((z - b_j)/(b_{j+1} - b_j), 0,
    1) ∈ [0, 1]`` and removing one by minus that, so every ``q_j`` moves by at
    most 1, and all of them in the same direction (monotone queries:
    ALGORITHMS.md §4.1 allows ``Lap(2/ε)`` query noise). The unnormalised
    difference ``S(b_{j+1}) - S(b_j)`` has sensitivity ``b_{j+1} - b_j``
    instead. SVT selectors usually test ``-q_j`` against ``-n_above``.

    **From per-bin tallies, without a sort.** A row in bin j, the interval
    ``(b_j, b_{j+1}]``, adds 1 to every ``q_i`` with ``i < j``, its ramp to
    ``q_j`` and 0 above; so with ``c_j`` rows in bin j and ``u_j`` the sum
    of their rounded ramps, ``q_j = Σ_{i > j} c_i + u_j`` (rows below
    ``b_0`` are in bin 0 with ramp 0, rows above ``b_{k-1}`` in bin k - 2
    with ramp 1: the contributions they have in the formula). One pass over
    the rows in blocks bins them (a lookup table on the doubles' top bits,
    or ``searchsorted``) and adds ``c`` and ``u`` with one ``bincount``:
    O(n + k), no copy of ``x`` (``tally_columns``). Tallies of chunks
    of rows add up, so the queries of chunked data are the same.

    **Exact in floating point.** Each row's ramp is clipped to [0, 1] and
    rounded to a multiple of ``2**-20`` (a function of that row alone, still
    in [0, 1]); the counts are summed in integers (exact below ``2**43``
    rows) and converted to the nearest double once. For ``n < 2**53`` rows the
    spacing of doubles at a count is at most 1, so adding 1 commutes with
    that rounding, and monotone rounding maps two exact counts at most 1
    apart to doubles at most 1 apart: the released queries keep sensitivity
    exactly 1, which a float sum of the ramps does not guarantee
    (Casacuberta et al. 2022). A float64 array of ``2**53`` rows would need
    64 PiB. Nothing overflows (a grid near the float limit is halved first;
    one whose halved points merge raises ValueError, where earlier versions
    divided by a zero width).
    The values are bit for bit those of the sort and prefix sums of earlier
    versions (checked on random and adversarial inputs in the tests).

    Examples
    --------
    >>> from skdp.sensitivity import soft_counts_above
    >>> soft_counts_above([0.5, 1.5, 3.0, 10.0], [0.0, 1.0, 2.0, 4.0])
    array([3.5, 2.5, 1.5])
    """
    x = np.asarray(x, dtype=float).ravel()
    grid = np.asarray(upper_grid, dtype=float).ravel()
    if grid.size < 2:
        return np.empty(0, dtype=float)
    layout = soft_count_layout(grid, lookup=x.size >= LOOKUP_MIN_ROWS)
    above, _ = soft_counts_from_tally(tally_columns(x[:, None], layout))
    return above[0]


def soft_counts_below(x, lower_grid):
    """Normalised 1-sensitive SVT queries: soft counts of rows below each ``a_j``.

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite data values.
    lower_grid : array-like of shape (k,)
        Public strictly increasing candidate lower bounds ``a_0 < ... < a_{k-1}``.

    Returns
    -------
    counts : ndarray of shape (k - 1,)
        ``q_j = Σ_i clip((a_{j+1} - x_i) / (a_{j+1} - a_j), 0, 1)``: rows below
        ``a_j`` count 1, rows in ``(a_j, a_{j+1})`` by a linear ramp.

    Notes
    -----
    Mirror image of :func:`soft_counts_above` (``x -> -x``, grid ``-a``
    reversed): ``q_j = (T(a_j) - T(a_{j+1})) / (a_{j+1} - a_j)`` with
    ``T(a) = Σ_i max(x_i, a)``, sensitivity 1 under add/remove for any spacing,
    monotone. For two-sided data run the selector on both tails.

    Examples
    --------
    >>> from skdp.sensitivity import soft_counts_below
    >>> soft_counts_below([-10.0, -3.0, -1.5, -0.5], [-4.0, -2.0, -1.0, 0.0])
    array([1.5, 2.5, 3.5])
    """
    x = np.asarray(x, dtype=float).ravel()
    grid = np.asarray(lower_grid, dtype=float).ravel()
    return soft_counts_above(-x, -grid[::-1])[::-1]
