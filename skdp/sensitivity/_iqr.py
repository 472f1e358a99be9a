"""Instability distance of the interquartile range under add/remove-one-row.

Formulas of ALGORITHMS_ADDREMOVE.md §3 (IQR) and §5 (windows of order
statistics). Notation: padded order statistics ``y`` (``y[0] = L``,
``y[n+1] = U``), quartile ranks ``r1 = ceil(n/4)``, ``r3 = ceil(3n/4)``,
``IQR = y[r3] - y[r1]`` (0 for ``n <= 1``).
"""

import math

import numpy as np

from skdp.sensitivity._order import _values_at, select_order_statistics

__all__ = [
    "interquartile_range",
    "iqr_instability_distance",
    "log_grid_bin",
    "log_grid_edges",
    "quartile_ranks",
]


def quartile_ranks(n):
    """Ranks ``(r1, r3) = (ceil(n/4), ceil(3n/4))`` of the quartiles.

    Parameters
    ----------
    n : int
        Number of rows (``n >= 0``).

    Returns
    -------
    r1, r3 : int
        ``((n + 3) // 4, (3 n + 3) // 4)``.

    Notes
    -----
    The convention of ALGORITHMS_ADDREMOVE.md §1; the cost functions of §3.1
    are derived for it.

    Examples
    --------
    >>> from skdp.sensitivity import quartile_ranks
    >>> quartile_ranks(8)
    (2, 6)
    >>> quartile_ranks(0)
    (0, 0)
    """
    return (n + 3) // 4, (3 * n + 3) // 4


def interquartile_range(x, bounds):
    """Interquartile range ``y[r3] - y[r1]`` of the clipped data.

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite data values (clipped to ``bounds`` here).
    bounds : tuple of float
        Public clipping bounds ``(L, U)``.

    Returns
    -------
    iqr : float
        ``x_(ceil(3n/4)) - x_(ceil(n/4))``; 0 for ``n <= 1``.

    Notes
    -----
    Two order statistics by selection, ``O(n)``. This is the statistic whose
    instability :func:`iqr_instability_distance` measures (same ranks, same
    floating-point subtraction).

    Examples
    --------
    >>> from skdp.sensitivity import interquartile_range
    >>> interquartile_range([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], (0.0, 10.0))
    4.0
    """
    n = np.asarray(x).size
    r1, r3 = quartile_ranks(n)
    ranks, values = select_order_statistics(x, bounds, [(r1, r1), (r3, r3)])
    return float(_iqr_from(ranks, values, n))


def _iqr_from(ranks, values, n):
    r1, r3 = quartile_ranks(n)
    quartiles = _values_at(ranks, values, n, [r1, r3])
    return quartiles[1] - quartiles[0]


def log_grid_edges(s, *, base=2.0, width=1.0, offset=0.0):
    """Edges ``base ** (offset + s * width)`` of a public logarithmic grid.

    Parameters
    ----------
    s : int or ndarray of int
        Bin indices.
    base : float, default=2.0
        Base of the logarithm (``> 1``).
    width : float, default=1.0
        Bin width in units of ``log_base`` (``> 0``).
    offset : float, default=0.0
        Grid offset in units of ``log_base``.

    Returns
    -------
    edges : float or ndarray of float
        Lower edge of bin ``s``; bin ``s`` is ``[edge(s), edge(s + 1))``.

    Notes
    -----
    This is the only place grid edges are computed: :func:`log_grid_bin`
    assigns bins by comparing with these values, so a value that is exactly an
    edge (e.g. a power of two) lands in the same bin everywhere
    (ALGORITHMS.md §3.2, ALGORITHMS_ADDREMOVE.md §3.4). Dwork–Lei use two grids
    with ``width = 1`` and offsets 0 and 1/2.

    Examples
    --------
    >>> from skdp.sensitivity import log_grid_edges
    >>> log_grid_edges([-1, 0, 1, 2])
    array([0.5, 1. , 2. , 4. ])
    """
    s = np.asarray(s, dtype=float)
    edges = np.power(float(base), offset + s * width)
    return edges if edges.ndim else float(edges)


def log_grid_bin(value, *, base=2.0, width=1.0, offset=0.0):
    """Bin of a public logarithmic grid containing ``value``.

    Parameters
    ----------
    value : float
        A positive finite value (e.g. an IQR).
    base, width, offset : float
        Grid parameters, see :func:`log_grid_edges`.

    Returns
    -------
    s : int
        Bin index with ``lo <= value < hi``.
    lo, hi : float
        ``log_grid_edges(s)`` and ``log_grid_edges(s + 1)``.

    Raises
    ------
    ValueError
        If ``value`` is not positive and finite (an IQR of 0 lies in no bin).

    Notes
    -----
    ``s = floor((log(value)/log(base) - offset)/width)`` computed in floating
    point can be off by one at exact edges (``log2(8)`` need not be exactly 3
    with other bases, and ``2 ** (s + 1/2)`` is rounded); the estimate is
    therefore corrected by comparing ``value`` with the edges returned by
    :func:`log_grid_edges` until ``edge(s) <= value < edge(s + 1)``.

    Examples
    --------
    >>> from skdp.sensitivity import log_grid_bin
    >>> log_grid_bin(8.0)
    (3, 8.0, 16.0)
    >>> s, lo, hi = log_grid_bin(8.0, offset=0.5)
    >>> s, round(lo, 4), round(hi, 4)
    (2, 5.6569, 11.3137)
    """
    value = float(value)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"A log-grid bin needs a positive finite value; got {value}.")

    def edge(t):
        return log_grid_edges(t, base=base, width=width, offset=offset)

    s = math.floor((math.log(value) / math.log(base) - offset) / width)
    for _ in range(64):
        if edge(s) > value:
            s -= 1
        elif edge(s + 1) <= value:
            s += 1
        else:
            return s, edge(s), edge(s + 1)
    raise ValueError(f"Could not place {value} on the grid (edges under/overflow).")


def _ceil_div(a, b):
    return -((-a) // b)


def _cost_up(i, j, n):
    """Add/remove steps to reach ``q1' <= x_(i)`` and ``q3' >= x_(j)`` (§3.1)."""
    width_term = np.maximum(2 * (j - i) - n - 1, 0)
    quartile_terms = np.maximum(
        _ceil_div(n - 4 * i, 3), _ceil_div(4 * j - 3 * n - 3, 3)
    )
    return np.maximum(width_term, quartile_terms)


def _cost_down(i, j, n):
    """Add/remove steps to reach ``q1' >= x_(i)`` and ``q3' <= x_(j)`` (§3.1)."""
    width_term = np.maximum(n - 2 * (j - i) - 1, 0)
    quartile_terms = np.maximum(
        _ceil_div(4 * i - n - 3, 3), _ceil_div(3 * n - 4 * j, 3)
    )
    return np.maximum(width_term, quartile_terms)


def _first_difference_at_least(values, start, threshold):
    """First ``q > p`` with ``values[q] - values[p] >= threshold``, per ``p``.

    ``values`` is non-decreasing and ``threshold > 0``; returns ``len(values)``
    where there is none. The predicate is the computed difference
    ``fl(values[q] - values[p]) >= threshold``, which is monotone in ``q``.
    ``searchsorted(values, values[p] + threshold)`` gives a first guess that
    can be off by one ulp of ``values[p] + threshold``; it is fixed up by
    jumping over blocks of tied values until the predicate switches exactly
    between ``q - 1`` and ``q``.
    """
    size = values.size
    guess = np.searchsorted(values, values[start] + threshold, side="left")
    q = np.maximum(guess, start + 1)
    while True:
        inside = q < size
        at_q = values[np.minimum(q, size - 1)] - values[start]
        move_right = inside & ~(at_q >= threshold)
        before = q - 1
        at_before = values[before] - values[start]
        move_left = (before > start) & (at_before >= threshold)
        if not (move_right.any() or move_left.any()):
            return q
        q[move_right] = np.searchsorted(values, values[q[move_right]], side="right")
        left_targets = np.searchsorted(values, values[before[move_left]], side="left")
        q[move_left] = np.maximum(left_targets, start[move_left] + 1)


def _instability_from(ranks, values, n, lo, hi):
    """``A_j`` restricted to pairs of ranks in ``ranks`` (exact if all ranks)."""
    iqr = _iqr_from(ranks, values, n)
    if not (iqr > 0 and lo <= iqr < hi):
        return 0
    positions = np.arange(ranks.size)

    # Up: for each i the first j with x_(j) - x_(i) >= hi (cost_up grows in j).
    first = _first_difference_at_least(values, positions, hi)
    found = first < ranks.size
    best = math.inf
    if found.any():
        i_rank, j_rank = ranks[positions[found]], ranks[first[found]]
        best = int(_cost_up(i_rank, j_rank, n).min())

    # Down: for each 1 <= i <= n the last j <= n with x_(j) - x_(i) < lo
    # (cost_down shrinks in j); j = i always qualifies since lo > 0.
    real = positions[(ranks >= 1) & (ranks <= n)]
    if real.size:
        last_real = real[-1]
        last = np.minimum(_first_difference_at_least(values, real, lo) - 1, last_real)
        best = min(best, int(_cost_down(ranks[real], ranks[last], n).min()))
    return best


def iqr_instability_distance(x, bounds, lo, hi, *, cap=None):
    """Add/remove distance from ``x`` to a dataset whose IQR leaves ``[lo, hi)``.

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite data values (clipped to ``bounds`` here).
    bounds : tuple of float
        Public clipping bounds ``(L, U)``.
    lo, hi : float
        The public bin ``[lo, hi)``, ``0 < lo < hi``, normally the bin of
        :func:`log_grid_bin` that contains the IQR of ``x``.
    cap : int, default=None
        Public cap ``K >= 1``. If given, return ``min(A_j, K)`` computed from
        the order statistics of ranks ``r1 ± W`` and ``r3 ± W``,
        ``W = ceil(3K/4) + 2`` (selection, ``O(n + K log K)``).

    Returns
    -------
    A : int
        ``A_j(x)``: the least number of add/remove steps after which the IQR
        is 0 or outside ``[lo, hi)``. 0 if the IQR of ``x`` already is.

    Notes
    -----
    ALGORITHMS_ADDREMOVE.md §3.1 (padded ranks, ``n >= 1``):

    ``cost_up(i, j) = max(0, ⌈(n-4i)/3⌉, ⌈(4j-3n-3)/3⌉, 2(j-i)-n-1)``,
    ``0 <= i < j <= n+1``, is the least number of steps to reach
    ``q1' <= x_(i)`` and ``q3' >= x_(j)``;

    ``cost_down(i, j) = max(0, ⌈(4i-n-3)/3⌉, ⌈(3n-4j)/3⌉, n-2(j-i)-1)``,
    ``1 <= i <= j <= n``, the least number to reach ``q1' >= x_(i)`` and
    ``q3' <= x_(j)``; and

    ``A_j = min(min{cost_up : x_(j) - x_(i) >= hi},
    min{cost_down : x_(j) - x_(i) < lo})``.

    Each step changes one of the counts below ``x_(i)``, between and above
    ``x_(j)`` by one; the terms are the deficits of the two quartile
    conditions, divided by the 3 units one added/deleted extreme point removes,
    and half their (odd) sum. ``cost_up`` grows with ``j`` and shrinks with
    ``i`` and ``cost_down`` the reverse, so only the first ``j`` (up) or the
    last ``j`` (down) per ``i`` matters: ``O(n log n)`` by ``searchsorted``,
    fixed up so that the test is the computed difference itself (a plain
    ``searchsorted(y, y[i] + hi)`` disagrees with ``fl(y[j] - y[i]) >= hi`` by
    one ulp on data such as multiples of 0.1, §3.4). ``A_j`` is a distance to
    a set, hence 1-Lipschitz: global sensitivity 1 (§3.3). The capped version
    (§5) is exact for ``min(A_j, K)``: pairs with cost below ``K`` lie in the
    two windows, and a pair with an end in the gap between them is matched by
    the window's boundary rank at no larger cost.

    Examples
    --------
    >>> from skdp.sensitivity import iqr_instability_distance, log_grid_bin
    >>> x = [1.0, 2.0, 3.0, 3.0, 3.5, 4.0, 5.0, 9.0]
    >>> _, lo, hi = log_grid_bin(2.0)
    >>> lo, hi
    (2.0, 4.0)
    >>> iqr_instability_distance(x, (0.0, 10.0), lo, hi)
    1
    """
    n = np.asarray(x).size
    if cap is None:
        windows = [(0, n + 1)]
    else:
        r1, r3 = quartile_ranks(n)
        half_width = _ceil_div(3 * int(cap), 4) + 2
        windows = [
            (r1 - half_width, r1 + half_width),
            (r3 - half_width, r3 + half_width),
        ]
    ranks, values = select_order_statistics(x, bounds, windows)
    distance = _instability_from(ranks, values, n, lo, hi)
    return distance if cap is None else min(distance, int(cap))
