"""Propose-test-release median under add/remove-one-row neighbours."""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from skdp.accounting._composition import equal_shares
from skdp.base import PrivateEstimatorMixin
from skdp.exceptions import PTRRefusedError, PTRRefusedWarning
from skdp.mechanisms import check_random_source, laplace_mechanism
from skdp.mechanisms._additive import additive_release_problem
from skdp.preprocessing._affine import AffineTransformMixin
from skdp.sensitivity import (
    median_distance_to_instability,
    median_rank,
    select_order_statistics,
)
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._validation import (
    check_per_feature,
    check_required_bounds,
    validate_private_data,
)
from skdp.utils._warnings import warn_at_caller

__all__ = [
    "PTRMedian",
    "PTRRefusedError",
    "PTRRefusedWarning",
    "check_ptr_cap",
    "lower_medians",
    "median_distances",
    "ptr_parameters",
    "ptr_release",
]

#: Probability ``β`` that a dataset at distance ``>= K`` from instability is
#: refused anyway; it fixes the public cap ``K`` (see :func:`ptr_parameters`).
CAP_FAILURE_PROBABILITY = 1e-9


def ptr_parameters(epsilon, delta, n_features, unit_rows=1):
    """Public per-feature constants of :class:`PTRMedian`.

    Parameters
    ----------
    epsilon : float
        Total ε of the fit, charged as two equal halves (tests, releases).
    delta : float
        δ of the tests, ``0 < delta < 1`` (for groups, the row-level ``δ_r``).
    n_features : int
        Number of features ``d``.
    unit_rows : int, default=1
        Rows ``k`` of a privacy unit: a group's cost is ``k`` times a row's.

    Returns
    -------
    eps_feature : float
        ``ε_t = ε_r = ε / (2dk)``: the test and the release of each feature,
        rounded down so that ``k d`` of them fit in each charged half
        (:func:`~skdp.accounting._composition.equal_shares`, both).
    threshold : float
        ``T = ln(d/δ) / ε_t``: a feature passes when ``D + Lap(1/ε_t) > T``.
    cap : int
        ``K = ceil(T + ln(1/β) / ε_t)`` with ``β = 1e-9``: ``D`` is computed
        as ``min(D, K)``.
    """
    half = equal_shares(epsilon, 2)
    eps_feature = equal_shares(half, unit_rows * n_features)
    threshold = math.log(n_features / delta) / eps_feature
    cap = threshold + math.log(1.0 / CAP_FAILURE_PROBABILITY) / eps_feature
    check_ptr_cap(cap, eps_feature)
    return eps_feature, threshold, max(math.ceil(cap), 1)


def check_ptr_cap(cap, eps_each):
    """Refuse (before the charge) a test whose threshold and cap ``K`` leave
    the floats: an ``ε`` per test so small that ``ln(d/δ)/ε`` overflows
    (``math.ceil`` of it raised a bare ``OverflowError``)."""
    if not math.isfinite(cap):
        raise ValueError(
            f"the epsilon of each stability test, {eps_each!r}, is too small: "
            "its threshold ln(d/delta)/epsilon overflows the floats; raise "
            "epsilon or delta, or fit fewer features. Nothing was charged."
        )


def check_ptr_noise(name, eps_each, sizes):
    """Refuse, before the charge, an ε too small for the Laplace noise of a
    PTR fit: one vector query of each size in ``sizes`` (the tests, and the
    releases of however many features pass: every size from 1 to d, since
    that count is data-dependent), each at ``size * eps_each``
    (:func:`~skdp.mechanisms._additive.additive_release_problem`)."""
    for size in sizes:
        problem = additive_release_problem(
            float(size), float(size), size * eps_each, 0.0, size
        )
        if problem is not None:
            raise ValueError(
                f"{name}: the epsilon of each test and release, {eps_each!r}, "
                f"is too small for its Laplace noise ({problem}); raise epsilon, "
                "fit fewer features, or lower max_rows_per_group. Nothing was "
                "charged."
            )


def median_distances(X, proposals, lower, upper, cap):
    """``min(D(x_j, b_j), K)`` for every column ``j`` of ``X`` (by selection)."""
    return np.array(
        [
            median_distance_to_instability(
                X[:, j], proposals[j], (lower[j], upper[j]), cap=cap
            )
            for j in range(X.shape[1])
        ],
        dtype=float,
    )


def lower_medians(X, lower, upper):
    """Order statistic of rank ``ceil(n/2)`` of every clipped column."""
    m = int(median_rank(X.shape[0]))
    medians = np.empty(X.shape[1])
    for j in range(X.shape[1]):
        _, values = select_order_statistics(X[:, j], (lower[j], upper[j]), [(m, m)])
        medians[j] = values[0]
    return medians


def ptr_release(
    distances, medians, proposals, eps_test, eps_release, threshold, *, random_state
):
    """Test each coordinate and release the ones that pass.

    Every coordinate ``i`` is one propose-test-release: it passes when
    ``distances[i] + Lap(1/eps_test) > threshold`` and then releases
    ``medians[i] + Lap(proposals[i]/eps_release)``. All test noise is one
    vector Laplace query (L1 sensitivity ``m`` for ``m`` 1-sensitive
    distances, ε ``m·eps_test``: scale ``1/eps_test`` per coordinate); the
    releases are one vector query on ``medians / proposals`` (per-coordinate
    change at most 1 when the test is meaningful), rescaled afterwards
    (post-processing of an exact grid release).

    ``random_state`` is turned into one :class:`~skdp.mechanisms.RandomSource`
    for both draws (an int seed must not restart the stream for the release).

    Returns
    -------
    released : ndarray
        The noisy medians, NaN where refused.
    refused : ndarray of bool
    """
    random_state = check_random_source(random_state)  # one stream for all draws
    distances = np.asarray(distances, dtype=float)
    size = distances.size
    noisy = laplace_mechanism(
        distances, float(size), size * eps_test, random_state=random_state
    )
    passed = np.atleast_1d(noisy) > threshold
    released = np.full(size, np.nan)
    n_pass = int(passed.sum())
    if n_pass:
        scale = np.asarray(proposals, dtype=float)[passed]
        unit = laplace_mechanism(
            np.asarray(medians, dtype=float)[passed] / scale,
            float(n_pass),
            n_pass * eps_release,
            random_state=random_state,
        )
        released[passed] = np.atleast_1d(unit) * scale
    return released, ~passed


def check_proposals(proposed_sensitivity, n_features):
    """Positive finite proposals ``b``, one per feature."""
    if proposed_sensitivity is None:
        raise ValueError(
            "PTRMedian needs a public proposed_sensitivity=b (> 0), the bound on "
            "the median's local sensitivity to test; it must not be derived from "
            "the data. Use SmoothSensitivityMedian when there is no proposal."
        )
    b = check_per_feature(proposed_sensitivity, n_features, "proposed_sensitivity")
    if not np.all(b > 0):
        raise ValueError(f"proposed_sensitivity must be positive and finite; got {b}.")
    return b


def check_release_range(lower, upper, scales, name):
    """Refuse public settings where ``value / scale`` could overflow a float."""
    with np.errstate(over="ignore"):
        worst = np.maximum(np.abs(lower), np.abs(upper)) / scales
    if not np.all(np.isfinite(worst)):
        raise ValueError(
            f"{name}: the bounds are too large for the noise scale (bound / scale "
            f"overflows); got bounds ({lower}, {upper}) and scale {scales}."
        )


def handle_refusals(refused, on_refuse, what, feature_names=None):
    """Warn about or raise on refused features (after the budget was spent)."""
    if not np.any(refused):
        return
    idx = np.flatnonzero(refused)
    names = (
        [str(feature_names[i]) for i in idx]
        if feature_names is not None
        else [int(i) for i in idx]
    )
    message = (
        f"Propose-test-release refused (⊥) the {what} of feature(s) "
        f"{names}: the data were not stable enough for the proposal. The "
        "budget is spent; the refused values are NaN."
    )
    if on_refuse == "raise":
        raise PTRRefusedError(message)
    warn_at_caller(message, PTRRefusedWarning)


class PTRMedian(
    AffineTransformMixin,
    GroupsMixin,
    PrivateEstimatorMixin,
    OneToOneFeatureMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Per-feature median by propose-test-release (PTR).

    For each feature a public proposal ``b`` for the median's local
    sensitivity is tested privately: the number of rows that would have to be
    added or removed before the median's local sensitivity exceeds ``b`` is
    released with Laplace noise; if it is not clearly large, the feature is
    refused (⊥, NaN), otherwise its lower median is released with Laplace noise
    of scale ``b/ε_r``. ``transform`` subtracts the medians.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total ε of one ``fit``, over all features, tests and releases.
    delta : float, default=1e-6
        Total δ of one ``fit``, ``0 < delta < 1``.
    bounds : tuple of (float or array-like, float or array-like)
        Public ``(lower, upper)`` bounds, scalars or per-feature arrays; the
        data are clipped to them. ``upper - lower`` must be a finite float.
    proposed_sensitivity : float or array-like of shape (n_features,)
        Public proposal ``b > 0`` per feature (or one for all). It must not be
        derived from the sensitive data (a private scale estimate, e.g.
        :class:`IQRScale`, times a public factor is fine).
    on_refuse : {"nan", "raise"}, default="nan"
        On a refusal: set the median to NaN and warn
        (:class:`PTRRefusedWarning`), or raise :class:`PTRRefusedError`. The
        budget is spent either way.
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
        The private medians, clipped to the bounds; NaN where refused.
    refused_ : ndarray of bool of shape (`n_features_in_`,)
        Whether the test refused the feature.
    lower_, upper_ : ndarray of shape (`n_features_in_`,)
        The public bounds per feature.
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit`` (equal to ``epsilon`` and ``delta``).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    SmoothSensitivityMedian : Private median without a proposal.
    IQRScale : Private interquartile range by propose-test-release.

    Notes
    -----
    **Privacy.** (ε, δ)-DP under add/remove-one-row neighbours; in fact
    (ε, δ/2). Per feature, with the lower median ``f(x) = x_(m)``,
    ``m = ceil(n/2)``, of the data clipped to ``[L, U]``:

    1. ``D = min(D(x, b), K)``, where ``D(x, b) = min{k >= 0 : A(x, k) > b}``
       is the add/remove distance to a dataset whose median has local
       sensitivity above ``b`` (:func:`skdp.sensitivity.median_distance_to_instability`;
       ALGORITHMS_ADDREMOVE.md §2.3, brute-force checked). It has global
       sensitivity 1, and ``D >= 1`` iff ``LS(x) <= b``. The ``k = 0`` term
       is included.
    2. Refuse (⊥) if ``D + Lap(1/ε_t) <= T``, ``T = ln(d/δ)/ε_t``.
    3. Otherwise release ``f(x) + Lap(b/ε_r)``.

    If ``D(x) >= 1`` or ``D(x') >= 1`` for neighbours ``x, x'``, their medians
    are within ``b`` and steps 2 and 3 are ``ε_t``- and ``ε_r``-DP. If both
    are 0, the only uncovered event is passing, with probability
    ``½ exp(-ε_t T) = δ/(2d)``. Each feature is thus
    ``(ε_t + ε_r, δ/(2d))``-DP (Dwork and Roth, 2014, §7.2; the add/remove
    version is ALGORITHMS_ADDREMOVE.md §4.1), and the ``d`` features compose
    to ``(ε, δ/2)``. The threshold is the standard ``ln(1/δ_f)/ε_t`` with
    ``δ_f = δ/d``, which leaves a factor-2 slack in δ (the exact threshold
    would be ``ln(d/(2δ))/ε_t``); the whole δ is charged. Not the
    Programming-DP threshold ``log(2/δ)/(2ε)``, which fails far more often
    than δ (ALGORITHMS.md §1.3), and not a noisy local sensitivity, which is
    not DP.

    **Budget split (public).** ``ε_t = ε_r = ε/(2d)`` for every feature;
    ledger entries "stability tests" (ε/2, δ) and "median releases" (ε/2, 0).
    Every division is rounded down, so that the ``d`` tests and the ``d``
    releases fit in their halves, and the halves in ε, exactly.

    **Groups (user-level privacy).** With ``groups`` and
    ``max_rows_per_group = k``, neighbours add or remove one whole group,
    which first keeps at most ``k`` rows by a rule on its own rows only
    (:func:`~skdp.utils._groups.kept_rows`). PTR's guarantee is not a plain
    sensitivity (its δ is the chance of passing the test on an unstable
    dataset), so it takes the generic group-privacy route: the mechanism
    above runs at the row budget ``(ε_r, δ_r)``, the largest with ``k ε_r
    <= ε`` and ``δ_r Σ_{i<k} e^{i ε_r} <= δ``
    (:func:`~skdp.accounting._group_privacy.row_budget_for_groups`), which
    is ``(ε, δ)``-DP for datasets ``k`` rows apart, hence for one kept
    group (Dwork and Roth, 2014, Thm. 2.2; Vadhan, 2017, Lemma 2.2). The
    ledger charges the stated (ε, δ); each test and release runs at its
    half divided by ``k d``, rounded down, so ``k`` rows of them fit in it.

    **Cap.** ``D`` is only computed up to the public ``K = ceil(T +
    ln(1/β)/ε_t)``, ``β = 1e-9``, from about ``K + 1`` order statistics around
    the median, found by selection in ``O(n + K log K)``: ``min(D, K)`` is
    still 1-sensitive and ``>= 1`` iff ``D >= 1``, and a dataset with
    ``D >= K`` passes with probability at least ``1 - β/2``.

    **Noise.** Exact discrete Laplace on a power-of-two grid
    (:func:`skdp.mechanisms.laplace_mechanism`); the release is computed on
    ``f(x)/b`` and rescaled (post-processing), then clipped to the bounds.
    The one floating-point caveat: ``|f(x) - f(x')| <= b`` holds for the
    computed differences of order statistics, up to one rounding.

    **Public facts.** The data are non-empty (validation rejects an empty
    ``X`` before charging), and the number of features is public; the number
    of rows is only used inside the mechanism.

    **transform** subtracts ``median_``. A refused feature has median NaN, so
    its transformed column is NaN: downstream estimators then reject it
    loudly instead of silently receiving an uncentred column. Use
    ``on_refuse="raise"`` to stop at ``fit`` instead.

    References
    ----------
    .. [1] C. Dwork and J. Lei, "Differential privacy and robust statistics",
       STOC 2009.
    .. [2] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
       Privacy", 2014, §7.2.
    .. [3] J. Near and C. Abuah, "Programming Differential Privacy", ch. 7
       (whose threshold is not used, see Notes).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant
    >>> from skdp.stats._ptr import PTRMedian
    >>> X = np.random.default_rng(0).normal(50, 10, size=(10_000, 1))
    >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    >>> ptr = PTRMedian(1.0, 1e-6, bounds=(0, 100), proposed_sensitivity=0.5,
    ...                 accountant=acc, random_state=0).fit(X)
    >>> ptr.refused_
    array([False])
    >>> bool(abs(ptr.median_[0] - 50) < 2)
    True
    >>> acc.total()
    (1.0, 1e-06)
    """

    _location_attribute = "median_"
    _scale_attribute = None

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "bounds": ["array-like", tuple, None],
        "proposed_sensitivity": [
            "array-like",
            Interval(Real, 0, None, closed="neither"),
            None,
        ],
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
        bounds=None,
        proposed_sensitivity=None,
        on_refuse="nan",
        max_rows_per_group=None,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.proposed_sensitivity = proposed_sensitivity
        self.on_refuse = on_refuse
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    def _ptr_items(self):
        """The two parts ``fit`` charges: the tests (with δ), the medians."""
        half = equal_shares(self.epsilon, 2)  # ε/2 twice may read above ε
        return [("stability tests", half, self.delta), ("median releases", half, 0.0)]

    def _fit_cost(self, n_features=None):
        return self._cost_of_items(self._ptr_items())  # its parts, as charged

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, groups=None):
        """Test each feature's stability and release its median.

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
        self : PTRMedian

        Raises
        ------
        PTRRefusedError
            If ``on_refuse="raise"`` and a feature was refused (after
            charging the budget).
        """
        X = validate_private_data(self, X)
        unit = self._privacy_unit(groups, X)
        n_features = X.shape[1]
        lower, upper = check_required_bounds(self.bounds, n_features, "PTRMedian")
        proposals = check_proposals(self.proposed_sensitivity, n_features)
        check_release_range(lower, upper, proposals, "PTRMedian")
        with unit.planning_at_row_budget(self):
            _, delta_r = unit.row_budget(self, self.epsilon, self.delta)
            eps_f, threshold, cap = ptr_parameters(
                self.epsilon, delta_r, n_features, unit.unit_rows
            )
        check_ptr_noise("PTRMedian", eps_f, range(1, n_features + 1))
        source = check_random_source(self.random_state)
        items = self._ptr_items()
        self._charge([(unit.label(lab), *c) for lab, *c in items], unit=unit)
        (X,) = unit.bound(source, X)

        distances = median_distances(X, proposals, lower, upper, cap)
        medians = lower_medians(X, lower, upper)
        released, refused = ptr_release(
            distances,
            medians,
            proposals,
            eps_f,
            eps_f,
            threshold,
            random_state=source,
        )
        self.median_ = np.clip(released, lower, upper)
        self.refused_ = refused
        self.lower_, self.upper_ = lower, upper
        handle_refusals(
            refused, self.on_refuse, "median", getattr(self, "feature_names_in_", None)
        )
        return self
