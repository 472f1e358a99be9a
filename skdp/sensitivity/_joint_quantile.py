"""Rank states and the gap utility of the joint quantile release.

The joint release (:func:`skdp.mechanisms._joint_quantile.joint_quantile_states`)
chooses ``m`` ordered outputs on a public grid ``c_i = (first + i) 2**k``.
Each grid point carries ``S = 2**SPLIT_BITS + 1`` *states* ``(i, s)``,
``s = 0, 1/(S-1), ..., 1``, with the rank

    r(i, s) = lo_i + s a_i,   lo_i = #{x < c_i},   a_i = #{x = c_i},

so a grid point equal to a tied value (an atom) spans its rank interval and
a grid point between data values is a single rank. For strictly increasing
states ``t_1 < ... < t_m`` (ordered by grid index, then ``s``) the utility is

    u = -Σ_{j=1}^{m+1} |r_j - r_{j-1} - (q_j - q_{j-1}) n|,

with ``r_0 = 0``, ``r_{m+1} = n``, ``q_0 = 0``, ``q_{m+1} = 1``: the gaps
between consecutive outputs against their targets (the utility of
Gillenwater, Joseph and Kulesza 2021, with ties as atoms).

**Sensitivity 2 under add/remove one row.** Add a row ``x``. For a fixed
state, ``r`` is unchanged if ``c_i < x``, grows by 1 if ``c_i > x`` and by
``s`` in [0, 1] if ``c_i = x``; along the increasing states these changes
``Δr_j`` are non-decreasing from ``Δr_0 = 0`` to ``Δr_{m+1} = 1``, so the
gaps change by ``Σ_j |Δr_j - Δr_{j-1}| = 1`` in total, and the targets by
``Σ_j (q_j - q_{j-1}) = 1``: ``|Δu| <= 2``. Removing a row is the same
pair read backwards. Checked by brute force in the tests.
"""

import numpy as np

from skdp.sensitivity._quantile_grid import _grid_floor

__all__ = [
    "SPLIT_BITS",
    "STATES_PER_POINT",
    "grid_rank_counts",
    "joint_quantile_utility",
    "rank_states",
]

#: Each grid point has ``2**SPLIT_BITS + 1`` states; ``s`` is a multiple of
#: ``2**-SPLIT_BITS``, so ``lo + s a`` is exact in floats.
SPLIT_BITS = 5
STATES_PER_POINT = (1 << SPLIT_BITS) + 1


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
    splits = np.arange((1 << split_bits) + 1) / float(1 << split_bits)
    ranks = below[:, None] + atoms[:, None] * splits[None, :]
    return ranks.ravel().astype(np.float64)


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
