"""Means, sums, counts and spreads as functions, released by the estimators."""

import numpy as np

from skdp.preprocessing._standard import PrivateStandardScaler
from skdp.sensitivity import centre_and_radius
from skdp.stats._mean import PrivateMean
from skdp.tools._arrays import as_rows, check_output_options, mechanism_of
from skdp.utils._validation import check_bounds

__all__ = ["count_nonzero", "mean", "std", "sum", "var"]


def _row_values(rows, bounds, reduce):
    """Each row's own value (its mean or sum, ``reduce``) with the bounds it
    lies in, for ``axis=None`` over several columns; else the rows as given.

    With public bounds, each value is clipped to its column's bounds first
    (a per-row map), so the row's value lies in ``reduce`` of the bounds.
    """
    X = rows.X
    if rows.per_column or X.shape[1] == 1:
        return X, bounds
    if bounds is None:  # the estimator chooses bounds for the row values
        return reduce(X, axis=1)[:, None], None
    lower, upper = check_bounds(bounds, X.shape[1])
    clipped = np.clip(X, lower, upper)
    return reduce(clipped, axis=1)[:, None], (reduce(lower), reduce(upper))


def _fitted_mean(X, epsilon, bounds, delta, unit, accountant, random_state):
    groups, max_rows_per_group = unit
    return PrivateMean(
        epsilon,
        bounds=bounds,
        mechanism=mechanism_of(delta),
        delta=delta,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    ).fit(X, groups=groups)


def mean(
    array,
    epsilon=1.0,
    bounds=None,
    axis=None,
    dtype=None,
    keepdims=False,
    *,
    groups=None,
    max_rows_per_group=None,
    delta=0.0,
    accountant=None,
    random_state=None,
):
    """The private mean of an array, as :class:`~skdp.PrivateMean` releases it.

    Parameters
    ----------
    array : array-like of shape (n_samples,) or (n_samples, n_features)
        One row per person (the first axis). No NaN (see :func:`nanmean`).
    epsilon : float, default=1.0
        Total ε.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        Public ``(lower, upper)``, scalars or per column. ``None``: chosen
        privately by :class:`~skdp.PrivateMean` (the sparse vector technique,
        30% of ``epsilon``).
    axis : {None, 0}, default=None
        0: one mean per column. None: the mean of all values (over several
        columns, the mean of the rows' means, each row clipped to the
        bounds first).
    dtype : data-type or None, default=None
        Type of the result, as numpy's ``dtype``: the released float64
        values are cast to it (post-processing; an integer type truncates).
    keepdims : bool, default=False
        Keep the reduced axes with size one, as numpy does.
    delta : float, default=0.0
        0 gives Laplace noise (ε-DP); > 0 the analytic Gaussian mechanism.
    groups : array-like of shape (n_samples,), default=None
        Each row's person (privacy unit), with ``max_rows_per_group``:
        neighbours add or remove one whole group, of which at most ``k``
        rows are kept (:ref:`user_level_privacy`). None: one row.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows (required with ``groups``).
    accountant : BudgetAccountant or None, default=None
        Charged; ``None`` is the default accountant.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG.

    Returns
    -------
    mean : float or ndarray of shape (n_features,)

    Notes
    -----
    (ε, δ)-DP under add/remove-one-row neighbours, or of one whole group
    with ``groups`` (every sensitivity ``k`` times the row's; public
    ``bounds`` required: the private bound search is stated for one row):
    the release of :class:`~skdp.PrivateMean` (its Notes give the
    sensitivities), a noisy
    clipped sum over a noisy count; the row count is not public.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import tools
    >>> x = np.random.default_rng(0).uniform(0, 10, size=10_000)
    >>> round(tools.mean(x, epsilon=1.0, bounds=(0, 10), random_state=0), 1)
    5.0
    """
    dtype, keepdims = check_output_options("mean", dtype, keepdims)
    rows = as_rows(array, axis, "mean", whole_array=True)
    X, bounds = _row_values(rows, bounds, np.mean)
    unit = (groups, max_rows_per_group)
    fitted = _fitted_mean(X, epsilon, bounds, delta, unit, accountant, random_state)
    return rows.shape(fitted.mean_, keepdims, dtype)


def sum(  # numpy's and diffprivlib's name
    array,
    epsilon=1.0,
    bounds=None,
    axis=None,
    dtype=None,
    keepdims=False,
    *,
    groups=None,
    max_rows_per_group=None,
    delta=0.0,
    accountant=None,
    random_state=None,
):
    """The private sum of an array, from :class:`~skdp.PrivateMean`'s release.

    Parameters
    ----------
    array : array-like of shape (n_samples,) or (n_samples, n_features)
        One row per person (the first axis). No NaN (see :func:`nansum`).
    epsilon : float, default=1.0
        Total ε.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        Public ``(lower, upper)``, scalars or per column; ``None``: chosen
        privately as :func:`mean` does.
    axis : {None, 0}, default=None
        0: one sum per column. None: the sum of all values (over several
        columns, the sum of the rows' sums).
    dtype : data-type or None, default=None
        Type of the result, as numpy's ``dtype``: the released float64
        values are cast to it (post-processing; an integer type truncates).
    keepdims : bool, default=False
        Keep the reduced axes with size one, as numpy does.
    delta : float, default=0.0
        0 gives Laplace noise (ε-DP); > 0 the analytic Gaussian mechanism.
    groups : array-like of shape (n_samples,), default=None
        Each row's person (privacy unit), with ``max_rows_per_group``:
        neighbours add or remove one whole group, of which at most ``k``
        rows are kept (:ref:`user_level_privacy`). None: one row.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows (required with ``groups``).
    accountant : BudgetAccountant or None, default=None
        Charged; ``None`` is the default accountant.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG.

    Returns
    -------
    sum : float or ndarray of shape (n_features,)

    Notes
    -----
    (ε, δ)-DP under add/remove-one-row neighbours, or of one whole group
    with ``groups`` (every sensitivity ``k`` times the row's; public
    ``bounds`` required: the private bound search is stated for one row).
    The sum is
    post-processing of the mean's release: with ``c = (L + U)/2``,
    ``r = (U - L)/2``, the noisy count ``n`` and the noisy centred sum
    ``S = sum (clip(x) - c)/r``, it is ``c n + r S``. For bounds ``(0, U)``
    this is ``U`` times one noisy split sum (Laplace noise of scale
    ``U/ε``, what a direct release of the clipped sum with sensitivity
    ``max(|L|, |U|)`` would add); for symmetric bounds its noise variance is
    twice that of the direct release.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import tools
    >>> x = np.ones(10_000)
    >>> round(tools.sum(x, epsilon=1.0, bounds=(0, 1), random_state=0), -1)
    10000.0
    """
    dtype, keepdims = check_output_options("sum", dtype, keepdims)
    rows = as_rows(array, axis, "sum", whole_array=True)
    X, bounds = _row_values(rows, bounds, np.sum)
    unit = (groups, max_rows_per_group)
    fitted = _fitted_mean(X, epsilon, bounds, delta, unit, accountant, random_state)
    return rows.shape(sum_from_mean_release(fitted), keepdims, dtype)


def sum_from_mean_release(fitted):
    """``c n + r S`` per feature from a fitted :class:`~skdp.PrivateMean`
    (post-processing of its noisy count and centred sums)."""
    centre, radius = centre_and_radius(fitted.lower_, fitted.upper_)
    with np.errstate(over="ignore", invalid="ignore"):
        return centre * fitted.count_ + radius * fitted._noisy_sums


def count_nonzero(
    array,
    epsilon=1.0,
    axis=None,
    keepdims=False,
    *,
    groups=None,
    max_rows_per_group=None,
    delta=0.0,
    accountant=None,
    random_state=None,
):
    """The private number of non-zero values (a :func:`sum` of indicators).

    Parameters
    ----------
    array : array-like of shape (n_samples,) or (n_samples, n_features)
        One row per person. NaN counts as non-zero, as in numpy.
    epsilon : float, default=1.0
        Total ε.
    axis : {None, 0}, default=None
        0: one count per column; None: over all values.
    keepdims : bool, default=False
        Keep the reduced axes with size one, as numpy does.
    delta : float, default=0.0
        0 gives Laplace noise (ε-DP); > 0 the analytic Gaussian mechanism.
    groups : array-like of shape (n_samples,), default=None
        Each row's person (privacy unit), with ``max_rows_per_group``:
        neighbours add or remove one whole group, of which at most ``k``
        rows are kept (:ref:`user_level_privacy`). None: one row.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows (required with ``groups``).
    accountant : BudgetAccountant or None, default=None
        Charged; ``None`` is the default accountant.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG.

    Returns
    -------
    count : float or ndarray of shape (n_features,)
        Noisy (unbiased, may be fractional).

    Notes
    -----
    The indicators ``x != 0`` have the public bounds (0, 1), so no bounds
    are asked for; their sum (:func:`sum`) moves by at most 1 per column
    when a row is added or removed, by at most ``k`` when a group of at
    most ``k`` kept rows is (``groups``).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import tools
    >>> x = np.r_[np.zeros(5_000), np.ones(5_000)]
    >>> round(tools.count_nonzero(x, epsilon=1.0, random_state=0), -1)
    5000.0
    """
    values = np.asarray(array)
    indicators = (values != 0).astype(float) if values.ndim else values
    return sum(
        indicators,
        epsilon,
        (0.0, 1.0),
        axis,
        keepdims=keepdims,
        delta=delta,
        groups=groups,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    )


def _fitted_scaler(array, epsilon, bounds, axis, delta, unit, budget, name):
    rows = as_rows(array, axis, name)
    groups, max_rows_per_group = unit
    accountant, random_state = budget
    scaler = PrivateStandardScaler(
        epsilon,
        bounds=bounds,
        mechanism=mechanism_of(delta),
        delta=delta,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    ).fit(rows.X, groups=groups)
    return rows, scaler


def var(
    array,
    epsilon=1.0,
    bounds=None,
    axis=None,
    dtype=None,
    keepdims=False,
    *,
    groups=None,
    max_rows_per_group=None,
    delta=0.0,
    accountant=None,
    random_state=None,
):
    """The private variance, as :class:`~skdp.PrivateStandardScaler` releases it.

    Parameters
    ----------
    array : array-like of shape (n_samples,) or (n_samples, n_features)
        One row per person. No NaN (see :func:`nanvar`).
    epsilon : float, default=1.0
        Total ε.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        Public ``(lower, upper)``; ``None``: chosen privately by the scaler
        (30% of ``epsilon``).
    axis : {None, 0}, default=None
        0: one variance per column. None: for one column or a 1-D array
        (over several columns, pass ``axis=0`` or ``array.ravel()``).
    dtype : data-type or None, default=None
        Type of the result, as numpy's ``dtype``: the released float64
        values are cast to it (post-processing; an integer type truncates).
    keepdims : bool, default=False
        Keep the reduced axes with size one, as numpy does.
    delta : float, default=0.0
        0 gives Laplace noise (ε-DP); > 0 the analytic Gaussian mechanism.
    groups : array-like of shape (n_samples,), default=None
        Each row's person (privacy unit), with ``max_rows_per_group``:
        neighbours add or remove one whole group, of which at most ``k``
        rows are kept (:ref:`user_level_privacy`). None: one row.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows (required with ``groups``).
    accountant : BudgetAccountant or None, default=None
        Charged; ``None`` is the default accountant.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG.

    Returns
    -------
    var : float or ndarray of shape (n_features,)
        Population variance (``ddof=0``), in ``[0, ((U - L)/2)²]``.

    Notes
    -----
    (ε, δ)-DP under add/remove-one-row neighbours: the count, clipped sums
    and sums of squares in one release of sensitivity 1 per feature (the
    Bernstein sums of :func:`~skdp.sensitivity.exact_moment_sums`); ``k``
    for one whole group of at most ``k`` kept rows with ``groups`` (public
    ``bounds`` required).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import tools
    >>> x = np.random.default_rng(0).normal(0, 2, size=100_000)
    >>> round(tools.var(x, epsilon=1.0, bounds=(-10, 10), random_state=0))
    4
    """
    dtype, keepdims = check_output_options("var", dtype, keepdims)
    unit, budget = (groups, max_rows_per_group), (accountant, random_state)
    rows, scaler = _fitted_scaler(
        array, epsilon, bounds, axis, delta, unit, budget, "var"
    )
    return rows.shape(scaler.var_, keepdims, dtype)


def std(
    array,
    epsilon=1.0,
    bounds=None,
    axis=None,
    dtype=None,
    keepdims=False,
    *,
    groups=None,
    max_rows_per_group=None,
    delta=0.0,
    accountant=None,
    random_state=None,
):
    """The private standard deviation: the square root of :func:`var`.

    Parameters
    ----------
    array : array-like of shape (n_samples,) or (n_samples, n_features)
        One row per person. No NaN (see :func:`nanstd`).
    epsilon : float, default=1.0
        Total ε.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        Public ``(lower, upper)``; ``None``: chosen privately.
    axis : {None, 0}, default=None
        As for :func:`var`.
    dtype : data-type or None, default=None
        Type of the result, as numpy's ``dtype``: the released float64
        values are cast to it (post-processing; an integer type truncates).
    keepdims : bool, default=False
        Keep the reduced axes with size one, as numpy does.
    delta : float, default=0.0
        0 gives Laplace noise (ε-DP); > 0 the analytic Gaussian mechanism.
    groups : array-like of shape (n_samples,), default=None
        Each row's person (privacy unit), with ``max_rows_per_group``:
        neighbours add or remove one whole group, of which at most ``k``
        rows are kept (:ref:`user_level_privacy`). None: one row.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows (required with ``groups``).
    accountant : BudgetAccountant or None, default=None
        Charged; ``None`` is the default accountant.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG.

    Returns
    -------
    std : float or ndarray of shape (n_features,)
        In ``[0, (U - L)/2]`` (0 stays 0, unlike the scaler's ``scale_``).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import tools
    >>> x = np.random.default_rng(0).normal(0, 2, size=100_000)
    >>> round(tools.std(x, epsilon=1.0, bounds=(-10, 10), random_state=0), 1)
    2.0
    """
    dtype, keepdims = check_output_options("std", dtype, keepdims)
    unit, budget = (groups, max_rows_per_group), (accountant, random_state)
    rows, scaler = _fitted_scaler(
        array, epsilon, bounds, axis, delta, unit, budget, "std"
    )
    return rows.shape(np.sqrt(scaler.var_), keepdims, dtype)
