"""NaN-tolerant quantiles, percentiles and medians: NaN is a missing value.

Each column is released as a one-column :class:`~skdp.PrivateQuantile` fit
on its present values, with an equal share of ε, bounds stated by the
caller or (``bounds=None``) chosen privately on those values as the
estimator chooses them. The whole cost is charged at once before any value
is read; each column then runs under an accountant holding exactly its
share. How many values a column holds is private: a column with few or no
present values is no special case (its release on the empty column is the
same mechanism, :func:`~skdp.utils._zero_rows.fits_on_zero_rows`).
"""

import numpy as np

from skdp.mechanisms import check_random_source
from skdp.model_selection._cost import (
    check_fit_inputs,
    fit_cost,
    prepaid_accountant,
    route_accountant,
)
from skdp.stats._quantile import PrivateQuantile
from skdp.tools._arrays import (
    as_rows,
    charge_function,
    check_output_options,
    equal_shares,
)
from skdp.tools._quantiles import shaped_levels
from skdp.utils._function_unit import function_unit
from skdp.utils._validation import check_bounds, check_epsilon
from skdp.utils._warnings import silenced
from skdp.utils._zero_rows import fits_on_zero_rows

__all__ = ["nanmedian", "nanpercentile", "nanquantile"]

_MAX_SEED = 2**31 - 1


def _column_estimators(levels, d, epsilon, bounds, unit, random_state, function):
    """One unfitted one-column ``PrivateQuantile`` per column, with its share
    of ε, its bounds (or None: chosen privately) and its seed."""
    share = equal_shares(check_epsilon(epsilon), d)
    if share == 0:  # a subnormal epsilon over many columns
        raise ValueError(
            f"{function}: epsilon={epsilon!r} split equally over {d} columns "
            "leaves each column a share that rounds to 0. Pass a larger "
            "epsilon or fewer columns. Nothing was charged."
        )
    if bounds is None:
        per_column = [None] * d
    else:
        lower, upper = check_bounds(bounds, d)
        per_column = [(lower[j], upper[j]) for j in range(d)]
    if random_state is None:
        seeds = [None] * d
    else:  # reproducible, and each column its own stream
        seeds = check_random_source(random_state).integers(_MAX_SEED, size=d)
        seeds = [int(seed) for seed in seeds]
    return [
        PrivateQuantile(
            np.atleast_1d(levels),
            epsilon=share,
            bounds=per_column[j],
            max_rows_per_group=None if unit.groups is None else unit.max_rows,
            random_state=seeds[j],
        )
        for j in range(d)
    ]


def _present(X, j, groups):
    """Column ``j``'s present values and their groups (None without)."""
    present = ~np.isnan(X[:, j])
    return X[present, j][:, None], None if groups is None else groups[present]


def _release(array, levels, epsilon, bounds, axis, keepdims, function, grouping,
             budget):  # fmt: skip
    """Validate, charge the whole cost once, release each column."""
    levels = np.asarray(levels, dtype=float)
    if levels.ndim > 1:
        raise ValueError(
            f"{function}: quant must be a number or a 1-D array of levels."
        )
    _, keepdims = check_output_options(function, None, keepdims)
    rows = as_rows(array, axis, function)
    if np.isinf(rows.X).any():
        raise ValueError(
            f"{function}: the input contains inf; only NaN means missing. "
            "Replace infinite values (or clip them to the bounds) first."
        )
    d = rows.n_columns
    unit = function_unit(function, *grouping, rows.X)
    accountant, random_state = budget
    estimators = _column_estimators(
        levels, d, epsilon, bounds, unit, random_state, function
    )
    empty = rows.X[:0, :1]  # the schema, no value: public checks only
    no_groups = None if unit.groups is None else unit.groups[:0]
    with fits_on_zero_rows():
        for estimator in estimators:
            check_fit_inputs(estimator, empty, None, groups=no_groups)
    costs = [fit_cost(estimator) for estimator in estimators]
    items = [
        (f"{function}, column {j}: quantiles of its present values", cost)
        for j, cost in enumerate(costs)
    ]
    charge_function(accountant, items, unit)
    released = np.empty((levels.size, d))
    with silenced(), fits_on_zero_rows():
        for j, (estimator, cost) in enumerate(zip(estimators, costs, strict=True)):
            model = route_accountant(estimator, prepaid_accountant(cost))
            values, groups = _present(rows.X, j, unit.groups)
            released[:, j] = model.fit(values, groups=groups).quantiles_[:, 0]
    return shaped_levels(rows, released, keepdims, levels)


def nanquantile(
    array,
    quant,
    epsilon=1.0,
    bounds=None,
    axis=None,
    keepdims=False,
    *,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """Private quantiles of the values that are not NaN.

    Parameters
    ----------
    array : array-like of shape (n_samples,) or (n_samples, n_features)
        One row per person; NaN marks a missing value.
    quant : float or array-like of shape (n_quantiles,)
        Levels in ``[0, 1]``.
    epsilon : float, default=1.0
        Total ε, split equally over the columns.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        Public ``(lower, upper)``, scalars or per column. ``None`` chooses
        each column's bounds privately on its present values with 30 % of
        its share of ε, as :class:`~skdp.PrivateQuantile` does.
    axis : {None, 0}, default=None
        0: per column. None: for a 1-D array or one column.
    keepdims : bool, default=False
        Keep the reduced axes with size one, as numpy does.
    groups : array-like of shape (n_samples,), default=None
        Each row's person (privacy unit), with ``max_rows_per_group``:
        neighbours add or remove one whole group, of which at most ``k``
        rows are kept (:ref:`user_level_privacy`). None: one row.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows (required with ``groups``).
    accountant : BudgetAccountant or None, default=None
        Charged once for all columns; ``None`` is the default accountant.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG.

    Returns
    -------
    quantiles : float or ndarray
        Shape as numpy's :func:`numpy.nanquantile`.

    Notes
    -----
    ε-DP under add/remove-one-row neighbours. Column ``j``'s present values
    are released by a one-column :class:`~skdp.PrivateQuantile` (its Notes
    give the mechanism) with ``ε/d``; a row adds at most one value to each
    column, so the ``d`` releases compose to ε. The number of present values
    is not public and is never read outside those releases: a column
    without any is released like any other (its quantiles are then noise
    over the bounds). With ``groups``, each column's present values are
    bounded to ``k`` per group and released as
    :class:`~skdp.PrivateQuantile` releases a group (at ``ε/(d k)``).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import tools
    >>> x = np.random.default_rng(0).uniform(0, 100, size=20_000)
    >>> x[::2] = np.nan
    >>> np.round(tools.nanquantile(x, [0.25, 0.75], bounds=(0, 100),
    ...                            random_state=0))
    array([25., 75.])
    """
    grouping, budget = (groups, max_rows_per_group), (accountant, random_state)
    return _release(
        array, quant, epsilon, bounds, axis, keepdims, "nanquantile", grouping, budget
    )


def nanpercentile(
    array,
    percent,
    epsilon=1.0,
    bounds=None,
    axis=None,
    keepdims=False,
    *,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """Private percentiles of the values that are not NaN: :func:`nanquantile`
    at ``percent / 100``.

    Parameters
    ----------
    array : array-like of shape (n_samples,) or (n_samples, n_features)
        One row per person; NaN marks a missing value.
    percent : float or array-like of shape (n_percentiles,)
        Levels in ``[0, 100]``.
    epsilon : float, default=1.0
        Total ε.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        As for :func:`nanquantile` (``None``: chosen privately).
    axis : {None, 0}, default=None
        As for :func:`nanquantile`.
    keepdims : bool, default=False
        Keep the reduced axes with size one, as numpy does.
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
    percentiles : float or ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import tools
    >>> x = np.random.default_rng(0).uniform(0, 100, size=20_000)
    >>> x[::2] = np.nan
    >>> round(tools.nanpercentile(x, 90, bounds=(0, 100), random_state=0))
    90
    """
    levels = np.asarray(percent, dtype=float) / 100
    grouping, budget = (groups, max_rows_per_group), (accountant, random_state)
    return _release(
        array,
        levels,
        epsilon,
        bounds,
        axis,
        keepdims,
        "nanpercentile",
        grouping,
        budget,
    )


def nanmedian(
    array,
    epsilon=1.0,
    bounds=None,
    axis=None,
    keepdims=False,
    *,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """The private median of the values that are not NaN: :func:`nanquantile`
    at 0.5.

    Parameters
    ----------
    array : array-like of shape (n_samples,) or (n_samples, n_features)
        One row per person; NaN marks a missing value.
    epsilon : float, default=1.0
        Total ε.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        As for :func:`nanquantile` (``None``: chosen privately).
    axis : {None, 0}, default=None
        As for :func:`nanquantile`.
    keepdims : bool, default=False
        Keep the reduced axes with size one, as numpy does.
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
    median : float or ndarray of shape (n_features,)

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import tools
    >>> x = np.random.default_rng(0).exponential(10, size=20_000)
    >>> x[::2] = np.nan
    >>> round(tools.nanmedian(x, random_state=0))  # bounds chosen privately
    7
    """
    grouping, budget = (groups, max_rows_per_group), (accountant, random_state)
    return _release(
        array, 0.5, epsilon, bounds, axis, keepdims, "nanmedian", grouping, budget
    )
