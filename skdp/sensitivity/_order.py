"""Padded order statistics, in full or only in windows of ranks.

Every rank-based sensitivity computation in :mod:`skdp.sensitivity` reads the
*padded* order statistics of data clipped to public bounds ``[L, U]``::

    y = [L] + sorted(clip(x, L, U)) + [U]          # padded ranks 0 .. n+1

Rank 0 reads ``L`` and rank ``n + 1`` reads ``U`` (ALGORITHMS_ADDREMOVE.md §1);
ranks outside ``0 .. n+1`` are clipped to these ends.

For large ``n`` the median and IQR tests only need a few order statistics
around the median or the quartiles (ALGORITHMS_ADDREMOVE.md §5). They are
found by *selection*: one :func:`numpy.partition` call with every window
boundary as a ``kth`` places all requested ranks in their slices, and only
those slices are sorted, which costs ``O(n + K log K)`` instead of
``O(n log n)``. Clipping commutes with order statistics (it is monotone), so
only the selected values are clipped.
"""

import numpy as np

__all__ = ["padded_order_statistics", "select_order_statistics"]


def padded_order_statistics(x, bounds):
    """Sorted data clipped to ``bounds``, padded with the bounds at both ends.

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite data values.
    bounds : tuple of float
        Public clipping bounds ``(L, U)`` with ``L <= U``.

    Returns
    -------
    y : ndarray of shape (n + 2,)
        ``y[0] = L``, ``y[1:n+1] = sort(clip(x, L, U))``, ``y[n+1] = U``.

    Notes
    -----
    The padding implements the convention ``x_(r) = L`` for ``r <= 0`` and
    ``x_(r) = U`` for ``r >= n + 1`` of ALGORITHMS_ADDREMOVE.md §1, under which
    the median of the empty dataset is ``L``. Costs one full sort; see
    :func:`select_order_statistics` for a windowed alternative.

    Examples
    --------
    >>> from skdp.sensitivity import padded_order_statistics
    >>> padded_order_statistics([3.0, -5.0, 1.0], (0.0, 2.0))
    array([0., 0., 1., 2., 2.])
    """
    lower, upper = bounds
    x = np.asarray(x, dtype=float).ravel()
    return np.concatenate(([lower], np.sort(np.clip(x, lower, upper)), [upper]))


def _merge_windows(windows, n):
    """Clip rank windows to ``[0, n+1]``, drop empty ones, merge overlaps."""
    clipped = sorted(
        (max(0, int(start)), min(n + 1, int(stop)))
        for start, stop in windows
        if max(0, int(start)) <= min(n + 1, int(stop))
    )
    merged = []
    for start, stop in clipped:
        if merged and start <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], stop)
        else:
            merged.append([start, stop])
    return merged


def select_order_statistics(x, bounds, windows):
    """Padded order statistics at the ranks of a few windows, by selection.

    Parameters
    ----------
    x : array-like of shape (n,)
        Finite data values.
    bounds : tuple of float
        Public clipping bounds ``(L, U)`` with ``L <= U``.
    windows : sequence of (int, int)
        Inclusive padded-rank windows ``(start, stop)``; ranks are clipped to
        ``0 .. n+1`` and overlapping windows are merged.

    Returns
    -------
    ranks : ndarray of int of shape (m,)
        The increasing padded ranks covered by the union of the windows.
    values : ndarray of float of shape (m,)
        ``values[t] = y[ranks[t]]`` with ``y`` the array returned by
        :func:`padded_order_statistics`; non-decreasing.

    Notes
    -----
    One :func:`numpy.partition` call with the first and last data position of
    every merged window as ``kth`` puts every requested rank inside its
    window's slice; each slice is then sorted on its own. With ``m`` requested
    ranks this is ``O(n + m log m)``. If the windows cover all data ranks the
    data are sorted directly.

    Examples
    --------
    >>> from skdp.sensitivity import select_order_statistics
    >>> x = [9.0, 1.0, 8.0, 2.0, 7.0, 3.0, 6.0, 4.0, 5.0]
    >>> ranks, values = select_order_statistics(x, (0.0, 10.0), [(0, 1), (5, 6)])
    >>> ranks
    array([0, 1, 5, 6])
    >>> values
    array([0., 1., 5., 6.])
    """
    lower, upper = bounds
    x = np.asarray(x, dtype=float).ravel()
    n = x.size
    merged = _merge_windows(windows, n)
    if not merged:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=float)
    if merged == [[0, n + 1]]:
        return np.arange(n + 2), padded_order_statistics(x, bounds)

    # 0-based positions of the data ranks max(start, 1) .. min(stop, n).
    slices = [(max(start, 1) - 1, min(stop, n)) for start, stop in merged]
    covered = sum(max(0, end - begin) for begin, end in slices)
    if covered >= n:
        selected = np.sort(x)
    elif covered > 0:
        kth = sorted(
            {pos for begin, end in slices if end > begin for pos in (begin, end - 1)}
        )
        selected = np.partition(x, kth)
    else:
        selected = x

    ranks, values = [], []
    for (start, stop), (begin, end) in zip(merged, slices, strict=True):
        ranks.append(np.arange(start, stop + 1))
        middle = np.clip(np.sort(selected[begin:end]), lower, upper)
        pieces = [middle]
        if start == 0:
            pieces.insert(0, [lower])
        if stop == n + 1:
            pieces.append([upper])
        values.append(np.concatenate(pieces))
    return np.concatenate(ranks), np.concatenate(values).astype(float)


def _values_at(ranks, values, n, wanted):
    """Look up padded order statistics at ``wanted`` ranks (clipped to 0..n+1).

    ``(ranks, values)`` is a pair returned by :func:`select_order_statistics`;
    every clipped wanted rank must be among ``ranks``.
    """
    wanted = np.minimum(np.maximum(np.asarray(wanted, dtype=np.int64), 0), n + 1)
    if ranks.size == ranks[-1] - ranks[0] + 1:  # one contiguous window
        return values[wanted - ranks[0]]
    return values[np.searchsorted(ranks, wanted)]
