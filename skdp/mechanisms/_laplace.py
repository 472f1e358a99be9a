"""The Laplace mechanism with exact discrete noise on a power-of-two grid."""

import math
from fractions import Fraction

import numpy as np

from skdp.accounting._cost import PrivacyCost
from skdp.mechanisms._discrete import _discrete_laplace
from skdp.mechanisms._grid import (
    MAX_GRID_EXP,
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
from skdp.utils._validation import check_epsilon

__all__ = ["laplace_cost", "laplace_mechanism"]

#: Largest integer noise scale (in grid steps). Together with the sampler's
#: guard this keeps every noise value below 2**53 grid steps except with
#: probability below exp(-511).
MAX_LAPLACE_STEPS = 1 << 44


def _laplace_grid(sensitivity, epsilon, size):
    """Choose the grid for a Laplace release.

    Returns
    -------
    k : int
        Grid exponent: releases are multiples of ``2**k``.
    t : int
        Integer noise scale in grid steps, ``t >= steps / epsilon``.
    steps : int
        L1 sensitivity of the rounded query in grid steps,
        ``floor(sensitivity / 2**k) + size``.
    """
    scale = sensitivity / epsilon  # only used to pick k; may be inf
    k = floor_log2(min(sensitivity, scale)) - PRECISION_BITS - ceil_log2_int(size)
    k = min(max(k, MIN_GRID_EXP), MAX_GRID_EXP)
    sens, eps = Fraction(sensitivity), Fraction(epsilon)
    while k <= MAX_GRID_EXP:
        steps = math.floor(sens / Fraction(2) ** k) + size
        t = math.ceil(steps / eps)
        if t <= MAX_LAPLACE_STEPS:
            return k, t, steps
        k += 1
    raise ValueError(
        f"Cannot represent a Laplace release with sensitivity={sensitivity!r}, "
        f"epsilon={epsilon!r} and {size} values: the noise scale is too large "
        "for the float range or the array too large for this epsilon."
    )


def laplace_mechanism(value, sensitivity, epsilon, *, random_state=None):
    """Release ``value`` with Laplace noise of scale ``sensitivity / epsilon``.

    The noise is exact discrete Laplace noise on a power-of-two grid, so the
    release is ``epsilon``-DP as stated (no floating-point leakage).

    Parameters
    ----------
    value : float, array-like of float or FixedPoint
        The exact query answer, finite; a
        :class:`~skdp.mechanisms._grid.FixedPoint` for sums formed exactly,
        which are rounded to the grid in integer arithmetic. An array is
        released as one vector query: all coordinates get independent noise.
    sensitivity : float
        L1 sensitivity of the query (of the whole array ``value``) under
        add/remove-one-row neighbours, ``> 0``.
    epsilon : float
        Privacy loss, ``> 0``.
    random_state : None, int, RandomState or RandomSource, default=None
        ``None`` (default) draws from the operating system's CSPRNG; an int
        or ``RandomState`` gives reproducible, *not secure*, noise (tests and
        examples only). See :func:`check_random_source`.

    Returns
    -------
    noisy : float or ndarray of float
        Same shape as ``value``; every entry is the float nearest to a
        multiple of the grid step ``2**k`` (exactly that multiple unless it is
        beyond ``2**53`` steps or the float range).

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is not finite and positive, if
        ``value`` contains NaN or infinity, or if the release cannot be
        represented (noise scale above about ``1e250``).

    Notes
    -----
    **Privacy.** ``epsilon``-DP under add/remove-one-row neighbours for a
    query whose L1 sensitivity under that relation is ``sensitivity``
    (Dwork and Roth, 2014, Thm 3.6, with the discrete Laplace distribution,
    whose pmf ratio between integers ``D`` apart is at most ``exp(D / t)``).

    **Grid and rounding.** With ``m = value.size`` and ``b = sensitivity /
    epsilon``, the grid step is ``2**k``, the largest power of two with
    ``2**k <= min(sensitivity, b) * 2**-20 / 2**ceil(log2 m)`` (made coarser
    only if the integer scale below would exceed ``2**44``, i.e. for
    ``m / epsilon`` beyond about ``2**24``). Each coordinate is rounded to the
    nearest grid point. Proof that rounding is accounted for: rounding moves a
    coordinate by at most ``2**(k-1)``, so for neighbouring inputs ``x, x'``
    each rounded coordinate difference is at most the true one plus ``2**k``,
    and the rounded L1 distance in grid steps is an integer at most
    ``sensitivity / 2**k + m``, hence at most ``D = floor(sensitivity / 2**k)
    + m``. Integer noise with pmf ``∝ exp(-|z| / t)``, ``t = ceil(D /
    epsilon)``, then gives privacy loss at most ``D / t <= epsilon``. The
    noise scale grows by the factor ``(D / (sensitivity / 2**k))``, i.e. by at
    most about ``2**-20`` relative.

    **Exactness.** The noise is the discrete Laplace of Canonne, Kamath and
    Steinke (2020), sampled exactly from uniform integers by
    :func:`skdp.mechanisms._discrete._discrete_laplace` (every decision an
    exact comparison of a uniform with a proven bracket), and the release is
    the nearest
    float to ``(round(x / 2**k) + Z) * 2**k`` computed with one correctly
    rounded addition: post-processing of an exact release. Outputs are
    multiples of ``2**k``, so Mironov's (2012) attack on the low-order bits of
    floating-point Laplace noise (diffprivlib issue #94) does not apply.

    **Huge values.** Values of any finite magnitude are accepted. Beyond
    ``2**(52 + k)`` a float is already a grid point and the release is the
    nearest float to the exact sum (the noise can then be absorbed by
    rounding); a release beyond the float range saturates at ``±1.8e308``.
    With probability below ``exp(-511)`` a noise draw exceeds ``2**53`` steps
    and ``OverflowError`` is raised instead of releasing (an event that does
    not depend on the data).

    References
    ----------
    .. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
       Privacy", 2014, Section 3.3.
    .. [2] C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for
       Differential Privacy", NeurIPS 2020, arXiv:2004.00010.
    .. [3] I. Mironov, "On Significance of the Least Significant Bits for
       Differential Privacy", CCS 2012.

    Examples
    --------
    >>> from skdp.mechanisms import laplace_mechanism
    >>> noisy = laplace_mechanism([10.0, 20.0], sensitivity=1.0, epsilon=1.0,
    ...                           random_state=0)
    >>> noisy.shape
    (2,)
    >>> float(noisy[0] * 2**21) == round(noisy[0] * 2**21)  # a grid point
    True
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_sensitivity(sensitivity)
    x = check_values(value)
    source = check_random_source(random_state)
    if x.size == 0:
        return np.zeros(x.shape)
    k, t, _ = _laplace_grid(sensitivity, epsilon, x.size)
    noise = _discrete_laplace(t, 1, x.size, source, max_abs=MAX_NOISE_STEPS)
    out = release_on_grid(x, noise, k)
    return out[()] if out.ndim == 0 else out


def laplace_cost(epsilon):
    """Privacy cost of one :func:`laplace_mechanism` call.

    Parameters
    ----------
    epsilon : float
        The ``epsilon`` passed to the mechanism.

    Returns
    -------
    cost : PrivacyCost
        ``(epsilon, 0)``-DP, with ``rho = epsilon**2 / 2`` (pure DP implies
        zCDP; Bun and Steinke, 2016, Prop. 1.4).

    Examples
    --------
    >>> from skdp.mechanisms import laplace_cost
    >>> laplace_cost(0.5)
    PrivacyCost(epsilon=0.5, delta=0.0, rho=0.125, mechanism='laplace')
    """
    epsilon = check_epsilon(epsilon)
    return PrivacyCost(epsilon, 0.0, epsilon * epsilon / 2, mechanism="laplace")
