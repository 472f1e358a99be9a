"""Quantiles, percentiles and medians as functions of PrivateQuantile."""

import numpy as np

from skdp.stats._quantile import PrivateQuantile
from skdp.tools._arrays import as_rows, check_output_options

__all__ = ["median", "percentile", "quantile"]


def quantile(
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
    """Private quantiles, as :class:`~skdp.PrivateQuantile` releases them.

    Parameters
    ----------
    array : array-like of shape (n_samples,) or (n_samples, n_features)
        One row per person (the first axis). No NaN.
    quant : float or array-like of shape (n_quantiles,)
        Levels in ``[0, 1]``.
    epsilon : float, default=1.0
        Total ε, over all levels and columns.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        Public ``(lower, upper)``, scalars or per column. ``None`` chooses
        them privately first with 30 % of ε, as
        :class:`~skdp.PrivateQuantile` does; stated bounds cost nothing.
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
        Charged; ``None`` is the default accountant.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG.

    Returns
    -------
    quantiles : float or ndarray
        Shape as numpy's: ``quant``'s shape, then one value per column for
        ``axis=0``.

    Notes
    -----
    ε-DP under add/remove-one-row neighbours, or of one whole group with
    ``groups``: the exponential-type selection of
    :class:`~skdp.PrivateQuantile` (``method="joint"``: all levels of a
    column in one ordered release; at ``ε/k`` with groups).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import tools
    >>> x = np.random.default_rng(0).uniform(0, 100, size=10_000)
    >>> np.round(tools.quantile(x, [0.25, 0.75], bounds=(0, 100),
    ...                         random_state=0))
    array([25., 75.])
    """
    levels = np.asarray(quant, dtype=float)
    if levels.ndim > 1:
        raise ValueError("quantile: quant must be a number or a 1-D array of levels.")
    _, keepdims = check_output_options("quantile", None, keepdims)
    rows = as_rows(array, axis, "quantile")
    fitted = PrivateQuantile(
        np.atleast_1d(levels),
        epsilon=epsilon,
        bounds=bounds,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    ).fit(rows.X, groups=groups)
    return shaped_levels(rows, fitted.quantiles_, keepdims, levels)


def shaped_levels(rows, released, keepdims, levels):
    """The released ``(n_levels, n_columns)`` quantiles in numpy's shape:
    the rows' axis and ``keepdims``, and no level axis for a scalar level."""
    shaped = rows.shape(released, keepdims)  # (n_levels, ...)
    if levels.ndim == 0:
        return shaped[0] if np.ndim(shaped) else shaped
    return shaped


def percentile(
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
    """Private percentiles: :func:`quantile` at ``percent / 100``.

    Parameters
    ----------
    array : array-like of shape (n_samples,) or (n_samples, n_features)
        One row per person.
    percent : float or array-like of shape (n_percentiles,)
        Levels in ``[0, 100]``.
    epsilon : float, default=1.0
        Total ε.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        As for :func:`quantile`.
    axis : {None, 0}, default=None
        As for :func:`quantile`.
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
    >>> x = np.random.default_rng(0).uniform(0, 100, size=10_000)
    >>> round(tools.percentile(x, 90, bounds=(0, 100), random_state=0))
    90
    """
    return quantile(
        array,
        np.asarray(percent, dtype=float) / 100,
        epsilon,
        bounds,
        axis,
        keepdims,
        groups=groups,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    )


def median(
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
    """The private median: :func:`quantile` at 0.5.

    Parameters
    ----------
    array : array-like of shape (n_samples,) or (n_samples, n_features)
        One row per person.
    epsilon : float, default=1.0
        Total ε.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        As for :func:`quantile`.
    axis : {None, 0}, default=None
        As for :func:`quantile`.
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
    >>> x = np.random.default_rng(0).exponential(10, size=10_000)
    >>> round(tools.median(x, bounds=(0, 100), random_state=0))
    7
    """
    return quantile(
        array,
        0.5,
        epsilon,
        bounds,
        axis,
        keepdims,
        groups=groups,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    )
