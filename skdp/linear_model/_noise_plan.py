"""Gaussian or Laplace noise for a fit's fixed plan of releases: a public switch.

The linear models and :class:`~skdp.decomposition.PrivatePCA` release a fixed,
public sequence of sums (counts, histograms, a Gram matrix, cross products).
Calibrated as one Gaussian composition to ``(epsilon, delta)``, a release's
noise multiplier falls like ``1/sqrt(2 epsilon)`` as ``epsilon`` grows; spent
as ``epsilon``-DP Laplace releases (the same shares of ``epsilon``, basic
composition), its noise scale falls like ``1/epsilon``. Which is smaller
depends on the releases' L1 and L2 sensitivities and on ``epsilon`` and
``delta`` only, all public, so the fit can choose before the charge:
:func:`plan_noise`.
"""

import math
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from skdp.accounting import PrivacyCost
from skdp.mechanisms import (
    gaussian_noise_multipliers,
    gaussian_release,
    laplace_cost,
    laplace_mechanism,
)

__all__ = [
    "LAPLACE_RULE_SCALES",
    "LaplaceNoise",
    "Release",
    "gaussian_fit_cost",
    "gram_l1_sensitivity",
    "is_laplace",
    "noise_multiplier",
    "plan_noise",
    "planned_cost",
    "release",
    "rule_deviation",
    "sum_l1_sensitivity",
    "unit_multipliers",
]

#: Laplace scales ``b`` per noise deviation of the threshold rules that read a
#: released histogram (``NOISE_THRESHOLD``, ``NORM_THRESHOLD`` and
#: ``REACH_THRESHOLD``: 4, 5 and 7 deviations). Laplace noise exceeds them in
#: magnitude with probability ``exp(-12)``, ``exp(-15)`` and ``exp(-21)``
#: (6e-6, 3e-7 and 8e-10) where the Gaussian noise the rules were tuned for
#: does with 6e-5, 6e-7 and 3e-12: below at 4 and 5 deviations (the scales'
#: mode and the clipping norm's bins), above at 7 (the reach of a feature or
#: the target, where a false bin widens a range by one binade).
LAPLACE_RULE_SCALES = 3.0


class Release(NamedTuple):
    """One release of a fit's plan: all public.

    ``share`` is its weight in the composition (of the squared GDP parameter
    for the Gaussian plan, of ``epsilon`` for the Laplace one); ``l2`` and
    ``l1`` its sensitivities for one row in the units of the released values;
    ``thresholded``: the fit reads it by threshold rules (a histogram) rather
    than as an estimate (a sum).
    """

    what: str
    share: float
    l2: float
    l1: float
    size: int
    thresholded: bool = False


class LaplaceNoise(NamedTuple):
    """The noise of one release of a Laplace plan: ``epsilon``-DP for an L1
    sensitivity ``l1`` (the privacy unit's), measured in units of ``l2``."""

    l1: float
    epsilon: float
    l2: float


def _up(value):
    return float(np.nextafter(value, math.inf))


def _times_up(value, k):
    """``value * k`` rounded up (exact for the small integers of a plan)."""
    product = value * k
    if Fraction(product) < Fraction(value) * k:
        product = _up(product)
    return product


def gram_l1_sensitivity(size):
    """L1 sensitivity of the upper triangle of ``Σ q qᵀ``, ``||q|| <= 1``.

    One row moves each entry ``(i, j)``, ``i <= j``, by ``q_i q_j``:
    ``Σ_{i<=j} |q_i q_j| = (||q||₁² + ||q||₂²) / 2 <= (D + 1) / 2`` for ``D
    = size`` coordinates (Cauchy–Schwarz, ``||q||₁² <= D ||q||₂²``; equality
    at ``|q_i| = 1/sqrt(D)``). The L2 sensitivity is ``||q||₂² <= 1``. The
    sums are exact on their grid and the grid's truncation never grows a
    coordinate, so the bound holds for the released integers.
    """
    return (size + 1) / 2


def sum_l1_sensitivity(size):
    """L1 sensitivity of ``Σ t q`` with ``|t| <= 1`` and ``||q|| <= 1``:
    ``|t| ||q||₁ <= sqrt(D)`` (rounded up); its L2 sensitivity is 1."""
    return _up(math.sqrt(size))


def _laplace_scales(item, epsilon, scales):
    """``scales`` Laplace scales of a release, in units of its ``l2``;
    infinite for an ``epsilon`` share rounded down to 0 (a subnormal
    ``epsilon``), which no Laplace noise can spend."""
    if not epsilon > 0:
        return math.inf
    return scales * item.l1 / (epsilon * item.l2)


def _laplace_sd(item, epsilon):
    """Standard deviation of a Laplace release (``sqrt(2)`` scales)."""
    return _laplace_scales(item, epsilon, math.sqrt(2.0))


def _rule_scales(item, epsilon):
    """The rules' deviation: ``LAPLACE_RULE_SCALES`` Laplace scales."""
    return _laplace_scales(item, epsilon, LAPLACE_RULE_SCALES)


def _read_at(item, epsilon):
    """The noise a release is read at: its standard deviation, or for a
    thresholded one the rules' deviation (:data:`LAPLACE_RULE_SCALES`)."""
    if item.thresholded:
        return _rule_scales(item, epsilon)
    return _laplace_sd(item, epsilon)


def _epsilon_shares(epsilon, shares):
    """``epsilon * s_i / Σ s``, each rounded down: they sum to at most
    ``epsilon`` exactly (basic composition of the Laplace releases)."""
    total = sum(Fraction(s) for s in shares)
    parts = []
    for share in shares:
        exact = Fraction(epsilon) * Fraction(share) / total
        part = float(exact)
        if Fraction(part) > exact:
            part = float(np.nextafter(part, 0.0))
        parts.append(part)
    return parts


def plan_noise(epsilon, delta, releases, unit_rows=1, mechanism="auto"):
    """``(noises, cost)``: the Gaussian plan, or the Laplace plan where better.

    The Gaussian plan gives release ``i`` the noise multiplier ``k R /
    sqrt(s_i)`` (``R = analytic_gaussian_sigma(1, epsilon, delta)``, ``s_i``
    its normalised share, ``k = unit_rows``), a float as before; it costs
    :func:`gaussian_fit_cost`. The Laplace plan
    releases ``i`` with ``epsilon_i = epsilon s_i`` (rounded down, so that
    ``Σ epsilon_i <= epsilon``) for its L1 sensitivity ``k l1_i``
    (:class:`LaplaceNoise`); by basic composition it is ``epsilon``-DP, which
    implies ``(epsilon, delta)``, and costs :func:`~skdp.mechanisms.laplace_cost`
    of ``epsilon``.

    **The switch.** The Laplace plan is used when it gives *every* release
    less noise than the Gaussian plan: a smaller standard deviation on the
    sums (``sqrt(2) k l1_i / epsilon_i`` against ``k R l2_i / sqrt(s_i)``),
    and a smaller rule deviation (``LAPLACE_RULE_SCALES`` Laplace scales) on
    the histograms the fit reads by thresholds. The group size ``k`` scales
    both alike and drops out. A function of public values only; since the
    Laplace noise grows with the number of features faster than the
    Gaussian (``l1`` of the Gram matrix ``(D + 1)/2`` against ``l2 = 1``),
    the Laplace plan is chosen for few features or a large ``epsilon``. At
    ``delta = 1e-6``: PrivatePCA from ``epsilon`` about 90 (1 feature),
    1,500 (10) and 5,000 (30); PrivateLinearRegression with a stated norm
    and target range from 0.008 for 1 feature (below it the Gaussian
    multiplier, which also grows like ``1/epsilon`` there, is the smaller),
    0.45 for 2, 180 for 10 and 1,700 for 30; with its private target and
    scales from about 270 (up to 5 features) and 2,900 (30). A share ``epsilon_i``
    that rounds down to 0 (a subnormal ``epsilon``) counts as infinite
    Laplace noise.

    ``mechanism="gaussian"`` or ``"laplace"`` (the estimators' public
    parameter) takes that plan whatever the noise (``"laplace"`` computes
    no Gaussian calibration, which overflows beyond ``epsilon`` about
    1e300): the switch compares noise at the stated ``(epsilon, delta)``,
    not what an accountant records, and a zCDP accountant records the
    Laplace plan as ``epsilon²/2``, more than the Gaussian plan's ``1/(2
    R²)``.
    """
    shares = [item.share for item in releases]
    epsilons = _epsilon_shares(epsilon, shares)
    if mechanism == "laplace":  # no Gaussian calibration to compare with
        return _laplace_plan(epsilon, releases, epsilons, unit_rows)
    multipliers = gaussian_noise_multipliers(epsilon, delta, shares)
    laplace = mechanism == "auto" and all(
        _read_at(item, eps_i) < multiplier
        for item, eps_i, multiplier in zip(releases, epsilons, multipliers, strict=True)
    )
    if not laplace:
        multipliers = unit_multipliers(multipliers, unit_rows)
        return list(multipliers), gaussian_fit_cost(epsilon, delta)
    return _laplace_plan(epsilon, releases, epsilons, unit_rows)


def _laplace_plan(epsilon, releases, epsilons, unit_rows):
    """The Laplace plan's noises (L1 sensitivities ``k`` times the row's,
    rounded up) and its cost, ``epsilon``-DP by basic composition."""
    noises = [
        LaplaceNoise(_times_up(item.l1, unit_rows), eps_i, item.l2)
        for item, eps_i in zip(releases, epsilons, strict=True)
    ]
    return noises, laplace_cost(epsilon)


def gaussian_fit_cost(epsilon, delta):
    """Cost of a fit made of Gaussian releases calibrated to ``(epsilon, delta)``.

    Its ``rho`` is the zCDP of the composition, ``Σ 1/(2 r_i²) = 1/(2 R²)``,
    and its ``noise_multiplier`` is ``R``: Gaussian releases with multipliers
    ``r_i`` compose exactly to one with ``1/R² = Σ 1/r_i²`` (Dong, Roth and
    Su 2022, Cor. 3.3).
    """
    ratio = float(gaussian_noise_multipliers(epsilon, delta, [1.0])[0])
    return PrivacyCost(epsilon, delta, noise_multiplier=ratio)


def unit_multipliers(multipliers, unit_rows):
    """The noise multipliers of a fit whose privacy unit holds ``k`` rows.

    Every release of the linear models is a sum over rows of a term whose
    norm is bounded (the count: 1; a clipped Gram term: 1 in units of
    ``b²``; a clipped gradient or cross-product term: 1 in units of the
    clipping norm; the scales' and target's histograms: one count per
    feature). A group of at most ``k`` rows adds the sum of at most ``k``
    such terms: its norm is at most ``k`` times the row's bound (triangle
    inequality), with equality when the group's rows are equal. Multiplying
    each release's multiplier (``σ / Δ``, ``Δ`` the row's bound) by ``k``
    therefore gives each release ``σ / (k Δ)`` = the row-level ratio for
    the group's sensitivity: the composition is the same ``μ``-GDP, hence
    the same ``(ε, δ)``, for add/remove of one group. With ``k = 1`` the
    multipliers are returned unchanged (bit for bit).

    **Group-sum clipping (not used).** Clipping each group's summed term
    again at a norm ``B < k c`` would give sensitivity ``B`` instead of
    ``k c``. The bound ``k c`` is chosen because it is attained exactly by
    the groups contribution bounding is for, whose rows agree (a person's
    repeated or similar records, whose gradients point the same way):
    ``B`` would rescale exactly those groups, and rescale their gradient,
    Gram and count terms by different factors, while the steps need one
    weight per row in all three (the limit ε → ∞ would then no longer be
    scikit-learn's model on the kept rows). It gains only on groups whose
    rows cancel. The lever on the noise is ``k`` itself (see the user guide,
    :ref:`user_level_privacy`).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear_model._noise_plan import unit_multipliers
    >>> unit_multipliers(np.array([2.0, 4.0]), 3).tolist()
    [6.0, 12.0]
    """
    if unit_rows == 1:
        return multipliers
    return np.asarray(multipliers) * unit_rows


def planned_cost(epsilon, delta, releases_of, n_features=None, mechanism="auto"):
    """What a fit of :func:`plan_noise` charges, from public parameters.

    ``releases_of(d)`` lists the fit's releases for ``d`` features. With
    ``n_features`` known: the cost of the plan for it, exactly what ``fit``
    charges. With ``None``: a bound for every number of features. The ratio
    of each release's Laplace noise to its Gaussian noise does not decrease
    with ``d`` (L1 sensitivities ``d``, ``(D + 1)/2``, ``sqrt(D)`` against L2
    sensitivities ``sqrt(d)``, 1, 1), so the Laplace plan is chosen for the
    ``d`` of an interval from 1: where one feature gets the Gaussian plan,
    every ``d`` does and its cost is exact; otherwise the bound is the
    canonical ``(epsilon, delta)`` pair, which dominates both plans in every
    composition the accountant has. A stated ``mechanism`` fixes the plan,
    and its cost is exact for every ``d``.
    """
    d = 1 if n_features is None else int(n_features)
    noises, cost = plan_noise(epsilon, delta, releases_of(d), mechanism=mechanism)
    if n_features is None and mechanism == "auto" and is_laplace(noises[0]):
        return PrivacyCost(epsilon, delta)
    return cost


def is_laplace(noise):
    """Whether a planned release is a Laplace one (else a Gaussian multiplier)."""
    return isinstance(noise, LaplaceNoise)


def noise_multiplier(noise):
    """Standard deviation of a release's noise in units of its L2 sensitivity."""
    if isinstance(noise, LaplaceNoise):
        return _laplace_sd(noise, noise.epsilon)
    return float(noise)


def rule_deviation(noise):
    """The noise deviation of a thresholded release, in units of its L2
    sensitivity: the standard deviation for Gaussian noise,
    ``LAPLACE_RULE_SCALES`` Laplace scales for Laplace noise."""
    if isinstance(noise, LaplaceNoise):
        return _rule_scales(noise, noise.epsilon)
    return float(noise)


def release(value, l2_sensitivity, noise, source):
    """Release ``value`` (floats or a FixedPoint) with its planned noise.

    A float ``noise`` is a Gaussian multiplier for the L2 sensitivity
    ``l2_sensitivity`` (:func:`~skdp.mechanisms.gaussian_release`); a
    :class:`LaplaceNoise` is exact discrete Laplace noise for its L1
    sensitivity and ``epsilon`` (:func:`~skdp.mechanisms.laplace_mechanism`),
    on the power-of-two grid those public values fix.
    """
    if isinstance(noise, LaplaceNoise):
        noisy = laplace_mechanism(value, noise.l1, noise.epsilon, random_state=source)
    else:
        noisy = gaussian_release(value, l2_sensitivity, noise, random_state=source)
    return np.asarray(noisy, dtype=float)
