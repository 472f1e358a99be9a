"""Private partition selection: keep the keys whose noisy count clears a threshold."""

import math
from fractions import Fraction

import numpy as np

from skdp.mechanisms._discrete import MAX_LAPLACE_PARAM, discrete_laplace
from skdp.mechanisms._random import check_random_source
from skdp.utils._validation import check_delta, check_epsilon

__all__ = [
    "check_partition_parameters",
    "partition_noise_std",
    "partition_selection",
    "partition_threshold",
]

#: The noise scale is ``t = ceil(2**SCALE_BITS / epsilon) / 2**SCALE_BITS``,
#: at least ``1 / epsilon``, as an exact rational for the sampler.
SCALE_BITS = 20


#: The smallest ε the exact sampler takes: its scale numerator
#: ``ceil(2**20 / ε)`` may not exceed ``2**52``.
MIN_EPSILON = math.ldexp(1.0, SCALE_BITS) / MAX_LAPLACE_PARAM


#: The most partitions per group :func:`partition_threshold` takes (its
#: worst case is a maximum over ``1 .. min(p, L)`` touched partitions).
MAX_PARTITIONS = 1 << 20


def _scale(epsilon, bound=None):
    """Noise scale ``num / den >= L / epsilon`` (``L = bound.total``, 1
    without a bound), exact: ``num = ceil(2**20 L / epsilon)``."""
    if bound is None or bound.total == 1:
        return math.ceil(math.ldexp(1.0, SCALE_BITS) / epsilon), 1 << SCALE_BITS
    num = Fraction(bound.total << SCALE_BITS) / Fraction(epsilon)
    return math.ceil(num), 1 << SCALE_BITS


def _log_worst_sum(bound, t):
    """``log max Σ_i exp(m_i / t)`` over a group's moves ``m_i`` in ``[1,
    c]`` on ``n <= p`` partitions with ``Σ m_i <= L`` (``bound``).

    For ``n`` partitions the sum is convex in the moves, so it is largest
    at a vertex: as many partitions at ``c`` as ``L - n`` extra rows fill,
    one at the remainder, the rest at 1 (this vector majorises every
    other); the maximum over ``n`` is taken exactly, vectorised.
    """
    c, total = bound.per_partition, bound.total
    n = np.arange(1, min(bound.partitions, total) + 1, dtype=np.float64)
    extra = total - n
    full = np.minimum(n, extra // (c - 1)) if c > 1 else np.zeros_like(n)
    rest = extra - full * (c - 1) if c > 1 else np.zeros_like(n)
    partial = (full < n) & (rest > 0)
    ones = n - full - partial
    with np.errstate(divide="ignore"):
        terms = np.stack(
            [
                np.log(full) + c / t,
                np.where(partial, (1 + rest) / t, -np.inf),
                np.log(ones) + 1 / t,
            ]
        )
    return float(np.logaddexp.reduce(terms, axis=0).max())


def check_partition_parameters(epsilon, delta, bound=None):
    """Refuse ``(epsilon, delta)`` that :func:`partition_selection` cannot run at.

    Call it before charging: the selection's exact sampler takes noise
    scales up to ``2**32`` (``epsilon >= 2**-32``); ``delta`` must be in
    ``(0, 1)``. Every ε above the minimum works (from ``ε = 2**20`` on the
    scale stays at its floor ``2**-20``, a selection more private than
    stated).

    Parameters
    ----------
    epsilon : float
        ε of the selection.
    delta : float
        δ of the selection.
    bound : PartitionBound or None, default=None
        What one privacy unit adds (:func:`~skdp.utils._partitions.
        partition_contribution`: at most ``p`` partitions, ``c`` rows
        each, ``L`` in all); None: one row to one partition.

    Returns
    -------
    epsilon, delta : float

    Examples
    --------
    >>> from skdp.mechanisms._partition import check_partition_parameters
    >>> check_partition_parameters(1e-12, 1e-6)
    Traceback (most recent call last):
    ...
    ValueError: epsilon=1e-12 is below 2.3283064365386963e-10 = 2**-32, ...
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=False)
    if bound is not None and bound.total > 1:
        if min(bound.partitions, bound.total) > MAX_PARTITIONS:
            raise ValueError(
                f"a group may touch {bound.partitions} partitions, more than "
                f"{MAX_PARTITIONS} = 2**20, the most the selection's threshold "
                "is computed for; state a smaller max_partitions_per_group."
            )
        if _scale(epsilon, bound)[0] > MAX_LAPLACE_PARAM:
            raise ValueError(
                f"epsilon={epsilon!r} is too small for a group adding up to "
                f"{bound.total} rows: the selection's noise scale "
                f"{bound.total}/epsilon may not exceed 2**32; pass a larger "
                "epsilon or smaller bounds."
            )
        return epsilon, delta
    if epsilon < MIN_EPSILON:
        raise ValueError(
            f"epsilon={epsilon!r} is below {MIN_EPSILON!r} = 2**-32, the "
            "smallest at which partition selection samples its noise exactly "
            "(its scale 1/epsilon may not exceed 2**32); pass a larger epsilon."
        )
    return epsilon, delta


def partition_noise_std(epsilon, bound=None):
    """Standard deviation of the selection's discrete Laplace noise.

    ``Var Z = 2 e^{-1/t} / (1 - e^{-1/t})²`` for ``P(z) ∝ exp(-|z|/t)``.

    Parameters
    ----------
    epsilon : float
        ε of the selection, ``> 0``.
    bound : PartitionBound or None, default=None
        What one privacy unit adds (:func:`~skdp.utils._partitions.
        partition_contribution`: at most ``p`` partitions, ``c`` rows
        each, ``L`` in all); None: one row to one partition.

    Returns
    -------
    std : float

    Examples
    --------
    >>> from skdp.mechanisms import partition_noise_std
    >>> round(partition_noise_std(1.0), 3)
    1.357
    """
    epsilon, _ = check_partition_parameters(epsilon, 0.5, bound)
    num, den = _scale(epsilon, bound)
    ratio = math.exp(-den / num)
    return math.sqrt(2.0 * ratio) / -math.expm1(-den / num)


def partition_threshold(epsilon, delta, bound=None):
    """The integer threshold ``τ`` of :func:`partition_selection`.

    Parameters
    ----------
    epsilon : float
        ε of the selection, ``> 0``.
    delta : float
        δ of the selection, in (0, 1).
    bound : PartitionBound or None, default=None
        What one privacy unit adds (:func:`~skdp.utils._partitions.
        partition_contribution`: at most ``p`` partitions, ``c`` rows
        each, ``L`` in all); None: one row to one partition.

    Returns
    -------
    threshold : int
        The smallest integer with ``P(1 + Z >= τ) <= delta`` for the
        discrete Laplace noise ``Z`` of the selection.

    Examples
    --------
    >>> from skdp.mechanisms import partition_threshold
    >>> partition_threshold(1.0, 1e-6)
    15
    """
    epsilon, delta = check_partition_parameters(epsilon, delta, bound)
    if bound is not None and bound.total > 1:
        return _bounded_threshold(epsilon, delta, bound)
    num, den = _scale(epsilon)
    t = num / den
    # P(Z >= m) = exp(-m/t) / (1 + exp(-1/t)) for m >= 1, in logarithms
    # (a subnormal delta has no finite reciprocal)
    log_norm = math.log1p(math.exp(-1.0 / t))
    steps = t * (-math.log(delta) - log_norm)
    threshold = 1 + max(1, math.ceil(steps * (1 + 1e-12)))
    while -(threshold - 1) / t - log_norm > math.log(delta):
        threshold += 1  # guards the float evaluation above
    return threshold


def _bounded_threshold(epsilon, delta, bound):
    """``τ`` with ``Σ_i P(m_i + Z >= τ) <= delta`` for every group's moves
    (:func:`_log_worst_sum`), ``τ > c`` so that each tail is
    ``exp(-(τ - m_i)/t) / (1 + exp(-1/t))``."""
    num, den = _scale(epsilon, bound)
    t = num / den
    log_norm = math.log1p(math.exp(-1.0 / t))
    log_worst = _log_worst_sum(bound, t)
    steps = t * (log_worst - log_norm - math.log(delta))
    threshold = max(bound.per_partition + 1, math.ceil(steps * (1 + 1e-12)))
    while log_worst - threshold / t - log_norm > math.log(delta):
        threshold += 1  # guards the float evaluation above
    return threshold


def partition_selection(counts, epsilon, delta, *, bound=None, random_state=None):
    """Keep the keys whose count plus discrete Laplace noise reaches a threshold.

    Parameters
    ----------
    counts : array-like of int of shape (n_keys,)
        Exact positive row counts of the keys present in the data, one row
        contributing to one key.
    epsilon : float
        ε of the selection, ``> 0``.
    delta : float
        δ of the selection, in (0, 1).
    bound : PartitionBound or None, default=None
        What one privacy unit adds (:func:`~skdp.utils._partitions.
        partition_contribution`: at most ``p`` partitions, ``c`` rows
        each, ``L`` in all); None: one row to one partition.
    random_state : None, int, RandomState or RandomSource, default=None
        Source of randomness, see :func:`check_random_source`.

    Returns
    -------
    keep : ndarray of bool of shape (n_keys,)
        Which keys are released.
    noisy_counts : ndarray of float of shape (n_keys,)
        The noisy counts (integers); those of the kept keys may be released
        with them (part of the same mechanism).

    Notes
    -----
    **Mechanism.** Each present key's count gets independent discrete Laplace
    noise ``Z`` with ``P(z) ∝ exp(-|z|/t)`` on the integers, ``t =
    ceil(2**20/ε)/2**20 >= 1/ε``, sampled exactly (Canonne, Kamath and
    Steinke 2020); the key is kept when ``count + Z >= τ``, with ``τ`` from
    :func:`partition_threshold`. Absent keys are never kept.

    **Privacy ((ε, δ)-DP, add/remove one row contributing to one key).**
    Removing the row changes one key's count by 1. If that count stays
    positive, the released keys and noisy counts are those of a Laplace
    mechanism on a sensitivity-1 count: privacy loss at most ``1/t <= ε``.
    If the count was 1, the key disappears; the bad event is that it was
    released, which has probability ``P(1 + Z >= τ) = exp(-(τ-1)/t) / (1 +
    exp(-1/t)) <= δ``. This is the Laplace thresholding of Korolova et al.
    (2009) and Desfontaines, Voss, Gipson and Mandayam (2022), with the
    exact tail of the discrete Laplace noise.

    **A unit adding to several keys (``bound``).** A unit (a group of rows)
    that adds ``m_i <= c`` rows to at most ``p`` keys, ``Σ m_i <= L``,
    moves the counts of the keys present without it by at most ``L`` in
    L1: the scale is ``t = ceil(2**20 L/ε)/2**20 >= L/ε`` (privacy loss at
    most ``ε`` on those keys). The keys only it touches are released with
    probability ``Σ_i P(m_i + Z >= τ)``; ``τ`` is the smallest with that
    sum ``<= δ`` for the worst moves (a vertex of the moves' polytope, the
    sum being convex; Desfontaines et al. 2022 for the L0/L∞ setting).

    References
    ----------
    .. [1] A. Korolova, K. Kenthapadi, N. Mishra and A. Ntoulas, "Releasing
       Search Queries and Clicks Privately", WWW 2009.
    .. [2] D. Desfontaines, J. Voss, B. Gipson and C. Mandayam,
       "Differentially private partition selection", PoPETs 2022.

    Examples
    --------
    >>> from skdp.mechanisms import partition_selection
    >>> keep, _ = partition_selection([1000, 2], 1.0, 1e-6, random_state=0)
    >>> keep.tolist()
    [True, False]
    """
    counts = np.asarray(counts, dtype=np.int64)
    threshold = partition_threshold(epsilon, delta, bound)  # checks them
    source = check_random_source(random_state)
    num, den = _scale(epsilon, bound)
    noise = discrete_laplace(num, den, counts.shape, random_state=source)
    noisy = counts + noise
    return noisy >= threshold, noisy.astype(float)
