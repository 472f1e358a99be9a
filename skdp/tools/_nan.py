"""NaN-tolerant means, sums and spreads: NaN is a missing value.

A missing value is simply not in its column's statistic, and how many
values a column holds is not public (it moves by one when a row is added
or removed). Each column is therefore released like a one-column
:class:`~skdp.PrivateMean` or :class:`~skdp.PrivateStandardScaler` fit on
its present values, with the same release functions those estimators call
after their charge (their count is private too), with an equal share of the
budget per column, all charged at once before any value is read. A column
without any present value is no special case: its exact statistic is zero
and its release is noise, like any other.
"""

import numpy as np

from skdp.mechanisms import check_random_source
from skdp.mechanisms._additive import additive_cost, additive_release_problem
from skdp.preprocessing._standard import release_moment_sums
from skdp.sensitivity import centre_and_radius, moments_from_sums
from skdp.stats._mean_release import (
    mean_from_release,
    mean_statistic,
    plan_mean_release,
    release_count_and_sums,
)
from skdp.tools._arrays import (
    as_rows,
    charge_function,
    check_output_options,
    equal_shares,
)
from skdp.utils._function_unit import function_unit
from skdp.utils._privacy_unit import PrivacyUnit
from skdp.utils._validation import check_delta, check_epsilon, check_required_bounds

__all__ = ["nanmean", "nanstd", "nansum", "nanvar"]


def _present_columns(array, axis, bounds, epsilon, delta, grouping, function):
    """Validated rows, bounds, per-column budget and privacy unit; raises
    before any charge."""
    rows = as_rows(array, axis, function)
    X = rows.X
    if np.isinf(X).any():
        raise ValueError(
            f"{function}: the input contains inf; only NaN means missing. "
            "Replace infinite values (or clip them to the bounds) first."
        )
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    d = X.shape[1]
    lower, upper = check_required_bounds(bounds, d, function)
    unit = function_unit(function, *grouping, X)
    return rows, lower, upper, equal_shares(epsilon, d), equal_shares(delta, d), unit


def _column(X, j, unit, source):
    """Column ``j``'s present values, at most ``k`` per group with groups
    (kept among the group's present values of that column)."""
    values = X[:, j]
    present = ~np.isnan(values)
    column = values[present][:, None]
    if unit.groups is None:
        return column
    (kept,) = PrivacyUnit(unit.groups[present], unit.max_rows).bound(source, column)
    return kept


def _mean_releases(array, epsilon, bounds, axis, delta, grouping, budget, name):
    """Per column: the noisy count and centred sum of its present values."""
    rows, lower, upper, eps, dlt, unit = _present_columns(
        array, axis, bounds, epsilon, delta, grouping, name
    )
    mechanism = "gaussian" if dlt > 0 else "laplace"
    plan = plan_mean_release(eps, dlt, 1, mechanism, unit_rows=unit.unit_rows)
    accountant, random_state = budget
    source = check_random_source(random_state)
    items = [
        (f"{name}, column {j}: {label}", cost)
        for j in range(rows.n_columns)
        for label, cost in plan.cost_items()
    ]
    charge_function(accountant, items, unit)
    releases = []
    for j in range(rows.n_columns):
        bounds_j = lower[j : j + 1], upper[j : j + 1]
        column = _column(rows.X, j, unit, source)
        statistic = mean_statistic(column, *bounds_j, plan.paired)
        count, sums = release_count_and_sums(statistic, plan, source)
        releases.append((count, sums[0]))
    return rows, lower, upper, releases


def nanmean(
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
    """The private mean of the values that are not NaN.

    Parameters
    ----------
    array : array-like of shape (n_samples,) or (n_samples, n_features)
        One row per person; NaN marks a missing value.
    epsilon : float, default=1.0
        Total ε, split equally over the columns.
    bounds : tuple of (float or array-like, float or array-like)
        Public ``(lower, upper)``, scalars or per column. Required.
    axis : {None, 0}, default=None
        0: per column. None: for a 1-D array or one column.
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
    (ε, δ)-DP under add/remove-one-row neighbours. Column ``j``'s present
    values are released as :class:`~skdp.PrivateMean` releases one feature
    (a noisy clipped sum over a noisy count: the number of present values
    is not public), with ``ε/d`` and ``δ/d``; a row adds at most one value
    to each column, so the ``d`` releases compose to (ε, δ). With
    ``groups``, at most ``k`` of a group's present values of each column
    are kept (its own rule per column) and every sensitivity is ``k``
    times the row's, so one whole group moves each release as ``k`` rows
    at most would. With Laplace
    noise this is the noise :class:`~skdp.PrivateMean`'s paired release of
    ``d`` features adds (scale ``d/ε`` on each split sum).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import tools
    >>> x = np.random.default_rng(0).uniform(0, 10, size=10_000)
    >>> x[::2] = np.nan
    >>> round(tools.nanmean(x, bounds=(0, 10), random_state=0), 1)
    5.0
    """
    dtype, keepdims = check_output_options("nanmean", dtype, keepdims)
    grouping, budget = (groups, max_rows_per_group), (accountant, random_state)
    rows, lower, upper, releases = _mean_releases(
        array, epsilon, bounds, axis, delta, grouping, budget, "nanmean"
    )
    means = [
        mean_from_release(count, np.array([s]), lower[j : j + 1], upper[j : j + 1])[0]
        for j, (count, s) in enumerate(releases)
    ]
    return rows.shape(means, keepdims, dtype)


def nansum(
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
    """The private sum of the values that are not NaN.

    Parameters
    ----------
    array : array-like of shape (n_samples,) or (n_samples, n_features)
        One row per person; NaN marks a missing value.
    epsilon : float, default=1.0
        Total ε, split equally over the columns.
    bounds : tuple of (float or array-like, float or array-like)
        Public ``(lower, upper)``. Required.
    axis : {None, 0}, default=None
        0: per column. None: for a 1-D array or one column.
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
    The release of :func:`nanmean`, post-processed as :func:`sum` does:
    ``c n + r S`` with the noisy count ``n`` and centred sum ``S`` of the
    present values.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import tools
    >>> x = np.r_[np.ones(10_000), np.full(10_000, np.nan)]
    >>> round(tools.nansum(x, bounds=(0, 1), random_state=0), -1)
    10000.0
    """
    dtype, keepdims = check_output_options("nansum", dtype, keepdims)
    grouping, budget = (groups, max_rows_per_group), (accountant, random_state)
    rows, lower, upper, releases = _mean_releases(
        array, epsilon, bounds, axis, delta, grouping, budget, "nansum"
    )
    centre, radius = centre_and_radius(lower, upper)
    counts, sums = np.array(releases).T
    with np.errstate(over="ignore", invalid="ignore"):
        return rows.shape(centre * counts + radius * sums, keepdims, dtype)


def _nan_variances(array, epsilon, bounds, axis, delta, grouping, budget, name):
    rows, lower, upper, eps, dlt, unit = _present_columns(
        array, axis, bounds, epsilon, delta, grouping, name
    )
    k = float(unit.unit_rows)
    problem = additive_release_problem(k, k, eps, dlt, 3)
    if problem is not None:
        raise ValueError(f"{name} cannot release with epsilon={epsilon!r}: {problem}")
    accountant, random_state = budget
    source = check_random_source(random_state)
    label = "row count, clipped sums and squares"
    items = [
        (f"{name}, column {j}: {label}", additive_cost(eps, dlt))
        for j in range(rows.n_columns)
    ]
    charge_function(accountant, items, unit)
    variances = []
    for j in range(rows.n_columns):
        bounds_j = lower[j : j + 1], upper[j : j + 1]
        column = _column(rows.X, j, unit, source)
        noisy, _ = release_moment_sums(
            column, *bounds_j, eps, dlt, source, unit_rows=unit.unit_rows
        )
        variances.append(moments_from_sums(noisy, *bounds_j)[2][0, 0])
    return rows, np.array(variances)


def nanvar(
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
    """The private variance of the values that are not NaN.

    Parameters
    ----------
    array : array-like of shape (n_samples,) or (n_samples, n_features)
        One row per person; NaN marks a missing value.
    epsilon : float, default=1.0
        Total ε, split equally over the columns.
    bounds : tuple of (float or array-like, float or array-like)
        Public ``(lower, upper)``. Required.
    axis : {None, 0}, default=None
        0: per column. None: for a 1-D array or one column.
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
        Population variance (``ddof=0``).

    Notes
    -----
    (ε, δ)-DP under add/remove-one-row neighbours: per column, the release
    of :class:`~skdp.PrivateStandardScaler` for one feature (count, clipped
    sum and squares of the present values, sensitivity 1) with ``ε/d`` and
    ``δ/d``; the count of present values stays private. With ``groups``,
    as :func:`nanmean`: at most ``k`` present values of a group per column,
    sensitivities ``k`` times the row's.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import tools
    >>> x = np.random.default_rng(0).normal(0, 2, size=100_000)
    >>> x[::3] = np.nan
    >>> round(tools.nanvar(x, bounds=(-10, 10), random_state=0))
    4
    """
    dtype, keepdims = check_output_options("nanvar", dtype, keepdims)
    grouping, budget = (groups, max_rows_per_group), (accountant, random_state)
    rows, variances = _nan_variances(
        array, epsilon, bounds, axis, delta, grouping, budget, "nanvar"
    )
    return rows.shape(variances, keepdims, dtype)


def nanstd(
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
    """The private standard deviation of the values that are not NaN.

    Parameters
    ----------
    array : array-like of shape (n_samples,) or (n_samples, n_features)
        One row per person; NaN marks a missing value.
    epsilon : float, default=1.0
        Total ε, split equally over the columns.
    bounds : tuple of (float or array-like, float or array-like)
        Public ``(lower, upper)``. Required.
    axis : {None, 0}, default=None
        0: per column. None: for a 1-D array or one column.
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
        The square root of :func:`nanvar`'s release.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import tools
    >>> x = np.random.default_rng(0).normal(0, 2, size=100_000)
    >>> x[::3] = np.nan
    >>> round(tools.nanstd(x, bounds=(-10, 10), random_state=0), 1)
    2.0
    """
    dtype, keepdims = check_output_options("nanstd", dtype, keepdims)
    grouping, budget = (groups, max_rows_per_group), (accountant, random_state)
    rows, variances = _nan_variances(
        array, epsilon, bounds, axis, delta, grouping, budget, "nanstd"
    )
    return rows.shape(np.sqrt(variances), keepdims, dtype)
