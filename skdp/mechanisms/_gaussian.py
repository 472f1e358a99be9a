"""The analytic Gaussian mechanism with exact discrete noise on a grid."""

import math
from fractions import Fraction

import numpy as np
from scipy.special import log_ndtr, ndtr

from skdp.accounting._cost import PrivacyCost
from skdp.mechanisms._discrete import _discrete_gaussian
from skdp.mechanisms._grid import (
    MAX_GAUSSIAN_GRID_EXP,
    MAX_NOISE_STEPS,
    MIN_GRID_EXP,
    PRECISION_BITS,
    ceil_log2_int,
    check_sensitivity,
    check_values,
    floor_log2,
    release_on_grid,
)
from skdp.mechanisms._random import check_random_source
from skdp.utils._validation import check_delta, check_epsilon

__all__ = [
    "analytic_gaussian_sigma",
    "gaussian_cost",
    "gaussian_mechanism",
    "gaussian_noise_multipliers",
    "gaussian_release",
]

#: Largest (floor(sigma) + 1)**2 in grid steps accepted by the exact sampler.
_MAX_T_SQUARED = 1 << 52
#: Relative safety margin on the computed sigma (covers rounding in the
#: evaluation of the Gaussian CDFs).
_SIGMA_MARGIN = 1e-10


def _gaussian_delta(ratio, epsilon):
    """delta achieved by N(0, (ratio * Δ)**2) noise, Balle and Wang (2018), Thm 8.

    ``Φ(1/(2r) - εr) - e^ε Φ(-1/(2r) - εr)`` with ``r = σ/Δ``; the second term
    is evaluated as ``exp(ε + log Φ(.))`` so that it neither overflows nor
    underflows early.
    """
    return _gaussian_delta_terms(ratio, epsilon)[0]


def _gaussian_delta_terms(ratio, epsilon):
    """Return ``(delta, error)``: the float value of :func:`_gaussian_delta`
    and a bound on its absolute floating-point error.

    For small ε the two terms are nearly equal and their difference (δ) can be
    many orders of magnitude smaller than either, so the rounding errors of
    the terms matter: an argument ``x`` computed with relative error ``u``
    changes ``Φ(x)`` by a relative ``|x| (|a| + |b|) u`` in the tail, and
    ``exp(ε + log Φ(x))`` carries the absolute error of the exponent
    (about ``x² u``). The bound below is several times larger than those
    estimates (checked against 60-digit arithmetic).
    """
    a = 0.5 / ratio
    b = epsilon * ratio
    x1, x2 = a - b, -a - b
    t1 = float(ndtr(x1))
    # inf: not certified (exceeds); 0 (underflow): the larger, safe δ
    with np.errstate(over="ignore", under="ignore"):
        t2 = float(np.exp(epsilon + log_ndtr(x2)))
    scale = abs(a) + abs(b)

    def rel(x, extra=0.0):
        return 1e-14 * (1.0 + x * x + extra) + 1e-15 * scale * (1.0 + abs(x))

    return t1 - t2, rel(x1) * t1 + rel(x2, epsilon) * t2


def _sigma_ratio(epsilon, delta):
    """Smallest r = σ/Δ (up to 1e-13 relative, plus a margin) with δ(r) <= delta.

    ``δ(r)`` is tested with its floating-point error bound added, so the
    returned ratio satisfies the Balle–Wang condition in exact arithmetic,
    not only as evaluated in floating point (for small ε the evaluated δ
    can be below the true one by a relative 1e-6).
    """
    return _certified_ratio(epsilon, delta) * (1.0 + _SIGMA_MARGIN)


def _delta_exceeds(ratio, epsilon, delta):
    """Whether δ(ratio) at ``epsilon``, plus its float error bound, exceeds
    ``delta``: when False, the exact ``δ(ratio) <= delta``."""
    value, error = _gaussian_delta_terms(ratio, epsilon)
    return not value + error <= delta  # NaN: exceeds


# Above this epsilon the calibration's terms (epsilon * ratio squared)
# overflow a double: no ratio can be certified, whatever delta is.
_LARGEST_CALIBRATED_EPSILON = 1e150


def _uncalibrated_message(epsilon, delta):
    """Why no ratio was certified: epsilon beyond what floats evaluate, or
    a delta too small for any noise up to 1e300 sensitivities."""
    if epsilon > _LARGEST_CALIBRATED_EPSILON:
        return (
            f"epsilon={epsilon} is too large to calibrate a Gaussian release "
            "in floating point (its terms overflow a double beyond about "
            "1e154); state epsilon at most 1e150, where the noise is already "
            "below 1e-75 of the sensitivity."
        )
    return (
        f"no noise multiplier up to 1e300 makes a Gaussian release "
        f"(epsilon={epsilon}, delta={delta})-DP; pass a larger delta."
    )


def _certified_ratio(epsilon, delta):
    """A ratio ``r`` with ``not _delta_exceeds(r, ...)``, within 1e-13 of the
    smallest: every ratio ``>= r`` is ``(epsilon, delta)``-DP exactly (δ(r)
    decreases in ``r``)."""

    def too_small(r):
        return _delta_exceeds(r, epsilon, delta)

    hi = 1.0
    while too_small(hi):
        hi *= 2.0
        if hi > 1e300:
            raise ValueError(_uncalibrated_message(epsilon, delta))
    lo = hi / 2.0
    while not too_small(lo):
        hi = lo
        lo /= 2.0
    # delta(r) is decreasing in r: bisect on the invariant
    # too_small(lo) and not too_small(hi).
    while hi - lo > 1e-13 * hi:
        mid = 0.5 * (lo + hi)
        if too_small(mid):
            lo = mid
        else:
            hi = mid
    return hi


def analytic_gaussian_sigma(l2_sensitivity, epsilon, delta):
    """Smallest Gaussian noise std giving (epsilon, delta)-DP (analytic calibration).

    Parameters
    ----------
    l2_sensitivity : float
        L2 sensitivity ``Δ`` of the query under add/remove-one-row neighbours.
    epsilon : float
        Privacy loss, ``> 0``.
    delta : float
        Failure probability in ``(0, 1)``.

    Returns
    -------
    sigma : float
        Up to a relative ``1e-10`` safety margin, the smallest ``σ`` with
        ``Φ(Δ/(2σ) - εσ/Δ) - e^ε Φ(-Δ/(2σ) - εσ/Δ) <= δ``.

    Notes
    -----
    Balle and Wang (2018), Theorem 8 and Algorithm 1: the condition is
    necessary and sufficient for ``N(0, σ²)`` noise, and its left side
    decreases in ``σ``, so a bracketing bisection on ``σ/Δ`` finds the
    threshold. Unlike the classical ``σ = Δ sqrt(2 ln(1.25/δ)) / ε`` it holds
    for every ``ε > 0`` and is smaller.

    References
    ----------
    .. [1] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
       Differential Privacy: Analytical Calibration and Optimal Denoising",
       ICML 2018.

    Examples
    --------
    >>> from skdp.mechanisms import analytic_gaussian_sigma
    >>> round(analytic_gaussian_sigma(1.0, 1.0, 1e-5), 3)
    3.73...
    """
    sens = check_sensitivity(l2_sensitivity, "l2_sensitivity")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=False)
    return sens * _sigma_ratio(epsilon, delta)


def _gaussian_grid(sensitivity, ratio, size):
    """Choose the grid for a Gaussian release.

    Returns ``(k, sigma2_steps)``: releases are multiples of ``2**k`` and the
    noise is discrete Gaussian with variance parameter ``sigma2_steps`` (an
    integer, in grid steps squared), at least ``(ratio * steps)**2`` for the
    rounded L2 sensitivity ``steps = sensitivity / 2**k + ceil(sqrt(size))``.
    """
    root = math.isqrt(size)
    root += root * root < size  # ceil(sqrt(size))
    sigma = sensitivity * ratio  # only used to pick k
    k = floor_log2(min(sensitivity, sigma)) - PRECISION_BITS - ceil_log2_int(root)
    k = min(max(k, MIN_GRID_EXP), MAX_GAUSSIAN_GRID_EXP)
    sens, r = Fraction(sensitivity), Fraction(ratio)
    while k <= MAX_GAUSSIAN_GRID_EXP:
        steps = sens / Fraction(2) ** k + root
        sigma2 = math.ceil((steps * r) ** 2)
        t = math.isqrt(sigma2) + 1
        if t * t <= _MAX_T_SQUARED:
            return k, sigma2
        k += 1
    raise ValueError(
        f"Cannot represent a Gaussian release with l2_sensitivity={sensitivity!r} "
        f"and {size} values: the noise scale is too large for the float range."
    )


def gaussian_mechanism(value, l2_sensitivity, epsilon, delta, *, random_state=None):
    """Release ``value`` with Gaussian noise calibrated by the analytic mechanism.

    The noise is exact discrete Gaussian noise on a power-of-two grid with the
    standard deviation of :func:`analytic_gaussian_sigma` (for the rounded
    sensitivity).

    Parameters
    ----------
    value : float, array-like of float or FixedPoint
        The exact query answer, finite; a
        :class:`~skdp.mechanisms._grid.FixedPoint` for sums formed exactly,
        which are rounded to the grid in integer arithmetic. An array is one
        vector query.
    l2_sensitivity : float
        L2 sensitivity of the query (of the whole array) under add/remove-one-row
        neighbours, ``> 0``.
    epsilon : float
        Privacy loss, ``> 0``.
    delta : float
        Failure probability in ``(0, 1)``.
    random_state : None, int, RandomState or RandomSource, default=None
        ``None`` (default) draws from the operating system's CSPRNG; an int or
        ``RandomState`` gives reproducible, *not secure*, noise.

    Returns
    -------
    noisy : float or ndarray of float
        Same shape as ``value``; each entry is the float nearest to a multiple
        of the grid step ``2**k``.

    Raises
    ------
    ValueError
        For ``epsilon``, ``delta`` or ``l2_sensitivity`` out of range, NaN or
        infinite values, or a noise scale beyond the float range.

    Notes
    -----
    **Privacy.** ``(epsilon, delta)``-DP under add/remove-one-row neighbours
    for a query whose L2 sensitivity under that relation is
    ``l2_sensitivity``, by the analytic calibration of Balle and Wang (2018)
    applied to the rounded sensitivity below. The noise is the discrete
    Gaussian (Canonne, Kamath and Steinke, 2020) with variance parameter
    ``σ² >= (r Δ_k)²`` where ``r = analytic_gaussian_sigma(1, ε, δ)``. For the
    discrete Gaussian, CKS prove the same zero-concentrated DP as for the
    continuous one, ``ρ = Δ_k² / (2σ²) <= 1 / (2 r²)`` (reported by
    :func:`gaussian_cost`), and show that its (ε, δ) curve is essentially that
    of the continuous Gaussian when ``σ`` is large in grid steps (here
    ``σ >= 2**19`` steps unless the grid had to be coarsened); the (ε, δ)
    statement relies on that comparison rather than on a separate proof.

    **Grid and rounding.** With ``m = value.size``, ``s = ceil(sqrt(m))`` and
    ``σ₀ = r Δ``, the grid step is the largest power of two with
    ``2**k <= min(Δ, σ₀) * 2**-20 / 2**ceil(log2 s)``, made coarser only if
    ``σ`` would exceed about ``2**26`` steps. Rounding moves each coordinate
    by at most ``2**(k-1)``, so for neighbouring inputs the rounded difference
    vector is the true one plus an error vector with entries at most ``2**k``;
    by the triangle inequality its L2 norm is at most
    ``Δ + sqrt(m) 2**k``, i.e. ``Δ_k = Δ / 2**k + s`` grid steps, which is
    the sensitivity used for the calibration.

    **Exactness.** Noise is sampled exactly from uniform integers, and the
    release is the nearest float to ``(round(x / 2**k) + Z) * 2**k`` (one
    correctly rounded addition); values of any finite size are accepted and a
    result beyond the float range saturates at ``±1.8e308``.

    References
    ----------
    .. [1] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
       Differential Privacy: Analytical Calibration and Optimal Denoising",
       ICML 2018.
    .. [2] C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for
       Differential Privacy", NeurIPS 2020, arXiv:2004.00010.

    Examples
    --------
    >>> from skdp.mechanisms import gaussian_mechanism
    >>> noisy = gaussian_mechanism([1.0, 2.0, 3.0], l2_sensitivity=1.0,
    ...                            epsilon=1.0, delta=1e-6, random_state=0)
    >>> noisy.shape
    (3,)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=False)
    ratio = _sigma_ratio(epsilon, delta)
    return gaussian_release(value, l2_sensitivity, ratio, random_state=random_state)


def gaussian_release(value, l2_sensitivity, noise_multiplier, *, random_state=None):
    """Release ``value`` with discrete Gaussian noise of a given noise multiplier.

    The building block of :func:`gaussian_mechanism` for callers that
    calibrate a composition of Gaussian releases themselves (see
    :func:`gaussian_noise_multipliers`): the noise has standard deviation at
    least ``noise_multiplier`` times the (rounded) L2 sensitivity.

    Parameters
    ----------
    value : float, array-like of float or FixedPoint
        The exact query answer, as for :func:`gaussian_mechanism`.
    l2_sensitivity : float
        L2 sensitivity of the query under add/remove-one-row neighbours, ``> 0``.
    noise_multiplier : float
        ``σ / Δ``, ``> 0``.
    random_state : None, int, RandomState or RandomSource, default=None
        ``None`` (default) draws from the operating system's CSPRNG.

    Returns
    -------
    noisy : float or ndarray of float
        Same shape as ``value``, on the grid of :func:`gaussian_mechanism`.

    Notes
    -----
    A release with multiplier ``r`` is ``(1/r)``-GDP (Gaussian differential
    privacy, Dong, Roth and Su 2022) for the continuous Gaussian; the grid and
    the discrete noise are handled exactly as in :func:`gaussian_mechanism`.

    Examples
    --------
    >>> from skdp.mechanisms import gaussian_release
    >>> gaussian_release([0.0, 1.0], 1.0, 4.0, random_state=0).shape
    (2,)
    """
    sensitivity = check_sensitivity(l2_sensitivity, "l2_sensitivity")
    ratio = check_sensitivity(noise_multiplier, "noise_multiplier")
    x = check_values(value)
    source = check_random_source(random_state)
    if x.size == 0:
        return np.zeros(x.shape)
    k, sigma2 = _gaussian_grid(sensitivity, ratio, x.size)
    noise = _discrete_gaussian(sigma2, 1, x.size, source)
    if np.abs(noise).max() > MAX_NOISE_STEPS:  # probability below exp(-2**50)
        raise OverflowError(
            "discrete Gaussian noise exceeds 2**53 grid steps; nothing was released."
        )
    out = release_on_grid(x, noise, k)
    return out[()] if out.ndim == 0 else out


def gaussian_cost(epsilon, delta):
    """Privacy cost of one :func:`gaussian_mechanism` call.

    Parameters
    ----------
    epsilon : float
        The ``epsilon`` passed to the mechanism.
    delta : float
        The ``delta`` passed to the mechanism.

    Returns
    -------
    cost : PrivacyCost
        ``(epsilon, delta)``-DP with ``rho = Δ² / (2σ²) = 1 / (2 r²)`` for
        the noise multiplier ``r = analytic_gaussian_sigma(1, epsilon,
        delta)`` (the released noise has ``σ >= r`` times the rounded
        sensitivity, so this bounds its ρ), carried as ``noise_multiplier``.

    Examples
    --------
    >>> from skdp.mechanisms import gaussian_cost
    >>> cost = gaussian_cost(1.0, 1e-5)
    >>> cost.epsilon, cost.delta, round(cost.rho, 4), round(cost.noise_multiplier, 3)
    (1.0, 1e-05, 0.0359, 3.73)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=False)
    ratio = _sigma_ratio(epsilon, delta)
    return PrivacyCost(epsilon, delta, noise_multiplier=ratio)


def gaussian_noise_multipliers(epsilon, delta, shares):
    """Noise multipliers for Gaussian releases that compose to ``(epsilon, delta)``.

    Parameters
    ----------
    epsilon : float
        Total privacy loss, ``> 0``.
    delta : float
        Total failure probability in ``(0, 1)``.
    shares : array-like of float
        Positive weights, one per release (adaptively chosen releases
        included); normalised to sum to 1.

    Returns
    -------
    multipliers : ndarray of float
        ``σ_i / Δ_i = R / sqrt(share_i)`` with
        ``R = analytic_gaussian_sigma(1, epsilon, delta)``.

    Notes
    -----
    A Gaussian release with multiplier ``r_i`` is ``μ_i``-GDP with
    ``μ_i = 1/r_i``, and the adaptive composition of ``μ_i``-GDP mechanisms is
    exactly ``sqrt(Σ μ_i²)``-GDP (Dong, Roth and Su 2022, Corollary 3.3): a
    composition of Gaussian releases is a single Gaussian mechanism with
    ``μ = 1/R``. Its exact ``(ε, δ)`` curve is the one of the analytic
    Gaussian mechanism (Balle and Wang 2018, Theorem 8 is the same curve),
    so ``μ² = Σ share_i / R² = 1/R²`` gives ``(epsilon, delta)``, with no loss
    from a zCDP or RDP conversion. As for :func:`gaussian_mechanism`, the
    statement for the discrete Gaussian rests on its closeness to the
    continuous one at ``σ >= 2**19`` grid steps; its ``ρ = 1/(2R²)``-zCDP
    holds exactly (Canonne, Kamath and Steinke 2020).

    Examples
    --------
    >>> from skdp.mechanisms import gaussian_noise_multipliers
    >>> r = gaussian_noise_multipliers(1.0, 1e-6, [0.5, 0.25, 0.25])
    >>> bool(abs((1 / r**2).sum() - 1 / r[0] ** 2 * 2) < 1e-12)
    True
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=False)
    weights = np.asarray(shares, dtype=np.float64).ravel()
    if weights.size == 0 or not np.all((weights > 0) & np.isfinite(weights)):
        raise ValueError(f"shares must be positive and finite; got {shares!r}.")
    return _sigma_ratio(epsilon, delta) / np.sqrt(weights / weights.sum())
