"""Local sensitivity machinery of the lower median under add/remove-one-row.

All formulas are those of ALGORITHMS_ADDREMOVE.md §2 (median) and §5 (windows
of order statistics for large ``n``). Notation: ``y`` are the padded order
statistics of :func:`~skdp.sensitivity.padded_order_statistics` (``y[0] = L``,
``y[n+1] = U``), the median is ``f(x) = y[m]`` with ``m = ceil(n/2)``, and
``f(∅) = L``.
"""

import math

import numpy as np

from skdp.sensitivity._order import _values_at, select_order_statistics

__all__ = [
    "median_A",
    "median_distance_to_instability",
    "median_local_sensitivity",
    "median_rank",
    "median_smooth_sensitivity",
]


def median_rank(n):
    """Rank ``m = ceil(n/2)`` of the lower median of ``n`` values.

    Parameters
    ----------
    n : int or ndarray of int
        Number of rows (``n >= 0``).

    Returns
    -------
    m : int or ndarray of int
        ``(n + 1) // 2``; ``0`` for the empty dataset, whose median is the
        padding value ``L``.

    Notes
    -----
    skdp uses the order statistic of rank ``ceil(n/2)`` (ALGORITHMS.md §0): its
    add/remove local sensitivity is a single gap and ``A(x, k)`` a single window
    (ALGORITHMS_ADDREMOVE.md §1), which averaging the two middle values would
    lose.

    Examples
    --------
    >>> from skdp.sensitivity import median_rank
    >>> [median_rank(n) for n in range(6)]
    [0, 1, 1, 2, 2, 3]
    """
    return (n + 1) // 2


def _window_indices(n, k):
    """Padded ranks ``(lo, hi)`` with ``A(x, k) = y[hi] - y[lo]``."""
    if isinstance(k, int):
        return max(0, (n - k) // 2), min(n + 1, (n + k + 2) // 2)
    lo = np.maximum(0, (n - k) // 2)
    hi = np.minimum(n + 1, (n + k + 2) // 2)
    return lo, hi


def median_A(y, n, k):
    """Largest local sensitivity of the median within ``k`` add/remove steps.

    Parameters
    ----------
    y : ndarray of shape (n + 2,)
        Padded sorted data, see :func:`~skdp.sensitivity.padded_order_statistics`.
    n : int
        Number of rows.
    k : int or ndarray of int
        Distances ``k >= 0``.

    Returns
    -------
    A : float or ndarray of float
        ``A(x, k) = max{LS(x') : d(x, x') <= k}``.

    Notes
    -----
    ALGORITHMS_ADDREMOVE.md §2.2: with ``l = floor((n - k)/2)``,

    ``A(x, k) = y[l + k + 1] - y[l] = y[m(n+k+1)] - y[m(n-k-1)]``,

    indices clipped to ``0 .. n+1`` and ``m(t) = ceil(t/2)``. The medians
    reachable within ``k + 1`` add/remove steps are exactly
    ``[y[m(n-k-1)], y[m(n+k+1)]]`` (add copies of ``L`` or delete from the top,
    and vice versa), and the maximum over the ``k``-ball is attained by
    deleting a central block of ``k`` points. Unlike replace-one (NRS 2007),
    this is **one** window of width ``k + 1``, not a maximum over ``k + 2``
    positions. ``A`` is non-decreasing in ``k`` and ``A(x, k) = U - L`` for
    ``k >= n``; ``A(x, 0)`` is the local sensitivity.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity import median_A, padded_order_statistics
    >>> y = padded_order_statistics([1.0, 2.0, 3.0, 7.0], (0.0, 10.0))
    >>> median_A(y, 4, np.arange(5))
    array([ 1.,  2.,  6.,  7., 10.])
    """
    lo, hi = _window_indices(n, np.asarray(k))
    return y[hi] - y[lo]


def median_local_sensitivity(x, bounds):
    """Local sensitivity of the lower median under add/remove-one-row.

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite data values (clipped to ``bounds`` here).
    bounds : tuple of float
        Public clipping bounds ``(L, U)``.

    Returns
    -------
    ls : float
        ``LS(x) = max{|f(x) - f(x')| : x' an add/remove neighbour of x}``.

    Notes
    -----
    ALGORITHMS_ADDREMOVE.md §2.1: with ``h = floor(n/2)``,
    ``LS(x) = x_(h+1) - x_(h)``. For ``n = 2p - 1`` adding a value moves the
    median within ``[x_(p-1), x_(p)]`` and deleting one gives ``x_(p-1)`` or
    ``x_(p)``; for ``n = 2p`` the range is ``[x_(p), x_(p+1)]``. For ``n = 0``
    it is ``U - L`` (``f(∅) = L``, one added value can be ``U``). Only two
    order statistics are selected, in ``O(n)``.

    Examples
    --------
    >>> from skdp.sensitivity import median_local_sensitivity
    >>> median_local_sensitivity([1.0, 2.0, 4.0], (0.0, 10.0))
    1.0
    >>> median_local_sensitivity([1.0, 2.0, 4.0, 8.0], (0.0, 10.0))
    2.0
    >>> median_local_sensitivity([], (0.0, 10.0))
    10.0
    """
    n = np.asarray(x).size
    h = n // 2
    ranks, values = select_order_statistics(x, bounds, [(h, h + 1)])
    gap = _values_at(ranks, values, n, [h, h + 1])
    return float(gap[1] - gap[0])


def _median_window(x, bounds, n, k_max):
    """Padded order statistics needed for ``A(x, k)``, ``k = 0 .. k_max``."""
    lo, hi = _window_indices(n, k_max)
    return select_order_statistics(x, bounds, [(lo, hi)])


def median_distance_to_instability(x, b, bounds, *, cap=None):
    """Add/remove distance from ``x`` to a dataset whose median has LS > ``b``.

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite data values (clipped to ``bounds`` here).
    b : float
        Proposed (public) bound on the local sensitivity.
    bounds : tuple of float
        Public clipping bounds ``(L, U)``.
    cap : int, default=None
        Public cap ``K >= 1``. If given, return ``D_K = min(D, K)`` computed
        from a window of about ``K + 1`` order statistics around the median
        (selection, ``O(n + K log K)``); otherwise the exact ``D`` after one
        sort.

    Returns
    -------
    D : int or float
        ``D(x, b)``; ``math.inf`` if ``U - L <= b`` (no dataset has LS > b)
        and ``cap`` is None. With ``cap``: ``min(D, cap)``.

    Notes
    -----
    ALGORITHMS_ADDREMOVE.md §2.3:

    ``D(x, b) = min{k >= 0 : A(x, k) > b} = dist(x, {x' : LS(x') > b})``,

    equivalently ``min{max(2j - n - 2, n - 2i - 1) : 0 <= i < j <= n + 1,
    x_(j) - x_(i) > b}``. The ``k = 0`` term is required: ``D >= 1`` if and
    only if ``LS(x) <= b``, which is what makes PTR private. ``D`` is a graph
    distance to a fixed set, so its global sensitivity under add/remove is 1;
    ``min(D, K)`` keeps both properties for ``K >= 1`` (§5). The test
    ``y[hi] - y[lo] > b`` is decided exactly, not on the rounded difference
    (:func:`_exceeds`): a gap of ``b (1 + 2**-53)`` rounds to ``b``, and
    with ``D >= 1`` PTR would release with noise for ``b`` a median that
    moves by more. For ``n = 0``, ``D = 0`` whenever ``U - L > b``.

    Examples
    --------
    >>> from skdp.sensitivity import median_distance_to_instability
    >>> x = [4.0, 4.5, 5.0, 5.0, 5.5, 6.0, 9.0]
    >>> median_distance_to_instability(x, 1.0, (0.0, 10.0))
    3
    >>> median_distance_to_instability(x, 1.0, (0.0, 10.0), cap=1)
    1
    >>> median_distance_to_instability(x, 20.0, (0.0, 10.0))
    inf
    """
    lower, upper = bounds
    if not _exceeds(np.array([float(upper)]), np.array([float(lower)]), b)[0]:
        return math.inf if cap is None else int(cap)
    n = np.asarray(x).size
    k_max = n if cap is None else min(int(cap) - 1, n)
    if k_max < 0:
        return int(cap)
    ranks, values = _median_window(x, bounds, n, k_max)
    lo, hi = _window_indices(n, np.arange(k_max + 1))
    tops = _values_at(ranks, values, n, hi)
    unstable = _exceeds(tops, _values_at(ranks, values, n, lo), b)
    if unstable.any():
        return int(np.argmax(unstable))
    return int(cap)  # only reachable with a cap: A(x, n) = U - L > b


def _exceeds(upper_values, lower_values, b):
    """Whether ``u - l > b`` exactly, for doubles ``u >= l`` and ``b``.

    The float difference rounds: ``1 + 2**-52`` minus ``2**-53`` is
    ``1 + 2**-53`` but rounds (to even) to ``1.0``, which compared with
    ``b = 1`` made the gap look stable. Rounding is monotone, so the
    rounded difference ``s`` decides except when ``s == b``; then the sign
    of the exact rounding error (Knuth's TwoSum, exact whenever ``s`` is
    finite, subnormals included) does. An overflowing ``s`` is ``inf > b``.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        difference = upper_values - lower_values
        shift = difference - upper_values
        error = (upper_values - (difference - shift)) - (lower_values + shift)
    return (difference > b) | ((difference == b) & (error > 0))


def _log_differences(upper_values, lower_values):
    """``log(u - l)`` without overflow of ``u - l``; ``-inf`` where equal."""
    with np.errstate(divide="ignore", over="ignore"):
        diff = upper_values - lower_values
        logs = np.log(diff)
        overflow = np.isinf(diff)
        if overflow.any():
            halves = upper_values[overflow] / 2 - lower_values[overflow] / 2
            logs[overflow] = np.log(halves) + math.log(2.0)
    return logs


def median_smooth_sensitivity(x, beta, bounds, *, cap=None, log=False):
    """β-smooth sensitivity of the lower median under add/remove-one-row.

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite data values (clipped to ``bounds`` here).
    beta : float
        Smoothing parameter ``β >= 0``.
    bounds : tuple of float
        Public clipping bounds ``(L, U)``.
    cap : int, default=None
        Public truncation ``K >= 1``. If given, return
        ``S_K = max(S*_β, e^{-βK} (U - L))`` from a window of about ``K + 1``
        order statistics (selection, ``O(n + K log K)``).
    log : bool, default=False
        Return ``ln S`` instead of ``S``. Use it when ``β n`` is large:
        ``S*`` can underflow to 0.0 there (e.g. ``n`` tied values, where
        ``S* = e^{-β(n-1)} A(x, n-1)``), while ``ln S`` stays accurate. A cap
        keeps ``S_K >= e^{-βK}(U - L)``, which does not underflow for
        moderate ``βK``.

    Returns
    -------
    S : float
        ``S*_β(x)`` (or ``S_K``), or its natural logarithm if ``log=True``
        (``-inf`` only when ``U == L``).

    Notes
    -----
    ALGORITHMS_ADDREMOVE.md §2.4:

    ``S*_β(x) = max_{x'} e^{-β d(x, x')} LS(x') = max_{k=0..n} e^{-βk} A(x, k)``

    with ``A(x, k)`` from :func:`median_A` (``k = 0`` included, ``A(x, n) =
    U - L``), one vectorised pass after the sort. For a public ``K``,
    ``S_K = max(max_{k<K} e^{-βk} A(x, k), e^{-βK}(U - L))`` equals
    ``max(S*_β, e^{-βK}(U - L))`` because ``A <= U - L``; a maximum of a β-smooth
    upper bound and a constant is again one (§2.4, §5), and ``S_K = S*_β`` when
    ``K > n``. Terms are compared in log space, ``ln A(x, k) - βk``, with
    differences taken as ``u/2 - l/2`` where ``u - l`` would overflow, so
    bounds up to ±1e308 are fine; the maximising term is then evaluated as
    ``A(x, k) · e^{-βk}`` (exact for ``k = 0``; one rounding each for the
    subtraction, ``exp`` and the product otherwise).

    **Float error (used by the smooth-sensitivity releases).** With a cap and
    a floor ``e^{-βK}(U - L) >= 2**-1000``, the returned float is within a
    relative ``2**-40`` of the exact real ``S_K`` (for the float β and data):
    the chosen term is evaluated with at most about ``30u`` relative error
    (``u = 2**-53``: the subtraction, ``exp`` of an argument below 30 with its
    rounding, the product), and comparing terms in log space, where each log
    is at most 710 in magnitude, can pick a term at most ``e^{1500u}`` below
    the largest; together below ``2000u < 2**-42``. Terms below the floor
    (including subnormal differences) never decide the result.
    ``tests/sensitivity/test_median.py`` compares with a 60-digit evaluation.

    Examples
    --------
    >>> from skdp.sensitivity import median_smooth_sensitivity
    >>> x = [4.0, 4.5, 5.0, 5.0, 5.5, 6.0, 9.0]
    >>> round(median_smooth_sensitivity(x, 0.5, (0.0, 10.0)), 6)
    0.448084
    >>> round(median_smooth_sensitivity(x, 0.5, (0.0, 10.0), cap=2), 6)
    3.678794
    """
    lower, upper = bounds
    n = np.asarray(x).size
    k_max = n if cap is None else min(int(cap) - 1, n)
    candidates = []  # (log of the term, the term computed in linear scale)
    if k_max >= 0:
        ranks, values = _median_window(x, bounds, n, k_max)
        k = np.arange(k_max + 1)
        lo, hi = _window_indices(n, k)
        tops = _values_at(ranks, values, n, hi)
        bottoms = _values_at(ranks, values, n, lo)
        log_terms = _log_differences(tops, bottoms) - beta * k
        best = int(np.argmax(log_terms))
        linear = float(tops[best]) - float(bottoms[best])  # inf on overflow
        linear *= math.exp(-beta * best)
        candidates.append((float(log_terms[best]), linear))
    if cap is not None:
        log_range = _log_differences(np.array([float(upper)]), np.array([float(lower)]))
        linear = (upper - lower) * math.exp(-beta * int(cap))
        candidates.append((float(log_range[0]) - beta * int(cap), linear))
    log_s, linear_s = max(candidates)
    if log:
        return log_s
    # The linear product is exact for k = 0; it is inf only on overflow of u - l.
    return linear_s if math.isfinite(linear_s) else math.exp(log_s)
