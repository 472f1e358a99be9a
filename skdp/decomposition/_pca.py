"""Private PCA from one noisy second-moment matrix (Analyze Gauss)."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.extmath import svd_flip
from sklearn.utils.validation import check_is_fitted

from skdp.base import PrivateEstimatorMixin
from skdp.decomposition._pca_scales import (
    MAX_NORM_RANGE,
    N_NORM_BINS,
    _finite,
    centred_moments_gram,
    covariance_noise_bound,
    norm_histogram,
    norm_rule,
    released_centre,
    second_moments,
    unresolved_components,
    warn_norm_untold,
    warn_unresolved,
)
from skdp.linear_model._linear_plan import release_plan
from skdp.linear_model._noise_plan import (
    Release,
    gram_l1_sensitivity,
    noise_multiplier,
    plan_noise,
    planned_cost,
    release,
    rule_deviation,
)
from skdp.linear_model._release import check_release_plan, noisy_gram
from skdp.linear_model._scaling import (
    N_BINS,
    exponent_histogram,
    histogram_sensitivity,
    release_exponent_histogram,
)
from skdp.mechanisms import check_random_source
from skdp.preprocessing._affine import saturated
from skdp.sensitivity._linear import check_term_size
from skdp.utils._dask import row_statistic, validate_rows
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._validation import validate_private_data

__all__ = ["PrivatePCA"]


#: Public shares of the fit's squared GDP parameter: the per-feature exponent
#: histogram (the centre), the histogram of the centred rows' norms (the
#: clipping norm) and the second moments.
CENTRE_SHARE, NORM_SHARE, GRAM_SHARE = 0.1, 0.2, 0.7
_RELEASE_LABEL = "feature centres, row norms, count, sums and second moments"


def clipped_moments_gram(rows, max_norm):
    """The exact Gram of ``[clip(x), c] / (c sqrt(2))`` (centre 0)."""
    return centred_moments_gram(rows, 0.0, max_norm)


def pca_releases(d):
    """The fit's releases (shares, L2 and L1 sensitivities; class Notes)."""
    size = d + 1
    return [
        Release(
            "feature centres",
            CENTRE_SHARE,
            histogram_sensitivity(d),
            float(d),
            d * N_BINS,
            True,
        ),
        Release("row norms", NORM_SHARE, 1.0, 1.0, N_NORM_BINS, True),
        Release(
            "second moments",
            GRAM_SHARE,
            1.0,
            gram_l1_sensitivity(size),
            size * (size + 1) // 2,
        ),
    ]


def clip_norm(max_norm, rule, told):
    """The clipping norm: ``min(max_norm, rule)``, the rule where none is stated.

    ``rule`` is the public function :func:`~skdp.decomposition._pca_scales.
    norm_rule` of the released norm histogram; ``told`` says whether a bin
    of it rose above the noise. ``max_norm`` only lowers the rule (stating
    the true bound, or any larger number, gives the default), and replaces
    the rule's fallback when nothing was told from noise.
    """
    if max_norm is None:
        return rule
    return min(float(max_norm), rule) if told else float(max_norm)


class PrivatePCA(
    GroupsMixin,
    PrivateEstimatorMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Private counterpart of :class:`~sklearn.decomposition.PCA`.

    Releases the row count, the sum and the second-moment matrix of rows
    clipped to an L2 norm about a centre in one noisy release (Analyze
    Gauss, Dwork, Talwar, Thakurta and Zhang 2014) and takes the principal
    axes of the private covariance (post-processing). The centre and the
    clipping norm are themselves released first, in the same composition
    (Gaussian, or Laplace where every release is less noisy that way), so
    no bound on the data and no hand scaling are needed: the features keep
    their units (PCA is scale-dependent), and as ``epsilon`` grows the
    clipping vanishes and the fit becomes scikit-learn's PCA of the raw
    rows.

    Parameters
    ----------
    n_components : int or None, default=None
        Number of components kept; ``None`` keeps all.
    epsilon : float, default=1.0
        ε of one ``fit``.
    delta : float, default=1e-6
        δ of one ``fit``, ``0 < delta < 1``.
    max_norm : float or None, default=None
        Largest clipping norm of a row about its centre, in the data's
        units, in ``[1e-150, 1e150]``. The clipping norm ``clip_norm_`` is
        ``min(max_norm, rule)`` with the public rule of
        :func:`~skdp.decomposition._pca_scales.norm_rule` (the released
        largest norm of the centred rows); stating the true bound on the
        rows, or any larger number, therefore gives the default, and a
        smaller one trades clipping for less noise (which grows like the
        norm squared). Where no released norm rises above the noise the rule
        is ``FALLBACK_NORM = 1`` and a stated ``max_norm`` replaces it.
        **Default change:** it was 1.0, which scaled every row of unscaled
        data to norm 1 (a PCA of the rows' directions).
    mechanism : {"auto", "gaussian", "laplace"}, default="auto"
        The noise of the fit's releases: one Gaussian composition calibrated
        to ``(epsilon, delta)``, or ``epsilon``-DP Laplace releases (no
        ``delta`` spent); ``"auto"`` takes the Laplace plan where it gives
        every release less noise (a very large ``epsilon``: from about 90
        for one feature, 5,000 for 30), else the Gaussian (see Notes).
        Under a zCDP accountant the Laplace plan records ``epsilon²/2``,
        more than the Gaussian plan: pass ``"gaussian"`` to keep the smaller
        charge there.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows with ``fit(X, groups=...)``
        (required then, refused without): every noise scale is ``k`` times
        the row's (Notes, and :ref:`user_level_privacy`).
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit``; ``None`` uses the default accountant at fit time.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG.

    Attributes
    ----------
    components_ : ndarray of shape (`n_components_`, `n_features_in_`)
        Private principal axes, by decreasing private variance.
    explained_variance_ : ndarray of shape (`n_components_`,)
        Private variance along each axis (at least 0).
    explained_variance_ratio_ : ndarray of shape (`n_components_`,)
        Its share of the private total variance.
    mean_ : ndarray of shape (`n_features_in_`,)
        Private mean of the clipped rows (``centre_`` plus the mean of the
        clipped centred rows).
    centre_ : ndarray of shape (`n_features_in_`,)
        Released centre about which rows are clipped.
    clip_norm_ : float
        Clipping norm of the centred rows (see ``max_norm``).
    noise_bound_ : float
        Public high-probability bound on the spectral norm of the noise of
        the released covariance (a function of ``clip_norm_``,
        ``n_samples_`` and ``noise_std_``): eigenvalue gaps below it are
        not resolved.
    n_samples_ : float
        Private row count (noisy, at least 1).
    n_components_ : int
        Number of components kept.
    noise_std_ : float
        Standard deviation of the noise on each entry of the released
        second-moment matrix, in units of ``2 clip_norm_²``.
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    skdp.linear_model.PrivateLinearRegression : The same release with targets.

    Notes
    -----
    **Releases.** One fit is three releases, in this order:

    1. the histogram of every feature's sign and binary exponent
       (:func:`~skdp.linear_model._scaling.release_exponent_histogram`, as
       the linear models' private scales: a row adds one count per feature,
       L2 sensitivity ``sqrt(d)``); the centre ``m`` is the median of its
       bins near the mode (:func:`~skdp.decomposition._pca_scales.
       released_centre`, post-processing; 0 where the magnitude is noise);
    2. the histogram of the centred rows' norms ``||x - m||`` in bins of
       ``2**(1/4)`` (:func:`~skdp.decomposition._pca_scales.norm_histogram`;
       ``m`` is public after step 1, so a row adds one count to one bin: L2
       sensitivity 1). The rule ``c`` is the upper edge of the highest bin
       above ``NORM_THRESHOLD = 5`` noise deviations (or of the highest group
       of 4, 16 or 64 bins, finest first, when no single bin is): as the
       noise vanishes every row is covered and clipping vanishes;
    3. the second moments: each row is clipped about the centre,
       ``clip(x - m) = (x - m) min(1, c/||x - m||)``, extended by the
       constant ``c`` and divided by ``c sqrt(2)``: ``q = [clip(x - m), c] /
       (c sqrt(2))`` has ``||q|| <= 1``. The upper triangle of ``Σ q qᵀ``
       holds the count (``n/2``), the sum and the second moments together
       (:func:`~skdp.sensitivity.exact_clipped_gram`, exact sums on a public
       grid, so on a Dask input the blocks' sums add up to the in-memory
       ones and the release is the same for a seed).

    **Sensitivity (add/remove one row).** Steps 1 and 2 move ``sqrt(d)`` and
    1 (one count per feature, one count in all). In step 3 a row moves
    ``Σ q qᵀ`` by ``q qᵀ``, of Frobenius norm ``||q||² <= 1``; the upper
    triangle keeps a subset of its entries, so the L2 sensitivity is 1
    (Dwork et al. 2014 state ``1`` for unit-norm rows under the same
    relation; replace-one would double it), whatever the public ``m`` and
    ``c`` are. L1 sensitivities (for the Laplace plan): ``d``, 1 and
    ``Σ_{i<=j} |q_i q_j| = (||q||₁² + ||q||₂²)/2 <= (d + 2)/2`` (``q`` has
    ``d + 1`` coordinates; Cauchy–Schwarz, :func:`~skdp.linear_model.
    _noise_plan.gram_l1_sensitivity`). Brute-forced in the tests. It holds
    for the floats at every magnitude the range of ``c`` allows: the clip
    factor is applied with the grid's unit as one normal float on the row
    scaled by a power of two, and a difference ``x - m`` that overflows
    becomes the largest double of its sign (a per-value rule) before
    clipping.

    **Groups** (``fit(X, groups=g)`` with ``max_rows_per_group=k``;
    add/remove one whole group). Each group keeps at most k rows (a keyed
    choice among its own rows), and adds at most k terms to each release,
    each within the row's bound: ``k sqrt(d)``, ``k`` and ``k`` (triangle
    inequality, attained by k equal rows; brute-forced in
    tests/test_groups_models.py), and ``k`` times the L1 bounds. Every
    multiplier (every Laplace L1 sensitivity) is multiplied by k
    (:func:`~skdp.linear_model._release.unit_multipliers`, as for the
    linear models), so each release has the row's noise-to-sensitivity
    ratio and the composition the same ``(epsilon, delta)``. The centre and
    the clipping norm are chosen from releases of that composition, so
    they are stated for the group too (nothing to pass publicly); their
    thresholds are in noise deviations, which grow with k.

    **Privacy.** Gaussian mechanisms with the analytic calibration (Balle
    and Wang 2018), exact discrete noise on a power-of-two grid, noise
    multipliers ``r_i = R / sqrt(s_i)`` for the public shares
    ``CENTRE_SHARE, NORM_SHARE, GRAM_SHARE = 0.1, 0.2, 0.7`` and ``R =
    analytic_gaussian_sigma(1, epsilon, delta)``. Their adaptive
    composition is exactly a Gaussian mechanism with ``μ² = Σ 1/r_i² =
    1/R²`` (Gaussian DP, Dong, Roth and Su 2022), so the fit is
    ``(epsilon, delta)``-DP under add/remove-one-row neighbours, and
    ``rho = 1/(2R²)``-zCDP is recorded as for the linear models. **Laplace
    plan** (:func:`~skdp.linear_model._noise_plan.plan_noise`): release ``i``
    gets ``epsilon s_i`` (rounded down) and exact discrete Laplace noise for
    its L1 sensitivity; by basic composition the fit is ``epsilon``-DP,
    charged ``(epsilon, 0)``. It is used when every release is less noisy
    than in the Gaussian plan (the histograms compared at three Laplace
    scales, the deviation their thresholds then read), a public rule of
    ``epsilon``, ``delta`` and ``d``: at ``delta = 1e-6``, from ``epsilon``
    about 90 for one feature, 1,500 for 10 and 5,000 for 30. Everything
    after the releases (rules, centring, eigendecomposition, sign
    convention, warnings) is post-processing and never raises on finite
    input.

    **Warnings.** A :class:`~skdp.NoiseDominatedWarning` says when no bin
    of the released norm histogram rose above the noise (the clipping norm
    is then the fallback 1) and names the kept components whose eigenvalue
    gaps in the released covariance are below ``noise_bound_`` (not
    resolved: Davis-Kahan bounds a component's angle by the noise's norm
    over its gap). Both are computed from released values and public
    parameters only.

    **Limits.** The noise of the covariance in data units is about
    ``2 clip_norm_² r / n`` (``r = noise_std_``). A Gaussian ``r`` falls like
    ``1/sqrt(2 epsilon)`` only, a Laplace one like ``(d + 2) / (0.7
    epsilon sqrt(2))``: on unscaled breast cancer (569 rows, norms to 3,900
    about the centre) the second component was 0.040 rad off scikit-learn's
    at ``epsilon = 1e6`` with the Gaussian plan, 0.0017 with the Laplace
    one.

    References
    ----------
    .. [1] C. Dwork, K. Talwar, A. Thakurta and L. Zhang, "Analyze Gauss:
       Optimal Bounds for Privacy-Preserving Principal Component Analysis",
       STOC 2014.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant
    >>> from skdp.decomposition import PrivatePCA
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50_000, 1)) @ [[0.6, 0.6, 0.0]] / 3
    >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    >>> pca = PrivatePCA(1, accountant=acc, random_state=0).fit(X)
    >>> np.round(np.abs(pca.components_), 1)
    array([[0.7, 0.7, 0. ]])
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "max_norm": [Interval(Real, 0, None, closed="neither"), None],
        "mechanism": [StrOptions({"auto", "gaussian", "laplace"})],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=None,
        *,
        epsilon=1.0,
        delta=1e-6,
        max_norm=None,
        mechanism="auto",
        max_rows_per_group=None,
        accountant=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.max_norm = max_norm
        self.mechanism = mechanism
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    def _fit_cost(self, n_features=None):
        return planned_cost(
            self.epsilon, self.delta, pca_releases, n_features, self.mechanism
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, groups=None):
        """Charge ``(epsilon, delta)`` and release the principal axes.

        Parameters
        ----------
        X : array-like or Dask collection of shape (n_samples, n_features)
            Training data (finite). A Dask array or DataFrame is read on its
            cluster (see :ref:`dask`).
        y : None
            Ignored.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit (in memory), with ``max_rows_per_group``:
            neighbours add or remove one whole group (Notes). None: one row.

        Returns
        -------
        self : PrivatePCA
        """
        X = validate_rows(self, X, order="C")
        d = X.shape[1]
        n_components = d if self.n_components is None else self.n_components
        if n_components > d:
            raise ValueError(
                f"n_components={n_components} must be at most the number of "
                f"features ({d})."
            )
        check_term_size((d + 1) ** 2)
        low, high = MAX_NORM_RANGE
        if self.max_norm is not None and not (low <= self.max_norm <= high):
            raise ValueError(
                f"max_norm={self.max_norm} is out of range: the second moments "
                "are in units of max_norm², which must be a normal float; use "
                "1e-150 <= max_norm <= 1e150 (scale the features instead)."
            )
        unit = self._privacy_unit(groups, X)
        releases = pca_releases(d)
        noises, cost = plan_noise(
            self.epsilon, self.delta, releases, unit.unit_rows, self.mechanism
        )
        plan = release_plan(releases, noises)
        check_release_plan(type(self).__name__, plan, self._resolve_accountant())
        centre_noise, norm_noise, gram_noise = noises
        source = check_random_source(self.random_state)
        self._charge([(unit.label(_RELEASE_LABEL), cost)], unit=unit)
        (X,) = unit.bound(source, X)

        # nothing after the charge may warn on the data: at a large max_norm
        # a noisy mean far beyond it (a tiny count) overflows its square
        with np.errstate(all="ignore"):
            counts = row_statistic(X, exponent_histogram)
            noisy, noise_sd = release_exponent_histogram(counts, centre_noise, source)
            centre = released_centre(noisy, noise_sd)
            norms = row_statistic(X, norm_histogram, centre)
            noisy_norms = release(norms.astype(float), 1.0, norm_noise, source)
            rule, told = norm_rule(noisy_norms, rule_deviation(norm_noise))
            norm = clip_norm(self.max_norm, rule, told)
            gram = row_statistic(X, centred_moments_gram, centre, norm)
            matrix = noisy_gram(gram, d + 1, gram_noise, source)
            multiplier = noise_multiplier(gram_noise)
            count, mean, units = second_moments(matrix, norm)
            values, vectors = np.linalg.eigh(units)
            values = _finite(values * (2.0 * norm**2))
            covariance = _finite(units * (2.0 * norm**2))
            self.mean_ = _finite(centre + mean)
        order = np.argsort(values)[::-1]
        values = np.maximum(values[order], 0.0)
        _, components = svd_flip(None, vectors[:, order].T, u_based_decision=False)
        total = values.sum()
        self.n_samples_ = float(count)
        self.n_components_ = n_components
        self.components_ = components[:n_components]
        self.explained_variance_ = values[:n_components]
        self.explained_variance_ratio_ = (
            values[:n_components] / total if total > 0 else np.zeros(n_components)
        )
        self.noise_std_ = float(multiplier)
        self.clip_norm_ = float(norm)
        self.centre_ = centre
        with np.errstate(all="ignore"):
            self.noise_bound_ = float(
                covariance_noise_bound(d, multiplier, norm, count)
            )
        self._covariance = covariance
        # decided from released values and public parameters only
        self._warn_noise(told or self.max_norm is not None, values, n_components)
        return self

    def _warn_noise(self, told, values, n_components):
        """Item 6 of issue 27: say when the release is noise (post-processing)."""
        name = type(self).__name__
        if not told:
            warn_norm_untold(name)
        unresolved = unresolved_components(values, self.noise_bound_, n_components)
        if unresolved.size:
            warn_unresolved(name, unresolved, self.noise_bound_)

    def get_covariance(self):
        """The private covariance matrix of the clipped rows (free).

        All of it, not only the kept components: post-processing of the one
        release (symmetric; it may be indefinite where the noise dominates).

        Returns
        -------
        covariance : ndarray of shape (`n_features_in_`, `n_features_in_`)
        """
        check_is_fitted(self)
        return self._covariance.copy()

    @property
    def _n_features_out(self):
        return self.n_components_

    def transform(self, X):
        """Project onto the private principal axes (post-processing; free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray of shape (n_samples, `n_components_`)
        """
        check_is_fitted(self)
        X = validate_private_data(self, X, reset=False)
        with np.errstate(over="ignore", invalid="ignore"):
            projected = (X - self.mean_) @ self.components_.T
        # finite rows give finite output (see saturated); inf - inf in the
        # product of a row of ±1.8e308 is NaN: the largest double of its sign
        # would be a guess, so such a coordinate is 0 (a public rule)
        projected[np.isnan(projected)] = 0.0
        return saturated(projected)

    def inverse_transform(self, X):
        """Map projections back to feature space (post-processing; free).

        Parameters
        ----------
        X : array-like of shape (n_samples, `n_components_`)

        Returns
        -------
        X_original : ndarray of shape (n_samples, `n_features_in_`)
        """
        check_is_fitted(self)
        return np.asarray(X, dtype=float) @ self.components_ + self.mean_
