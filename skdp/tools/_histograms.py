"""numpy's histogram functions, released by PrivateHistogram and
PrivateJointHistogram."""

import math
from numbers import Integral

import numpy as np

from skdp.stats._histogram import PrivateHistogram
from skdp.stats._joint_histogram import PrivateJointHistogram
from skdp.tools._arrays import mechanism_of

__all__ = ["histogram", "histogram2d", "histogramdd"]


def _estimator_kwargs(epsilon, bounds, delta, max_rows_per_group, budget):
    accountant, random_state = budget
    return {
        "max_rows_per_group": max_rows_per_group,
        "epsilon": epsilon,
        "bounds": bounds,
        "mechanism": mechanism_of(delta),
        "delta": delta,
        "accountant": accountant,
        "random_state": random_state,
    }


def _check_density(function, density):
    """``density`` as a bool, checked before any charge (numpy takes None)."""
    if density is None:
        return False
    if not isinstance(density, bool | np.bool_):
        raise TypeError(
            f"{function}: density must be True, False or None; got {density!r}. "
            "Nothing was charged."
        )
    return bool(density)


def _normalised(counts, edges):
    """numpy's ``density=True`` from released counts (post-processing):
    ``counts / (total × cell volume)``, the total summed with ``math.fsum``;
    all NaN when the released total is not positive (or not finite), a rule
    on released values only."""
    total = math.fsum(np.ravel(counts))
    if not (math.isfinite(total) and total > 0):
        return np.full(np.shape(counts), np.nan)
    volume = np.ones(np.shape(counts))
    for axis, edge in enumerate(edges):
        shape = [1] * volume.ndim
        shape[axis] = -1
        volume = volume * np.diff(edge).reshape(shape)
    with np.errstate(all="ignore"):
        return np.asarray(counts, dtype=float) / total / volume


def histogram(
    sample,
    epsilon=1.0,
    bins=10,
    bounds=None,
    density=None,
    *,
    groups=None,
    max_rows_per_group=None,
    delta=0.0,
    accountant=None,
    random_state=None,
):
    """The private histogram of a 1-D sample, like :func:`numpy.histogram`.

    Parameters
    ----------
    sample : array-like of shape (n_samples,)
        One value per person.
    epsilon : float, default=1.0
        Total ε.
    bins : int or array-like, default=10
        A number of equal-width bins over ``bounds``, or the increasing
        public edges of the bins.
    bounds : tuple of (float, float) or None, default=None
        Public ``(lower, upper)`` (numpy's ``range``); required when ``bins``
        is a number. Values outside count in the first or last bin.
    density : bool or None, default=None
        ``True``: the released counts normalised as numpy's ``density=True``
        (post-processing: each cell's count over the released total and the
        cell's volume), so the result integrates to 1 over the bounds. When
        the released total is not positive (possible at small ε or with few
        rows: counts are noisy), every cell is NaN, decided from the
        released counts alone, without a warning. Cells whose released count
        is negative stay negative.
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
    counts : ndarray of shape (n_bins,)
        Noisy counts (unbiased floats, may be negative).
    bin_edges : ndarray of shape (n_bins + 1,)

    Notes
    -----
    (ε, δ)-DP under add/remove-one-row neighbours: a row is in one bin, so
    the counts have sensitivity 1 (:class:`~skdp.PrivateHistogram`, or
    :class:`~skdp.PrivateJointHistogram` for edges given by you); with
    ``groups``, ``k`` for one whole group of at most ``k`` kept rows.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import tools
    >>> x = np.random.default_rng(0).uniform(0, 10, size=10_000)
    >>> counts, edges = tools.histogram(x, bins=2, bounds=(0, 10),
    ...                                 random_state=0)
    >>> np.round(counts, -2), edges
    (array([5000., 5000.]), array([ 0.,  5., 10.]))
    """
    values = np.asarray(sample, dtype=float)
    if values.ndim != 1:
        raise ValueError(
            "histogram takes a 1-D sample; use histogramdd for several columns."
        )
    density = _check_density("histogram", density)
    budget = (accountant, random_state)
    kwargs = _estimator_kwargs(epsilon, bounds, delta, max_rows_per_group, budget)
    if isinstance(bins, Integral):
        fitted = PrivateHistogram(bins, **kwargs).fit(values[:, None], groups=groups)
        counts, edges = fitted.counts_[0], fitted.bin_edges_[0]
    else:
        fitted = PrivateJointHistogram([bins], **kwargs).fit(
            values[:, None], groups=groups
        )
        counts, edges = fitted.counts_, fitted.bin_edges_[0]
    return _normalised(counts, [edges]) if density else counts, edges


def histogramdd(
    sample,
    epsilon=1.0,
    bins=10,
    bounds=None,
    density=None,
    *,
    groups=None,
    max_rows_per_group=None,
    delta=0.0,
    accountant=None,
    random_state=None,
):
    """The private joint histogram of several columns, like
    :func:`numpy.histogramdd`.

    Parameters
    ----------
    sample : array-like of shape (n_samples, n_features)
        One row per person.
    epsilon : float, default=1.0
        Total ε.
    bins : int or sequence of (int or array-like), default=10
        As for :class:`~skdp.PrivateJointHistogram`.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        Public ``(lower, upper)``, scalars or per column (numpy's ``range``
        is a list of per-column pairs: ``bounds = tuple(zip(*range))``).
    density : bool or None, default=None
        ``True``: the released counts normalised as numpy's ``density=True``
        (post-processing: each cell's count over the released total and the
        cell's volume), so the result integrates to 1 over the bounds. When
        the released total is not positive (possible at small ε or with few
        rows: counts are noisy), every cell is NaN, decided from the
        released counts alone, without a warning. Cells whose released count
        is negative stay negative.
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
    counts : ndarray of shape (n_bins_0, n_bins_1, ...)
    edges : list of ndarray

    Notes
    -----
    (ε, δ)-DP under add/remove-one-row neighbours: a row is in one cell, so
    the whole grid has sensitivity 1 (:class:`~skdp.PrivateJointHistogram`);
    with ``groups``, ``k`` for one whole group of at most ``k`` kept rows.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import tools
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(40_000, 2))
    >>> counts, edges = tools.histogramdd(X, bins=2, bounds=(0, 1),
    ...                                   random_state=0)
    >>> np.round(counts, -3)
    array([[10000., 10000.],
           [10000., 10000.]])
    """
    density = _check_density("histogramdd", density)
    budget = (accountant, random_state)
    kwargs = _estimator_kwargs(epsilon, bounds, delta, max_rows_per_group, budget)
    fitted = PrivateJointHistogram(bins, **kwargs).fit(sample, groups=groups)
    counts, edges = fitted.counts_, fitted.bin_edges_
    return _normalised(counts, edges) if density else counts, edges


def histogram2d(
    array_x,
    array_y,
    epsilon=1.0,
    bins=10,
    bounds=None,
    density=None,
    *,
    groups=None,
    max_rows_per_group=None,
    delta=0.0,
    accountant=None,
    random_state=None,
):
    """The private joint histogram of two columns, like :func:`numpy.histogram2d`.

    Parameters
    ----------
    array_x, array_y : array-like of shape (n_samples,)
        The two values of each person (row ``i`` of both is one row).
    epsilon : float, default=1.0
        Total ε.
    bins : int or sequence of (int or array-like), default=10
        As for :func:`histogramdd`.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        Public ``(lower, upper)``, scalars or one per column.
    density : bool or None, default=None
        ``True``: the released counts normalised as numpy's ``density=True``
        (post-processing: each cell's count over the released total and the
        cell's volume), so the result integrates to 1 over the bounds. When
        the released total is not positive (possible at small ε or with few
        rows: counts are noisy), every cell is NaN, decided from the
        released counts alone, without a warning. Cells whose released count
        is negative stay negative.
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
    counts : ndarray of shape (n_bins_x, n_bins_y)
    x_edges, y_edges : ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import tools
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.uniform(0, 1, 40_000), rng.uniform(0, 1, 40_000)
    >>> counts, x_edges, y_edges = tools.histogram2d(
    ...     x, y, bins=2, bounds=(0, 1), random_state=0)
    >>> counts.shape, x_edges
    ((2, 2), array([0. , 0.5, 1. ]))
    """
    x, y = np.asarray(array_x, dtype=float), np.asarray(array_y, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(
            "histogram2d takes two 1-D arrays of the same length (one pair of "
            f"values per row); got shapes {x.shape} and {y.shape}."
        )
    counts, (x_edges, y_edges) = histogramdd(
        np.column_stack([x, y]),
        epsilon,
        bins,
        bounds,
        density,
        delta=delta,
        groups=groups,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    )
    return counts, x_edges, y_edges
