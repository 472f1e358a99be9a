"""Private min-max scaling: public bounds for free, or private bounds by SVT."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_is_fitted

from skdp.accounting import PrivacyCost
from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms import check_random_source
from skdp.preprocessing._affine import affine_map, inverse_affine_map
from skdp.stats._mean import BoundsPlan
from skdp.utils._dask import validate_rows
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._validation import validate_private_data

__all__ = ["PrivateMinMaxScaler"]


class PrivateMinMaxScaler(
    GroupsMixin,
    PrivateEstimatorMixin,
    OneToOneFeatureMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Private counterpart of :class:`~sklearn.preprocessing.MinMaxScaler`.

    Maps each feature's range to ``feature_range``. The range is public
    (``bounds=(lower, upper)``: nothing is charged) or chosen privately with
    the sparse vector technique (``bounds=None``, or ``(lower, None)`` for a
    public lower bound), as :class:`SVTClipSelector` does.

    Parameters
    ----------
    epsilon : float, default=1.0
        ε of one ``fit`` when the bounds are private; unused (and not
        charged) when they are public.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        Public ``(lower, upper)`` per feature, or None / ``(lower, None)``
        to choose them privately.
    feature_range : tuple (min, max), default=(0, 1)
        Desired range of the transformed data.
    clip : bool, default=False
        Clip transformed values to ``feature_range`` (values outside the
        private bounds are otherwise mapped outside it).
    upper_limit : float, default=1e9
        Largest plausible magnitude of a value, for private bounds.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows with ``fit(..., groups=...)``
        (required then, refused without): see Notes.
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit`` (private bounds only).
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG.

    Attributes
    ----------
    data_min_, data_max_ : ndarray of shape (`n_features_in_`,)
        The bounds used (public, or released): not the data's extremes.
    data_range_ : ndarray of shape (`n_features_in_`,)
        ``data_max_ - data_min_``.
    scale_, min_ : ndarray of shape (`n_features_in_`,)
        ``transform`` is ``X * scale_ + min_``.
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit`` (0 for public bounds).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    SVTClipSelector : The private bounds alone.

    Notes
    -----
    A data set's minimum and maximum have unbounded sensitivity: one row can
    move them anywhere. Public bounds make the scaling a fixed map that
    reveals nothing; private bounds are the release of
    :class:`SVTClipSelector` around 0 with the whole ``epsilon`` (sign test,
    then AboveThreshold over a public geometric grid; ε-DP under add/remove
    one row, see its Notes). The released bounds cover the data except
    for about ``3/(0.8 ε)`` rows per side (its threshold), so they are
    typically a little wider than the data's range, on the grid.

    **Groups.** With ``groups`` and public bounds nothing is read (free).
    Private bounds take the group-privacy route: each group keeps at most
    ``k`` rows (:func:`~skdp.utils._groups.kept_rows`), so one added group
    is at most ``k`` added rows, and the search runs as for one row at
    ``ε_r = ε / k`` (rounded down,
    :meth:`~skdp.utils._privacy_unit.PrivacyUnit.row_budget`); ``k``
    chained row neighbours give ``k ε_r <= ε`` for the group, the stated
    ``ε`` charged. The sparse vector technique's privacy is not one
    sensitivity (the threshold's noise and the queries' share it), so the
    generic route is the one that needs no new proof; for its counts it is
    the same noise as a sensitivity of ``k``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import PrivateMinMaxScaler
    >>> X = np.array([[20.0], [50.0], [80.0]])
    >>> PrivateMinMaxScaler(bounds=(0, 100)).fit_transform(X).ravel()
    array([0.2, 0.5, 0.8])
    """

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "bounds": ["array-like", tuple, None],
        "feature_range": [tuple],
        "clip": ["boolean"],
        "upper_limit": [Interval(Real, 0, None, closed="neither")],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        epsilon=1.0,
        *,
        bounds=None,
        feature_range=(0, 1),
        clip=False,
        upper_limit=1e9,
        max_rows_per_group=None,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.bounds = bounds
        self.feature_range = feature_range
        self.clip = clip
        self.upper_limit = upper_limit
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    def _fit_cost(self, n_features=None):
        private, _ = BoundsPlan.chooses_privately(self.bounds)
        return PrivacyCost(self.epsilon if private else 0.0, 0.0)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, groups=None):
        """Fix the public bounds, or release private ones.

        Parameters
        ----------
        X : array-like or Dask collection of shape (n_samples, n_features)
            Training data. A Dask array or DataFrame is read on its cluster
            (see :ref:`dask`).
        y : None
            Ignored.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit (in memory), with ``max_rows_per_group``.

        Returns
        -------
        self : PrivateMinMaxScaler
        """
        low, high = self._check_feature_range()
        X = validate_rows(self, X)
        unit = self._privacy_unit(groups, X)
        eps_rows, _ = unit.row_budget(self, self.epsilon)
        d, limit = X.shape[1], self.upper_limit
        stated = BoundsPlan.build(self.bounds, d, self.epsilon, limit).cost_items()
        with unit.planning_at_row_budget(self):  # the bounds were checked above
            plan = BoundsPlan.build(self.bounds, d, eps_rows, limit)
        source = check_random_source(self.random_state)
        self._charge([(unit.label(label), *cost) for label, *cost in stated], unit)
        if plan.svt is not None:  # public bounds read nothing
            (X,) = unit.bound(source, X)
        lower, upper = plan.run(X, source, self)
        self.data_min_, self.data_max_ = lower, upper
        # released bounds near +-1.8e308: the range overflows to inf (scale 0,
        # as in scikit-learn), post-processing that must not warn
        with np.errstate(over="ignore"):
            self.data_range_ = upper - lower
        self.scale_ = (high - low) / self.data_range_
        self.min_ = low - lower * self.scale_
        return self

    def _check_feature_range(self):
        low, high = (float(v) for v in self.feature_range)
        if not low < high:
            raise ValueError(
                f"feature_range must be (min, max) with min < max; got "
                f"{self.feature_range!r}."
            )
        return low, high

    def transform(self, X):
        """Scale by the fitted bounds (post-processing; free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_transformed : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_private_data(self, X, reset=False)
        X = inverse_affine_map(X, self.min_, self.scale_)  # X * scale_ + min_
        if self.clip:
            np.clip(X, *self.feature_range, out=X)
        return X

    def inverse_transform(self, X):
        """Undo :meth:`transform` (without the clipping).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_private_data(self, X, reset=False)
        return affine_map(X, self.min_, self.scale_)  # (X - min_) / scale_
