"""Median with noise scaled to its smooth sensitivity (Nissim–Raskhodnikova–Smith)."""

import math
from fractions import Fraction
from numbers import Real
from typing import NamedTuple

import numpy as np
from sklearn.base import (
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from skdp.accounting import PrivacyCost
from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms import check_random_source
from skdp.mechanisms._grid import floor_log2
from skdp.mechanisms._smooth_noise import lattice_release
from skdp.preprocessing._affine import AffineTransformMixin
from skdp.sensitivity import median_smooth_sensitivity
from skdp.stats._ptr import lower_medians
from skdp.utils._validation import check_required_bounds, validate_private_data

__all__ = [
    "SmoothPlan",
    "SmoothSensitivityMedian",
    "laplace_log_term",
    "smooth_medians",
    "smooth_parameters",
    "smooth_plan",
    "smooth_release",
    "smooth_sensitivities",
    "total_epsilon",
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
    >>> from skdp.stats._smooth import laplace_log_term
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


def total_epsilon(n_features, eps_feature):
    """``d·ε_f`` as a float rounded up, so the charge covers the exact sum."""
    total = n_features * eps_feature
    if Fraction(total) < n_features * Fraction(eps_feature):
        total = math.nextafter(total, math.inf)
    return total


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
        ``ε_f = ε/d``.
    beta : float
        ``min(β_0 - 2**-36, ln(1e12))``, the smoothing parameter with which
        ``S_K`` is computed, for ``β_0 = ε_f / (2ℓ)`` with ``ℓ`` of
        :func:`laplace_log_term` at ``δ_f = δ/d`` (Laplace) or ``ε_f/6``
        (Cauchy); see the Notes of
        :class:`SmoothSensitivityMedian` for the margin and the cap.
    cap : int
        Public truncation ``K = ceil(ln(1/1e-12)/β)``.
    """
    eps_feature = epsilon / n_features
    if noise == "cauchy":
        beta = eps_feature / 6.0 - BETA_MARGIN
    else:
        log_term = laplace_log_term(eps_feature, delta / n_features)
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


class SmoothSensitivityMedian(
    AffineTransformMixin,
    PrivateEstimatorMixin,
    OneToOneFeatureMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Per-feature median with noise scaled to its smooth sensitivity.

    No proposal is needed (unlike :class:`PTRMedian`) and nothing is refused:
    the noise is proportional to the β-smooth sensitivity ``S`` of the lower
    median, which is small on data that are stable around the median and
    ``U - L`` (times ``e^{-βK}``) in the worst case. Every release lies on a
    power-of-two grid fixed by the public parameters. ``transform`` subtracts
    the medians.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total ε of one ``fit``, over all features.
    delta : float, default=1e-6
        Total δ of one ``fit``, ``0 < delta < 1``. Ignored (and not charged)
        with ``noise="cauchy"``, which is pure ε-DP.
    bounds : tuple of (float or array-like, float or array-like)
        Public ``(lower, upper)`` bounds, scalars or per-feature arrays.
    noise : {"laplace", "cauchy"}, default="laplace"
        Integer noise on the public grid: discrete Laplace gives (ε, δ)-DP with
        light tails; the discrete Cauchy-type noise (pmf ``∝ 1/(1 + (z/t)²)``)
        gives pure ε-DP with heavy tails (no mean or variance).
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit``; ``None`` uses the default accountant at fit time.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG. An int gives
        reproducible (and therefore not secret) noise for tests and examples.

    Attributes
    ----------
    median_ : ndarray of shape (`n_features_in_`,)
        The private medians, inside the bounds, each a multiple of
        ``2**grid_exponents_``.
    grid_exponents_ : ndarray of int of shape (`n_features_in_`,)
        The public grid exponents ``k`` of the releases.
    lower_, upper_ : ndarray of shape (`n_features_in_`,)
        The public bounds per feature.
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    PTRMedian : Private median by propose-test-release (needs a proposal).

    Notes
    -----
    **Smooth sensitivity.** For the lower median ``f(x) = x_(m)``,
    ``m = ceil(n/2)``, of the data clipped to ``[L, U]``, under add/remove-one-row
    neighbours, ``S*_β(x) = max_{k=0..n} e^{-βk} A(x, k)`` with ``A(x, k)`` the
    largest local sensitivity within ``k`` steps (``k = 0`` included;
    :func:`skdp.sensitivity.median_smooth_sensitivity`, ALGORITHMS_ADDREMOVE.md
    §2.4, brute-force checked). skdp uses ``S_K = max(S*_β, e^{-βK}(U - L))``
    for the public ``K = ceil(ln(1e12)/β)``, again β-smooth and ``>= LS``,
    computed from about ``K + 1`` order statistics.

    **Public constants.** Laplace: per feature ``ε_f = ε/d``,
    ``δ_f = δ/d``, ``α = ε_f/2``, ``ℓ = max(1, ln(2/δ_f))`` for ``ε_f <= 1``
    and ``ℓ = max(1, ln(2/δ_f) + ε_f/4)`` above (:func:`laplace_log_term`),
    ``β_0 = ε_f/(2ℓ)``. Cauchy: ``ε_f = ε/d``, ``α = β_0 = ε_f/6``. ``S_K`` is
    computed with ``β = min(β_0 - 2**-36, ln(1e12))`` (fit refuses
    ``β < 2**-30``, before the charge). The cap ``ln(1e12)`` only binds for
    Cauchy noise with ``ε_f > 165``: there ``K = 1`` and the floor is already
    ``1e-12 (U - L)``, while ``e^{-β_0}(U - L)`` would underflow (fit
    refused, for bounds of width 1, every ``ε_f`` above about 4,160); a β
    below ``β_0`` keeps ``S_K`` β_0-smooth, so steps 1 and 2 below hold as
    written. The grid is ``g = 2**k`` with ``k = floor(log2 F) - 20`` for the
    floor ``F = e^{-βK}(U - L)`` of ``S_K`` (so ``g <= 2**-20 S_K``).

    **Release.** With ``ŝ`` the float value of ``S_K`` and ``η = 2**-40`` a
    bound on its relative error (Notes of
    :func:`~skdp.sensitivity.median_smooth_sensitivity`), let
    ``S'(x) = ŝ/(1 - η) + g`` (an exact rational). The median is rounded to
    ``r(x) = round(f(x)/g)`` in exact arithmetic, and the release is
    ``g·(r(x) + Z)``, ``Z`` exact integer noise with the exact rational scale
    ``t(x) = S'(x)/(α g)`` (discrete Laplace, pmf ``tanh(1/(2t)) e^{-|z|/t}``,
    or Cauchy-type, pmf ``1/(N(t)(1 + (z/t)²))`` with ``N(t) = πt coth(πt)``;
    :mod:`skdp.mechanisms._smooth_noise`), clipped on the lattice to
    ``[L, U]`` and rounded once to the nearest float. Nothing is
    multiplied by a data-dependent number after sampling; the support of every
    release is the public set ``gZ ∩ [L, U]``.

    **Privacy, Laplace (sliding and dilation for the discrete noise).** Let
    ``x, x'`` be neighbours, ``r, r', t, t'`` their centres and scales,
    ``Δ = |r - r'|``.

    1. *Sliding bound.* Rounding moves each median by at most ``g/2``, so
       ``Δ g <= |f(x) - f(x')| + g <= min(S_K(x), S_K(x')) + g
       <= min(S'(x), S'(x'))``, i.e. ``Δ <= α min(t, t')``.
    2. *Dilation bound.* ``S'(x)/S'(x') <= e^β (1 + η)/(1 - η)`` (``S_K`` is
       β-smooth, ``ŝ`` within ``1 ± η``, and adding ``g`` to both sides only
       lowers a ratio above 1), and ``β + ln((1+η)/(1-η)) <= β_0`` because the
       margin ``2**-36`` exceeds ``2.1η`` plus the float error of ``β_0``
       (below ``2**-50``). So ``|ln(t'/t)| <= β_0``.
    3. *Loss.* ``L(z) = ln N(t)/N(t') - |z - r|/t + |z - r'|/t'`` with
       ``N(t) = tanh(1/(2t))``. If ``t' >= t``: ``N(t)/N(t') <= t'/t``
       (``tanh(a)/a`` decreases) and ``|z - r'|/t' - |z - r|/t <= Δ/t' <= α``,
       so ``L <= β_0 + α <= ε_f`` (``ℓ >= 1``): no slack. If ``t' < t``:
       ``N(t)/N(t') <= 1`` (the discrete normaliser is the only place where
       the discrete noise differs from the continuous proof, and here it
       helps), ``1/t' - 1/t <= (e^{β_0} - 1)/t``, and ``L(z) > ε_f`` needs
       ``|z - r| > c t`` on the side of ``r`` away from ``r'`` or
       ``|z - r| > 2ct`` on the other, ``c = α/(e^{β_0} - 1) >= ℓ - ε_f/4``
       (``y/(e^y - 1) >= 1 - y/2``). The discrete one-sided tail is
       ``P(Z >= j) = e^{-j/t}/(1 + e^{-1/t})`` and ``t >= 1/α >= 2`` (as
       ``S' >= g``). For ``ε_f <= 1``, ``t >= 1/α >= 2`` and ``ℓ >=
       ln(2/δ_f)``, so ``P(L > ε_f) <= (e^{-c} + e^{-2c})/(1 + e^{-1/2})
       <= (δ_f/2)(e^{1/4} + e^{-1/2})/1.606 < 0.59 δ_f``. For ``ε_f > 1``
       the tail constant is only ``<= 1``, but ``ℓ >= ln(2/δ_f) + ε_f/4``
       gives ``c >= ln(2/δ_f)``, so ``P(L > ε_f) <= e^{-c} + e^{-2c} <=
       δ_f/2 + δ_f²/4 < δ_f``. (With ``ℓ = ln(2/δ_f)`` at ``ε_f > 1``,
       ``e^{-c}`` is only below ``(δ_f/2) e^{ε_f/4}``: the exact pmfs
       exceed δ at ``ε_f = 30``, which is why ε_f used to be capped at 1.)

    Hence ``P(x ∈ E) <= e^{ε_f} P(x' ∈ E) + δ_f`` for every event, both
    directions (the conditions are symmetric); clipping and the final
    rounding are post-processing. The slack of the discrete noise (normaliser
    and tail constant ``1/(1 + e^{-1/t})`` instead of ``1/2``) is covered by
    the factor 0.59. ``tests/preprocessing/test_smooth.py`` checks the
    inequality with the exact pmfs on small scales, all integer shifts up to
    ``α min(t, t')`` and scale ratios up to ``e^{β_0}``. Over ``d`` features,
    basic composition gives (``d ε_f``, δ)-DP, ``d ε_f = ε`` (charged as
    the float ``d·ε_f`` rounded up). This follows Nissim, Raskhodnikova and
    Smith (2007, Lemma 2.9, Laplace with ``α = ε/2``,
    ``β = ε/(2 ln(2/δ))``) with the discrete noise and the float errors made
    explicit, and the ``ε_f/4`` term for ``ε_f > 1``: the release converges
    to the median as ε grows (the noise scale ``2 S/ε_f`` with ``β_0`` rising
    to 2) instead of stopping at the ε_f = 1 answer.

    **Cost of the lattice.** The noise scale is ``(ŝ/(1-η) + g)/α``,
    at most ``1 + 2**-20`` times the continuous one, and rounding the median
    moves it by at most ``g/2``.

    **Privacy, Cauchy (pure ε).** Steps 1 and 2 above hold with ``α = β_0 =
    ε_f/6``. With ``w_t(y) = 1/(1 + (y/t)²)``, for every integer ``z``:
    *sliding* at a fixed scale, ``w_t(z - r')/w_t(z - r) <= e^{2 asinh(u/2)}
    <= e^u`` with ``u = Δ/t <= α`` (the bound holds for every real ``z``, so
    on the integers, with the same normaliser); *dilation* at a fixed centre,
    ``p_t(y)/p_{t'}(y) = [t' coth(πt') / (t coth(πt))] · [w_t(y)/w_{t'}(y)]``,
    which is at most ``t'/t <= e^{β_0}`` if ``t' >= t`` (``coth`` decreases,
    ``w_t <= w_{t'}``) and at most ``coth(πt') (t/t')² <= coth(π/α) e^{2β_0}``
    if ``t' < t`` (``t' >= 1/α``). The discrete normaliser is the slack:
    ``ln coth(π/α) = ln coth(6π/ε_f)``, below ``1e-15`` for ``ε_f <= 1`` and
    below ``ε_f/2`` for every ``ε_f``. So the pmf ratio of neighbours is at
    most ``e^{α + 2β_0 + ln coth(6π/ε_f)} <= e^{ε_f/2 + ε_f/2}`` everywhere:
    ``ε_f``-DP, δ = 0 (the constants of Nissim, Raskhodnikova and Smith,
    ``γ = 2``, with room to spare). ``ε_f = ε/d``, not capped.

    **Budget split (public).** Equal shares over the ``d`` features; one
    ledger entry "smooth-sensitivity releases".

    **Accuracy.** The noise multipliers (2/ε, 6/ε) are large and ``S >= LS``:
    on well-behaved data :class:`PTRMedian` (with a good proposal) or the
    exponential-mechanism quantile is usually more accurate; this estimator's
    advantage is needing no proposal and never refusing. Report the Cauchy
    variant's error as a median absolute error (it has no variance).

    **transform** subtracts ``median_``; ``inverse_transform`` adds it back.

    References
    ----------
    .. [1] K. Nissim, S. Raskhodnikova and A. Smith, "Smooth Sensitivity and
       Sampling in Private Data Analysis", STOC 2007.
    .. [2] C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for
       Differential Privacy", NeurIPS 2020 (exact discrete Laplace sampling).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant
    >>> from skdp.stats._smooth import SmoothSensitivityMedian
    >>> X = np.random.default_rng(0).normal(50, 10, size=(10_000, 1))
    >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    >>> ssm = SmoothSensitivityMedian(1.0, 1e-6, bounds=(0, 100), accountant=acc,
    ...                               random_state=0).fit(X)
    >>> bool(abs(ssm.median_[0] - 50) < 2)
    True
    >>> k = int(ssm.grid_exponents_[0])  # the release is on the public grid 2**k
    >>> float(np.ldexp(ssm.median_[0], -k)).is_integer()
    True
    >>> acc.total()
    (1.0, 1e-06)
    """

    _location_attribute = "median_"
    _scale_attribute = None

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "bounds": ["array-like", tuple, None],
        "noise": [StrOptions({"laplace", "cauchy"})],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        epsilon=1.0,
        delta=1e-6,
        *,
        bounds=None,
        noise="laplace",
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.noise = noise
        self.accountant = accountant
        self.random_state = random_state

    def _fit_cost(self, n_features=None):
        delta = self.delta if self.noise == "laplace" else 0.0
        return PrivacyCost(self.epsilon, delta)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Release the median of each feature.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (non-empty, finite).
        y : None
            Ignored.

        Returns
        -------
        self : SmoothSensitivityMedian
        """
        X = validate_private_data(self, X)
        n_features = X.shape[1]
        lower, upper = check_required_bounds(
            self.bounds, n_features, type(self).__name__
        )
        if self.noise == "laplace" and self.delta == 0:
            raise ValueError(
                "noise='laplace' needs delta > 0; use noise='cauchy' for pure "
                "epsilon-DP."
            )
        plan = smooth_plan(self.epsilon, self.delta, lower, upper, self.noise)
        source = check_random_source(self.random_state)
        delta = self.delta if self.noise == "laplace" else 0.0
        self._charge(
            [
                (
                    "smooth-sensitivity releases",
                    total_epsilon(n_features, plan.eps_feature),
                    delta,
                )
            ]
        )

        self.median_ = smooth_medians(X, plan, lower, upper, random_state=source)
        self.grid_exponents_ = plan.grid_exponents
        self.lower_, self.upper_ = lower, upper
        return self
