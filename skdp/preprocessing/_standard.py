"""Private standardisation: mean and variance from one release of moment sums."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from skdp.accounting._composition import budget_left
from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms import check_random_source
from skdp.mechanisms._additive import (
    additive_cost,
    additive_noise_bound,
    additive_noise_variance,
    additive_release,
    check_additive_release,
)
from skdp.preprocessing._affine import AffineTransformMixin
from skdp.sensitivity import centre_and_radius, exact_moment_sums, moments_from_sums
from skdp.sensitivity._mean import per_feature_sensitivities
from skdp.stats._mean import (
    BoundsPlan,
    check_mechanism_delta,
    ratio_interval,
    warn_if_noise_dominated,
)
from skdp.utils._dask import row_statistic, validate_rows
from skdp.utils._dask_xy import JOINED_CODES, feature_rows, xy_statistic
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._sample_weight import check_row_weights, weights_of_kept_rows

__all__ = ["PrivateStandardScaler", "fit_moment_sums", "release_moment_sums"]


def coded_moment_sums(X, codes, lower, upper, groups):
    """:func:`~skdp.sensitivity.exact_moment_sums` per group of ``codes``
    (float class indices of joined Dask rows, or integers)."""
    codes = np.asarray(codes, dtype=np.intp)
    return exact_moment_sums(X, lower, upper, codes, groups)


def release_moment_sums(
    X,
    lower,
    upper,
    epsilon,
    delta,
    source,
    codes=None,
    groups=1,
    sample_weight=None,
    unit_rows=1,
):
    """Noisy Bernstein moment sums, shape (groups, 3, d), and their noise std.

    Laplace noise for ``delta == 0``, Gaussian otherwise, calibrated to the
    sensitivities of :func:`~skdp.sensitivity.exact_moment_sums` (L1 ``d``,
    L2 ``sqrt(d)``). ``X`` is in memory (``codes`` an array or None) or a
    Dask input: its rows (``codes`` None), or rows joined to their class
    indices by :func:`~skdp.utils._dask_xy.validate_dask_xy` (``codes`` is
    then ``JOINED_CODES``). ``sample_weight`` (in [0, 1], in memory only)
    weights the sums at the same sensitivities. With ``unit_rows = k`` (a
    privacy unit of at most ``k`` rows, possibly of several classes) every
    sensitivity is ``k`` times the row's (triangle inequality).
    """
    joined = isinstance(codes, str) and codes == JOINED_CODES
    if sample_weight is not None:
        d = X.shape[1]
        sums = exact_moment_sums(X, lower, upper, codes, groups, sample_weight)
    elif joined:  # the codes are the rows' last column
        d = X.n_features - 1
        sums = xy_statistic(X, coded_moment_sums, lower, upper, groups)
    else:
        d = X.shape[1]
        sums = row_statistic(X, exact_moment_sums, lower, upper, codes, groups)
    l1, l2 = per_feature_sensitivities(d, unit_rows)
    noisy = additive_release(sums, l1, l2, epsilon, delta, source)
    return noisy, float(np.sqrt(additive_noise_variance(l1, l2, epsilon, delta)))


def fit_moment_sums(
    estimator,
    X,
    label,
    codes=None,
    groups=1,
    *,
    labels=None,
    budget=None,
    sample_weight=None,
    unit=None,
):
    """Plan, charge and release the moment sums of an estimator's ``fit``.

    The estimator has ``epsilon``, ``bounds``, ``bounds_share``,
    ``upper_limit``, ``mechanism``, ``delta`` and ``random_state``
    parameters. Everything that can fail does so before the charge; the
    private bounds (if any) come first, then the sums with the rest.
    ``codes`` as in :func:`release_moment_sums` (with ``JOINED_CODES``, the
    private bounds are searched on the feature columns alone).

    ``budget=(epsilon, delta)`` replaces the estimator's own (what a label
    selection leaves). With ``labels=(plan, y)`` (a
    :class:`~skdp.mechanisms._labels.LabelPlan` and the rows' labels, in memory)
    the label set is part of the fit: its cost is charged with the rest, the
    bounds and sums get what it leaves, and after the charge the plan gives the
    classes and codes (``codes`` and ``groups`` are then ignored); rows whose
    label was not released are dropped, a per-row rule (with their weights).

    ``sample_weight`` (validated, in [0, 1]) weights the moment sums only:
    the label selection and the private bounds count every row alike (see
    :class:`PrivateStandardScaler`, Notes).

    ``unit`` (a :class:`~skdp.utils._privacy_unit.PrivacyUnit`, in memory,
    public bounds) keeps at most ``k`` rows per group after the charge and
    the label selection, and multiplies the sensitivities by ``k``.

    Returns
    -------
    noisy : ndarray of shape (groups, 3, n_features)
    lower, upper : ndarray of shape (n_features,)
        The clipping bounds used.
    epsilon_sums : float
        The ε of the sums' release.
    classes : ndarray or None
        The label set (``labels`` given), else None.
    """
    joined = isinstance(codes, str) and codes == JOINED_CODES
    features = feature_rows(X) if joined else X
    plan, y = labels if labels is not None else (None, None)
    epsilon, delta = budget or (estimator.epsilon, estimator.delta)
    bounds_plan = BoundsPlan.build(
        estimator.bounds,
        features.shape[1],
        epsilon * estimator.bounds_share,
        estimator.upper_limit,
    )
    check_mechanism_delta(estimator.mechanism, delta)
    eps_sums = budget_left(epsilon, bounds_plan.epsilon)
    source = check_random_source(estimator.random_state)
    sums_cost = additive_cost(eps_sums, delta)
    if unit is not None:  # the noise grows with k: refuse before the charge
        private = bounds_plan.svt is not None
        unit.refuse_private(estimator, "bounds", "bounds=(L, U)", private)
        d, name = features.shape[1], type(estimator).__name__
        sensitivities = per_feature_sensitivities(d, unit.unit_rows)
        check_additive_release(name, *sensitivities, eps_sums, delta, 3 * d)
    selection = plan.cost_items() if plan is not None else []
    label = label if unit is None else unit.label(label)
    items = [*selection, *bounds_plan.cost_items(), (label, sums_cost)]
    estimator._charge(items, unit=unit)
    classes = None
    if plan is not None:
        selected = plan.classes is None  # public: whether rows may be dropped
        classes, X, codes = plan.run(X, y, source)
        groups = classes.size
        if selected and sample_weight is not None:  # the rows kept, per row
            sample_weight = weights_of_kept_rows(sample_weight, y, classes)
    estimator._unit_rows = 1 if unit is None else unit.unit_rows
    if unit is not None:
        X, codes, sample_weight = unit.bound(source, X, codes, sample_weight)
    lower, upper = bounds_plan.run(features if plan is None else X, source, estimator)
    noisy, estimator.noise_std_ = release_moment_sums(
        X,
        lower,
        upper,
        eps_sums,
        delta,
        source,
        codes,
        groups,
        sample_weight,
        estimator._unit_rows,
    )
    return noisy, lower, upper, eps_sums, classes


def handle_zero_scale(std):
    """sklearn's rule: a zero (or released-as-zero) deviation scales by 1."""
    return np.where(std > 0, std, 1.0)


class PrivateStandardScaler(
    AffineTransformMixin,
    GroupsMixin,
    PrivateEstimatorMixin,
    OneToOneFeatureMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Private counterpart of :class:`~sklearn.preprocessing.StandardScaler`.

    Releases, in one noisy vector, the row count and each feature's clipped
    sum and sum of squares, and standardises with the private mean and
    standard deviation: ``(x - mean_) / scale_``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total ε of one ``fit``, over all features.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        Public ``(lower, upper)`` clipping bounds, scalars or per feature;
        ``None`` or ``(lower, None)`` chooses them privately as
        :class:`PrivateMean` does, spending ``bounds_share`` of ``epsilon``.
    with_mean : bool, default=True
        Centre the data in ``transform`` (the mean is released either way).
    with_std : bool, default=True
        Scale the data to unit variance in ``transform``.
    bounds_share : float, default=0.3
        Share of ``epsilon`` spent on private bounds (``bounds=None`` only).
    upper_limit : float, default=1e9
        Largest plausible magnitude of a value, for private bounds.
    mechanism : {"laplace", "gaussian"}, default="laplace"
        Laplace noise (ε-DP) or the analytic Gaussian ((ε, δ)-DP, needs
        ``delta > 0``).
    delta : float, default=0.0
        Total δ of one ``fit`` (Gaussian only).
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows with ``fit(..., groups=...)``
        (required then, refused without): see Notes.
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit``; ``None`` uses the default accountant at fit time.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG; an int gives
        reproducible (and therefore not secret) noise for tests.

    Attributes
    ----------
    mean_ : ndarray of shape (`n_features_in_`,)
        Private means of the clipped features, within the bounds.
    var_ : ndarray of shape (`n_features_in_`,)
        Private variances of the clipped features, in
        ``[0, ((upper - lower)/2)²]``.
    scale_ : ndarray of shape (`n_features_in_`,)
        ``sqrt(var_)``, with 1 where it is 0 (as scikit-learn does).
    n_samples_seen_ : float
        The private row count (noisy, at least 1); with
        ``sample_weight``, the weighted count.
    noise_std_ : float
        Standard deviation of the noise added to each released moment sum
        (public: it follows from ε, δ and the number of features); the
        error of a mean is about ``noise_std_ * (upper - lower) /
        n_samples_seen_``.
    lower_, upper_ : ndarray of shape (`n_features_in_`,)
        The clipping bounds: given, or chosen privately.
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    PrivateMean : The mean alone.
    PrivateRobustScaler : Median and interquartile range.

    Notes
    -----
    **Statistic.** With ``a = (clip(x) - L) / (U - L)`` in [0, 1], a row adds
    the quadratic Bernstein basis ``((1 - a)², 2a(1 - a), a²)`` to each
    feature's triple (:func:`~skdp.sensitivity.exact_moment_sums`). The
    three terms are non-negative and sum to 1, so the triple's total is the
    row count, ``P1/2 + P2 = Σ a`` and ``P2 = Σ a²``: count, mean and second
    moment come from one vector whose sensitivity under add/remove one row
    is that of the count alone, exactly ``d`` in L1 norm and at most
    ``sqrt(d)`` in L2 norm (brute-forced in the tests). Releasing the count,
    the sums and the sums of squares separately costs ``1 + 2d`` in L1
    norm; the mean-then-variance route of two releases splits ε on top.
    This is why the variance comes in one release with the mean.

    **Noise.** Laplace with scale ``d/ε`` per coordinate, or the analytic
    Gaussian (Balle and Wang 2018) for L2 sensitivity ``sqrt(d)``; exact
    discrete noise on a power-of-two grid (:mod:`skdp.mechanisms`) added to
    sums formed exactly on the grid ``2**-32``.

    **Groups.** With ``groups``, a group keeps at most ``k`` rows
    (:func:`~skdp.utils._groups.kept_rows`) and adds at most ``k`` triples:
    L1 ``k d``, L2 ``k sqrt(d)``, noise ``k`` times the row's (as
    :class:`~skdp.naive_bayes.PrivateGaussianNB`). Public bounds required.

    **Sample weights.** With ``sample_weight`` ``w`` in [0, 1] a row adds
    ``w`` times its triple (rounded to three non-negative integers that add
    up to its weight on the grid ``2**-32``; see
    :func:`~skdp.sensitivity.exact_moment_sums`): the triple totals are the
    weighted count, the means and variances those of
    :class:`~sklearn.preprocessing.StandardScaler` with the same weights,
    and one ``(x, w)`` row moves the vector by ``d w <= d`` in L1 norm and at
    most ``sqrt(d)`` in L2 norm, so the noise is that of the unweighted fit;
    all weights 1 give it bit for bit. ``n_samples_seen_`` is then the noisy
    weighted count. A weight must belong to its own row (not be computed
    from other rows); weights outside [0, 1] are refused before the charge.
    Private bounds (``bounds=None``) are chosen from every row alike,
    unweighted: a bound is a clipping choice, not the estimate, and an
    unweighted search has the same sensitivity.

    **Post-processing** (data-independent rules): the count is the mean of
    the d triple totals, at least 1; the mean is clipped to the bounds and
    the variance to ``[0, ((U - L)/2)²]``; a zero deviation scales by 1.
    Private bounds (``bounds=None``) are chosen first with the sparse
    vector technique exactly as in :class:`PrivateMean` (sequential
    composition).

    References
    ----------
    .. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
       Privacy", 2014, §3.3.
    .. [2] S. Casacuberta, M. Shoemate, S. Vadhan and C. Wagaman, "Widespread
       Underestimation of Sensitivity in Differentially Private Libraries and
       How to Fix It", CCS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant
    >>> from skdp.preprocessing import PrivateStandardScaler
    >>> X = np.random.default_rng(0).normal(50, 10, size=(100_000, 2))
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> scaler = PrivateStandardScaler(1.0, bounds=(0, 100), accountant=acc,
    ...                                random_state=0).fit(X)
    >>> np.round(scaler.mean_), np.round(scaler.scale_)
    (array([50., 50.]), array([10., 10.]))
    >>> acc.total()
    (1.0, 0.0)
    """

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "bounds": ["array-like", tuple, None],
        "with_mean": ["boolean"],
        "with_std": ["boolean"],
        "bounds_share": [Interval(Real, 0, 1, closed="neither")],
        "upper_limit": [Interval(Real, 0, None, closed="neither")],
        "mechanism": [StrOptions({"laplace", "gaussian"})],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        epsilon=1.0,
        *,
        bounds=None,
        with_mean=True,
        with_std=True,
        bounds_share=0.3,
        upper_limit=1e9,
        mechanism="laplace",
        delta=0.0,
        max_rows_per_group=None,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.bounds = bounds
        self.with_mean = with_mean
        self.with_std = with_std
        self.bounds_share = bounds_share
        self.upper_limit = upper_limit
        self.mechanism = mechanism
        self.delta = delta
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None, groups=None):
        """Release the private mean and standard deviation of each feature.

        Parameters
        ----------
        X : array-like or Dask collection of shape (n_samples, n_features)
            Training data. A Dask array or DataFrame is read on its cluster
            (see :ref:`dask`).
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights in [0, 1] (in-memory data only), as in
            :class:`~sklearn.preprocessing.StandardScaler`, at the noise of
            the unweighted fit (see Notes). Weights outside [0, 1] are
            refused before the charge.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit (in memory), with ``max_rows_per_group``.

        Returns
        -------
        self : PrivateStandardScaler
        """
        X = validate_rows(self, X)
        sample_weight = check_row_weights(self, sample_weight, X)
        unit = self._privacy_unit(groups, X)
        noisy, lower, upper, self._epsilon_sums, _ = fit_moment_sums(
            self,
            X,
            "row count, clipped sums and squares",
            sample_weight=sample_weight,
            unit=unit,
        )
        counts, means, variances, stds = moments_from_sums(
            noisy, lower, upper, return_std=True
        )
        self.n_samples_seen_ = float(counts[0])
        self._released_sums = noisy[0]
        self.mean_, self.var_ = means[0], variances[0]
        self.scale_ = handle_zero_scale(stds[0])
        self.lower_, self.upper_ = lower, upper
        self._warn_if_noise_dominated(stds[0])
        return self

    def _warn_if_noise_dominated(self, std):
        """Post-processing: the public noise of the mean and of the variance
        (``noise_std_`` times ``(U - L) / count`` and ``(U - L)² / count``, in
        data units) against the released scale and variance.

        Computed without forming ``U - L`` or a square, which overflow for
        bounds near ``±1.8e308`` and made a well-resolved release read as
        ``inf`` noise: the mean's noise is ``2 r (noise_std_ / count)`` with
        ``r = (U - L)/2``, and the variance's is compared as a deviation,
        ``sqrt((U - L)² noise_std_ / count) = 2 r sqrt(noise_std_ / count)``
        against the released deviation ``std`` (the same test, both sides
        non-negative; ``std`` is at most ``r``, finite).
        """
        radius = self.upper_ / 2 - self.lower_ / 2
        relative = self.noise_std_ / max(self.n_samples_seen_, 1.0)
        with np.errstate(over="ignore"):
            mean_noise = 2 * (radius * relative)
            var_noise_as_std = 2 * (radius * np.sqrt(relative))
        if self.with_mean:
            warn_if_noise_dominated(
                self,
                mean_noise,
                self.scale_,
                "the noise of the mean is at least the released scale_",
            )
        if self.with_std:
            warn_if_noise_dominated(
                self,
                var_noise_as_std,
                std,
                "the noise of the variance is at least the released var_ "
                "(compared as deviations: the square root of the variance's "
                "noise against sqrt(var_))",
            )

    def confidence_interval(self, alpha=0.05):
        """An interval for each mean that holds despite the noise w.p. 1 - α.

        Post-processing of the release (free). It covers the noise only: the
        clipping to ``[lower_, upper_]`` is a bias it does not include.

        Parameters
        ----------
        alpha : float, default=0.05
            Failure probability, for all features at once.

        Returns
        -------
        low, high : ndarray of shape (`n_features_in_`,)
            Within the bounds.

        Notes
        -----
        Every one of the ``3d`` released sums is within ``t`` of its exact
        value, with ``P(|noise| > t) = α / (3d)`` (union bound; Laplace or
        Gaussian tails, :func:`~skdp.mechanisms._additive.additive_noise_bound`).
        Then ``Σ (2a - 1) = P2 - P0`` is within ``2 t`` and the count (a mean
        of triple totals) within ``3 t``, and the interval is the range of
        their ratio over that box (the whole range when the count could be
        0), as for :class:`PrivateMean`.
        """
        check_is_fitted(self)
        d = self.n_features_in_
        t = additive_noise_bound(
            alpha / (3 * d),
            *per_feature_sensitivities(d, getattr(self, "_unit_rows", 1)),
            self._epsilon_sums,
            self.delta,
        )
        sums = self._released_sums
        centred = sums[2] - sums[0]  # Σ (2a - 1) = P2 - P0
        count = sums.sum(axis=0).mean()
        low, high = ratio_interval(centred, count, 2 * t, 3 * t)
        centre, radius = centre_and_radius(self.lower_, self.upper_)
        return centre + radius * low, centre + radius * high

    def _affine_parameters(self):
        super()._affine_parameters()  # checks that the scaler is fitted
        location = self.mean_ if self.with_mean else 0.0
        return location, (self.scale_ if self.with_std else 1.0)
