"""The affine transform shared by the private centring and scaling estimators."""

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils.validation import check_is_fitted

from skdp.exceptions import PTRRefusedWarning
from skdp.utils._dask import is_dask_collection, transform_rows
from skdp.utils._validation import validate_private_data
from skdp.utils._warnings import warn_at_caller

__all__ = ["AffineTransformMixin", "saturated"]

_LARGEST = np.finfo(np.float64).max


def saturated(values):
    """``values`` with every overflow to ±inf brought back to ±largest double.

    A transform maps finite rows to finite rows: a finite row of
    ``±1.8e308`` centred or divided by a scale below 1 would otherwise
    become ±inf, and the next private step of a pipeline would refuse it
    after an earlier step's charge, a failure decided by one row. NaN (a
    refused statistic's column) stays NaN.
    """
    return np.clip(values, -_LARGEST, _LARGEST, out=values)


@np.errstate(over="ignore")
def affine_map(X, location, scale):
    """``(X - location) / scale``, saturated: the transform of an affine
    estimator."""
    return saturated((X - location) / scale)


@np.errstate(over="ignore")
def inverse_affine_map(X, location, scale):
    """``X * scale + location``, saturated: its inverse."""
    return saturated(X * scale + location)


class AffineTransformMixin(TransformerMixin):
    """``transform`` is ``(X - location) / scale`` with released statistics.

    It derives from :class:`~sklearn.base.TransformerMixin` so that
    ``set_output`` wraps the ``transform`` defined here (scikit-learn wraps
    only methods a class defines itself).

    Subclasses name their fitted attributes in ``_location_attribute`` and
    ``_scale_attribute`` (``None`` for none: location 0, scale 1). Both maps
    are post-processing of what ``fit`` released, so they cost nothing; a
    refused (NaN) statistic gives NaN in its column, with a
    :class:`~skdp.exceptions.PTRRefusedWarning` that says so where the NaN
    appears (the refusal is already public: it was released by ``fit``).
    """

    _location_attribute = None
    _scale_attribute = None

    def _affine_parameters(self):
        check_is_fitted(self)
        location = (
            0.0
            if self._location_attribute is None
            else getattr(self, self._location_attribute)
        )
        scale = (
            1.0
            if self._scale_attribute is None
            else getattr(self, self._scale_attribute)
        )
        self._warn_refused(location, scale)
        return location, scale

    def _warn_refused(self, location, scale):
        refused = np.isnan(np.asarray(location) + np.asarray(scale))
        if not np.any(refused):
            return
        names = getattr(self, "feature_names_in_", None)
        columns = np.flatnonzero(np.broadcast_to(refused, (self.n_features_in_,)))
        shown = [repr(names[j]) if names is not None else str(j) for j in columns]
        name = type(self).__name__
        warn_at_caller(
            f"{name}: the statistics of feature(s) {', '.join(shown)} were refused "
            "at fit (a propose-test-release test failed), so transform returns NaN "
            "in those columns; this is not missing data. Refit with more epsilon, "
            "tighter public bounds or a method that does not refuse, or pass "
            "on_refuse='raise' to stop at fit.",
            PTRRefusedWarning,
        )

    def transform(self, X):
        """Apply the released affine map: ``(X - location) / scale``.

        Parameters
        ----------
        X : array-like or Dask collection of shape (n_samples, n_features)

        Returns
        -------
        X_transformed : ndarray or Dask array of shape (n_samples, n_features)
            A lazy Dask array for a Dask input (see :ref:`dask`).
        """
        location, scale = self._affine_parameters()
        if is_dask_collection(X):
            return transform_rows(self, X, affine_map, location, scale)
        return affine_map(validate_private_data(self, X, reset=False), location, scale)

    def inverse_transform(self, X):
        """Undo :meth:`transform`: ``X * scale + location``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        location, scale = self._affine_parameters()
        if is_dask_collection(X):
            return transform_rows(self, X, inverse_affine_map, location, scale)
        return inverse_affine_map(
            validate_private_data(self, X, reset=False), location, scale
        )
