"""Rank scores of quantile candidates and of the intervals between data points.

One utility serves both private quantile methods. For a quantile level ``q``
and an output value ``y``,

    u(y; x) = -|(1 - q) * #{x_i < y} - q * #{x_i > y}|,

the (negated) distance between the rank of ``y`` and the target rank ``q n``,
with rows equal to ``y`` counted on neither side (OpenDP's
``make_quantile_score_candidates``). For ``y`` that is not a data value,
``#{x_i < y} + #{x_i > y} = n`` and ``u(y; x) = -|#{x_i < y} - q n|``.

Everything here is derived for add/remove-one-row neighbours (n is private)
and is deterministic: no noise, no accountant.
"""

import numpy as np

__all__ = [
    "candidate_rank_scores",
    "interval_edges",
    "interval_log_lengths",
    "interval_rank_scores",
    "interval_selection_log_weights",
    "quantile_score_sensitivity",
]


def quantile_score_sensitivity(q):
    """Sensitivity of the rank score ``u(y; x)`` under add/remove-one-row.

    Parameters
    ----------
    q : float
        Quantile level in ``[0, 1]``.

    Returns
    -------
    sensitivity : float
        ``max(q, 1 - q)``, between 1/2 (the median) and 1 (min and max).

    Notes
    -----
    Fix an output ``y``. Adding a row ``z`` to ``x`` changes
    ``s(y) = (1 - q) #{x_i < y} - q #{x_i > y}`` by ``1 - q`` when ``z < y``,
    by ``-q`` when ``z > y`` and by 0 when ``z = y``; removing a row gives the
    opposite changes. So ``|s|``, and hence ``u = -|s|``, moves by at most
    ``max(q, 1 - q)``, for every ``y`` at once. The bound is attained (a row
    below a ``y`` at which ``s >= 0``). The row count ``n`` is not treated as
    public: its change is the ``q`` in the two cases. Checked by brute force
    over every add/remove neighbour of small datasets in the tests.

    The scores are not monotone: adding a row below the target rank moves
    scores above it down and scores below it up. The selection mechanisms
    therefore need the general scale ``2Δ/ε``.

    Examples
    --------
    >>> from skdp.sensitivity._quantile import quantile_score_sensitivity
    >>> quantile_score_sensitivity(0.5), quantile_score_sensitivity(0.9)
    (0.5, 0.9)
    """
    q = float(q)
    return max(q, 1.0 - q)


def interval_edges(sorted_clipped, lower, upper, start=0, stop=None):
    """Edges ``start`` to ``stop - 1`` of the data padded with the public bounds.

    Parameters
    ----------
    sorted_clipped : ndarray of shape (n_samples,)
        One feature, clipped to ``[lower, upper]`` and sorted.
    lower, upper : float
        Public bounds.
    start, stop : int, default=0 and None
        The slice of the padded array ``[lower, x_(1), ..., x_(n), upper]``
        (length ``n + 2``) to return; None means the end. Interval ``i`` is
        ``[edges[i], edges[i + 1]]`` for ``i = 0, ..., n``.

    Returns
    -------
    edges : ndarray of shape (stop - start,)

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._quantile import interval_edges
    >>> interval_edges(np.array([1.0, 2.0]), 0.0, 5.0)
    array([0., 1., 2., 5.])
    >>> interval_edges(np.array([1.0, 2.0]), 0.0, 5.0, 2, 4)
    array([2., 5.])
    """
    n = sorted_clipped.shape[0]
    stop = n + 2 if stop is None else stop
    edges = np.empty(stop - start)
    inner_start, inner_stop = max(start, 1), min(stop, n + 1)
    edges[inner_start - start : inner_stop - start] = sorted_clipped[
        inner_start - 1 : inner_stop - 1
    ]
    if start == 0:
        edges[0] = lower
    if stop == n + 2:
        edges[-1] = upper
    return edges


def interval_log_lengths(left, right):
    """Natural log of interval lengths ``right - left``; ``-inf`` for ties.

    Parameters
    ----------
    left, right : ndarray of shape (n_intervals,)
        Finite interval ends, ``left <= right``.

    Returns
    -------
    log_lengths : ndarray of shape (n_intervals,)
        ``log(right - left)``. Where a difference overflows (bounds near
        ±1.8e308) it is taken on halved values and ``log 2`` is added back, so
        the result is finite for any finite ends. Zero-length intervals (tied
        values) give ``-inf``: weight zero, never selected.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._quantile import interval_log_lengths
    >>> edges = np.array([0.0, 2.0, 2.0, 6.0])
    >>> np.exp(interval_log_lengths(edges[:-1], edges[1:]))
    array([2., 0., 4.])
    >>> interval_log_lengths(np.array([-1e308]), np.array([1e308]))
    array([709.88...])
    """
    with np.errstate(over="ignore"):
        lengths = np.subtract(right, left)
    overflow = np.isinf(lengths)
    if overflow.any():
        halves = right[overflow] * 0.5 - left[overflow] * 0.5
        lengths[overflow] = halves
    with np.errstate(divide="ignore"):
        np.log(lengths, out=lengths)
    if overflow.any():
        lengths[overflow] += np.log(2.0)
    return lengths


def interval_rank_scores(n_samples, q, ranks=None):
    """Score ``u_i = -|i - q n|`` of each interval between sorted data points.

    Interval ``i`` (``i = 0, ..., n``) lies between the ``i``-th and the
    ``(i + 1)``-th order statistics (padded with the bounds), so every point
    strictly inside it has exactly ``i`` rows below and ``n - i`` above: its
    rank score :math:`u(y; x)` is ``-|(1 - q) i - q (n - i)| = -|i - q n|``.

    Parameters
    ----------
    n_samples : int
        Number of rows ``n`` (private; its change is in the sensitivity).
    q : float
        Quantile level in ``[0, 1]``.
    ranks : ndarray of shape (n_samples + 1,), default=None
        ``np.arange(n_samples + 1, dtype=float)``, to reuse across levels.

    Returns
    -------
    scores : ndarray of shape (n_samples + 1,)

    Examples
    --------
    >>> from skdp.sensitivity._quantile import interval_rank_scores
    >>> interval_rank_scores(4, 0.5)
    array([-2., -1., -0., -1., -2.])
    """
    if ranks is None:
        ranks = np.arange(n_samples + 1, dtype=np.float64)
    scores = ranks - q * n_samples
    np.abs(scores, out=scores)
    np.negative(scores, out=scores)
    return scores


def candidate_rank_scores(sorted_values, candidates, q):
    """Rank score ``u(c; x)`` of each public candidate ``c``.

    Parameters
    ----------
    sorted_values : ndarray of shape (n_samples,)
        One feature, sorted (clipped or not: only comparisons matter).
    candidates : ndarray of shape (n_candidates,)
        Public candidates, sorted.
    q : float
        Quantile level in ``[0, 1]``.

    Returns
    -------
    scores : ndarray of shape (n_candidates,)
        ``-|(1 - q) #{x < c} - q #{x > c}|``, from two binary searches per
        candidate on the sorted data (O(m log n) after the sort).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._quantile import candidate_rank_scores
    >>> candidate_rank_scores(np.array([1.0, 2.0, 2.0, 3.0]),
    ...                       np.array([0.0, 2.0, 2.5]), 0.5)
    array([-2., -0., -1.])
    """
    n = sorted_values.shape[0]
    below = np.searchsorted(sorted_values, candidates, side="left")
    above = n - np.searchsorted(sorted_values, candidates, side="right")
    return -np.abs((1.0 - q) * below - q * above)


# exp(x) is exactly 0.0 in float64 for x < -745.2: weights further than this
# below the largest one contribute nothing to the sampler's cumulative sum.
UNDERFLOW_GAP = 750.0


def _max_log_length(lower, upper):
    """Largest possible log interval length, ``log(upper - lower)``, finite."""
    return float(np.log(upper * 0.5 - lower * 0.5) + np.log(2.0))


def interval_selection_log_weights(sorted_clipped, lower, upper, q, scale):
    """Log-weights ``log(length_i) + scale * u_i`` of Smith's mechanism.

    Only intervals of positive length can be selected, so only they are
    returned; and only those in a window of ranks around the target ``q n``,
    grown until every interval outside it is certain to get weight exactly
    zero once the sampler subtracts the maximum and exponentiates: an
    interval's log-weight is at most ``log(upper - lower) + scale * u`` (no
    interval is longer than the bounds), and the window stops growing when
    that is more than ``UNDERFLOW_GAP`` below the largest log-weight inside.
    The selection distribution is therefore the same as with all ``n + 1``
    weights, at a cost proportional to the window after the sort. Heavily
    tied data (zero-length intervals around the target) grow the window; its
    tied stretches cost one comparison per row.

    Parameters
    ----------
    sorted_clipped : ndarray of shape (n_samples,)
        One feature, clipped to ``[lower, upper]`` and sorted.
    lower, upper : float
        Public bounds, ``lower < upper``.
    q : float
        Quantile level in ``[0, 1]``.
    scale : float
        ``epsilon / (2 * sensitivity)``.

    Returns
    -------
    intervals : ndarray of int of shape (m,)
        Indices ``i`` (interval ``i`` has ``i`` rows below it) of the
        positive-length intervals in the window.
    left, right : ndarray of shape (m,)
        Their ends.
    log_weights : ndarray of shape (m,)
        ``log(right - left) - scale * |i - q n|``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._quantile import interval_selection_log_weights
    >>> i, left, right, lw = interval_selection_log_weights(
    ...     np.array([1.0, 2.0, 2.0]), 0.0, 4.0, 0.5, 1.0)
    >>> i, left, right, np.exp(lw)
    (array([0, 1, 3]), array([0., 1., 2.]), array([1., 2., 4.]),
     array([0.2231..., 0.6065..., 0.4462...]))
    """
    n = sorted_clipped.shape[0]
    target = q * n
    log_span = _max_log_length(lower, upper)
    skip_start, skip_stop = _tie_block_interior(sorted_clipped, target)
    # start with the ranks whose score alone is within the underflow gap
    half_width = (UNDERFLOW_GAP + 64.0) / scale
    while True:
        first = max(0, int(np.floor(target - half_width)))
        last = min(n, int(np.ceil(target + half_width)))
        intervals, left, right = _positive_intervals(
            sorted_clipped, lower, upper, first, last + 1, skip_start, skip_stop
        )
        log_weights = interval_rank_scores(n, q, intervals.astype(np.float64))
        log_weights *= scale
        log_weights += interval_log_lengths(left, right)
        if first == 0 and last == n:
            return intervals, left, right, log_weights
        top = log_weights.max() if log_weights.size else -np.inf
        # the best score any interval outside the window can have
        outside_distance = min(
            target - (first - 1) if first > 0 else np.inf,
            (last + 1) - target if last < n else np.inf,
        )
        if top - (log_span - scale * outside_distance) > UNDERFLOW_GAP:
            return intervals, left, right, log_weights
        half_width *= 4.0


def _tie_block_interior(sorted_clipped, target):
    """Intervals strictly inside the run of values tied at the target rank.

    They all have length zero, so they need not be looked at: two binary
    searches find the run, however long (95% zeros, say).
    """
    n = sorted_clipped.shape[0]
    if n == 0:
        return 0, 0
    value = sorted_clipped[min(n - 1, int(target))]
    run_start = int(np.searchsorted(sorted_clipped, value, side="left"))
    run_stop = int(np.searchsorted(sorted_clipped, value, side="right"))
    # interval i lies between rows i - 1 and i (0-based): inside the run when
    # run_start <= i - 1 and i <= run_stop - 1
    return run_start + 1, run_stop


def _positive_intervals(
    sorted_clipped, lower, upper, start, stop, skip_start, skip_stop
):
    """Positive-length intervals among ``start <= i < stop``, skipping a range.

    Returns their indices and ends; ``skip_start <= i < skip_stop`` are known
    to have length zero.
    """
    pieces = []
    for a, b in ((start, min(stop, skip_start)), (max(start, skip_stop), stop)):
        if a < b:
            edges = interval_edges(sorted_clipped, lower, upper, a, b + 1)
            positive = np.flatnonzero(edges[1:] > edges[:-1])
            pieces.append((positive + a, edges[positive], edges[positive + 1]))
    if not pieces:
        empty = np.empty(0)
        return np.empty(0, dtype=np.intp), empty, empty
    return tuple(np.concatenate(parts) for parts in zip(*pieces, strict=True))
