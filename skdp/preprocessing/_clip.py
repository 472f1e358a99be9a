"""Clipping to public or privately chosen bounds, and row-norm clipping."""

from numbers import Real

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
from skdp.base import PrivateEstimatorMixin
from skdp.exceptions import NoiseDominatedWarning
from skdp.preprocessing._svt_clip import SVTClipSelector
from skdp.utils._dask import is_dask_collection, transform_rows, validate_rows
from skdp.utils._validation import check_bounds, validate_private_data
from skdp.utils._warnings import warn_at_caller

__all__ = ["DPClipper"]


class DPClipper(
    PrivateEstimatorMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator
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

    Row clipping maps a row x to ``x * min(1, max_norm / ||x||_2)``, so every
    row has L2 norm at most ``max_norm``: the L2 sensitivity of a sum of
    clipped rows under add/remove is ``max_norm``.

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
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Set the bounds: public, or chosen privately (and charged).

        Parameters
        ----------
        X : array-like or Dask collection of shape (n_samples, n_features)
            Training data. A Dask array or DataFrame is read on its cluster
            for ``method="svt"`` and not read at all with public bounds (see
            :ref:`dask`); ``method="quantile"`` needs data in memory.
        y : None
            Ignored.

        Returns
        -------
        self : DPClipper
        """
        data = X
        X = validate_rows(self, X)
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
            self._charge([])
        elif self.method is None:
            self.lower_ = np.full(n_features, -np.inf)
            self.upper_ = np.full(n_features, np.inf)
            self._charge([])
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
        self._adopt_bounds(selector.fit(X), selector.lower_, selector.upper_)

    def _fit_quantile(self, X):
        from skdp.preprocessing._quantile import PrivateQuantile

        levels = tuple(float(q) for q in self.quantiles)
        if len(levels) != 2 or not 0 <= levels[0] < levels[1] <= 1:
            raise ValueError(
                "quantiles must be two increasing levels in [0, 1] for the "
                f"lower and upper bounds; got {self.quantiles!r}."
            )
        quantile = PrivateQuantile(
            levels,
            epsilon=self.epsilon,
            bounds=(-self.upper_limit, self.upper_limit),
            # a grid of 2**33 points: the joint grid (2**12 points) would be
            # far too coarse on a domain as wide as [-upper_limit, upper_limit]
            method="exponential",
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
        The radius.

    Returns
    -------
    X_clipped : ndarray of shape (n_samples, n_features)

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing._clip import clip_row_norms
    >>> clip_row_norms(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0)
    array([[0.6, 0.8],
           [0.3, 0.4]])
    """
    # Scale before squaring so that rows near the float limit do not overflow.
    peak = np.max(np.abs(X), axis=1, keepdims=True)
    safe_peak = np.where(peak > 0, peak, 1.0)
    norms = np.linalg.norm(X / safe_peak, axis=1, keepdims=True) * safe_peak
    factor = np.minimum(1.0, max_norm / np.where(norms > 0, norms, np.inf))
    return X * factor
