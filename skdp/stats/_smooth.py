"""Median with noise scaled to its smooth sensitivity (Nissim–Raskhodnikova–Smith)."""

from numbers import Integral, Real

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
from skdp.preprocessing._affine import AffineTransformMixin
from skdp.stats._smooth_release import (  # re-exported, as before
    SMOOTH_RELATIVE_ERROR,  # noqa: F401
    SmoothPlan,  # noqa: F401
    laplace_log_term,  # noqa: F401
    smooth_medians,
    smooth_noise_scales,  # noqa: F401
    smooth_parameters,  # noqa: F401
    smooth_plan,
    smooth_release,  # noqa: F401
    smooth_sensitivities,  # noqa: F401
)
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._validation import check_required_bounds, validate_private_data

__all__ = ["SmoothSensitivityMedian"]


class SmoothSensitivityMedian(
    AffineTransformMixin,
    GroupsMixin,
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
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows with ``fit(..., groups=...)``
        (required then, refused without): see :ref:`user_level_privacy`.
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
    basic composition gives (``d ε_f``, δ)-DP, ``d ε_f <= ε`` exactly (the
    float ``ε_f`` is ``ε/d`` rounded down; ε is charged). This follows
    Nissim, Raskhodnikova and Smith (2007, Lemma 2.9, Laplace with ``α = ε/2``,
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

    **Groups (user-level privacy).** With ``groups`` and
    ``max_rows_per_group = k``, neighbours add or remove one whole group,
    which first keeps at most ``k`` rows by a rule on its own rows only
    (:func:`~skdp.utils._groups.kept_rows`). The smooth-sensitivity argument
    is stated for one row (``S`` is β-smooth for neighbours one row apart),
    so the release takes the generic group-privacy route: it runs at the row
    budget ``(ε_r, δ_r)``, the largest with ``k ε_r <= ε`` and ``δ_r
    Σ_{i<k} e^{i ε_r} <= δ``
    (:func:`~skdp.accounting._group_privacy.row_budget_for_groups`; δ_r = 0
    with Cauchy noise), which is ``(ε, δ)``-DP for datasets ``k`` rows apart
    (Dwork and Roth, 2014, Thm. 2.2; Vadhan, 2017, Lemma 2.2). The noise is
    about ``k`` times the row's (β shrinks with ε_r). The ledger charges the
    stated (ε, δ).

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
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
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
        max_rows_per_group=None,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.noise = noise
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    def _fit_cost(self, n_features=None):
        delta = self.delta if self.noise == "laplace" else 0.0
        return PrivacyCost(self.epsilon, delta)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, groups=None):
        """Release the median of each feature.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (non-empty, finite).
        y : None
            Ignored.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit, with ``max_rows_per_group``: neighbours
            add or remove one whole group (Notes). None: one row.

        Returns
        -------
        self : SmoothSensitivityMedian
        """
        X = validate_private_data(self, X)
        unit = self._privacy_unit(groups, X)
        n_features = X.shape[1]
        lower, upper = check_required_bounds(
            self.bounds, n_features, type(self).__name__
        )
        if self.noise == "laplace" and self.delta == 0:
            raise ValueError(
                "noise='laplace' needs delta > 0; use noise='cauchy' for pure "
                "epsilon-DP."
            )
        delta = self.delta if self.noise == "laplace" else 0.0
        row_epsilon, row_delta = unit.row_budget(self, self.epsilon, delta)
        # the features' shares are rounded down (equal_shares): d ε_f fits
        # in ε_r, and k ε_r in the ε charged
        plan = smooth_plan(row_epsilon, row_delta, lower, upper, self.noise)
        source = check_random_source(self.random_state)
        label = unit.label("smooth-sensitivity releases")
        self._charge([(label, self.epsilon, delta)], unit=unit)
        (X,) = unit.bound(source, X)

        self.median_ = smooth_medians(X, plan, lower, upper, random_state=source)
        self.grid_exponents_ = plan.grid_exponents
        self.lower_, self.upper_ = lower, upper
        return self
