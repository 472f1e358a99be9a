"""Sampling for the exponential mechanism over intervals (Smith 2011).

Two primitives: choose an index with probability proportional to
``exp(log_weights)``, where zero weights (``-inf``) are allowed and never
chosen, and draw a point uniformly inside chosen intervals. One uniform per
draw, whatever the number of candidates: the selection is an inverse-CDF
lookup in the cumulative weights, so a million intervals cost one ``exp``,
one ``cumsum`` and one binary search.
"""

import numpy as np

from skdp.mechanisms._random import check_random_source

__all__ = ["sample_log_weights", "uniform_in_intervals"]


def _check_log_weights(log_weights):
    lw = np.asarray(log_weights, dtype=np.float64)
    if lw.ndim != 1 or lw.size == 0:
        raise ValueError(
            f"log_weights must be a non-empty 1-D array; got shape {lw.shape}."
        )
    top = lw.max()  # NaN anywhere propagates to the maximum
    if np.isnan(top) or top == np.inf:
        raise ValueError("log_weights must not contain NaN or +inf.")
    if top == -np.inf:
        raise ValueError(
            "every weight is zero (all log_weights are -inf): there is nothing "
            "to sample from."
        )
    return lw, top


def sample_log_weights(log_weights, *, random_state=None, n_runs=None):
    """Draw an index ``i`` with probability ``exp(w_i) / sum_j exp(w_j)``.

    Parameters
    ----------
    log_weights : array-like of shape (n_candidates,)
        Natural-log weights ``w_i``; ``-inf`` means weight zero (never
        chosen). At least one must be finite; NaN and ``+inf`` are refused.
    random_state : None, int, numpy.random.RandomState or RandomSource, \
default=None
        Source of randomness; None uses the operating system's secure
        generator.
    n_runs : int, default=None
        Number of independent draws; None returns a single int.

    Returns
    -------
    index : int or ndarray of shape (n_runs,)

    Notes
    -----
    The weights are shifted by their maximum before exponentiation, so the
    largest is exactly 1 and nothing overflows however large the scores;
    weights more than about 745 (natural-log units) below the maximum
    underflow to 0, i.e. probabilities below ``1e-323`` relative to the
    largest one become 0. The index is ``searchsorted(cumsum(weights), U *
    total, side="right")`` with ``U`` a 53-bit uniform from the
    :class:`~skdp.mechanisms.RandomSource`; an index whose weight is 0 is never
    returned (its cumulative sum equals its predecessor's).

    **Floating-point caveat.** The probabilities are exact up to the rounding
    of ``exp`` and of the running sum (relative error about ``m 2**-53`` for
    ``m`` candidates) and to the 2**-53 resolution of ``U``: an additive
    error of order ``m 2**-53`` per outcome, about ``1e-9`` for ``m = 10**7``.
    Only the index (a public-range integer) is released.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms._quantile_sampling import sample_log_weights
    >>> sample_log_weights([0.0, -np.inf, 1000.0], random_state=0)
    2
    """
    lw, top = _check_log_weights(log_weights)
    source = check_random_source(random_state)
    with np.errstate(over="ignore"):  # overflow to -inf is weight 0: right
        weights = np.subtract(lw, top)
    np.exp(weights, out=weights)
    cumulative = np.cumsum(weights, out=weights)
    total = cumulative[-1]
    draws = source.random(1 if n_runs is None else int(n_runs)) * total
    index = np.searchsorted(cumulative, draws, side="right")
    # U < 1, so draws < total up to rounding; if rounding reaches the total,
    # fall back to the last index with positive weight (never a zero weight)
    last_positive = np.searchsorted(cumulative, total, side="left")
    np.minimum(index, last_positive, out=index)
    return int(index[0]) if n_runs is None else index


def uniform_in_intervals(left, right, *, random_state=None):
    """A uniform point in ``[left, right]``, elementwise.

    Parameters
    ----------
    left, right : float or ndarray
        Finite interval ends, ``left <= right`` (same shape).
    random_state : None, int, numpy.random.RandomState or RandomSource, \
default=None
        Source of randomness; None uses the operating system's secure
        generator.

    Returns
    -------
    point : float or ndarray
        ``left + U (right - left)`` with ``U`` a 53-bit uniform in [0, 1),
        computed without overflow and clipped to ``[left, right]`` (rounding
        could otherwise step past ``right``); the shape of ``left``.

    Notes
    -----
    **Floating-point caveat.** The ideal mechanism draws from a continuous
    uniform; here ``U`` lies on the grid ``k 2**-53`` and the result is
    rounded to a double. The set of reachable doubles, and the low-order bits
    of the released value, therefore depend on the interval's ends, which
    are data values: in principle a released value can be more likely under
    one dataset than the continuous analysis says (the analogue of Mironov's
    2012 attack on floating-point Laplace noise). Each reachable point has
    probability about ``2**-53`` of the interval's mass, so the effect is
    confined to such tiny events; use a public candidate grid
    (``method="permute_and_flip"`` of
    :class:`~skdp.preprocessing.PrivateQuantile`) where it matters.

    Examples
    --------
    >>> from skdp.mechanisms._quantile_sampling import uniform_in_intervals
    >>> point = uniform_in_intervals(1.0, 3.0, random_state=0)
    >>> 1.0 <= point <= 3.0
    True
    """
    source = check_random_source(random_state)
    left, right = np.asarray(left, dtype=np.float64), np.asarray(right, np.float64)
    unit = source.random(left.shape)
    half = right * 0.5 - left * 0.5  # finite even for ends near ±1.8e308
    point = np.clip(left + unit * half + unit * half, left, right)
    return float(point) if point.ndim == 0 else point
