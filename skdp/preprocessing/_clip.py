"""Clipping to public bounds."""

import numpy as np
from sklearn.base import (
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.validation import check_is_fitted

from skdp.base import PrivateEstimatorMixin
from skdp.utils._validation import check_bounds, validate_private_data

__all__ = ["DPClipper"]


class DPClipper(
    PrivateEstimatorMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator
):
    """Clip each feature to public bounds.

    Clipping to bounds fixed before the data is seen is what gives sums and
    means a finite sensitivity. With public ``bounds`` nothing is learnt from
    the data, so fitting spends no privacy budget.

    Parameters
    ----------
    bounds : tuple of (float or array-like, float or array-like)
        ``(lower, upper)`` public bounds: scalars shared by all features, or
        arrays of shape (n_features,). They must not be derived from the
        sensitive data.
    accountant : BudgetAccountant or None, default=None
        Accountant charged by ``fit`` (``None``: the default accountant at
        fit time). Public bounds cost nothing, so nothing is charged.

    Attributes
    ----------
    lower_ : ndarray of shape (n_features_in_,)
        Lower bound per feature.
    upper_ : ndarray of shape (n_features_in_,)
        Upper bound per feature.
    epsilon_spent_ : float
        ε charged by ``fit`` (0.0).
    delta_spent_ : float
        δ charged by ``fit`` (0.0).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    Notes
    -----
    ``transform`` is post-processing of public bounds and the row itself: it
    releases nothing and costs nothing.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import DPClipper
    >>> X = np.array([[-5.0, 0.5], [2.0, 30.0]])
    >>> DPClipper(bounds=(0.0, [1.0, 10.0])).fit_transform(X)
    array([[ 0. ,  0.5],
           [ 1. , 10. ]])
    """

    _parameter_constraints = {
        "bounds": ["array-like", tuple, None],
        "accountant": [HasMethods(["spend_many"]), None],
    }

    def __init__(self, bounds=None, *, accountant=None):
        self.bounds = bounds
        self.accountant = accountant

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Record the public bounds per feature; spends nothing.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (only its shape is used).
        y : None
            Ignored.

        Returns
        -------
        self : DPClipper
        """
        X = validate_private_data(self, X)
        if self.bounds is None:
            raise ValueError(
                "DPClipper needs public bounds=(lower, upper); bounds chosen "
                "privately from the data are not available in this version."
            )
        self.lower_, self.upper_ = check_bounds(self.bounds, X.shape[1])
        self._charge([])
        return self

    def transform(self, X):
        """Clip every feature to ``[lower_, upper_]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_clipped : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_private_data(self, X, reset=False)
        return np.clip(X, self.lower_, self.upper_)
