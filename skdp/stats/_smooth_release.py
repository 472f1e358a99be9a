"""The smooth-sensitivity median release: plan, sensitivities, noise, grid.

The parameters (β, the noise scale α, the grid) computed from public
values, the β-smooth sensitivities ``S_K`` of the lower medians and the
release on the public lattice, shared by :class:`~skdp.SmoothSensitivityMedian`
and :class:`~skdp.PrivateRobustScaler`; the Notes of
:class:`~skdp.SmoothSensitivityMedian` give the derivation.
"""

import math
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from skdp.accounting._composition import equal_shares
from skdp.mechanisms._grid import floor_log2
from skdp.mechanisms._smooth_noise import lattice_release
from skdp.sensitivity import median_smooth_sensitivity
from skdp.stats._ptr import lower_medians

__all__ = [
    "SmoothPlan",
    "laplace_log_term",
    "smooth_medians",
    "smooth_parameters",
    "smooth_plan",
    "smooth_release",
    "smooth_sensitivities",
]

#: ``S_K`` keeps the floor ``e^{-βK}(U - L)``; K is chosen so that the floor is
#: at most this fraction of ``U - L``.
SMOOTH_FLOOR = 1e-12

#: Above this per-feature ε the Laplace variant's ``ℓ`` grows by ``ε_f/4``
#: (see :func:`laplace_log_term`); at or below it, the constants of Nissim,
#: Raskhodnikova and Smith as they are.
LAPLACE_MAX_EPSILON = 1.0


def laplace_log_term(eps_feature, delta_feature):
    """``ℓ`` of the Laplace variant: ``β_0 = ε_f / (2ℓ)`` (public).

    ``max(1, ln(2/δ_f))`` for ``ε_f <= 1`` (Nissim, Raskhodnikova and Smith
    2007, Lemma 2.9, whose tail bound uses ``ε_f <= 1``); ``max(1,
    ln(2/δ_f) + ε_f/4)`` above, which makes the same tail bound hold for
    every ``ε_f`` (Notes of :class:`SmoothSensitivityMedian`), so that ε is
    never capped and the release converges as ε grows.

    Examples
    --------
    >>> from skdp.stats._smooth_release import laplace_log_term
    >>> round(laplace_log_term(1.0, 2e-6), 3), round(laplace_log_term(8.0, 2e-6), 3)
    (13.816, 15.816)
    """
    log_term = math.log(2.0 / delta_feature)
    if eps_feature > LAPLACE_MAX_EPSILON:
        log_term += eps_feature / 4.0
    return max(1.0, log_term)


#: Bound on the relative error of the float ``S_K`` against its exact value
#: (see the Notes of :func:`skdp.sensitivity.median_smooth_sensitivity`).
SMOOTH_RELATIVE_ERROR = Fraction(1, 1 << 40)

#: The β used to compute ``S_K`` is the proven one minus this margin, which
#: covers the float errors of β itself and of ``S_K`` (both far below 2**-38).
BETA_MARGIN = 2.0**-36

#: Smallest β accepted (public check before the charge); far above the margin.
MIN_BETA = 2.0**-30

#: Largest β with which ``S_K`` is computed: at ``β = ln(1/SMOOTH_FLOOR)`` the
#: floor ``e^{-β}(U - L)`` is already ``SMOOTH_FLOOR (U - L)``, and a larger β
#: only pushes the floor (and the grid) out of the float range. A β below the
#: proven ``β_0`` is always allowed: a β-smooth bound is ``β_0``-smooth.
MAX_BETA = math.log(1.0 / SMOOTH_FLOOR)

#: The public grid is ``2**k`` with ``2**k <= 2**-GRID_BITS`` times the floor
#: of ``S_K``: rounding the median to it costs at most that fraction of S.
GRID_BITS = 20

#: Smallest grid exponent: the grid step stays a positive float.
MIN_GRID_EXP = -1074

#: The floor ``e^{-βK}(U - L)`` must be at least this (normal floats only, so
#: that the relative error bound of ``S_K`` holds).
MIN_FLOOR = 2.0**-1000


class SmoothPlan(NamedTuple):
    """Public per-feature constants of a smooth-sensitivity median release.

    Attributes
    ----------
    noise : {"laplace", "cauchy"}
        The integer noise.
    eps_feature : float
        ``ε_f``, the ε of each feature's release.
    alpha : fractions.Fraction
        Exact ``α``: the noise scale is ``S'/α`` (``ε_f/2`` or ``ε_f/6``).
    beta : float
        The β with which ``S_K`` is computed (the proven one minus
        ``BETA_MARGIN``).
    cap : int
        Public truncation ``K``.
    grid_exponents : ndarray of int
        Per feature, the public grid ``2**k`` of the release.
    """

    noise: str
    eps_feature: float
    alpha: Fraction
    beta: float
    cap: int
    grid_exponents: np.ndarray


def smooth_parameters(epsilon, delta, n_features, noise="laplace"):
    """Public per-feature constants of :class:`SmoothSensitivityMedian`.

    Returns
    -------
    eps_feature : float
        ``ε_f = ε/d`` rounded down so that ``d ε_f <= ε`` exactly
        (:func:`~skdp.accounting._composition.equal_shares`; so is
        ``δ_f = δ/d``).
    beta : float
        ``min(β_0 - 2**-36, ln(1e12))``, the smoothing parameter with which
        ``S_K`` is computed, for ``β_0 = ε_f / (2ℓ)`` with ``ℓ`` of
        :func:`laplace_log_term` at ``δ_f = δ/d`` (Laplace) or ``ε_f/6``
        (Cauchy); see the Notes of
        :class:`SmoothSensitivityMedian` for the margin and the cap.
    cap : int
        Public truncation ``K = ceil(ln(1/1e-12)/β)``.
    """
    eps_feature = equal_shares(epsilon, n_features)
    if noise == "cauchy":
        beta = eps_feature / 6.0 - BETA_MARGIN
    else:
        log_term = laplace_log_term(eps_feature, equal_shares(delta, n_features))
        beta = eps_feature / (2.0 * log_term) - BETA_MARGIN
    if not beta >= MIN_BETA:
        raise ValueError(
            "SmoothSensitivityMedian: epsilon per feature is too small (the "
            f"smoothing parameter beta = {beta:.3g} is below {MIN_BETA:.3g}); "
            "raise epsilon (or delta), or fit fewer features."
        )
    beta = min(beta, MAX_BETA)
    cap = max(1, math.ceil(math.log(1.0 / SMOOTH_FLOOR) / beta))
    return eps_feature, beta, cap


def smooth_plan(epsilon, delta, lower, upper, noise="laplace"):
    """Check the public parameters and fix every constant, before the charge.

    Parameters
    ----------
    epsilon, delta : float
        Total ε and δ of the medians of all ``d`` features (δ is not used
        with Cauchy noise).
    lower, upper : ndarray of shape (d,)
        Public bounds, with finite ``upper - lower``.
    noise : {"laplace", "cauchy"}, default="laplace"
        The integer noise.

    Returns
    -------
    plan : SmoothPlan

    Raises
    ------
    ValueError
        If β is too small or the bounds are too wide or too narrow for the
        float range (nothing depends on the data).
    """
    eps_f, beta, cap = smooth_parameters(epsilon, delta, len(lower), noise)
    alpha = Fraction(eps_f) / (6 if noise == "cauchy" else 2)
    width = upper - lower
    with np.errstate(over="ignore"):
        largest = float(1 / alpha) * width
    if not np.all(np.isfinite(largest)):
        raise ValueError(
            "SmoothSensitivityMedian: the bounds are too wide for this epsilon "
            f"(the largest noise scale {float(1 / alpha):g} * (upper - lower) "
            f"overflows); got ({lower}, {upper})."
        )
    # the same float as the floor term of median_smooth_sensitivity
    floors = [float(w) * math.exp(-beta * cap) for w in width]
    if not min(floors) >= MIN_FLOOR:
        raise ValueError(
            "SmoothSensitivityMedian: the bounds are too narrow for the float "
            f"range (the floor of the smooth sensitivity, (upper - lower) * "
            f"{math.exp(-beta * cap):.3g}, is below 2**-1000); got ({lower}, {upper})."
        )
    exponents = np.array(
        [max(floor_log2(f) - GRID_BITS, MIN_GRID_EXP) for f in floors], dtype=int
    )
    return SmoothPlan(noise, eps_f, alpha, beta, cap, exponents)


def smooth_sensitivities(X, beta, lower, upper, cap):
    """``S_K`` of the lower median of every column (selection of a window)."""
    return np.array(
        [
            median_smooth_sensitivity(X[:, j], beta, (lower[j], upper[j]), cap=cap)
            for j in range(X.shape[1])
        ]
    )


def smooth_noise_scales(sensitivities, alpha, grid_exponents):
    """Exact noise scales ``(S/(1 - η) + 2**k)/α``, as Fractions.

    ``S/(1 - η)`` bounds the exact ``S_K`` from above despite the float error
    of ``S``; ``+ 2**k`` covers rounding the median to the grid ``2**k``.
    """
    multiplier = 1 / Fraction(alpha)
    return [
        multiplier
        * (Fraction(float(s)) / (1 - SMOOTH_RELATIVE_ERROR) + Fraction(2) ** int(k))
        for s, k in zip(sensitivities, grid_exponents, strict=True)
    ]


def smooth_release(medians, sensitivities, plan, lower, upper, *, random_state):
    """Release the medians on the public grids with data-scaled exact noise.

    Each median is rounded to its public grid ``2**k`` and integer noise
    (``plan.noise``) of scale ``(S/(1 - η) + 2**k) / (α 2**k)`` (an exact
    rational, data-dependent) is added
    (:func:`skdp.mechanisms._smooth_noise.lattice_release`); the
    result is clipped to the bounds on the lattice. Nothing is multiplied
    by a data-dependent quantity after sampling.
    """
    scales = smooth_noise_scales(sensitivities, plan.alpha, plan.grid_exponents)
    released = lattice_release(
        medians,
        scales,
        plan.grid_exponents,
        lower,
        upper,
        noise=plan.noise,
        random_state=random_state,
    )
    return np.array(released, dtype=float)


def smooth_medians(X, plan, lower, upper, *, random_state):
    """``S_K`` and the lower medians of every column, then the release."""
    sensitivities = smooth_sensitivities(X, plan.beta, lower, upper, plan.cap)
    medians = lower_medians(X, lower, upper)
    return smooth_release(
        medians, sensitivities, plan, lower, upper, random_state=random_state
    )
