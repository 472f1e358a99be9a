"""Rank states and the gap utility of the joint quantile release.

The joint release (:func:`skdp.mechanisms._joint_quantile.joint_quantile_blocks`)
chooses ``m`` ordered outputs on a public grid ``c_0 < c_1 < ...`` (in
:class:`~skdp.preprocessing.PrivateQuantile`, the
:class:`~skdp.sensitivity._quantile_grid.RelativeGrid` of the bounds).
Each grid point carries ``S = 2**b + 1`` *states* ``(i, t)``, ``t = 0, 1,
..., 2**b`` (``b = SPLIT_BITS`` or more, see :func:`refined_split_bits`;
each state in ``w_i`` copies, a public multiplicity that sets the point's
base measure, see :func:`rank_blocks`), with the rank

    r(i, t) = lo_i + g_t(a_i),   lo_i = #{x < c_i},   a_i = #{x = c_i},
    g_t(a) = min(t, a) if a <= 2**b, else t a / 2**b   (:func:`atom_offsets`),

so a grid point equal to a tied value (an atom) spans its rank interval
(every rank of a small atom is a state, the rest of its states sit at its
top; a large atom is split evenly) and a grid point between data values is
a single rank. (Until the states of small atoms became integer ranks,
``g_t(a) = t a / 2**b`` for every atom: each atom was ``S`` blocks of the
sampler, 33 million for Adult's fnlwgt at 12 split bits.) For strictly increasing
states ``t_1 < ... < t_m`` (ordered by grid index, then ``s``) the utility is

    u = -Σ_{j=1}^{m+1} |r_j - r_{j-1} - (q_j - q_{j-1}) n|,

with ``r_0 = 0``, ``r_{m+1} = n``, ``q_0 = 0``, ``q_{m+1} = 1``: the gaps
between consecutive outputs against their targets (the utility of
Gillenwater, Joseph and Kulesza 2021, with ties as atoms).

**Sensitivity 2 under add/remove one row.** Add a row ``x``. For a fixed
state, ``r`` is unchanged if ``c_i < x``, grows by 1 if ``c_i > x`` and by
``g_t(a + 1) - g_t(a)`` if ``c_i = x``: that is ``1[t > a]`` for ``a <
2**b``, ``t / 2**b`` for ``a >= 2**b`` (at ``a = 2**b``, ``t a / 2**b
- t = t / 2**b``), in [0, 1] and non-decreasing in ``t`` either way. Along
the increasing states these changes ``Δr_j`` are therefore non-decreasing
from ``Δr_0 = 0`` to ``Δr_{m+1} = 1``, so the
gaps change by ``Σ_j |Δr_j - Δr_{j-1}| = 1`` in total, and the targets by
``Σ_j (q_j - q_{j-1}) = 1``: ``|Δu| <= 2``. Removing a row is the same
pair read backwards. Checked by brute force in the tests. Copies of a state
have its rank, so the argument holds for any public multiplicities and any
public grid.

On the finest grid (ε >= 1024) the release counts every row at its nearest
grid point (:func:`skdp.stats._quantile_joint.joint_release`), so that a tie
between two grid points is an atom too: a fixed map per row set by the
public grid, so neighbours stay neighbours and the argument applies to the
snapped rows as to any data.
"""

import numpy as np

from skdp.sensitivity._quantile_grid import _grid_floor

__all__ = [
    "SPLIT_BITS",
    "STATES_PER_POINT",
    "atom_offsets",
    "grid_rank_counts",
    "joint_quantile_utility",
    "rank_blocks",
    "rank_states",
    "refined_split_bits",
    "relative_grid_counts",
    "sparse_rank_blocks",
    "sparse_state_points",
    "state_points",
]

#: Rows counted at once: the temporaries of a chunk stay a few megabytes
#: whatever the column's length (the release holds no copy of the column).
CHUNK_ROWS = 1 << 16

#: Each grid point has ``2**SPLIT_BITS + 1`` states; ``s`` is a multiple of
#: ``2**-SPLIT_BITS``, so ``lo + s a`` is exact in floats.
SPLIT_BITS = 5
STATES_PER_POINT = (1 << SPLIT_BITS) + 1
#: The grid's refinement adds up to this many split bits (4097 states per
#: point at most), see :func:`refined_split_bits`.
MAX_SPLIT_REFINEMENT = 7


def refined_split_bits(refine):
    """Split bits of a grid refined by ``refine`` bits (public).

    ``SPLIT_BITS + min(refine, MAX_SPLIT_REFINEMENT)``. An output on an
    atom of ``a`` rows has a rank within ``a / 2**(bits + 1)`` of any
    target inside it, and the gap utility then cannot tell apart the next
    output's ranks over that width (the sum of two gap errors is flat
    between them): with 5 bits a quantile after an 85 % atom of 3,000 rows
    was up to 14 ranks off at any ε. One more bit per bit of refinement
    shrinks this flat stretch with ε, up to ``a / 8192`` (none for atoms of
    at most ``2**bits`` rows, whose every rank is a state); an atom of
    ``a`` rows is ``min(a, 2**bits) + 1`` blocks of the sampler.

    Examples
    --------
    >>> from skdp.sensitivity._joint_quantile import refined_split_bits
    >>> refined_split_bits(0), refined_split_bits(10)
    (5, 12)
    """
    return SPLIT_BITS + min(int(refine), MAX_SPLIT_REFINEMENT)


def grid_rank_counts(column, lower, upper, k):
    """Counts below and at every point of the grid ``{j 2**k} ∩ [L, U]``.

    One pass over the data (a ``bincount`` of grid cells), no sort.

    Parameters
    ----------
    column : ndarray of shape (n_samples,)
        One finite feature.
    lower, upper : float
        Public bounds; values are clipped to the first and last grid points.
    k : int
        Public grid exponent.

    Returns
    -------
    first : int
        Index of the first grid point: ``c_i = (first + i) 2**k``.
    below : ndarray of int64 of shape (n_points,)
        ``lo_i = #{x < c_i}``.
    atoms : ndarray of int64 of shape (n_points,)
        ``a_i = #{x = c_i}``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._joint_quantile import grid_rank_counts
    >>> first, below, atoms = grid_rank_counts(np.array([1.0, 1.0, 2.5]), 0, 3, 0)
    >>> first, below.tolist(), atoms.tolist()
    (0, [0, 0, 2, 3], [0, 2, 0, 0])
    """
    step = 2.0**k
    first = int(-_grid_floor(np.array([-float(lower)]), step)[0])  # ceil
    last = int(_grid_floor(np.array([float(upper)]), step)[0])
    n_points = last - first + 1
    clipped = np.clip(column, first * step, last * step)
    cell = _grid_floor(clipped, step)
    on_grid = cell * step == clipped
    cell = (cell - first).astype(np.int64)
    atoms = np.bincount(cell[on_grid], minlength=n_points)
    between = np.bincount(cell[~on_grid], minlength=n_points)
    below = np.zeros(n_points, dtype=np.int64)
    np.cumsum((atoms + between)[:-1], out=below[1:])
    return first, below, atoms


def relative_grid_counts(column, grid, chunk_rows=CHUNK_ROWS):
    """Counts below and at every point of a :class:`RelativeGrid`.

    The same counts as :func:`grid_rank_counts` on the relative grid, read
    in chunks of ``chunk_rows`` rows (a ``bincount`` of grid cells each), so
    that the memory used is a few chunks, not copies of the column.

    Parameters
    ----------
    column : ndarray of shape (n_samples,)
        One finite feature (a strided view is fine).
    grid : RelativeGrid
        The public grid; values are clipped to its first and last points.
    chunk_rows : int, default=CHUNK_ROWS
        Rows per chunk.

    Returns
    -------
    below : ndarray of int64 of shape (grid.size,)
        ``lo_i = #{x < c_i}``.
    atoms : ndarray of int64 of shape (grid.size,)
        ``a_i = #{x = c_i}``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._quantile_grid import RelativeGrid
    >>> from skdp.sensitivity._joint_quantile import relative_grid_counts
    >>> grid = RelativeGrid(0.0, 1e5)
    >>> below, atoms = relative_grid_counts(np.array([40.0, 40.0, 40.5]), grid)
    >>> i = int(grid.floor_index(np.array([40.0]))[0] - grid.first)
    >>> below[i], atoms[i], below[i + 1]
    (np.int64(0), np.int64(2), np.int64(2))
    """
    n_points = grid.size
    low, high = grid.points(np.array([grid.first, grid.last]))
    counts = np.zeros(2 * n_points, dtype=np.int64)  # (at c_i, after c_i)
    for start in range(0, column.shape[0], chunk_rows):
        part = np.clip(column[start : start + chunk_rows], low, high)
        key, on_grid = grid.locate(part)
        key -= grid.first
        key *= 2
        key += ~on_grid
        counts += np.bincount(key, minlength=2 * n_points)
    atoms, between = counts[0::2], counts[1::2]
    below = np.zeros(n_points, dtype=np.int64)
    np.cumsum((atoms + between)[:-1], out=below[1:])
    return below, atoms


def rank_blocks(below, atoms, split_bits=SPLIT_BITS, multiplicity=None):
    """The rank states of :func:`rank_states`, runs of equal ranks merged.

    Each grid point ``i`` carries ``S = 2**split_bits + 1`` rank states, each
    in ``w_i`` copies (``multiplicity``, public; 1 by default): the copies
    make a point's share of the base measure ``S w_i``. Consecutive grid
    points with no row at or between them have states of one rank; they
    form one *gap block* of ``S Σ w_i`` states. On a point with ``a`` rows
    on it (an atom), each of its first ``min(a, 2**split_bits)`` states is a
    block of its ``w_i`` copies, and the states from there on (one rank,
    the atom's top) one block. The blocks
    list the states in order: expanding each block to ``sizes`` copies of
    its rank gives :func:`rank_states` with each state repeated ``w_i``
    times (tested). There are at most ``Σ (min(a, S - 1) + 2) + 1 <= n +
    2 d + 1`` blocks for ``d`` distinct clipped values of ``a`` rows each,
    whatever the grid size.

    Parameters
    ----------
    below, atoms : ndarray of int64 of shape (n_points,)
        From :func:`grid_rank_counts` or :func:`relative_grid_counts`.
    split_bits : int, default=SPLIT_BITS
        ``S = 2**split_bits + 1`` rank states per grid point.
    multiplicity : ndarray of int64 of shape (n_points,), default=None
        Copies of each state of each point (public); None for 1.

    Returns
    -------
    ranks : ndarray of float64 of shape (n_blocks,)
        Non-decreasing rank of each block's states.
    sizes : ndarray of float64 of shape (n_blocks,)
        Number of states of each block (integer-valued).
    points : ndarray of int64 of shape (n_blocks,)
        Grid point of the block's first state.
    gap : ndarray of bool of shape (n_blocks,)
        True for a gap block: its state ``t`` lies on the point ``i`` with
        ``S (W_i - W_points) <= t < S (W_{i+1} - W_points)``, ``W`` the
        cumulative multiplicity (:func:`state_points`); False for the
        copies of one state of an atom, all on ``points``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._joint_quantile import rank_blocks
    >>> ranks, sizes, points, gap = rank_blocks(np.array([0, 0, 0, 2]),
    ...                                         np.array([0, 0, 2, 0]), 1)
    >>> ranks.tolist(), sizes.tolist(), points.tolist()
    ([0.0, 0.0, 1.0, 2.0, 2.0], [6.0, 1.0, 1.0, 1.0, 3.0], [0, 2, 2, 2, 3])
    """
    n_points = below.shape[0]
    if multiplicity is None:
        multiplicity = np.ones(n_points, dtype=np.int64)
    cumulative = np.concatenate(([0], np.cumsum(multiplicity)))
    atom_at = np.flatnonzero(atoms)
    # a row strictly between points i and i + 1 separates their ranks
    between_after = np.flatnonzero(below[1:] - below[:-1] - atoms[:-1]) + 1
    edges = np.unique(
        np.concatenate(([0, n_points], atom_at, atom_at + 1, between_after))
    )
    starts, stops = edges[:-1], edges[1:]
    ranks, sizes, points, gap = _segment_blocks(
        starts,
        below[starts],
        atoms[starts],
        multiplicity[starts],
        cumulative[stops] - cumulative[starts],
        split_bits,
    )
    return ranks, sizes.astype(np.float64), points, gap


def _segment_blocks(starts, below, atoms, copies, span, split_bits):
    """Blocks of segments of grid points (an atom, or a gap of equal ranks).

    ``starts``: first point of each segment; ``below``, ``atoms``: the
    counts at it; ``copies``: its multiplicity; ``span``: the total
    multiplicity of the segment's points. An atom's segment is its point
    alone and gives ``S`` blocks of ``copies`` states; a gap gives one
    block of ``S span`` states.
    """
    steps = 1 << split_bits
    per_point = steps + 1
    is_atom = atoms > 0
    # an atom's states t < min(a, 2**bits) have ranks of their own; the
    # states from t = min(a, 2**bits) on share the atom's top rank
    own = np.minimum(atoms, steps)
    repeats = np.where(is_atom, own + 1, 1)
    segment = np.repeat(np.arange(starts.size), repeats)
    first_block = np.cumsum(repeats) - repeats
    state = np.arange(segment.size) - first_block[segment]
    ranks = below[segment] + atom_offsets(state, atoms[segment], split_bits)
    span = np.asarray(span, dtype=np.int64)
    if span.size and int(span.max()) >= (1 << 62) // per_point:
        # Python ints: S times a span of up to 2**57 copies exceeds int64
        span = np.array([int(x) for x in span], dtype=object)
        copies = np.array([int(x) for x in copies], dtype=object)
    top = state == own[segment]  # the atom's last block: its shared states
    states_in_block = np.where(top, steps + 1 - own[segment], 1)
    sizes = np.where(
        is_atom[segment], copies[segment] * states_in_block, (per_point * span)[segment]
    )
    return (
        ranks.astype(np.float64),
        sizes,
        starts[segment],
        ~is_atom[segment],
    )


def sparse_rank_blocks(column, grid, split_bits=SPLIT_BITS):
    """:func:`rank_blocks` of a :class:`RelativeGrid` of any size.

    The same blocks as ``rank_blocks(*relative_grid_counts(column, grid),
    split_bits, grid.multiplicity(...))`` (tested), from the sorted distinct
    cells of the rows instead of one count per grid point: time ``O(n log
    n)`` and memory a few copies of the column, whatever the grid size
    (the refined grids of a large ε have up to ``2**25`` points).

    Returns
    -------
    ranks : ndarray of float64
    sizes : ndarray of int64 or object
        Exact block sizes (Python ints where they may exceed ``2**62``).
    points : ndarray of int64
        Grid point (``index - grid.first``) of the block's first state.
    gap : ndarray of bool
    """
    low, high = grid.points(np.array([grid.first, grid.last]))
    key, on_grid = grid.locate(np.clip(column, low, high))
    key -= grid.first
    key *= 2
    key += ~on_grid  # 2 i: at point i; 2 i + 1: strictly between i and i + 1
    codes, counts = np.unique(key, return_counts=True)
    del key, on_grid
    point = codes >> 1
    atom = (codes & 1) == 0
    edges = np.unique(
        np.concatenate(([0, grid.size], point[atom], point[atom] + 1, point[~atom] + 1))
    )
    starts, stops = edges[:-1], edges[1:]
    rows_before = np.concatenate(([0], np.cumsum(counts)))
    position = np.searchsorted(codes, 2 * starts)  # first code >= 2 start
    hit = np.minimum(position, max(codes.size - 1, 0))
    padded_codes, padded_counts = np.append(codes, -1), np.append(counts, 0)
    atoms = np.where(padded_codes[hit] == 2 * starts, padded_counts[hit], 0)
    absolute = grid.first + starts
    span = grid.cumulative(grid.first + stops) - grid.cumulative(absolute)
    return _segment_blocks(
        starts,
        rows_before[position],
        atoms,
        grid.multiplicity(absolute),
        span,
        split_bits,
    )


def _point_offsets(offsets, per_point):
    """``offsets // per_point`` as int64 (offsets may be Python ints)."""
    return np.array([int(o) // per_point for o in offsets], dtype=np.int64)


def sparse_state_points(points, offsets, gap, grid, split_bits=SPLIT_BITS):
    """:func:`state_points` on a :class:`RelativeGrid`, by bisection.

    The point ``i >= points`` of a gap block's state ``offsets`` is the one
    with ``W(i) <= W(points) + offsets // S < W(i + 1)``, ``W`` the
    cumulative multiplicity (:meth:`RelativeGrid.cumulative`, differences
    only).
    """
    per_point = (1 << split_bits) + 1
    base = grid.cumulative(grid.first + points)
    target = _point_offsets(offsets, per_point)
    lo, hi = points.copy(), np.full(points.shape, grid.size, dtype=np.int64)
    while np.any(hi - lo > 1):  # W(lo) - W(points) <= target < W(hi) - W(points)
        mid = (lo + hi) // 2
        below = grid.cumulative(grid.first + mid) - base <= target
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return np.where(gap, lo, points)


def state_points(points, offsets, gap, multiplicity, split_bits=SPLIT_BITS):
    """Grid point of state ``offsets`` of each block (see :func:`rank_blocks`).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._joint_quantile import state_points
    >>> state_points(np.array([0, 2]), np.array([7, 1]), np.array([True, False]),
    ...              np.array([1, 2, 1, 1]), split_bits=1).tolist()
    [1, 2]
    """
    per_point = (1 << split_bits) + 1
    cumulative = np.concatenate(([0], np.cumsum(multiplicity)))
    target = cumulative[points] + _point_offsets(offsets, per_point)
    inside = np.searchsorted(cumulative, target, side="right") - 1
    return np.where(gap, inside, points)


def rank_states(below, atoms, split_bits=SPLIT_BITS):
    """Ranks ``r(i, s) = lo_i + s a_i`` of all states, in increasing order.

    Parameters
    ----------
    below, atoms : ndarray of int64 of shape (n_points,)
        From :func:`grid_rank_counts`.
    split_bits : int, default=SPLIT_BITS
        ``2**split_bits + 1`` states per grid point.

    Returns
    -------
    ranks : ndarray of float of shape (n_points * (2**split_bits + 1),)

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._joint_quantile import rank_states
    >>> rank_states(np.array([0, 4]), np.array([4, 0]), split_bits=1).tolist()
    [0.0, 2.0, 4.0, 4.0, 4.0, 4.0]
    """
    states = np.arange((1 << split_bits) + 1)[None, :]
    ranks = below[:, None] + atom_offsets(states, atoms[:, None], split_bits)
    return ranks.ravel().astype(np.float64)


def atom_offsets(state, atoms, split_bits=SPLIT_BITS):
    """Rank of state ``t`` of a grid point above its ``lo``: ``g_t(a)``.

    ``min(t, a)`` for an atom of ``a <= 2**split_bits`` rows (every rank
    inside it is a state, the rest of the states sit at its top), else
    ``t a / 2**split_bits`` (evenly spread). Either way ``g_t(a + 1) -
    g_t(a)`` lies in [0, 1] and does not decrease with ``t``, which the
    sensitivity (module docstring) needs. Exact in floats: an integer, or
    ``a`` times a multiple of ``2**-split_bits``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._joint_quantile import atom_offsets
    >>> atom_offsets(np.arange(5), np.array(2), 2).tolist()
    [0.0, 1.0, 2.0, 2.0, 2.0]
    >>> atom_offsets(np.arange(5), np.array(8), 2).tolist()
    [0.0, 2.0, 4.0, 6.0, 8.0]
    """
    steps = 1 << split_bits
    spread = atoms * (state / float(steps))  # exact: a multiple of 2**-bits
    return np.where(atoms <= steps, np.minimum(state, atoms), spread).astype(np.float64)


def joint_quantile_utility(ranks, n, levels):
    """The gap utility of a sequence of output ranks (module docstring).

    Parameters
    ----------
    ranks : array-like of shape (m,)
        Ranks of the chosen states, non-decreasing.
    n : int
        The row count.
    levels : array-like of shape (m,)
        Increasing quantile levels in (0, 1).

    Returns
    -------
    utility : float

    Examples
    --------
    >>> from skdp.sensitivity._joint_quantile import joint_quantile_utility
    >>> joint_quantile_utility([25.0, 75.0], 100, [0.25, 0.75])
    0.0
    """
    r = np.concatenate(([0.0], np.asarray(ranks, dtype=float), [float(n)]))
    q = np.concatenate(([0.0], np.asarray(levels, dtype=float), [1.0]))
    return -float(np.abs(np.diff(r) - np.diff(q) * n).sum())
