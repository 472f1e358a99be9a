"""Private least squares and ridge regression by sufficient statistics."""

import math
from numbers import Integral, Real

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.linear_model._base import LinearModel
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from skdp.base import PrivateEstimatorMixin
from skdp.linear_model._linear_plan import (
    GRAM_SHARE,
    check_norm,
    check_target_bounds,
    linear_releases,
    release_plan,
)
from skdp.linear_model._noise_plan import noise_multiplier, plan_noise, planned_cost
from skdp.linear_model._release import (
    GaussianFitMixin,
    check_release_plan,
    features_under_noise,
    floored_inverse,
    noise_dominated_releases,
    noisy_gram,
    release_sum,
    spectral_noise_bound,
    warn_features_under_noise,
    warn_noise_dominated,
)
from skdp.linear_model._row_norms import release_row_norm, row_norm_cap
from skdp.linear_model._scaling import (
    FeatureScaling,
    cells_stored_once,
    scale_rows,
    to_user_units,
)
from skdp.linear_model._target_range import (
    regression_sums,
    release_target_range,
    target_scale,
)
from skdp.mechanisms import check_random_source
from skdp.preprocessing._affine import _LARGEST
from skdp.sensitivity._linear import check_term_size
from skdp.utils._dask import is_dask_collection
from skdp.utils._dask_xy import validate_dask_xy, xy_statistic
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._sample_weight import check_row_weights
from skdp.utils._validation import validate_private_data

__all__ = ["GRAM_SHARE", "PrivateLinearRegression"]
#: Target relative noise of the Gram matrix in the ``data_norm`` rule. Public.
#: Measured (tests/test_consistency.py, the synthetic table, 4 seeds): R² gap
#: to least squares at eps = 1e6 of 0.025 / 0.015 / 0.007 / 0.003 for
#: 3e-5 / 1e-4 / 3e-4 / 1e-3, and 0.058 at 3e-3; the diabetes set's gap
#: stays at 0.006 (its rows are all covered by then).
NORM_NOISE = 1e-3


class PrivateLinearRegression(
    GroupsMixin,
    GaussianFitMixin,
    PrivateEstimatorMixin,
    RegressorMixin,
    LinearModel,
    BaseEstimator,
):
    """Differentially private least squares (and ridge) by perturbed statistics.

    Releases the Gram matrix ``XᵀX`` and the cross products ``Xᵀy`` of rows
    clipped to a public norm and targets clipped to public bounds, with
    Gaussian noise, and solves the regularised normal equations on the
    noisy statistics (sufficient-statistics perturbation with an adaptive
    eigenvalue floor, after AdaSSP, Wang 2018). One pass over the data; the
    whole ``(epsilon, delta)`` is charged before it is read.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy loss of one ``fit``, ``> 0``.
    delta : float, default=1e-6
        Failure probability of one ``fit``, in ``(0, 1)``.
    data_norm : float or None, default=None
        Public bound on the L2 norm of a row; rows above it are scaled down
        to it. Stated alone (``feature_bounds=None``), it is in the user's
        units and the rows are used as given (the old contract). ``None``
        (default; **default change**, it was required): the rows are scaled
        per feature (``feature_bounds``) and the norm is chosen in scaled
        units by a public rule (Notes).
    target_bounds : tuple of (float, float) or None, default=None
        Public bounds ``(low, high)`` on ``y``; targets are clipped to them.
        ``None`` (**default change**, it was required) releases the range
        privately with ``TARGET_SHARE`` = 10 % of the fit's Gaussian budget:
        the hull of the bins of a noisy histogram of the targets' binary
        exponents that stand out of the noise (Notes).
    feature_bounds : None, "scaled" or tuple of (float or array-like, ...), \
            default=None
        Where the per-feature location and scale come from: ``None``
        releases them privately with ``SCALE_SHARE`` = 30 % of the fit's
        Gaussian budget (see :class:`PrivateLogisticRegression`), of which
        ``ROW_NORM_SHARE`` = 5 % releases the scaled rows' largest norm;
        ``(lower, upper)`` states them, free; ``"scaled"`` uses the features
        as given (then ``data_norm`` is required).
    alpha : float, default=0.0
        Ridge penalty, as in :class:`sklearn.linear_model.Ridge`: the
        objective is ``||y - Xw||² + alpha ||w||²`` (intercept unpenalised).
    fit_intercept : bool, default=True
        Fit an intercept.
    mechanism : {"auto", "gaussian", "laplace"}, default="auto"
        The noise of the fit's releases: one Gaussian composition calibrated
        to ``(epsilon, delta)``, or ``epsilon``-DP Laplace releases (no
        ``delta`` spent); ``"auto"`` takes the Laplace plan where it gives
        every release less noise (one or two features with a stated norm
        and target range, or a very large ``epsilon``), else the Gaussian
        (see Notes).
        Under a zCDP accountant the Laplace plan records ``epsilon²/2``,
        more than the Gaussian plan: pass ``"gaussian"`` to keep the smaller
        charge there.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows, with ``fit(..., groups=...)``
        (required then, refused without them). See Notes.
    accountant : BudgetAccountant, default=None
        Charged ``(epsilon, delta)`` before the data is read; ``None`` uses
        :func:`~skdp.default_accountant`.
    random_state : None, int or RandomState, default=None
        ``None`` (default) draws noise from the operating system's CSPRNG; an
        int or ``RandomState`` gives reproducible, *not secure*, noise.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Coefficients.
    intercept_ : float
        Intercept (0 if ``fit_intercept=False``).
    feature_location_, feature_scale_ : ndarray of shape (n_features,)
        The per-feature map ``z = (x - location) / scale`` the model was fit
        in (0 and 1 when the rows are used as given).
    epsilon_spent_, delta_spent_ : float
        What ``fit`` charged.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, for string column names.

    See Also
    --------
    PrivateLogisticRegression : Private classification.

    Notes
    -----
    **Feature scales.** Unless the rows are used as given, ``x`` below is
    the scaled row ``(x - location) / scale`` and the coefficients are
    mapped back to the user's units (post-processing). ``B`` is then the
    stated ``data_norm``, ``sqrt(d)`` with stated bounds (every scaled row
    is within it), or with private scales ``min(reach, max(sqrt(d), sqrt(τ
    Ñ / (r sqrt(D)))))``, ``τ = NORM_NOISE``: ``reach`` is the released
    largest norm of the scaled rows (a histogram of their norms, one count a
    row: L2 sensitivity 1; :func:`~skdp.linear_model._row_norms.release_row_norm`),
    at most the norm of the per-feature bounds of the histogram bins above
    the noise, and ``Ñ`` is the released count
    (:func:`~skdp.linear_model._scaling.released_reach`), ``r`` the Gram
    release's multiplier; as the noise vanishes nothing is clipped and the
    fit converges to least squares. A NoiseDominatedWarning says when the
    released Gram matrix or cross products are no larger than their noise
    (from released values only).

    **Target range.** Without ``target_bounds``, the first release is a
    Gaussian histogram of the targets' sign and binary exponent (one count
    per row: L2 sensitivity 1; ``TARGET_SHARE`` of the budget), and
    ``(low, high)`` is the hull of the upper edges ``±2**(e+1)`` of the bins
    above ``REACH_THRESHOLD`` noise deviations
    (:func:`~skdp.linear_model._target_range.target_range_from_histogram`),
    ``(-1, 1)`` with a NoiseDominatedWarning when none stands out: a public
    rule on released values that covers every target once the noise
    vanishes.

    **Statistics.** With ``B = data_norm``, ``s = B sqrt(1 + fit_intercept)``
    and ``(low, high)`` the target bounds, a row becomes
    ``q = [clip(x), B] / s`` (``clip(x) = x min(1, B/||x||)``; the ``B``
    column only with an intercept) and its target
    ``t = (clip(y) - m) / h`` with ``m, h`` the midpoint and half-width of
    the bounds (``0`` and ``max(|low|, |high|)`` without an intercept), so
    ``||q|| <= 1`` and ``|t| <= 1``. The releases are the upper triangle of
    ``G = Σ q qᵀ`` and ``b = Σ t q``, formed exactly on a fixed-point grid
    (:func:`~skdp.sensitivity.exact_clipped_gram`).

    **Sensitivity (add/remove one row).** ``G`` moves by ``q qᵀ``, of
    Frobenius norm ``||q||² <= 1``; ``b`` by ``t q``, of norm at most 1.
    (Sheffet 2017 and Wang 2018 give ``||x||²`` and ``||x|| |y|`` for the
    same statistics. diffprivlib's ``LinearRegression`` takes the diagonal
    entries' sensitivity from the lower bound twice, its issues #104/#105,
    which is too small for asymmetric bounds.) Brute-forced in the tests.

    **Sample weights.** With ``sample_weight`` ``w`` in [0, 1], ``q`` and
    ``t`` are multiplied by ``sqrt(w)`` and truncated toward zero again, so
    ``G = Σ w q qᵀ`` and ``b = Σ w t q``: weighted least squares, the limit
    of :class:`~sklearn.linear_model.LinearRegression` with the same
    weights. One ``(x, y, w)`` row moves them by ``w ||q||² <= 1`` and
    ``w |t| ||q|| <= 1`` (in floats: ``fl(sqrt(w)) <= 1`` and truncation
    never grows a magnitude), so the noise is unchanged; all weights 1 give
    the unweighted fit bit for bit. The target range, the feature scales and
    the row norms are histograms of every row alike, unweighted: they choose clipping
    and scaling (public rules of released values), not the estimate, and an
    unweighted histogram has the same sensitivity; a row of weight 0 can
    widen them, not bias the estimate. A weight must belong to its own row;
    weights outside [0, 1] are refused before the charge.

    **Groups.** With ``groups``, a group keeps at most ``k`` rows
    (:func:`~skdp.utils._groups.kept_rows`) and moves every release by at
    most ``k`` times a row's bound: each multiplier is ``k`` times the
    row's (:func:`~skdp.linear_model._release.unit_multipliers`).

    **Privacy.** The releases (target range, feature scales, row norms,
    Gram matrix, cross products) are Gaussian mechanisms with noise multipliers
    ``R / sqrt(s_i)`` for public shares ``s_i`` summing to 1,
    ``R = analytic_gaussian_sigma(1, epsilon, delta)``; their composition
    is exactly ``1/R``-GDP, i.e. ``(epsilon, delta)``-DP (Dong, Roth and
    Su 2022; Balle and Wang 2018). Or, where every release is less noisy
    that way (a public rule of ``epsilon``, ``delta`` and ``d``: large
    ``epsilon`` or few features; :func:`~skdp.linear_model._noise_plan.
    plan_noise`), Laplace mechanisms with ``epsilon s_i`` each (basic
    composition: ``epsilon``-DP, charged ``(epsilon, 0)``) for the L1
    sensitivities of one row: 1 for the target and row-norm histograms,
    ``d`` for the feature histogram, ``(||q||₁² + ||q||₂²)/2 <= (D + 1)/2``
    for the Gram matrix's upper triangle and ``|t| ||q||₁ <= sqrt(D)`` for
    the cross products (Cauchy–Schwarz; ``k`` times for groups).

    **Estimate.** ``θ = (G̃ + λ_α I)⁻¹ b̃`` with the eigenvalues of
    ``G̃ + λ_α I`` raised to a public bound on the noise's spectral norm,
    ``r (2 sqrt(D) + 6)`` (AdaSSP's adaptive ridge, applied to the released
    matrix instead of a separately privatised smallest eigenvalue: it costs
    no budget), and ``λ_α = alpha / s²`` on the coefficients. Then
    ``coef_ = θ h / s`` and ``intercept_ = m + θ_D h B / s``.

    References
    ----------
    .. [1] Y.-X. Wang, "Revisiting differentially private linear regression:
       optimal and adaptive prediction & estimation in unbounded domain",
       UAI 2018.
    .. [2] O. Sheffet, "Differentially private ordinary least squares",
       ICML 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.linear_model import PrivateLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(50_000, 2))
    >>> y = X @ [1.5, -2.0] + 0.5 + rng.normal(scale=0.1, size=50_000)
    >>> reg = PrivateLinearRegression(target_bounds=(-4, 5), random_state=0)
    >>> reg = reg.fit(X * [1.0, 1000.0], y)  # features in their own units
    >>> np.round(reg.coef_ * [1.0, 1000.0], 1), round(reg.intercept_, 1)
    (array([ 1.5, -2. ]), 0.5)
    """

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "data_norm": [Interval(Real, 2.0**-500, 2.0**500, closed="both"), None],
        "feature_bounds": ["array-like", StrOptions({"scaled"}), None],
        "target_bounds": ["array-like", None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "mechanism": [StrOptions({"auto", "gaussian", "laplace"})],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        epsilon=1.0,
        delta=1e-6,
        *,
        data_norm=None,
        target_bounds=None,
        feature_bounds=None,
        alpha=0.0,
        fit_intercept=True,
        mechanism="auto",
        max_rows_per_group=None,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.target_bounds = target_bounds
        self.feature_bounds = feature_bounds
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.mechanism = mechanism
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, groups=None):
        """Charge ``(epsilon, delta)`` and fit the private model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or Dask array
            Training data (finite). A Dask array is read on its cluster
            (see :ref:`dask`), with ``y`` a Dask array of its rows.
        y : array-like of shape (n_samples,) or Dask array
            Targets (finite).
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights in [0, 1] (in-memory data only): weighted least
            squares, as :class:`~sklearn.linear_model.LinearRegression`
            with the same weights, at the noise of the unweighted fit (see
            Notes). Weights outside [0, 1] are refused before the charge.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit (in memory), with ``max_rows_per_group``.

        Returns
        -------
        self : PrivateLinearRegression
        """
        name = type(self).__name__
        low, high = check_target_bounds(self.target_bounds)
        intercept = bool(self.fit_intercept)
        dask = is_dask_collection(X) or is_dask_collection(y)
        if dask:
            data = validate_dask_xy(self, X, y)  # lazy rows [X, y]
            d = data.n_features - 1
        else:
            X, y = validate_private_data(
                self, X, y, accept_sparse="csr", y_numeric=True, order="C"
            )
            X = cells_stored_once(X, getattr(self, "feature_names_in_", None))
            if not np.all(np.isfinite(y)):
                raise ValueError(
                    "y contains NaN or infinity; skdp needs finite targets."
                )
            data, d = (X, y), X.shape[1]
        sample_weight = check_row_weights(self, sample_weight, data if dask else X)
        unit = self._privacy_unit(groups, data if dask else X)
        scaling = FeatureScaling(self._feature_bounds(), d, name)
        norm = check_norm(self.data_norm) if scaling.kind == "none" else None
        size = d + intercept
        check_term_size(size * size)
        private_target = low is None
        releases = linear_releases(private_target, scaling.private, d, size)
        multipliers, cost = plan_noise(
            self.epsilon, self.delta, releases, unit.unit_rows, self.mechanism
        )
        plan = release_plan(releases, multipliers)
        check_release_plan(name, plan, self._resolve_accountant())
        source = check_random_source(self.random_state)
        item = "Gram matrix and cross products"
        if scaling.private:
            item = "feature scales, " + item
        if private_target:
            item = "target range, " + item
        self._charge([(unit.label(item), cost)], unit=unit)
        if not dask:
            X, y, sample_weight = unit.bound(source, X, y, sample_weight)
            data = (X, y)

        # no intercept: no location either (it would move the origin)
        uncentred = sparse.issparse(X) or not intercept
        rows = None
        with np.errstate(all="ignore"):  # nothing data-dependent may warn now
            if private_target:
                low, high = release_target_range(data, multipliers[0], source, name)
                multipliers = multipliers[1:]
            names = getattr(self, "feature_names_in_", None)
            if scaling.private:
                affine = scaling.release(data, multipliers[0], source, uncentred, names)
                rows = release_row_norm(data, affine, multipliers[1], source)
                multipliers = multipliers[2:]
            else:
                affine = scaling.public_map(uncentred)
            if norm is None:
                gram_r = noise_multiplier(multipliers[0])
                norm = self._scaled_norm(scaling, d, gram_r, rows)
            if dask:
                args = (norm, low, high, intercept, affine)
            else:
                X = X if affine is None else scale_rows(X, *affine)
                data, args = (X, y), (norm, low, high, intercept)
            if sample_weight is None:
                gram, cross = xy_statistic(data, regression_sums, *args)
            else:
                gram, cross = regression_sums(*data, *args, None, sample_weight)
            spread = np.ones(d) if affine is None else affine[1]
            theta, causes, lost = self._solve(
                gram, cross, size, norm, multipliers, source, spread
            )
        with np.errstate(all="ignore"):  # coefficients beyond the float range
            self._set_coef(theta, d, norm, low, high, affine)
        warn_noise_dominated(name, causes)  # from released values only
        if scaling.kind == "none" and not causes:  # public: rows in own units
            warn_features_under_noise(name, lost, d, names)
        return self

    def _fit_cost(self, n_features=None):
        """What ``fit`` charges: the cost of its noise plan for ``n_features``
        (:func:`~skdp.linear_model._noise_plan.planned_cost`)."""
        private_target = self.target_bounds is None
        private_scales = self._feature_bounds() is None
        intercept = bool(self.fit_intercept)

        def releases(d):
            return linear_releases(private_target, private_scales, d, d + intercept)

        return planned_cost(
            self.epsilon, self.delta, releases, n_features, self.mechanism
        )

    def _scaled_norm(self, scaling, d, gram_multiplier, rows=None):
        """``data_norm`` in scaled units: the stated one, or the rule.

        Stated bounds map every feature into ``[-1, 1]``: ``sqrt(d)`` bounds
        every row. Private scales: ``min(reach, max(sqrt(d), sqrt(τ Ñ / (r
        sqrt(D)))))`` with ``reach`` the released largest row norm
        (:func:`~skdp.linear_model._row_norms.release_row_norm`) where it
        rose above the noise (at least ``MIN_ROW_NORM``), capped by the norm
        of the released per-feature bounds on ``|z|``, ``Ñ`` the released count
        (:func:`~skdp.linear_model._scaling.released_reach`), ``r`` the Gram
        matrix's noise multiplier and ``τ = NORM_NOISE``: clip no more than
        the noise makes worthwhile, and not at all once the noise vanishes
        (so the fit converges to least squares). Post-processing.

        Why the square root: a feature with ``E z² = m`` adds about ``Ñ m /
        (B² (1 + intercept))`` to the Gram matrix, whose noise has spectral
        norm about ``2 r sqrt(D)``; the relative noise ``r sqrt(D) B² / (Ñ
        m)`` grows like ``B²``, and ``B² = τ Ñ / (r sqrt(D))`` holds it at
        ``τ`` for ``m = 1`` (the linear rule ``B = τ Ñ / (r sqrt(D))``
        reached ``B = 66`` at eps = 1e6 on the consistency tests' synthetic
        table: R² 0.753 against least squares' 0.903). The box's diagonal
        alone as ``reach`` left the diabetes set at R² 0.344 against 0.359
        at eps = 1e6 (``B = 3.6`` for rows of norm at most 1.35).
        """
        if self.data_norm is not None:
            return float(self.data_norm)
        root = math.sqrt(d)
        if not scaling.private:
            return root
        reach = float(np.sqrt(np.sum(np.square(scaling.reach_))))
        reach = min(reach, row_norm_cap(rows))  # the released largest row norm
        size = d + bool(self.fit_intercept)
        wanted = math.sqrt(
            NORM_NOISE * scaling.count_ / (gram_multiplier * math.sqrt(size))
        )
        return min(max(min(reach, max(root, wanted)), 2.0**-500), 2.0**500)

    def _feature_bounds(self):
        """A stated ``data_norm`` alone keeps the rows as given (as before)."""
        if self.feature_bounds is None and self.data_norm is not None:
            return "scaled"
        return self.feature_bounds

    def _solve(self, gram, cross, size, norm, multipliers, source, spread):
        """``θ`` of the class Notes from the released statistics.

        ``alpha`` penalises the coefficients in the user's units,
        ``coef_j = θ_j (half / scale) / spread_j``: in ``θ`` units it is
        ``alpha / (scale spread_j)**2`` per feature (capped at ``2**500``,
        a finite matrix for the eigensolver).
        """
        gram_noise, cross_noise = multipliers
        gram_r, cross_r = noise_multiplier(gram_noise), noise_multiplier(cross_noise)
        intercept = bool(self.fit_intercept)
        matrix = noisy_gram(gram, size, gram_noise, source)
        rhs = release_sum(cross, cross_noise, source)
        causes = noise_dominated_releases(matrix, rhs, gram_r, cross_r)
        scale = norm * math.sqrt(1.0 + intercept)
        penalty = np.zeros(size)
        with np.errstate(all="ignore"):
            per_feature = self.alpha / scale**2 / np.square(spread)
        # 0 / 0 (no penalty, a subnormal stated scale) is no penalty
        per_feature = np.nan_to_num(per_feature, nan=0.0)
        penalty[: spread.size] = np.minimum(per_feature, 2.0**500)
        noise = spectral_noise_bound(size, gram_r)  # not the caller's ridge
        lost = features_under_noise(matrix, spread.size, noise)
        floor = noise + penalty.min()
        return floored_inverse(matrix + np.diag(penalty), floor) @ rhs, causes, lost

    def _set_coef(self, theta, d, norm, low, high, affine):
        """``coef_`` and ``intercept_`` in the user's units (post-processing)."""
        intercept = bool(self.fit_intercept)
        centre, half = target_scale(low, high, intercept)
        scale = norm * math.sqrt(1.0 + intercept)
        coef = theta[:d] * (half / scale)
        # norm / scale first: theta * half alone overflows for a target range
        # near the float limit, where the intercept itself is finite
        offset = float(centre + theta[d] * (norm / scale) * half) if intercept else 0.0
        location, spread = (np.zeros(d), np.ones(d)) if affine is None else affine
        self.feature_location_, self.feature_scale_ = location, spread
        if affine is not None:
            user, shift = to_user_units(coef[:, None], location, spread, d)
            coef = user[:, 0]
            offset = offset - float(shift[0]) if intercept else offset
        self.coef_ = coef
        self.intercept_ = float(np.clip(offset, -_LARGEST, _LARGEST))  # as coef_
