"""The joint release of several quantiles of one feature (see PrivateQuantile)."""

import math

import numpy as np

from skdp.accounting._composition import equal_shares
from skdp.mechanisms._joint_quantile import joint_quantile_blocks
from skdp.sensitivity._joint_quantile import (
    STATES_PER_POINT,
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
    quantile_grid_exponent,
    refinement_bits,
)
from skdp.stats._quantile_release import candidate_grid

__all__ = [
    "check_joint_levels",
    "grid_size",
    "joint_release",
    "joint_state_count",
    "log_binomial",
    "quantile_ledger_label",
    "rank_error_bounds",
]

#: Grids of at most this many points are counted densely (one ``bincount``
#: per chunk of rows, no sort: the speed of the default ε); larger ones, the
#: refined grids of a large ε, from the rows' sorted distinct cells.
DENSE_POINTS = 1 << 17
#: Rows are snapped to the grid from this refinement on (the finest grid,
#: ε >= 1024), see :func:`joint_release`.
SNAP_REFINEMENT = MAX_REFINEMENT


def grid_size(lower, upper, k):
    """Number of points of ``{j 2**k} ∩ [lower, upper]``."""
    step = math.ldexp(1.0, k)
    return math.floor(upper / step) - math.ceil(lower / step) + 1


def joint_state_count(lower, upper):
    """Number of rank states of the joint release on ``[lower, upper]`` (public)."""
    grid = RelativeGrid(lower, upper)
    copies = grid.multiplicity(np.arange(grid.first, grid.last + 1))
    return int(copies.sum()) * STATES_PER_POINT


def log_binomial(n, m):
    return math.lgamma(n + 1) - math.lgamma(m + 1) - math.lgamma(n - m + 1)


def joint_release(column, lower, upper, levels, epsilon, source):
    """All ``levels`` of one feature in one joint release with ``epsilon``.

    Counts of the rows on the public relative grid of the bounds, refined by
    :func:`~skdp.sensitivity._quantile_grid.refinement_bits` of ``epsilon``
    (public: the grid, hence the output's support, depends on the bounds
    and ε only), the joint exponential mechanism over ordered rank states
    merged into blocks of equal rank, and the grid points of the chosen
    states. On the finest grid (``refine >= SNAP_REFINEMENT``, ε >= 1024)
    each row is first moved to its nearest grid point
    (:meth:`~skdp.sensitivity._quantile_grid.RelativeGrid.snap`). Repeated
    or unsorted levels are released once each, sorted, and mapped back
    (post-processing).

    Notes
    -----
    The refinement changes which public grid the mechanism runs on, never
    its privacy: the gap utility has sensitivity 2 on any public grid with
    any public multiplicities (:mod:`skdp.sensitivity._joint_quantile`),
    and the grid is a function of ``(lower, upper, epsilon)``. The dense and
    the sparse counts give the same blocks (tested), so the path taken
    (public: by the grid's size) does not change the law of the output.

    **Snapping.** A tied value ``v`` strictly between two grid points is no
    atom: every point between the previous distinct value and ``v`` has the
    rank below the tie, every point after it the rank above, so a level
    inside the tie has no state of its rank. It was released anywhere in
    that empty stretch, and as the gap utility is flat along such shifts
    the other levels drifted too: at ε = 10**6, 9 deciles of Bikeshare's
    ``atemp`` (65 values 0.015 apart) were 1.8 % off on average, of the
    randhie columns 5.9 %, with 2 % and 74 % of them within the issue's 0.1 %
    or one rank (``bench_joint_quantile_width.py``). Snapped, the tie is an
    atom of its nearest point, whose states span its ranks, and a level
    inside it is released there, at most half a step (``2**-19 |v|``) from
    ``v``: 3e-7 and 6e-6 off, all within the target. Snapping is one fixed
    map per row, set by the public grid (the bounds and ε) alone and
    applied before the mechanism: the snapped rows of two neighbours are
    neighbours (one row more or less), and the sensitivity 2 holds for any
    data on the grid, so the guarantee is unchanged; the output's support,
    the grid points, too.

    It is not done on coarser grids because of its cost: every occupied
    grid point becomes an atom of up to ``2**b + 1`` blocks of the sampler
    (one block before, inside a run of equal rank), which on a column much
    longer than the grid is up to ``2**b`` times the sampler's work: at
    ε = 1, 9 deciles of 10**7 normal rows took 4 to 8 times
    ``np.percentile`` snapped, 0.6 times unsnapped (target 1.5). On the
    finest grid, ``2**18`` points per binade, a column of up to about a
    million rows has about one row per occupied point, and the adjacent
    blocks of equal rank (a gap and the first or last state of the atoms
    beside it) are sampled as one (:func:`_merged_sample`, the same law):
    one block per rank, ``n + 1`` while no atom exceeds ``2**12`` rows
    (1,000,001 for 10**6 normal rows, 684,074 unsnapped at ε = 1000).
    Longer columns pay for their rows per occupied point: 9 deciles of
    normal rows at ε = 10**6 took 0.79 / 10.5 / 49 / 179 s for 10**5 /
    10**6 / 3·10**6 / 10**7 rows, against 0.63 / 7.9 / 32 / 40 s unsnapped.
    Below ε = 1024 a level inside a tie between grid points is still
    released in the stretch beside it (snapped at ε = 1, Bikeshare's deciles
    would be 67 % within the target instead of 2 %).
    """
    refine = refinement_bits(epsilon)
    grid = RelativeGrid(lower, upper, refine)
    split = refined_split_bits(refine)
    snap = refine >= SNAP_REFINEMENT
    if snap:
        column = grid.snap(column)
    distinct, inverse = np.unique(levels, return_inverse=True)
    if grid.size <= DENSE_POINTS:
        below, atoms = relative_grid_counts(column, grid)
        multiplicity = grid.multiplicity(np.arange(grid.first, grid.last + 1))
        ranks, sizes, points, gap = rank_blocks(below, atoms, split, multiplicity)
    else:
        ranks, sizes, points, gap = sparse_rank_blocks(column, grid, split)
    if snap:
        blocks, offsets = _merged_sample(
            ranks, sizes, column.size, distinct, epsilon, source
        )
    else:
        blocks, offsets = joint_quantile_blocks(
            ranks, sizes, column.size, distinct, epsilon, random_state=source
        )
    if grid.size <= DENSE_POINTS:
        index = state_points(points[blocks], offsets, gap[blocks], multiplicity, split)
    else:
        index = sparse_state_points(points[blocks], offsets, gap[blocks], grid, split)
    return grid.points(grid.first + index)[inverse]


def _merged_sample(ranks, sizes, n, levels, epsilon, source):
    """:func:`joint_quantile_blocks` with adjacent blocks of equal rank merged.

    The merged blocks list the same states in the same order with the same
    ranks, so the law of the chosen states is unchanged; each output
    ``(merged block, offset)`` is mapped back to ``(block, offset)``.
    """
    starts = np.flatnonzero(np.r_[True, ranks[1:] != ranks[:-1]])
    exact = _exact_sizes(sizes)
    merged, offsets = joint_quantile_blocks(
        ranks[starts],
        np.add.reduceat(exact, starts),
        n,
        levels,
        epsilon,
        random_state=source,
    )
    return _unmerge(starts[merged], offsets, exact)


def _exact_sizes(sizes):
    """Block sizes as exact integers: int64, or Python ints from ``2**62`` on.

    The dense counts give floats (:func:`rank_blocks`), which on the finest
    grid reach ``2**63`` where doubles are sparse (bounds about ``2**17``
    doubles wide: ``4097`` states of ``2**34`` copies per point): a cast to
    int64 wrapped them to negative sizes, i.e. weight 0 for the states of a
    whole gap. They are integers there (``4097 k 2**34``, ``k < 2**17``).
    Runs of equal rank hold one gap at most (snapped rows leave no row
    between points), so int64 sums of sizes below ``2**62`` do not wrap.
    """
    if sizes.dtype == object:
        return sizes
    if sizes.size and float(sizes.max()) >= 2.0**62:
        return np.array([int(s) for s in sizes], dtype=object)
    return sizes.astype(np.int64)


def _unmerge(blocks, offsets, sizes):
    """State ``offsets`` of the run of blocks from ``blocks`` as ``(block,
    offset in it)`` (a run is a few blocks: a gap and the atom states beside
    it)."""
    blocks, offsets = blocks.copy(), offsets.copy()
    for j in range(blocks.size):
        while offsets[j] >= sizes[blocks[j]]:
            offsets[j] = int(offsets[j] - sizes[blocks[j]])
            blocks[j] += 1
    return blocks, offsets


def check_joint_levels(levels, lower, upper):
    """Refuse more distinct levels than the joint grid has states (public)."""
    needed = np.unique(levels).size
    for lo, hi in zip(lower, upper, strict=True):
        states = joint_state_count(lo, hi)
        if needed > states:
            raise ValueError(
                f"{needed} distinct levels need at least as many grid states; "
                f"bounds ({lo}, {hi}) give {states}. Widen the bounds or use "
                "method='exponential'."
            )


def rank_error_bounds(method, levels, lower, upper, candidates, epsilon, alpha):
    """:meth:`PrivateQuantile.rank_error_bound` from public quantities only:
    shape (n_levels, n_features); ``epsilon`` is the selections' total (for
    groups, the row-level ``ε_r`` they run at)."""
    d = lower.shape[0]
    bound = np.empty((levels.size, d))
    for j in range(d):
        if method == "joint":
            states = joint_state_count(lower[j], upper[j])
            log_outputs = log_binomial(states, np.unique(levels).size)
            spread = log_outputs + math.log(d / alpha)
            bound[:, j] = 2.0 * spread / equal_shares(epsilon, d)
            continue
        if method == "exponential":
            exponent = quantile_grid_exponent(lower[j], upper[j])
            size = grid_size(lower[j], upper[j], exponent)
        else:
            size = candidate_grid(candidates, lower, upper).shape[0]
        eps = equal_shares(epsilon, levels.size * d)
        spread = math.log(size) + math.log(levels.size * d / alpha)
        bound[:, j] = 2.0 * np.maximum(levels, 1 - levels) * spread / eps
    return bound


def quantile_ledger_label(method, levels, n_features):
    """The ledger label of :class:`PrivateQuantile`'s quantile releases."""
    shown = ", ".join(f"{q:g}" for q in levels)
    features = "feature" if n_features == 1 else "features"
    if method == "joint":
        return (
            f"quantiles ({shown}) of {n_features} {features}, jointly, "
            f"{n_features} releases at epsilon/{n_features}"
        )
    return (
        f"quantiles ({shown}) of {n_features} {features} by {method}, "
        f"{levels.size * n_features} releases at epsilon/{levels.size * n_features}"
    )
