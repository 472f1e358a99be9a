"""Clipping to public or privately chosen bounds, and row-norm clipping."""

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
from sklearn.utils.validation import check_is_fitted

from skdp.accounting import PrivacyCost
from skdp.accounting._composition import equal_shares
from skdp.base import PrivateEstimatorMixin
from skdp.exceptions import NoiseDominatedWarning
from skdp.mechanisms import check_random_source
from skdp.stats._mean import BoundsPlan
from skdp.stats._quantile_joint import check_joint_levels, joint_release
from skdp.stats._svt_clip import SVTClipSelector
from skdp.utils._dask import is_dask_collection, transform_rows, validate_rows
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._validation import check_bounds, validate_private_data
from skdp.utils._warnings import warn_at_caller

__all__ = ["DPClipper"]


class DPClipper(
    GroupsMixin,
    PrivateEstimatorMixin,
    OneToOneFeatureMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Clip each feature to bounds that are public or chosen privately.

    Clipping to bounds fixed independently of any one row is what gives sums
    and means a finite sensitivity. With public ``bounds`` nothing is learnt
    from the data and fitting is free. Without them the bounds are chosen
    privately (``method``) and the choice is charged; skdp never reads bounds
    from the data. Rows can also be clipped to a maximum L2 norm, for vector
    mechanisms downstream.

    Parameters
    ----------
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        Public ``(lower, upper)`` bounds, scalars or arrays of shape
        (n_features,); they must not be derived from the sensitive data.
        ``None`` chooses them with ``method``.
    method : {"svt", "quantile"} or None, default="svt"
        How bounds are chosen when ``bounds`` is None: "svt" with
        :class:`SVTClipSelector` (AboveThreshold over a geometric grid up to
        ``upper_limit``); "quantile" with :class:`PrivateQuantile` at the
        public levels ``quantiles`` over the domain ``[-upper_limit,
        upper_limit]``; ``None`` clips no feature (only rows, with ``norm``).
    epsilon : float, default=1.0
        Total ε of one ``fit`` when bounds are chosen privately.
    upper_limit : float, default=1e9
        The largest plausible magnitude of a value (public).
    quantiles : tuple of (float, float), default=(0.01, 0.99)
        Public quantile levels of the bounds for ``method="quantile"``.
    norm : {"l2"} or None, default=None
        Also scale each row down to L2 norm at most ``max_norm`` (after the
        feature clipping). Public and free.
    max_norm : float or None, default=None
        The L2 radius for ``norm="l2"``.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows with ``fit(..., groups=...)``
        (required then, refused without): see Notes.
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit``; ``None`` uses the default accountant at fit time.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG; an int gives
        reproducible (not secret) noise for tests and examples.

    Attributes
    ----------
    lower_, upper_ : ndarray of shape (`n_features_in_`,)
        Bounds per feature (±inf for ``method=None``).
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit``: 0 with public bounds or ``method=None``,
        otherwise ``epsilon`` and 0.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    SVTClipSelector : The sparse-vector bound selection.
    PrivateQuantile : Private quantiles, used by ``method="quantile"``.

    Notes
    -----
    **Privacy.** Public bounds and row-norm clipping release nothing about the
    data: the fit is 0-DP. Private bounds are ε-DP under add/remove-one-row
    neighbours, with the guarantee and budget split of the selector used
    (see :class:`SVTClipSelector` and :class:`PrivateQuantile`). ``transform``
    is post-processing of the released bounds and of the row itself.

    **Groups.** With ``groups``, public bounds and ``method=None`` still
    read nothing (free). Private bounds take the group-privacy route: each
    group keeps at most ``k`` rows (:func:`~skdp.utils._groups.kept_rows`),
    so one added group is at most ``k`` added rows, and the search runs as
    for one row at ``ε_r = ε / k`` (rounded down,
    :meth:`~skdp.utils._privacy_unit.PrivacyUnit.row_budget`); ``k``
    chained row neighbours give ``k ε_r <= ε`` for the group, and the
    stated ``ε`` is charged under this estimator's name. Neither the
    sparse vector technique nor the joint exponential mechanism is one
    sensitivity times noise, so the generic route needs no new proof; for
    their counts and gap utilities it is the same noise as ``k`` times the
    row's sensitivity at ``ε``. The search is the one of
    :class:`SVTClipSelector` (its default parameters) or of
    :class:`PrivateQuantile` (``method="joint"``, ``ε_r / d`` per feature).

    Row clipping maps a row x to ``x * min(1, max_norm / ||x||_2)``, so every
    row has L2 norm at most ``max_norm``: the L2 sensitivity of a sum of
    clipped rows under add/remove is ``max_norm``. This holds for the floats
    returned, at every magnitude (huge rows, subnormal ``max_norm``): a
    clipped row is scaled to a relative margin of ``(n_features + 8) 2**-53``
    under ``max_norm`` and rounded toward zero (see ``clip_row_norms``).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import DPClipper
    >>> X = np.array([[-5.0, 0.5], [2.0, 30.0]])
    >>> DPClipper(bounds=(0.0, [1.0, 10.0])).fit_transform(X)
    array([[ 0. ,  0.5],
           [ 1. , 10. ]])
    >>> DPClipper(method=None, norm="l2", max_norm=1.0).fit_transform([[3.0, 4.0]])
    array([[0.6, 0.8]])
    """

    _parameter_constraints = {
        "bounds": ["array-like", tuple, None],
        "method": [StrOptions({"svt", "quantile"}), None],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "upper_limit": [Interval(Real, 0, None, closed="neither")],
        "quantiles": [tuple, list],
        "norm": [StrOptions({"l2"}), None],
        "max_norm": [Interval(Real, 0, None, closed="neither"), None],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        bounds=None,
        *,
        method="svt",
        epsilon=1.0,
        upper_limit=1e9,
        quantiles=(0.01, 0.99),
        norm=None,
        max_norm=None,
        max_rows_per_group=None,
        accountant=None,
        random_state=None,
    ):
        self.bounds = bounds
        self.method = method
        self.epsilon = epsilon
        self.upper_limit = upper_limit
        self.quantiles = quantiles
        self.norm = norm
        self.max_norm = max_norm
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, groups=None):
        """Set the bounds: public, or chosen privately (and charged).

        Parameters
        ----------
        X : array-like or Dask collection of shape (n_samples, n_features)
            Training data. A Dask array or DataFrame is read on its cluster
            for ``method="svt"`` and not read at all with public bounds (see
            :ref:`dask`); ``method="quantile"`` needs data in memory.
        y : None
            Ignored.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit (in memory), with ``max_rows_per_group``.

        Returns
        -------
        self : DPClipper
        """
        data = X
        X = validate_rows(self, X)
        unit = self._privacy_unit(groups, X)
        n_features = X.shape[1]
        if (self.norm is None) != (self.max_norm is None):
            raise ValueError("norm='l2' and max_norm must be given together.")
        quantile = self.bounds is None and self.method == "quantile"
        if quantile and is_dask_collection(data):
            raise ValueError(
                "DPClipper(method='quantile') does not take Dask input yet; use "
                "method='svt' or compute X into memory. Nothing was charged."
            )
        if self.bounds is not None:
            self.lower_, self.upper_ = check_bounds(self.bounds, n_features)
            self._charge([], unit)
        elif self.method is None:
            self.lower_ = np.full(n_features, -np.inf)
            self.upper_ = np.full(n_features, np.inf)
            self._charge([], unit)
        elif unit.groups is not None:
            self._fit_for_groups(X, unit)
        elif self.method == "svt":
            # a Dask input goes to the selector as it is (it validates it again)
            self._fit_svt(data if is_dask_collection(data) else X)
        else:
            self._fit_quantile(X)
        return self

    def _fit_cost(self, n_features=None):
        if self.bounds is not None or self.method is None:
            return PrivacyCost(0.0)
        return PrivacyCost(self.epsilon)

    def _fit_svt(self, X):
        selector = SVTClipSelector(
            self.epsilon,
            upper_limit=self.upper_limit,
            accountant=self._resolve_accountant(),
            random_state=self.random_state,
        )
        selector._warn_as = self  # its warnings name this step and its columns
        self._adopt_bounds(selector.fit(X), selector.lower_, selector.upper_)

    def _fit_for_groups(self, X, unit):
        """The private bounds of ``method`` for a group of at most ``k``
        rows: as for one row at ``unit.row_budget`` (Notes, Groups)."""
        d, limit = X.shape[1], self.upper_limit
        eps_rows, _ = unit.row_budget(self, self.epsilon)
        if self.method == "svt":  # SVTClipSelector's defaults
            with unit.planning_at_row_budget(self):
                plan = BoundsPlan.build(None, d, eps_rows, limit)
            items = BoundsPlan.build(None, d, self.epsilon, limit).cost_items()
        else:
            levels = self._quantile_levels()
            check_joint_levels(levels, [-limit], [limit])
            items = [(f"quantiles {levels} of {d} feature(s), jointly", self.epsilon)]
        source = check_random_source(self.random_state)
        self._charge([(unit.label(label), *cost) for label, *cost in items], unit)
        (X,) = unit.bound(source, X)
        if self.method == "svt":
            self.lower_, self.upper_ = plan.run(X, source, self)
            return
        eps_each = equal_shares(eps_rows, d)
        with np.errstate(all="ignore"):  # after the charge nothing may warn
            released = np.column_stack(
                [
                    joint_release(X[:, j], -limit, limit, levels, eps_each, source)
                    for j in range(d)
                ]
            )
        self.lower_, self.upper_ = released[0], np.maximum(released[1], released[0])
        self._warn_if_at_the_limits()

    def _quantile_levels(self):
        levels = tuple(float(q) for q in self.quantiles)
        if len(levels) != 2 or not 0 <= levels[0] < levels[1] <= 1:
            raise ValueError(
                "quantiles must be two increasing levels in [0, 1] for the "
                f"lower and upper bounds; got {self.quantiles!r}."
            )
        return levels

    def _fit_quantile(self, X):
        from skdp.stats._quantile import PrivateQuantile

        levels = self._quantile_levels()
        quantile = PrivateQuantile(
            levels,
            epsilon=self.epsilon,
            bounds=(-self.upper_limit, self.upper_limit),
            # the joint release's relative grid resolves every magnitude
            # (2**-8 relative, finer as ε grows); the uniform grid of
            # method="exponential" put a 1e-3-scale column in one cell of
            # [-1e9, 1e9], 30 ranks off at any ε
            method="joint",
            accountant=self._resolve_accountant(),
            random_state=self.random_state,
        ).fit(X)
        lower, upper = quantile.quantiles_
        self._adopt_bounds(quantile, lower, np.maximum(upper, lower))
        self._warn_if_at_the_limits()

    def _warn_if_at_the_limits(self):
        """Say so when a released bound lies in the outer half of the domain.

        The bounds are released values (public now): for data of ordinary
        magnitude a bound beyond ``upper_limit / 2`` means the quantile
        release was dominated by noise.
        """
        far = np.maximum(np.abs(self.lower_), np.abs(self.upper_))
        columns = np.flatnonzero(far > self.upper_limit / 2)
        if columns.size:
            warn_at_caller(
                f"DPClipper: the private bounds of feature(s) "
                f"{columns.tolist()} lie beyond half of upper_limit="
                f"{self.upper_limit:g} (e.g. {self.lower_[columns[0]]:.3g}, "
                f"{self.upper_[columns[0]]:.3g}): the quantile release was "
                "dominated by noise. Raise epsilon, lower upper_limit to a "
                "plausible magnitude, or use method='svt'.",
                NoiseDominatedWarning,
            )

    def _adopt_bounds(self, selector, lower, upper):
        """Take the bounds and the cost from the estimator that chose them."""
        self.lower_, self.upper_ = lower, upper
        self.epsilon_spent_ = selector.epsilon_spent_
        self.delta_spent_ = selector.delta_spent_

    def transform(self, X):
        """Clip every feature to ``[lower_, upper_]``, then rows to ``max_norm``.

        Parameters
        ----------
        X : array-like or Dask collection of shape (n_samples, n_features)

        Returns
        -------
        X_clipped : ndarray or Dask array of shape (n_samples, n_features)
            A lazy Dask array for a Dask input (see :ref:`dask`).
        """
        check_is_fitted(self)
        max_norm = self.max_norm if self.norm == "l2" else None
        if is_dask_collection(X):
            return transform_rows(
                self, X, clip_features, self.lower_, self.upper_, max_norm
            )
        X = validate_private_data(self, X, reset=False)
        return clip_features(X, self.lower_, self.upper_, max_norm)


def clip_features(X, lower, upper, max_norm=None):
    """Clip every feature to ``[lower, upper]``, then rows to ``max_norm``."""
    X = np.clip(X, lower, upper)
    return X if max_norm is None else clip_row_norms(X, max_norm)


def clip_row_norms(X, max_norm):
    """Scale each row of ``X`` down to L2 norm at most ``max_norm``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite data.
    max_norm : float
        The radius, any positive finite float (subnormals included).

    Returns
    -------
    X_clipped : ndarray of shape (n_samples, n_features)
        Rows of norm at most ``max_norm`` are returned unchanged; the others
        are scaled to a norm in ``[max_norm (1 - 2 m), max_norm]``, with
        ``m = (n_features + 8) 2**-53``.

    Notes
    -----
    **The bound holds for the floats returned**: the exact Euclidean norm of
    every output row is at most ``max_norm``, at every magnitude. Write
    ``x = x̂ 2**e`` (``e`` the exponent of the row's largest entry, so the
    largest entry of ``x̂`` is in ``[0.5, 1)``) and ``max_norm = C 2**k``
    with ``C`` in ``[1, 2)``; both scalings are exact (entries of a huge row
    that underflow err by ``2**-1075``, nothing next to ``||x̂|| >= 0.5``).

    - A row is kept when ``||x̂|| 2**(e - k) <= C (1 - m)`` in floats: the
      computed ``||x̂||`` has a relative error below ``m / 2`` (a sum of
      ``d`` squares, ``d 2**-53 / (1 - d 2**-53)``, Higham 2002 §3.1; the
      square root adds ``2**-53``) and the power-of-two scaling is exact or
      underflows to far below ``C``, so the kept row has norm at most
      ``max_norm``.
    - Otherwise the output is ``v 2**k`` rounded toward zero, with
      ``v = x̂ (C (1 - m) / ||x̂||)``: ``||v|| <= C`` (the four roundings and
      the norm's error are within the margin ``m``), and rounding toward
      zero cannot increase any entry's magnitude. Rounding to nearest could:
      for a subnormal ``max_norm`` the output entries are multiples of
      ``2**-1074``, and (1, 1) clipped to radius ``2**-1074`` would come out
      as ``(2**-1074, 2**-1074)``, of norm ``sqrt(2) max_norm``. The
      direction toward zero is exact: ``y = v 2**k`` rounded to nearest is
      stepped toward zero where ``y 2**-k`` (exact) exceeds ``|v|``.

    Before, ``x min(1, max_norm / ||x||)`` rounded the factor to a subnormal
    for a small ``max_norm`` and a huge row, up to twice its value (rows of
    norm ``2 max_norm``), and the norm of a row beyond ``1e308`` overflowed.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing._clip import clip_row_norms
    >>> clip_row_norms(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0)
    array([[0.6, 0.8],
           [0.3, 0.4]])
    """
    X = np.asarray(X, dtype=np.float64)
    margin = (X.shape[1] + 8) * 2.0**-53
    mantissa, k = math.frexp(max_norm)  # max_norm = (2 mantissa) 2**(k - 1)
    radius, k = math.ldexp(mantissa, 1) * (1.0 - margin), k - 1
    with np.errstate(all="ignore"):  # underflow and overflow are part of the rule
        largest = np.abs(X).max(axis=1, initial=0.0)
        exponents = np.frexp(largest)[1][:, None]
        scaled = np.ldexp(X, -exponents)
        norms = np.sqrt(np.einsum("ij,ij->i", scaled, scaled))[:, None]
        keep = np.ldexp(norms, exponents - k) <= radius
        v = scaled * (radius / np.where(keep, 1.0, norms))
        clipped = _toward_zero_times_power_of_two(v, k)
    return np.where(keep, X, clipped)


def _toward_zero_times_power_of_two(v, k):
    """``v 2**k`` rounded toward zero, for ``|v| <= 2`` and a finite result.

    ``v 2**k`` is exact unless it is subnormal; then it is rounded to
    nearest, and scaling back by ``2**-k`` is exact, so comparing with ``v``
    tells exactly where it was rounded up.
    """
    y = np.ldexp(v, k)
    rounded_up = np.abs(np.ldexp(y, -k)) > np.abs(v)
    return np.where(rounded_up, np.nextafter(y, 0.0), y)
