"""Private interquartile range: joint private quartiles or Dwork–Lei."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from skdp.accounting._composition import budget_left, equal_shares
from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms import check_random_source
from skdp.preprocessing._affine import AffineTransformMixin
from skdp.stats._iqr_dwork_lei import (  # re-exported, as before
    DEFAULT_BASE,
    DEFAULT_WIDTH,
    grid_parameters,
    iqr_bounds,
    iqr_parameters,
    iqr_release,
    iqr_statistics,
)
from skdp.stats._mean import BoundsPlan
from skdp.stats._ptr import check_ptr_noise, handle_refusals
from skdp.stats._quantile_joint import check_joint_levels
from skdp.stats._svt_clip import bounds_plan_for_unit
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._validation import check_finite_width, validate_private_data

__all__ = [
    "DEFAULT_BASE",
    "DEFAULT_WIDTH",
    "IQRScale",
    "grid_parameters",
    "iqr_bounds",
    "iqr_parameters",
    "iqr_release",
    "iqr_statistics",
]

_QUARTILES = np.array([0.25, 0.75])
_QUARTILES_LABEL = "scale quartiles (0.25, 0.75)"


class IQRScale(
    AffineTransformMixin,
    GroupsMixin,
    PrivateEstimatorMixin,
    OneToOneFeatureMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Per-feature private interquartile range; ``transform`` divides by it.

    By default (``method="joint"``) the scale is ``q75 - q25`` of each
    feature's private quartiles, released together by the joint exponential
    mechanism of :class:`PrivateQuantile` within public bounds, or within
    bounds chosen privately first; it is never refused and handles tied data
    (ties are atoms). ``method="dwork_lei"`` is Dwork and Lei's
    propose-test-release on a log scale: two public grids of bins (shifted by
    half a bin) are tested privately for the stability of the IQR's bin; the
    first stable grid releases ``IQR · base^(width·Lap(1/ε'))``; if neither
    is stable the feature is refused (⊥, NaN). It needs no bounds and is
    scale-free, but refuses on small or heavily tied columns.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total ε of one ``fit``, over all features and steps (private bounds,
        quartiles; or grids, tests and releases).
    delta : float, default=1e-6
        Total δ of one ``fit`` with ``method="dwork_lei"``, ``0 < delta < 1``.
        ``method="joint"`` is pure ε-DP and spends no δ.
    method : {"joint", "dwork_lei"}, default="joint"
        ``"joint"``: ``q75 - q25`` of the joint private quartiles.
        ``"dwork_lei"``: propose-test-release on a public log grid.
    bounds : tuple of (float or array-like, float or array-like) or None, \
            default=None
        Public ``(lower, upper)`` clipping bounds, scalars or per feature.
        With ``method="joint"``, ``None`` chooses them privately (spending
        ``bounds_share`` of ``epsilon``, as :class:`PrivateMean` does) and
        ``(lower, None)`` chooses only the upper bounds above a public
        ``lower``. With ``method="dwork_lei"``, ``None`` means an unbounded
        domain: nothing is clipped and the instability distance is computed
        with ``±inf`` padding (adding a point far away is always possible).
    bounds_share : float, default=0.3
        Share of ``epsilon`` spent on private bounds (``method="joint"``
        without public bounds only), in (0, 1).
    upper_limit : float, default=1e9
        Largest plausible magnitude of a value, for private bounds.
    base : float or None, default=None
        Base of the logarithmic grid (``> 1``) of ``method="dwork_lei"``;
        ``None`` means 2.
    width : float or None, default=None
        Bin width in units of ``log_base`` (``method="dwork_lei"``); ``None``
        means 1/8 (bins a factor ``2**0.125``, about 9%, wide with the
        default base). Must be public.
    on_refuse : {"nan", "raise"}, default="nan"
        On a refusal (``method="dwork_lei"`` only; the joint method never
        refuses): set the scale to NaN and warn
        (:class:`~skdp.stats._ptr.PTRRefusedWarning`), or raise
        :class:`~skdp.stats._ptr.PTRRefusedError`. The budget is
        spent either way.
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
    scale_ : ndarray of shape (`n_features_in_`,)
        The private IQRs (positive); NaN where refused. With
        ``method="joint"``, 1 where the released quartiles are equal (as
        scikit-learn does for a zero range).
    refused_ : ndarray of bool of shape (`n_features_in_`,)
        Whether both grids refused the feature (``method="dwork_lei"``);
        all False with ``method="joint"``, which never refuses.
    lower_, upper_ : ndarray of shape (`n_features_in_`,)
        The clipping bounds: given, chosen privately (``method="joint"``),
        or ``±inf`` (``method="dwork_lei"`` without bounds).
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit``: ``(epsilon, 0)`` with ``method="joint"``,
        ``(epsilon, delta)`` with ``method="dwork_lei"``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    PrivateRobustScaler : Private median and IQR (the same joint quartiles).
    PrivateQuantile : Private quantiles, the joint release.
    PTRMedian : Private median by propose-test-release.

    Notes
    -----
    **Statistic.** ``IQR = x_(r3) - x_(r1)``, ``r1 = ceil(n/4)``,
    ``r3 = ceil(3n/4)``, of the clipped data (0 for one row).

    **Joint quartiles** (``method="joint"``, the default). With
    ``ε_s = ε`` for public bounds, each feature's 0.25 and 0.75 quantiles
    are released together by the joint exponential mechanism of
    :class:`PrivateQuantile` (``method="joint"``: ordered rank states on a
    public grid of the bounds, gap utility of sensitivity 2 under add/remove
    one row, ties as atoms) with ``ε_s / d`` per feature, exactly as
    :class:`PrivateRobustScaler` releases its scales; basic composition over
    the ``d`` features gives pure ε_s-DP, and ``scale_ = q75 - q25`` (1 where
    the two are equal, the largest double where the difference overflows) is
    post-processing. **Private bounds.** Without public
    bounds, ``ε_b = bounds_share·ε`` is spent first on the sparse-vector
    bounds search of :class:`PrivateMean` (a Laplace sign test around 0,
    skipped for ``bounds=(lower, None)``, then AboveThreshold over a public
    geometric grid up to ``upper_limit``), and the quartiles get ``ε_s = ε -
    ε_b`` within the released bounds. The quartile release is ε_s-DP for
    every fixed value of the bounds, so by sequential composition the fit is
    ε-DP under add/remove-one-row neighbours, with δ = 0 (``delta`` is not
    spent). Ledger entries: the bounds search ("bounds sign test (Laplace
    counts)", "bounds (SVT)", or "upper bounds (SVT)"), then "scale
    quartiles (0.25, 0.75)". The split is public; 0.3 is the default of the
    library's other private bounds. The resolution of the quartiles is the
    joint grid's step: ``(U - L)/2**11`` to ``/2**12`` far from 0 and at most
    0.4 % of the value near it at ε < 2, finer as ε grows (see
    :class:`~skdp.PrivateQuantile`), so bounds far wider than the data coarsen
    it only away from 0. Measured on Adult's ``age`` (IQR 20, 32,561 tied
    integers) without bounds, 30 fits: no refusal and a median
    ``|log(scale/IQR)|`` of 0.0 at ε = 1, where the Dwork–Lei method refused 20
    of 30 fits and was off by ``e^0.30`` when it answered
    (``benchmarks/bench_iqr_scale.py``).

    **Dwork–Lei privacy** (``method="dwork_lei"``). (ε, δ)-DP under
    add/remove-one-row neighbours; in fact (ε, δ/2). For grid ``j`` (bins
    ``[base^(o_j + s·w), base^(o_j + (s+1)·w))``, ``o_0 = 0``, ``o_1 =
    w/2``), ``A_j(x)`` is the least number of added/removed rows after which
    the IQR leaves its bin (0 if the IQR is 0)
    (:func:`skdp.sensitivity.iqr_instability_distance`;
    ALGORITHMS_ADDREMOVE.md §3, brute-force checked). ``A_j`` has global
    sensitivity 1, and neighbours whose IQRs lie in different bins both have
    ``A_j <= 1`` (§3.3). Per grid: refuse if ``A_j + Lap(1/ε') <= 1 +
    ln(1/δ')/ε'``, else release ``log_base(IQR) + Lap(w/ε')`` (mapped back by
    ``base^·``). Same-bin neighbours: the log-IQRs differ by less than ``w``,
    so test and release are ε'-DP each; different bins: passing has
    probability at most ``½ exp(-ln(1/δ')) = δ'/2``. Each grid is
    ``(2ε', δ'/2)``-DP, the two grids ``(4ε', δ')`` (the first non-⊥ output
    is post-processing), and the ``d`` features ``(4dε', dδ')``. skdp sets
    ``ε' = ε/(4d)`` (rounded down, each half's ``2d ε'`` within it exactly)
    and ``δ' = δ/(2d)``: total (ε, δ/2), with the whole δ
    charged (the standard threshold leaves a factor-2 slack). The "1 +" and
    the ``/ε'`` are both needed: without ``/ε'`` (a common misreading) the
    refusal fails with probability ``½ δ'^ε'``, far above δ' for ε' < 1
    (ALGORITHMS.md §3.3, §9). Ledger entries "stability tests" (ε/2, δ) and
    "scale releases" (ε/2, 0).

    **Dwork–Lei default grid (public, data-independent).** Dwork and Lei
    choose the bin width ``ln(1 + 1/ln n)`` from ``n``, but under add/remove
    ``n`` is private, so skdp uses a fixed public default: base 2, width
    1/8. The trade-off: the release error is a factor ``base^(w·Lap(1/ε'))``,
    so a finer grid is more accurate once it passes; but the IQR must stay in
    its bin for about ``1 + ln(2d/δ)/ε'`` changes, and a finer bin is left
    after fewer changes, so a finer grid needs more rows. Measured on normal
    data, one feature, δ = 1e-6: at ε = 1 width 1/8 passes from about 3·10^3
    rows with a median relative error of about 27%, against about 60% for
    width 1/4 and 100% for width 1; at ε = 0.1 it needs about 2·10^4 rows
    and the release noise dominates (``Lap(5)`` in log2 units). Width 1/8
    (in log2) is close to Dwork–Lei's ``ln(1 + 1/ln n)`` (natural log) for
    ``n ≈ 10^5``. ``width`` and ``base`` are parameters; choose them from
    public knowledge, never from the data. Ties make the IQR's bin unstable
    (a few rows moved across a tied quartile change it by a whole step),
    which is why this method refuses on integer columns such as ages.

    **Dwork–Lei cap.** ``A_j`` is computed as ``min(A_j, K)``, ``K = ceil(T +
    ln(1/β)/ε')``, ``β = 1e-9``, from windows of about ``3K/2`` order
    statistics around each quartile (selection, ``O(n + K log K)``);
    ``min(A_j, K) >= 2`` iff ``A_j >= 2``, so privacy is unchanged.

    **Groups (user-level privacy).** With ``groups`` and
    ``max_rows_per_group = k``, neighbours add or remove one whole group,
    which first keeps at most ``k`` rows by a rule on its own rows only
    (:func:`~skdp.utils._groups.kept_rows`). Both methods then run their
    row-level mechanisms at the row budget ``(ε_r, δ_r)``, the largest with
    ``k ε_r <= ε`` and ``δ_r Σ_{i<k} e^{i ε_r} <= δ``
    (:func:`~skdp.accounting._group_privacy.row_budget_for_groups`), which
    is ``(ε, δ)``-DP for datasets ``k`` rows apart (group privacy, Dwork and
    Roth, 2014, Thm. 2.2). For the joint quartiles (and their bounds
    search) this is the same law as the gap utility's group sensitivity
    ``2k`` at ε (:class:`PrivateQuantile`, Notes); Dwork–Lei's guarantee is
    not a plain sensitivity (its δ is a test passed on an unstable dataset),
    so it takes this generic route (its ``ε'`` is each charged half divided
    by ``2dk``, rounded down). The ledger charges the stated (ε, δ).

    **Noise.** The joint quartiles are exact samples of the exponential
    mechanism over grid states (no floating-point noise). Dwork–Lei: exact
    discrete Laplace on a power-of-two grid for the tests and for
    ``log_base(IQR)/w`` (:func:`skdp.mechanisms.laplace_mechanism`); the
    logarithm and the final ``base ** (w·y)`` are floating-point
    (post-processing of the exact release, but the log of the data is rounded
    before the release).

    **Public facts.** Non-empty data (validation rejects an empty ``X`` before
    charging) and the number of features.

    **transform** divides by ``scale_``. A refused feature (Dwork–Lei) has
    scale NaN, so its transformed column is NaN (downstream estimators then
    reject it loudly); use ``on_refuse="raise"`` to stop at ``fit`` instead.

    References
    ----------
    .. [1] C. Dwork and J. Lei, "Differential privacy and robust statistics",
       STOC 2009.
    .. [2] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
       Privacy", 2014, §7.1.
    .. [3] H. Kaplan, S. Schnapp and U. Stemmer, "Differentially Private
       Approximate Quantiles", ICML 2022 (the joint release of several
       quantiles).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant
    >>> from skdp.stats._iqr import IQRScale
    >>> X = np.random.default_rng(0).normal(0, 10, size=(100_000, 1))
    >>> acc = BudgetAccountant(epsilon=2.0, delta=1e-6)
    >>> iqr = IQRScale(1.0, bounds=(-100, 100), accountant=acc,
    ...                random_state=0).fit(X)
    >>> bool(13 < iqr.scale_[0] < 14)  # the IQR is 13.5
    True
    >>> acc.total()
    (1.0, 0.0)
    >>> dl = IQRScale(1.0, 1e-6, method="dwork_lei", bounds=(-100, 100),
    ...               accountant=acc, random_state=0).fit(X)
    >>> dl.refused_
    array([False])
    >>> acc.total()
    (2.0, 1e-06)
    """

    _location_attribute = None
    _scale_attribute = "scale_"

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "method": [StrOptions({"joint", "dwork_lei"})],
        "bounds": ["array-like", tuple, None],
        "bounds_share": [Interval(Real, 0, 1, closed="neither")],
        "upper_limit": [Interval(Real, 0, None, closed="neither")],
        "base": [Interval(Real, 1, None, closed="neither"), None],
        "width": [Interval(Real, 0, None, closed="neither"), None],
        "on_refuse": [StrOptions({"nan", "raise"})],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        epsilon=1.0,
        delta=1e-6,
        *,
        method="joint",
        bounds=None,
        bounds_share=0.3,
        upper_limit=1e9,
        base=None,
        width=None,
        on_refuse="nan",
        max_rows_per_group=None,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.method = method
        self.bounds = bounds
        self.bounds_share = bounds_share
        self.upper_limit = upper_limit
        self.base = base
        self.width = width
        self.on_refuse = on_refuse
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    def _dwork_lei_items(self):
        """The two parts Dwork–Lei charges: the tests (with δ), the scales."""
        half = equal_shares(self.epsilon, 2)  # ε/2 twice may read above ε
        return [("stability tests", half, self.delta), ("scale releases", half, 0.0)]

    def _fit_cost(self, n_features=None):
        if self.method == "dwork_lei":  # its parts, as fit charges them
            return self._cost_of_items(self._dwork_lei_items())
        # the joint method's ledger items do not depend on the number of
        # features; without it, validate against the number the bounds state
        if n_features is None:
            n_features = features_stated_by(self.bounds)
        return self._cost_of_items(self._joint_plan(n_features)[1])

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, groups=None):
        """Release each feature's private IQR.

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
        self : IQRScale

        Raises
        ------
        PTRRefusedError
            If ``method="dwork_lei"``, ``on_refuse="raise"`` and a feature
            was refused (after charging the budget).
        """
        X = validate_private_data(self, X)
        unit = self._privacy_unit(groups, X)
        if self.method == "joint":
            return self._fit_joint(X, unit)
        return self._fit_dwork_lei(X, unit)

    def _joint_plan(self, n_features):
        """The bounds plan and the ledger items; raises before any charge."""
        bounds_plan = BoundsPlan.from_estimator(self, n_features)
        if bounds_plan.svt is None:  # public bounds
            check_finite_width(bounds_plan.lower, bounds_plan.upper, "IQRScale")
            check_joint_levels(_QUARTILES, bounds_plan.lower, bounds_plan.upper)
        epsilon_scale = budget_left(self.epsilon, bounds_plan.epsilon)
        items = [*bounds_plan.cost_items(), (_QUARTILES_LABEL, epsilon_scale, 0.0)]
        return bounds_plan, items

    def _fit_joint(self, X, unit):
        # PrivateRobustScaler's default scales, the same path; imported here
        # because that module imports this one
        from skdp.preprocessing._robust import quartile_scales

        n_features = X.shape[1]
        bounds_plan, items = self._joint_plan(n_features)
        run_bounds = bounds_plan_for_unit(bounds_plan, unit, n_features)
        epsilon_each = equal_shares(unit.row_budget(self, items[-1][1])[0], n_features)
        source = check_random_source(self.random_state)
        self._charge([(unit.label(lab), *c) for lab, *c in items], unit=unit)
        (X,) = unit.bound(source, X)

        lower, upper = run_bounds.run(X, source)
        with np.errstate(all="ignore"):  # after the charge nothing may warn
            scales = quartile_scales(X, lower, upper, epsilon_each, source)
        # post-processing: two finite quartiles can be more than the largest
        # double apart (private bounds near ±upper_limit = 1.79e308)
        self.scale_ = np.minimum(scales, np.finfo(np.float64).max)
        self.refused_ = np.zeros(n_features, dtype=bool)
        self.lower_, self.upper_ = lower, upper
        return self

    def _fit_dwork_lei(self, X, unit):
        n_features = X.shape[1]
        bounds = iqr_bounds(self.bounds, n_features)
        base, width = grid_parameters(self.base, self.width)
        with unit.planning_at_row_budget(self):
            _, delta_r = unit.row_budget(self, self.epsilon, self.delta)
            eps_grid, threshold, cap = iqr_parameters(
                self.epsilon, delta_r, n_features, unit.unit_rows
            )
        sizes = [*range(1, n_features + 1), 2 * n_features]  # releases, tests
        check_ptr_noise("IQRScale", eps_grid, sizes)
        source = check_random_source(self.random_state)
        items = self._dwork_lei_items()
        self._charge([(unit.label(lab), *c) for lab, *c in items], unit=unit)
        (X,) = unit.bound(source, X)

        iqrs, distances = iqr_statistics(X, bounds, base, width, cap)
        scales, self.refused_ = iqr_release(
            iqrs, distances, eps_grid, threshold, base, width, random_state=source
        )
        # post-processing: an IQR of clipped data is at most upper - lower
        self.scale_ = np.minimum(scales, bounds[1] - bounds[0])
        self.lower_, self.upper_ = bounds
        handle_refusals(
            self.refused_,
            self.on_refuse,
            "IQR",
            getattr(self, "feature_names_in_", None),
        )
        return self


def features_stated_by(bounds):
    """How many features per-feature ``bounds`` state (1 for scalars or None)."""
    if not isinstance(bounds, tuple | list) or len(bounds) != 2:
        return 1
    return max((np.size(side) for side in bounds if side is not None), default=1)
