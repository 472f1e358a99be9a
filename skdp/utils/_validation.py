"""Input validation shared by every skdp estimator and mechanism.

Every check here runs before an accountant is charged: a rejected call costs
nothing. Messages name the offending value and say how to fix it.
"""

import math
from numbers import Real

import numpy as np
from scipy import sparse

from skdp.utils._zero_rows import min_samples

__all__ = [
    "check_bounds",
    "check_delta",
    "check_epsilon",
    "check_finite_columns",
    "check_finite_width",
    "check_per_feature",
    "check_public_classes",
    "check_required_bounds",
    "epsilon_requirement",
    "validate_private_data",
]


def _as_real(value, name):
    if isinstance(value, bool) or not isinstance(value, Real | np.number):
        raise TypeError(f"{name} must be a real number; got {value!r}.")
    return float(value)


def epsilon_requirement(name="epsilon", *, allow_zero=False, allow_inf=False):
    """What a valid ``epsilon`` is, and the fix: the words of every ε message.

    Returns ``(requirement, fix)``, e.g. ``("> 0 and finite", "Pass a
    positive, finite privacy loss, e.g. epsilon=1.0.")``. Functions
    (:func:`check_epsilon`) and estimators (scikit-learn's parameter
    validation, through :class:`~skdp.base.PrivateEstimatorMixin`) build their
    messages from it, so every ε error reads the same.
    """
    relation = ">= 0" if allow_zero else "> 0"
    if allow_inf:
        return (
            f"{relation} (inf for no limit)",
            f"Pass a privacy budget {relation}, e.g. {name}=1.0, or inf for no limit.",
        )
    what = "finite privacy loss >= 0" if allow_zero else "positive, finite privacy loss"
    return f"{relation} and finite", f"Pass a {what}, e.g. {name}=1.0."


def check_epsilon(epsilon, name="epsilon", *, allow_zero=False, allow_inf=False):
    """Validate a privacy-loss parameter and return it as a float.

    Parameters
    ----------
    epsilon : float
        The value to check.
    name : str, default="epsilon"
        The name used in error messages.
    allow_zero : bool, default=False
        Accept ``epsilon == 0`` (a spend of nothing).
    allow_inf : bool, default=False
        Accept ``epsilon == inf`` (an unlimited budget).

    Returns
    -------
    epsilon : float

    Examples
    --------
    >>> from skdp.utils import check_epsilon
    >>> check_epsilon(0.5)
    0.5
    >>> check_epsilon(-1)
    Traceback (most recent call last):
    ...
    ValueError: epsilon must be > 0 and finite; got -1.0. Pass a ... epsilon=1.0.
    """
    requirement, fix = epsilon_requirement(
        name, allow_zero=allow_zero, allow_inf=allow_inf
    )
    if isinstance(epsilon, bool) or not isinstance(epsilon, Real | np.number):
        raise TypeError(
            f"{name} must be a real number {requirement}; got {epsilon!r}. {fix}"
        )
    value = float(epsilon)
    valid = value > 0 or (allow_zero and value == 0)  # False for nan
    if not valid or (math.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be {requirement}; got {value}. {fix}")
    return value


def check_delta(delta, name="delta", *, allow_zero=True):
    """Validate a privacy-failure probability ``delta`` in ``[0, 1)``.

    Parameters
    ----------
    delta : float
        The value to check.
    name : str, default="delta"
        The name used in error messages.
    allow_zero : bool, default=True
        Accept ``delta == 0``; mechanisms that need ``delta > 0`` pass False.

    Returns
    -------
    delta : float

    Examples
    --------
    >>> from skdp.utils import check_delta
    >>> check_delta(1e-6)
    1e-06
    >>> check_delta(1.0)
    Traceback (most recent call last):
    ...
    ValueError: delta must be in [0, 1); got 1.0.
    """
    value = _as_real(delta, name)
    low = "[0" if allow_zero else "(0"
    if not (0.0 <= value < 1.0) or (value == 0.0 and not allow_zero):
        raise ValueError(f"{name} must be in {low}, 1); got {value}.")
    return value


def check_bounds(bounds, n_features, *, name="bounds"):
    """Validate public clipping bounds and broadcast them to one pair per feature.

    Parameters
    ----------
    bounds : tuple of (float or array-like, float or array-like)
        ``(lower, upper)``; each a scalar (shared by all features) or an array of
        shape (n_features,).
    n_features : int
        Number of features the bounds must cover.
    name : str, default="bounds"
        The name used in error messages.

    Returns
    -------
    lower, upper : ndarray of shape (n_features,)

    Examples
    --------
    >>> from skdp.utils import check_bounds
    >>> check_bounds((0, [1, 2]), 2)
    (array([0., 0.]), array([1., 2.]))
    """
    if bounds is None or isinstance(bounds, str | bytes):
        raise ValueError(
            f"{name} must be a (lower, upper) pair of scalars or per-feature "
            f"arrays; got {bounds!r}."
        )
    try:
        lower, upper = bounds
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a (lower, upper) pair of scalars or per-feature "
            f"arrays; got {bounds!r}."
        ) from None
    lower = check_per_feature(lower, n_features, f"{name}: lower bound")
    upper = check_per_feature(upper, n_features, f"{name}: upper bound")
    bad = np.flatnonzero(~(lower < upper))
    if bad.size:
        j = int(bad[0])
        raise ValueError(
            f"{name}: lower bound must be < upper bound for every feature; feature "
            f"{j} has lower={lower[j]} and upper={upper[j]}."
        )
    with np.errstate(under="ignore"):  # subnormal halves: tested below, no raise
        narrow = np.flatnonzero(~(upper / 2 - lower / 2 > 0))
    if narrow.size:  # e.g. (0, 5e-324): half the width rounds to 0
        j = int(narrow[0])
        raise ValueError(
            f"{name}: the bounds of feature {j} are too narrow to normalise by "
            f"(half their width rounds to 0): lower={lower[j]}, upper={upper[j]}."
        )
    return lower, upper


def check_per_feature(value, n_features, name):
    """A finite scalar or per-feature array, broadcast to shape (n_features,).

    Parameters
    ----------
    value : float or array-like of shape (n_features,)
        The public parameter.
    n_features : int
        Number of features it must cover.
    name : str
        The name used in error messages.

    Returns
    -------
    values : ndarray of shape (n_features,)

    Examples
    --------
    >>> from skdp.utils import check_per_feature
    >>> check_per_feature(2, 3, "scale")
    array([2., 2., 2.])
    """
    try:
        values = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric; got {value!r}.") from None
    if values.ndim == 0:
        values = np.full(n_features, float(values))
    if values.shape != (n_features,):
        raise ValueError(
            f"{name} has shape {values.shape}; expected a scalar or shape "
            f"({n_features},) to match the {n_features} features."
        )
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be finite; got {values}.")
    return values


def check_required_bounds(bounds, n_features, name):
    """Public bounds that must be given and whose width ``U - L`` is a finite float.

    Parameters
    ----------
    bounds : tuple of (float or array-like, float or array-like)
        ``(lower, upper)``, as for :func:`check_bounds`.
    n_features : int
        Number of features the bounds must cover.
    name : str
        The estimator's name, used in error messages.

    Returns
    -------
    lower, upper : ndarray of shape (n_features,)

    Examples
    --------
    >>> from skdp.utils import check_required_bounds
    >>> check_required_bounds((0, [1, 10]), 2, "MyEstimator")
    (array([0., 0.]), array([ 1., 10.]))
    >>> check_required_bounds(None, 2, "MyEstimator")
    Traceback (most recent call last):
    ...
    ValueError: MyEstimator needs public bounds=(lower, upper); ...
    """
    if bounds is None:
        raise ValueError(
            f"{name} needs public bounds=(lower, upper); they must not be derived "
            "from the data."
        )
    lower, upper = check_bounds(bounds, n_features)
    check_finite_width(lower, upper, name)
    return lower, upper


def check_finite_width(lower, upper, name):
    """Refuse bounds whose width overflows (``U - L`` must be finite).

    Parameters
    ----------
    lower, upper : ndarray
        Bounds per feature.
    name : str
        The estimator's name, used in the error message.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.utils import check_finite_width
    >>> check_finite_width(np.array([-1.0]), np.array([1.0]), "MyEstimator")
    >>> check_finite_width(np.array([-1e308]), np.array([1e308]), "MyEstimator")
    Traceback (most recent call last):
    ...
    ValueError: MyEstimator needs bounds whose width upper - lower is a finite ...
    """
    with np.errstate(over="ignore"):
        width = upper - lower
    if not np.all(np.isfinite(width)):
        raise ValueError(
            f"{name} needs bounds whose width upper - lower is a finite float; got "
            f"lower={lower}, upper={upper}. Narrow the bounds (e.g. below 8e307 in "
            "magnitude)."
        )


def check_finite_columns(X, feature_names=None):
    """Raise ``ValueError`` naming the first column of ``X`` with NaN or inf.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Numeric input.
    feature_names : array-like of str, default=None
        Column names used in the message (column indices otherwise).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.utils import check_finite_columns
    >>> check_finite_columns(np.array([[1.0, np.nan]]), ["a", "b"])
    Traceback (most recent call last):
    ...
    ValueError: Input X contains NaN or inf in column 'b' (index 1); ...
    """
    if sparse.issparse(X):  # only the stored entries can be non-finite
        X = X.tocoo()
        bad = ~np.isfinite(X.data)
        if not bad.any():
            return
        j = int(X.col[bad].min())
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            finite = np.isfinite(X)
        if finite.all():
            return
        j = int(np.flatnonzero(~finite.all(axis=0))[0])
    label = repr(str(feature_names[j])) if feature_names is not None else str(j)
    index = f" (index {j})" if feature_names is not None else ""
    raise ValueError(
        f"Input X contains NaN or inf in column {label}{index}; skdp needs finite "
        "values. Impute or drop them with a data-independent rule first (treating "
        "their presence as public)."
    )


def validate_private_data(estimator, X, y="no_validation", *, reset=True, **kwargs):
    """Validate input for a private estimator: numeric, 2-D, non-empty, finite.

    A thin wrapper of :func:`sklearn.utils.validation.validate_data` that casts
    to float64 and reports non-finite values by column name. The shape of ``X``
    (including that it is non-empty), its column names and the validity of its
    values are treated as public: these checks raise before any budget is
    charged.

    Parameters
    ----------
    estimator : estimator instance
        The estimator, which receives ``n_features_in_`` and
        ``feature_names_in_`` when ``reset=True``.
    X : array-like of shape (n_samples, n_features)
        Input data.
    y : array-like or "no_validation", default="no_validation"
        Targets, validated together with ``X`` when given.
    reset : bool, default=True
        Whether to record the number and names of features (``fit``) or check
        them against the recorded ones (``transform``).
    **kwargs : dict
        Passed to :func:`~sklearn.utils.validation.validate_data`.

    Returns
    -------
    X or (X, y)
        The validated input.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import PrivateMean
    >>> from skdp.utils import validate_private_data
    >>> est = PrivateMean(bounds=(0, 1))
    >>> validate_private_data(est, [[0, 1], [1, 0]]).dtype, est.n_features_in_
    (dtype('float64'), 2)
    >>> validate_private_data(est, [[0, np.nan]])
    Traceback (most recent call last):
    ...
    ValueError: Input X contains NaN or inf in column 1; ...
    """
    # here, not at the top: the accounting and ``skdp describe`` import this
    # module, and scikit-learn (with its SciPy stats and pandas) takes a second
    from sklearn.utils.validation import validate_data

    kwargs.setdefault("dtype", np.float64)
    kwargs.setdefault("ensure_min_samples", min_samples())
    if min_samples() == 0 and np.ndim(y) == 1 and len(y) == 0:
        # scikit-learn checks a multi-output y for one row at least; a 1-D
        # y is the same either way
        kwargs["multi_output"] = False
    out = validate_data(estimator, X, y, reset=reset, ensure_all_finite=False, **kwargs)
    X_checked = out[0] if isinstance(out, tuple) else out
    names = getattr(estimator, "feature_names_in_", None)
    check_finite_columns(X_checked, names)
    return out


def check_public_classes(classes, y, estimator_name):
    """The public label set of a classifier, checked against ``y``.

    Parameters
    ----------
    classes : array-like
        The label set the caller states (the estimator's ``classes``
        parameter). Never taken from ``y``: an estimator whose caller
        states no label set selects one privately
        (:class:`~skdp.mechanisms._labels.LabelPlan`) or refuses.
    y : ndarray of shape (n_samples,)
        Validated classification targets.
    estimator_name : str
        Used in the error messages.

    Returns
    -------
    classes : ndarray
        Sorted unique labels, at least two.

    Raises
    ------
    ValueError
        If ``y`` holds labels outside ``classes`` (the caller's statement
        about the data is wrong, an input error like a NaN value) or
        ``classes`` has fewer than two labels; both before any budget is
        charged.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.utils import check_public_classes
    >>> check_public_classes([0, 1, 2], np.array([0, 1, 1]), "Model")
    array([0, 1, 2])
    """
    public = np.unique(np.asarray(classes))
    if public.size < 2:
        raise ValueError(
            f"{estimator_name} needs at least 2 public classes; got classes={public!r}."
        )
    unknown = np.setdiff1d(np.unique(y), public)
    if unknown.size:
        raise ValueError(
            f"y contains labels that are not in the public classes={public!r}; "
            "add them to classes or drop those rows with a public rule."
        )
    return public
