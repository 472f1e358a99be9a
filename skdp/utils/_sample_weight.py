"""Validation of ``sample_weight`` for private fits: weights in [0, 1].

A row's weight is part of the row: the neighbouring datasets add or remove
one ``(x, y, w)``. Every weighted sum in skdp keeps the sensitivity of its
unweighted version because a row's weighted term is its term times a number
in [0, 1] (see :mod:`skdp.sensitivity._weights`); a weight outside [0, 1]
would break that bound, so it is refused before any charge, like a NaN in
``X`` (the format of the input is public, its values are not).
"""

import numpy as np
from scipy import sparse

__all__ = ["check_row_weights", "weights_of_kept_rows"]


def _first_bad(weights):
    """Index and reason of the first weight outside [0, 1], or None."""
    with np.errstate(invalid="ignore"):
        bad = ~((weights >= 0) & (weights <= 1))  # True for NaN
    if not bad.any():
        return None
    i = int(np.flatnonzero(bad)[0])
    value = weights[i]
    if np.isnan(value):
        reason = "NaN"
    elif np.isinf(value):
        reason = "infinite"
    elif value < 0:
        reason = "negative"
    else:
        reason = "above 1"
    return i, reason


def _as_weight_vector(sample_weight, n_samples, name):
    """A scalar or 1-D array of ``n_samples`` real numbers, as float64."""
    # np.asarray first: iscomplexobj dispatches on the object itself, which
    # array-likes without __array_function__ (scikit-learn's _NotAnArray) refuse
    if np.iscomplexobj(np.asarray(sample_weight)):  # a cast drops the imaginary part
        raise ValueError(
            f"{name}: sample_weight must be real numbers; got complex values "
            f"(dtype {np.asarray(sample_weight).dtype}). Nothing was charged."
        )
    try:
        weights = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name}: sample_weight must be real numbers; got "
            f"{type(sample_weight).__name__}. Nothing was charged."
        ) from None
    if weights.ndim == 0:
        return np.full(n_samples, float(weights))
    if weights.shape != (n_samples,):
        raise ValueError(
            f"{name}: sample_weight has shape {weights.shape}; it needs one "
            f"weight per row of X, shape ({n_samples},). Nothing was charged."
        )
    return weights


def check_row_weights(estimator, sample_weight, X):
    """``sample_weight`` as float64 of shape (n_samples,), or None.

    Parameters
    ----------
    estimator : estimator instance
        Named in the messages.
    sample_weight : array-like of shape (n_samples,) or None
        Per-row weights in [0, 1].
    X : ndarray, sparse matrix or ChunkedRows
        The validated data (only its number of rows is read).

    Returns
    -------
    weights : ndarray of shape (n_samples,) or None
        None when ``sample_weight`` is None (the unweighted fit).

    Raises
    ------
    ValueError
        If a weight is negative, above 1, NaN or infinite, if the shape does
        not match ``X``, or if ``X`` is a Dask input (not supported with
        weights); always before any budget is charged.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import PrivateMean
    >>> from skdp.utils._sample_weight import check_row_weights
    >>> check_row_weights(PrivateMean(), [0.5, 1], np.zeros((2, 1)))
    array([0.5, 1. ])
    >>> check_row_weights(PrivateMean(), [2.0, 1], np.zeros((2, 1)))
    Traceback (most recent call last):
    ...
    ValueError: PrivateMean: sample_weight[0] = 2.0 is above 1; ...
    """
    if sample_weight is None:
        return None
    name = type(estimator).__name__
    if not (isinstance(X, np.ndarray) or sparse.issparse(X)):  # a Dask input
        raise ValueError(
            f"{name}: sample_weight is supported for in-memory data only, not "
            "for a Dask input. Fit on an in-memory array, or leave "
            "sample_weight=None. Nothing was charged."
        )
    weights = _as_weight_vector(sample_weight, X.shape[0], name)
    bad = _first_bad(weights)
    if bad is not None:
        i, reason = bad
        raise ValueError(
            f"{name}: sample_weight[{i}] = {float(weights[i])!r} is {reason}; private "
            "fits accept weights in [0, 1] only, where a weighted row adds no "
            "more than an unweighted one and the noise is unchanged. Divide "
            "the weights by a public maximum (one stated before seeing the "
            "data: dividing by the data's own largest weight is a choice made "
            "from the data, and makes one row's weight depend on the others). "
            "Nothing was charged."
        )
    return weights


def weights_of_kept_rows(sample_weight, y, classes):
    """The weights of the rows whose label is in the released ``classes``
    (those a private label selection keeps, a rule applied to each row)."""
    return sample_weight[np.isin(y, classes)]
