"""Private per-feature means: noisy clipped sum over noisy count."""

from numbers import Integral, Real
from typing import NamedTuple

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
from skdp.exceptions import NoiseDominatedWarning
from skdp.mechanisms import check_random_source
from skdp.preprocessing._affine import AffineTransformMixin
from skdp.sensitivity import centre_and_radius
from skdp.stats._mean_release import (  # some re-exported, as before
    MeanRelease,  # noqa: F401
    check_mechanism_delta,
    mean_budget_split,  # noqa: F401
    mean_from_release,
    mean_statistic,
    plan_mean_release,
    ratio_interval,
    release_count_and_sums,
)
from skdp.stats._svt_clip import (
    feature_list,
    plan_svt_bounds,
    search_svt_bounds,
    warn_if_bounds_useless,
)
from skdp.utils._dask import row_statistic, validate_rows
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._sample_weight import check_row_weights
from skdp.utils._validation import check_bounds
from skdp.utils._warnings import warn_at_caller

__all__ = ["PrivateMean", "noise_dominated", "warn_if_noise_dominated"]


def noise_dominated(noise_std, signal):
    """Features whose release's noise standard deviation is at least its
    signal: ``~(noise_std < signal)`` (True where either is NaN or inf).

    A function of public noise levels and released values only."""
    with np.errstate(invalid="ignore"):
        return ~(np.asarray(noise_std, float) < np.asarray(signal, float))


def warn_if_noise_dominated(estimator, noise_std, signal, what):
    """Warn (:class:`~skdp.exceptions.NoiseDominatedWarning`) naming the
    features where ``noise_std >= signal``; ``what`` names both
    (post-processing: the caller passes released values and public noise
    levels only)."""
    columns = np.flatnonzero(noise_dominated(noise_std, signal))
    if columns.size == 0:
        return
    warn_at_caller(
        f"{type(estimator).__name__}: for feature(s) "
        f"{feature_list(estimator, columns)}, {what} "
        f"(e.g. {np.ravel(noise_std)[columns[0]]:.3g} against "
        f"{np.ravel(signal)[columns[0]]:.3g}): the release is noise. Raise "
        "epsilon, state narrower public bounds, or release fewer features at "
        "once (the noise grows with their number).",
        NoiseDominatedWarning,
    )


def noisy_count_and_sums(X, lower, upper, plan, source, sample_weight=None):
    """Noisy row count (a float) and noisy centred sums, shape (n_features,).

    :func:`~skdp.stats._mean_release.release_count_and_sums` of the
    exact statistic of ``X``, in memory or a Dask input
    (:func:`~skdp.utils._dask.row_statistic`); weighted (in memory only)
    when ``sample_weight`` is given.
    """
    if sample_weight is None:
        statistic = row_statistic(X, mean_statistic, lower, upper, plan.paired)
    else:
        statistic = mean_statistic(X, lower, upper, plan.paired, sample_weight)
    return release_count_and_sums(statistic, plan, source)


def mean_noise_std(plan, count, lower, upper):
    """Public noise standard deviation of each released mean, in data units.

    ``r sqrt(v) / max(count, 1)`` with ``r = (U - L)/2`` and ``v`` the plan's
    worst-case noise variance of a centred sum and the count
    (:meth:`MeanRelease.worst_case_variance`): a function of the public plan,
    the released bounds and the released count. ``r`` is multiplied last, so
    that the result overflows only where it exceeds the largest double
    (``r sqrt(v)`` first overflowed for bounds near ``±1.8e308``).
    """
    with np.errstate(over="ignore"):
        radius = upper / 2 - lower / 2
        return radius * (np.sqrt(plan.worst_case_variance()) / max(float(count), 1.0))


class BoundsPlan(NamedTuple):
    """Public bounds, or the public plan of choosing them privately.

    Built from an estimator's ``bounds``, ``bounds_share``, ``upper_limit``
    and ``epsilon`` parameters (see :class:`PrivateMean`): ``svt`` is None
    when the bounds are public.
    """

    epsilon: float
    svt: object
    lower: object
    upper: object

    @classmethod
    def from_estimator(cls, estimator, n_features):
        """The plan of an estimator with ``bounds``, ``bounds_share``,
        ``upper_limit`` and ``epsilon`` parameters."""
        epsilon = estimator.epsilon * estimator.bounds_share
        return cls.build(estimator.bounds, n_features, epsilon, estimator.upper_limit)

    @staticmethod
    def chooses_privately(bounds):
        """``(private, public lower bound)``: whether ``bounds`` asks for a
        private search (None, or ``(lower, None)`` with a public lower)."""
        if isinstance(bounds, tuple | list) and len(bounds) == 2:
            return bounds[1] is None and bounds[0] is not None, bounds[0]
        return bounds is None, None

    @classmethod
    def build(cls, bounds, n_features, epsilon, upper_limit):
        """Public ``bounds``, or a search spending ``epsilon`` when they are
        None or ``(lower, None)``; raises before any charge when invalid."""
        private, private_lower = cls.chooses_privately(bounds)
        if not private:
            lower, upper = check_bounds(bounds, n_features)
            return cls(0.0, None, lower, upper)
        svt = plan_svt_bounds(
            n_features,
            epsilon,
            lower=private_lower,
            upper_limit=upper_limit,
            grid="geometric",
            n_above=None,
        )
        return cls(epsilon, svt, None, None)

    def cost_items(self):
        return [] if self.svt is None else self.svt.cost_items(self.epsilon)

    def run(self, X, source, estimator=None):
        """The bounds: public ones, or the SVT release (after the charge).

        With ``estimator``, a search's release is checked for useless bounds
        (:func:`~skdp.stats._svt_clip.warn_if_bounds_useless`, from
        the release and the public plan only) and the warning names it.
        """
        if self.svt is None:
            return self.lower, self.upper
        release = search_svt_bounds(X, self.svt, source)
        if estimator is not None:
            warn_if_bounds_useless(estimator, release, self.svt)
        return release.lower, release.upper


class PrivateMean(
    AffineTransformMixin,
    GroupsMixin,
    PrivateEstimatorMixin,
    OneToOneFeatureMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Per-feature mean under differential privacy, from public bounds.

    Each feature is clipped to public bounds; the mean is a noisy clipped sum
    divided by a noisy row count (the count is private too: under add/remove
    neighbours the number of rows is not public). ``transform`` subtracts the
    private means; ``inverse_transform`` adds them back.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total ε of one ``fit``, over all features.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        Public ``(lower, upper)`` bounds, scalars or per-feature arrays. They
        must not be derived from the sensitive data. ``None`` chooses both
        privately with the sparse vector technique (:class:`SVTClipSelector`
        around 0, grid up to ``upper_limit``), spending ``bounds_share`` of
        ``epsilon``; ``(lower, None)`` takes the lower bound as public (e.g.
        0 for non-negative data) and chooses only the upper one, which
        wastes no budget on a known side.
    bounds_share : float, default=0.3
        Share of ``epsilon`` spent on choosing the bounds when ``bounds`` is
        None (public; see Notes).
    upper_limit : float, default=1e9
        The largest plausible magnitude of a value (public), for
        ``bounds=None``.
    mechanism : {"laplace", "gaussian"}, default="laplace"
        Noise for the count and the sums: Laplace gives ε-DP; the Gaussian
        (analytic calibration) gives (ε, δ)-DP and needs ``delta > 0``.
    delta : float, default=0.0
        Total δ of one ``fit`` (Gaussian only).
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
    mean_ : ndarray of shape (`n_features_in_`,)
        The private means, within the bounds.
    lower_, upper_ : ndarray of shape (`n_features_in_`,)
        The bounds per feature: given, or chosen privately.
    count_ : float
        The private row count that the means were divided by, before the
        rule ``max(count, 1)``: part of the same release (post-processing,
        no extra cost). Noisy: fractional, and possibly below 1. With
        ``sample_weight``, the weighted count.
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit`` (equal to ``epsilon`` and ``delta``).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    DPClipper : Clip features to public bounds.

    Notes
    -----
    **Privacy.** (ε, δ)-DP under add/remove-one-row neighbours. With
    ``c = (L + U)/2`` and ``r = (U - L)/2`` per feature, the mean needs the
    row count n and the d sums ``S_j = sum_i (clip(x_ij, L_j, U_j) - c_j) /
    r_j``, each term in [-1, 1]. Centring at the public midpoint gives the
    data-unit sensitivity ``(U - L)/2``, never more than the uncentred
    ``max(|L|, |U|)``. They are released in one of two ways, chosen from d,
    ε, δ and the mechanism only (``plan_mean_release``):

    * **Paired** (few features): the 2d split sums ``u_j = sum_i (clip(x_ij)
      - L_j)/(U_j - L_j)`` and ``v_j = sum_i (U_j - clip(x_ij))/(U_j - L_j)``
      (:func:`skdp.sensitivity.exact_split_sums`), in one release with
      the whole budget. A row adds ``(a, 1 - a)``, ``a`` in [0, 1], to each
      pair, so the vector moves by exactly d in L1 norm and at most sqrt(d)
      in L2 norm (brute-forced in the tests), while ``u_j + v_j = n`` and
      ``u_j - v_j = S_j``. The count comes with the sums at no extra
      sensitivity; the estimate takes ``S_j`` from feature j's pair and n
      from the average of all d pairs (post-processing).
    * **Separate** (many features): the count (sensitivity 1) and the sum
      vector (L1 sensitivity d, L2 sqrt(d);
      :func:`skdp.sensitivity.exact_centred_sums`), two releases.

    **Exact sums.** Each row's normalised term is rounded to the public
    fixed-point grid ``2**-32`` (a per-row map, so a row still adds at most 1
    per feature) and the sums are formed in integers, exactly for any n, then
    rounded to the release grid in integer arithmetic
    (:class:`skdp.mechanisms._grid.FixedPoint`): float rounding cannot make
    neighbouring sums differ by more than the stated sensitivity
    (Casacuberta et al. 2022), and the count is exact beyond ``2**53`` rows.

    **Choice and budget split (public).** Separate: ε_count = ε / (1 + d^p)
    for the count, the rest for the sums, with p = 2/3 (Laplace) or 1/3
    (Gaussian), the split that minimises the noise of the worst-case mean
    (``|mean - c| = r``); δ is split evenly. The plan with the smaller
    worst-case variance of ``S_j`` plus that of n is used: with Laplace noise
    the paired release for d <= 5 (for one feature it halves the variance:
    noise scale 1/ε on u and v, so 4/ε² on n and on S, against 8/ε² each with
    half of ε apiece); with the Gaussian mechanism at δ = 1e-6, up to about
    50 features. The ledger shows one entry ("row count and clipped sums") or
    two ("row count", "clipped sums"); they compose to (ε, δ).

    **Private bounds.** With ``bounds=None``, ``bounds_share * epsilon`` is
    spent first on :class:`SVTClipSelector` around 0 with its defaults: a
    Laplace sign test (15% of the bound budget) decides per feature whether
    values lie on both sides of 0; a side without any is bounded at 0 and
    the rest of the bound budget searches the other side(s) with
    AboveThreshold, whose threshold noise gets 80% of each run's ε (the
    unequal Lyu–Su–Li split, which makes the chance of a bound far above the
    data decay like ``K^{-4}`` in the number K of grid steps instead of
    ``K^{-1}``). The mean is computed from the rest with the chosen bounds;
    by sequential composition the whole fit is ε-DP. The default share 0.3
    is a compromise measured in ``benchmarks/bench_private_bounds.py``.
    Declare what is public: ``bounds=(0, None)`` for non-negative data skips
    the sign test; a realistic ``upper_limit`` caps the rare runs that stop
    far above the data. For data far from 0 the interval still starts at 0
    (e.g. [0, 100] for ages 17–90); declare a public lower bound there.

    **Noise.** Laplace with scale d/ε on each split sum (paired), or
    1/ε_count on the count and d/ε_sums on each sum (separate); or Gaussian
    noise with σ from the analytic Gaussian mechanism (Balle and Wang 2018)
    for the L2 sensitivities above. All are drawn by :mod:`skdp.mechanisms`
    as exact discrete noise on a power-of-two grid.

    **Sample weights.** With ``sample_weight`` ``w_i`` in [0, 1], the count
    and the sums are ``Σ w_i`` and ``Σ w_i t_i`` (``t_i`` a row's clipped,
    normalised term). The privacy unit is the row with its weight: a
    neighbouring dataset adds or removes one ``(x, w)``, which moves every
    coordinate by ``w |t| <= |t|``, so the sensitivities and the noise are
    those of the unweighted release. Weights are truncated to the grid
    ``2**-32`` and each product ``ŵ t`` toward zero onto the sums' integer
    grid, which keeps ``|ŵ t| <= |t|`` in floats and the sums exact
    (:mod:`skdp.sensitivity._weights`); all weights 1 give the unweighted
    release bit for bit. A weight must be a property of its own row: one
    computed from other rows (normalised by their total or largest value,
    or class-balancing weights) lets one row move every weight, and the
    bound no longer holds. Weights outside [0, 1] (or NaN, infinite) are
    refused before the charge. ``count_`` is then the noisy weighted count.
    Private bounds (``bounds=None``) are searched on every row alike,
    unweighted (a clipping choice at the same sensitivity, not the
    estimate).

    **Groups (user-level privacy).** With ``groups`` and
    ``max_rows_per_group = k``, neighbours add or remove one whole group,
    which first keeps at most ``k`` rows by a rule on its own rows only
    (:func:`~skdp.utils._groups.kept_rows`). A kept group moves every
    coordinate (split sums, count, centred sums) by at most ``k``: ``k d``
    in L1 and ``k sqrt(d)`` in L2 (triangle inequality; attained by ``k``
    equal rows at a bound), so the noise is ``k`` times the row's
    (brute-forced in ``tests/test_groups_sensitivity.py``). Bounds must be
    public with groups (the bound search is stated for one row).

    **Small or negative noisy counts** (a data-independent rule): the
    denominator is ``max(noisy count, 1)``, and the mean is clipped to
    ``[L, U]`` (post-processing); the result is always finite.

    References
    ----------
    .. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
       Privacy", 2014, §3.3.
    .. [2] B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for
       differential privacy: analytical calibration and optimal denoising",
       ICML 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant
    >>> from skdp.stats import PrivateMean
    >>> X = np.random.default_rng(0).uniform(0, 10, size=(10_000, 2))
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> pm = PrivateMean(epsilon=1.0, bounds=(0, 10), accountant=acc,
    ...                  random_state=0).fit(X)
    >>> np.round(pm.mean_, 1)
    array([5., 5.])
    >>> acc.total()
    (1.0, 0.0)
    """

    _location_attribute = "mean_"
    _scale_attribute = None

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "bounds": ["array-like", tuple, None],
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
        self.bounds_share = bounds_share
        self.upper_limit = upper_limit
        self.mechanism = mechanism
        self.delta = delta
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    def _fit_cost(self, n_features=None):
        if n_features is None:  # the split depends on the number of features
            return super()._fit_cost(n_features)
        bounds_plan = BoundsPlan.from_estimator(self, n_features)
        plan = plan_mean_release(
            budget_left(self.epsilon, bounds_plan.epsilon),
            self.delta,
            n_features,
            self.mechanism,
        )
        return self._cost_of_items([*bounds_plan.cost_items(), *plan.cost_items()])

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None, groups=None):
        """Release the private mean of each feature.

        Parameters
        ----------
        X : array-like or Dask collection of shape (n_samples, n_features)
            Training data. A Dask array or DataFrame is read on its cluster
            (see :ref:`dask`).
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights in [0, 1] (in-memory data only): the weighted mean
            ``Σ w x / Σ w``, at the noise of the unweighted one (see Notes).
            Weights outside [0, 1] are refused before the charge.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit (in memory), with ``max_rows_per_group``:
            neighbours add or remove one whole group (Notes). None: one row.

        Returns
        -------
        self : PrivateMean
        """
        X = validate_rows(self, X)
        sample_weight = check_row_weights(self, sample_weight, X)
        unit = self._privacy_unit(groups, X)
        n_features = X.shape[1]
        bounds_plan = BoundsPlan.from_estimator(self, n_features)
        unit.refuse_private(
            self, "bounds", "bounds=(L, U)", bounds_plan.svt is not None
        )
        check_mechanism_delta(self.mechanism, self.delta)
        plan = plan_mean_release(
            budget_left(self.epsilon, bounds_plan.epsilon),
            self.delta,
            n_features,
            self.mechanism,
            unit_rows=unit.unit_rows,
        )
        source = check_random_source(self.random_state)
        items = [*bounds_plan.cost_items(), *plan.cost_items()]
        self._charge([(unit.label(label), *cost) for label, *cost in items], unit=unit)
        X, sample_weight = unit.bound(source, X, sample_weight)
        lower, upper = bounds_plan.run(X, source, self)

        with np.errstate(all="ignore"):  # after the charge nothing may raise
            self.count_, noisy_sums = noisy_count_and_sums(
                X, lower, upper, plan, source, sample_weight
            )
            self.mean_ = mean_from_release(self.count_, noisy_sums, lower, upper)
        self._plan, self._noisy_sums = plan, noisy_sums
        self.lower_, self.upper_ = lower, upper
        warn_if_noise_dominated(
            self,
            mean_noise_std(plan, self.count_, lower, upper),
            # (U - L) / sqrt(12) without forming U - L, which overflows
            (upper / 2 - lower / 2) / np.sqrt(3.0),
            "the noise of the mean is at least the spread of a mean drawn at "
            "random in the bounds, (upper_ - lower_) / sqrt(12)",
        )
        return self

    def confidence_interval(self, alpha=0.05):
        """An interval for each mean that holds despite the noise w.p. 1 - α.

        Post-processing of the release (free). It covers the noise only, not
        the clipping to ``[lower_, upper_]``.

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
        Every released coordinate is within a margin of its exact value
        with probability ``1 - α`` (union bound over the Laplace or Gaussian
        tails); the interval is the range of ``S / n`` over that box, mapped
        to data units.
        """
        check_is_fitted(self)
        count_margin, sum_margin = self._plan.noise_margins(alpha)
        low, high = ratio_interval(
            self._noisy_sums, self.count_, sum_margin, count_margin
        )
        centre, radius = centre_and_radius(self.lower_, self.upper_)
        return centre + radius * low, centre + radius * high
