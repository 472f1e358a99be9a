"""Clipped sums for every candidate bound of a public grid, and SVT queries.

Ground work for clipping-bound selection by the sparse vector technique
(ALGORITHMS.md §4.4): for a column ``x`` and a public increasing grid
``b_0 < b_1 < ... < b_{k-1}`` all clipped sums ``S_j = Σ_i min(x_i, b_j)`` come
from one sort and prefix sums, and the normalised queries

    q_j = (S_{j+1} - S_j) / (b_{j+1} - b_j)
        = Σ_i clip((x_i - b_j) / (b_{j+1} - b_j), 0, 1)

("soft count" of the rows above ``b_j``) have sensitivity 1 under
add/remove-one-row for any grid spacing.
"""

import math

import numpy as np

__all__ = [
    "lower_clipped_sums",
    "soft_counts_above",
    "soft_counts_below",
    "upper_clipped_sums",
]

# Prefix sums of n values of magnitude < 2**e stay finite while
# e + log2(n + 2) stays below this exponent (the largest double is < 2**1024).
_SAFE_EXPONENT = 1020


# Above this magnitude, differences of two values may overflow.
_HALF_MAX = np.finfo(np.float64).max / 4


def _scaling_exponent(largest_magnitude, count):
    """Exponent ``e`` so that ``count`` values ``<= largest / 2**e`` sum finitely."""
    if not (largest_magnitude > 0):
        return 0
    exponent = math.frexp(largest_magnitude)[1]
    return max(0, exponent + math.ceil(math.log2(count + 2)) - _SAFE_EXPONENT)


def _as_grid(grid):
    grid = np.asarray(grid, dtype=float).ravel()
    return grid


def upper_clipped_sums(x, upper_grid, *, lower=None, scale=1.0):
    """Clipped sums ``Σ_i min(max(x_i, lower), b_j)`` for every candidate ``b_j``.

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite data values.
    upper_grid : array-like of shape (k,)
        Public candidate upper bounds (any order; increasing is typical).
    lower : float, default=None
        Public lower clipping bound applied first; None for no lower clip.
    scale : float or array-like of shape (k,), default=1.0
        Positive divisor applied to each sum, e.g. the sensitivity
        ``max(|lower|, |b_j|)`` of each candidate sum. With values near 1e308
        the sums themselves exceed the largest double; their scaled versions do
        not.

    Returns
    -------
    sums : ndarray of shape (k,)
        ``Σ_i clip(x_i, lower, b_j) / scale_j``, computed without intermediate
        overflow; ``inf`` only if that quotient itself exceeds the largest
        double.

    Notes
    -----
    One sort ``s`` of ``max(x, lower)``, prefix sums ``P`` and
    ``t_j = #{s_i <= b_j}`` (searchsorted) give
    ``S_j = P[t_j] + b_j (n - t_j)`` for all ``j`` in ``O((n + k) log n)``,
    with no re-clipping per candidate. If ``n`` values near the largest
    double could overflow the prefix sums, every value is first multiplied by
    a power of two ``2^-e`` (exact for normal numbers) and the result by
    ``2^e / scale_j``. Floating-point error is that of a sequential sum of the
    sorted values. Under add/remove one row changes ``S_j`` by
    ``clip(z, lower, b_j)``, so its sensitivity is ``max(|lower|, |b_j|)``
    (ALGORITHMS.md §4.4).

    Examples
    --------
    >>> from skdp.sensitivity import upper_clipped_sums
    >>> upper_clipped_sums([1.0, 5.0, 20.0], [2.0, 10.0, 100.0])
    array([ 5., 16., 26.])
    >>> upper_clipped_sums([1e308] * 4, [1e308], scale=1e308)
    array([4.])
    """
    x = np.asarray(x, dtype=float).ravel()
    grid = _as_grid(upper_grid)
    if lower is not None:
        x = np.maximum(x, lower)
    sorted_x = np.sort(x)
    n = sorted_x.size
    largest = max(
        float(np.max(np.abs(sorted_x), initial=0.0)),
        float(np.max(np.abs(grid), initial=0.0)),
    )
    exponent = _scaling_exponent(largest, n)
    scaled_x = np.ldexp(sorted_x, -exponent)
    scaled_grid = np.ldexp(grid, -exponent)
    prefix = np.concatenate(([0.0], np.cumsum(scaled_x)))
    at_most = np.searchsorted(sorted_x, grid, side="right")
    scaled_sums = prefix[at_most] + scaled_grid * (n - at_most)
    return np.ldexp(scaled_sums / np.asarray(scale, dtype=float), exponent)


def lower_clipped_sums(x, lower_grid, *, upper=None, scale=1.0):
    """Clipped sums ``Σ_i max(min(x_i, upper), a_j)`` for every candidate ``a_j``.

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite data values.
    lower_grid : array-like of shape (k,)
        Public candidate lower bounds.
    upper : float, default=None
        Public upper clipping bound applied first; None for no upper clip.
    scale : float or array-like of shape (k,), default=1.0
        Positive divisor applied to each sum.

    Returns
    -------
    sums : ndarray of shape (k,)
        ``Σ_i clip(x_i, a_j, upper) / scale_j``.

    Notes
    -----
    The mirror image of :func:`upper_clipped_sums`:
    ``Σ max(x_i, a) = -Σ min(-x_i, -a)`` (negation is exact), so it shares its
    one-sort algorithm and overflow guard. Sensitivity under add/remove:
    ``max(|a_j|, |upper|)``.

    Examples
    --------
    >>> from skdp.sensitivity import lower_clipped_sums
    >>> lower_clipped_sums([1.0, 5.0, 20.0], [-5.0, 2.0, 6.0])
    array([26., 27., 32.])
    """
    x = np.asarray(x, dtype=float).ravel()
    negated_upper = None if upper is None else -upper
    return -upper_clipped_sums(
        -x, -_as_grid(lower_grid), lower=negated_upper, scale=scale
    )


#: Each row's ramp is rounded to a multiple of ``2**-20`` and the soft counts
#: are summed in integers (see :func:`soft_counts_above`).
SOFT_COUNT_BITS = 20


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

    One sort, then everything else is O(n + k log n): ``searchsorted`` of
    the grid in the sorted rows gives each interval's rows (a contiguous
    block), rows above ``b_{j+1}`` are counted by position, and the ramp
    values ``(x_i - b_j)/(b_{j+1} - b_j)`` of the rows inside interval j are
    summed by prefix sums. Nothing overflows (a grid near the float limit is
    halved first).

    **Exact in floating point.** Each row's ramp is clipped to [0, 1] and
    rounded to a multiple of ``2**-20`` (a function of that row alone, still
    in [0, 1]); the counts are summed in int64 (exact below ``2**43`` rows)
    and converted to the nearest double once. For ``n < 2**53`` rows the
    spacing of doubles at a count is at most 1, so adding 1 commutes with
    that rounding, and monotone rounding maps two exact counts at most 1
    apart to doubles at most 1 apart: the released queries keep sensitivity
    exactly 1, which a float sum of the ramps does not guarantee
    (Casacuberta et al. 2022). A float64 array of ``2**53`` rows would need
    64 PiB.

    Examples
    --------
    >>> from skdp.sensitivity import soft_counts_above
    >>> soft_counts_above([0.5, 1.5, 3.0, 10.0], [0.0, 1.0, 2.0, 4.0])
    array([3.5, 2.5, 1.5])
    """
    x = np.sort(np.asarray(x, dtype=float).ravel())
    return soft_counts_above_sorted(x, _as_grid(upper_grid))


def soft_counts_above_sorted(x, grid):
    """:func:`soft_counts_above` for rows already sorted in increasing order.

    Parameters
    ----------
    x : ndarray of shape (n,)
        Finite data values, sorted.
    grid : ndarray of shape (k,)
        Public strictly increasing candidate bounds.

    Returns
    -------
    counts : ndarray of shape (k - 1,)
    """
    k = grid.size
    if k < 2:
        return np.empty(0, dtype=float)
    if max(abs(grid[0]), abs(grid[-1])) > _HALF_MAX:
        x, grid = x / 2, grid / 2  # same ramps; differences stay finite
    edges = np.searchsorted(x, grid, side="right")  # rows <= b_j come first
    rows_above = x.size - edges[1:]  # rows > b_{j+1}, for j = 0..k-2
    first, last = edges[0], edges[-1]
    per_interval = np.diff(edges)
    ramp = x[first:last] - np.repeat(grid[:-1], per_interval)
    ramp /= np.repeat(np.diff(grid), per_interval)
    np.clip(ramp, 0.0, 1.0, out=ramp)
    ramp *= float(1 << SOFT_COUNT_BITS)  # exact: a power of two
    units = np.rint(ramp).astype(np.int64)  # each row's ramp, in [0, 2**20]
    prefix = np.concatenate(([0], np.cumsum(units)))
    inside = prefix[edges[1:] - first] - prefix[edges[:-1] - first]
    total = (rows_above.astype(np.int64) << SOFT_COUNT_BITS) + inside
    return np.ldexp(total.astype(np.float64), -SOFT_COUNT_BITS)


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
    grid = _as_grid(lower_grid)
    return soft_counts_above(-x, -grid[::-1])[::-1]
