"""Sampling for the exponential mechanism over runs of a public grid.

Two primitives: choose an index with probability proportional to
``exp(log_weights)``, where zero weights (``-inf``) are allowed and never
chosen, and draw a point of a public grid uniformly inside chosen runs. One uniform per
draw, whatever the number of candidates: the selection is an inverse-CDF
lookup in the cumulative weights, so a million intervals cost one ``exp``,
one ``cumsum`` and one binary search.
"""

import numpy as np

from skdp.mechanisms._random import check_random_source

__all__ = ["sample_log_weights", "uniform_grid_points"]


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


def uniform_grid_points(first, counts, exponent, *, random_state=None):
    """A uniform point of each chosen run of a public grid, exactly.

    Parameters
    ----------
    first : ndarray of float64
        First grid index ``j`` of each chosen run (integer-valued, ``|j| <=
        2**53``).
    counts : ndarray of int64
        Number of grid points in each run, ``>= 1`` (same shape).
    exponent : int
        The public grid step is ``2**exponent``.
    random_state : None, int, numpy.random.RandomState or RandomSource, \
default=None
        Source of randomness; None uses the operating system's secure
        generator.

    Returns
    -------
    points : ndarray of float64
        ``(first + r) * 2**exponent`` with ``r`` uniform on ``{0, ...,
        counts - 1}`` (exact integer sampling), the shape of ``first``.

    Notes
    -----
    The output is a point of the public grid: its set of possible values is
    fixed by the public bounds, whatever the data (the release invariant of
    :mod:`skdp.mechanisms`). The offset is an exact uniform integer; adding
    it to ``first`` and scaling by a power of two are exact for the indices
    a grid from :func:`~skdp.sensitivity._quantile_grid.quantile_grid_exponent`
    can hold. No float arithmetic touches a data value.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms._quantile_sampling import uniform_grid_points
    >>> point = uniform_grid_points(np.array([4.0]), np.array([3]), -2,
    ...                             random_state=0)
    >>> point[0] in (1.0, 1.25, 1.5)
    True
    """
    source = check_random_source(random_state)
    counts = np.asarray(counts, dtype=np.int64)
    offsets = source.integers(counts)
    return (np.asarray(first, dtype=np.float64) + offsets) * 2.0**exponent
