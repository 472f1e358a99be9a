"""Clipped sums for every candidate bound of a public grid.

Ground work for clipping-bound selection by the sparse vector technique
(ALGORITHMS.md §4.4): for a column ``x`` and a public increasing grid
``b_0 < b_1 < ... < b_{k-1}`` all clipped sums ``S_j = Σ_i min(x_i, b_j)`` come
from one sort and prefix sums. Their normalised differences, the soft counts
used as SVT queries, are computed without a sort in
:mod:`skdp.sensitivity._soft_counts`.
"""

import math

import numpy as np

__all__ = ["lower_clipped_sums", "upper_clipped_sums"]

# Prefix sums of n values of magnitude < 2**e stay finite while
# e + log2(n + 2) stays below this exponent (the largest double is < 2**1024).
_SAFE_EXPONENT = 1020


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
