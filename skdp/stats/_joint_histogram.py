"""Private joint histograms of several columns over a public grid."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms import check_random_source
from skdp.mechanisms._additive import (
    additive_cost,
    additive_noise_bound,
    additive_noise_variance,
    additive_release,
    additive_release_problem,
)
from skdp.mechanisms._grid import FixedPoint
from skdp.stats._mean_release import check_mechanism_delta
from skdp.stats._partition_counts import bounded_joint_counts, joint_cells
from skdp.utils._dask import row_statistic, validate_rows
from skdp.utils._partitions import seeds_of, stated_partition_bound
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._validation import check_required_bounds

__all__ = ["PrivateJointHistogram", "exact_joint_counts", "grid_edges"]

#: The largest public grid (number of cells) a fit accepts: every cell gets
#: noise, so the grid is held in memory as counts and as noise.
MAX_CELLS = 1 << 24


def _is_edges(spec):
    return not isinstance(spec, Integral) and np.ndim(spec) == 1


def grid_edges(bins, bounds, n_features, name):
    """The public edges of every feature, from ``bins`` and ``bounds``.

    ``bins`` is an int (that many equal-width bins per feature over
    ``bounds``), or one entry per feature: an int (equal-width over that
    feature's bounds) or an increasing array of edges (then the bounds are
    not needed for that feature). Raises, before any charge, on a malformed
    grid or a grid of more than ``MAX_CELLS`` cells.
    """
    if isinstance(bins, Integral):
        bins = [bins] * n_features
    bins = list(bins)
    if len(bins) != n_features:
        raise ValueError(
            f"{name}: bins has {len(bins)} entries for {n_features} features; "
            "give one int or one entry (int or array of edges) per feature."
        )
    needs_bounds = [j for j, spec in enumerate(bins) if not _is_edges(spec)]
    if needs_bounds:
        lower, upper = check_required_bounds(bounds, n_features, name)
    edges = []
    for j, spec in enumerate(bins):
        if _is_edges(spec):
            feature_edges = np.asarray(spec, dtype=float)
            if (
                feature_edges.size < 2
                or not np.all(np.isfinite(feature_edges))
                or not np.all(np.diff(feature_edges) > 0)
            ):
                raise ValueError(
                    f"{name}: the edges of feature {j} must be at least two "
                    "finite, strictly increasing numbers (public, stated by "
                    "you, not read from the data)."
                )
        else:
            if not isinstance(spec, Integral) or isinstance(spec, bool) or spec < 1:
                raise ValueError(
                    f"{name}: the number of bins of feature {j} must be an int "
                    f">= 1; got {spec!r}."
                )
            feature_edges = np.linspace(lower[j], upper[j], int(spec) + 1)
        edges.append(feature_edges)
    shape = tuple(e.size - 1 for e in edges)
    if np.prod(shape, dtype=float) > MAX_CELLS:
        raise ValueError(
            f"{name}: the grid has {np.prod(shape, dtype=float):.3g} cells, more "
            f"than {MAX_CELLS}; every cell is released with noise. Use fewer "
            "bins or fewer features."
        )
    return edges


def exact_joint_counts(X, edges):
    """Row counts of every cell of a public grid, in one pass without a sort.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite data.
    edges : list of ndarray
        Public increasing edges per feature. A value below a feature's first
        edge counts in its first bin, above its last in its last bin (as
        :func:`~skdp.sensitivity.exact_histogram_counts` does).

    Returns
    -------
    counts : FixedPoint of shape (bins of feature 0, bins of feature 1, ...)
        Exact integer counts, cells in C order.

    Notes
    -----
    **Sensitivity (add/remove one row).** Each row falls into exactly one
    cell (its flat index is computed from its own values and the public
    edges), so adding or removing it changes one count by 1: L1 and L2
    sensitivity 1, whatever the number of features.
    """
    shape = tuple(e.size - 1 for e in edges)
    flat = joint_cells(X, edges)
    counts = np.bincount(flat, minlength=int(np.prod(shape)))
    return FixedPoint(tuple(counts.tolist()), 0, shape)


class PrivateJointHistogram(GroupsMixin, PrivateEstimatorMixin, BaseEstimator):
    """The joint histogram of several features over a public grid, with noise.

    The counterpart of :func:`numpy.histogramdd`: every cell of the public
    grid (the product of the features' bins) gets a noisy count. For one
    histogram per feature, use :class:`PrivateHistogram`.

    Parameters
    ----------
    bins : int or sequence of (int or array-like), default=10
        An int: that many equal-width bins per feature over ``bounds``.
        A sequence: per feature, an int (equal-width bins over that
        feature's bounds) or the increasing edges of its bins (public).
    epsilon : float, default=1.0
        Total ε of one ``fit``.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        Public ``(lower, upper)`` per feature; needed for the features whose
        bins are given as a number. Values outside the grid count in the
        first or last bin of their feature.
    mechanism : {"laplace", "gaussian"}, default="laplace"
        Laplace noise (ε-DP) or the analytic Gaussian ((ε, δ)-DP).
    delta : float, default=0.0
        δ of one ``fit`` (Gaussian only).
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows with ``fit(..., groups=...)``
        (required then, refused without): see :ref:`user_level_privacy`.
    max_partitions_per_group, max_rows_per_partition : int or None, \
            default=None
        With groups, public bounds ``p`` on the cells a group adds rows to
        and ``c`` on the rows it adds to one cell (``None``: ``k``); the
        noise then follows ``min(k, p c)`` (L1) and ``sqrt(q c² + r²)``
        (L2), as in :class:`PrivateHistogram` (Notes there).
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit``; ``None`` uses the default accountant at fit time.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG.

    Attributes
    ----------
    counts_ : ndarray of shape (n_bins_0, n_bins_1, ...)
        Noisy counts of every cell (may be negative or fractional: unbiased).
    bin_edges_ : list of ndarray
        The public edges of each feature.
    noise_std_ : float
        Standard deviation of the noise on each count (public).
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    PrivateHistogram : One histogram per feature.
    skdp.tools.histogramdd : The same release as a function.

    Notes
    -----
    **Privacy.** (ε, δ)-DP under add/remove-one-row neighbours. Each row's
    cell is found from its own values and the public edges (a flat index
    from per-feature bins, then one :func:`numpy.bincount`: one pass, no
    sort), so adding or removing a row changes exactly one count by 1: L1
    and L2 sensitivity 1 for the whole grid, whatever the number of
    features (Dwork and Roth 2014, §3.3, the histogram query). Laplace noise
    of scale ``1/ε`` on every cell, or the analytic Gaussian mechanism
    (Balle and Wang 2018) for L2 sensitivity 1; exact discrete noise on
    integer counts. Empty cells get noise too: the grid is public, so which
    cells are occupied is never revealed.

    **Groups (user-level privacy).** With ``groups`` and
    ``max_rows_per_group = k``, neighbours add or remove one whole group,
    which first keeps at most ``k`` rows by a rule on its own rows only
    (:func:`~skdp.utils._groups.kept_rows`). Its kept rows change at most
    ``k`` counts by a total of ``k``: L1 sensitivity ``k``, and L2 ``k``
    (``sqrt(Σ c_i²) <= Σ c_i``; attained by ``k`` rows in one cell;
    brute-forced in ``tests/test_groups_stats.py``), so the noise is ``k``
    times the row's (``noise_std_`` and ``confidence_interval`` included).
    With ``max_partitions_per_group = p`` or ``max_rows_per_partition = c``
    a group keeps its ``p`` cells of smallest keyed hash and ``c`` rows in
    each, and the sensitivities become ``L = min(k, p c)`` (L1) and
    ``sqrt(q c² + r²)`` (L2, ``q = floor(L/c)``, ``r = L - q c``), the
    bounds of one feature of :class:`PrivateHistogram`.

    **Out-of-range values** are a per-row public rule: a value below a
    feature's first edge counts in its first bin, above its last edge in its
    last bin, as :class:`PrivateHistogram` does (and not dropped, as
    :func:`numpy.histogramdd` drops them).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.stats import PrivateJointHistogram
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(40_000, 2))
    >>> hist = PrivateJointHistogram(2, bounds=(0, 1), random_state=0).fit(X)
    >>> np.round(hist.counts_ / 1000).astype(int)
    array([[10, 10],
           [10, 10]])
    """

    _parameter_constraints = {
        "bins": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "bounds": ["array-like", tuple, None],
        "mechanism": [StrOptions({"laplace", "gaussian"})],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "max_partitions_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "max_rows_per_partition": [Interval(Integral, 1, None, closed="left"), None],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        bins=10,
        *,
        epsilon=1.0,
        bounds=None,
        mechanism="laplace",
        delta=0.0,
        max_rows_per_group=None,
        max_partitions_per_group=None,
        max_rows_per_partition=None,
        accountant=None,
        random_state=None,
    ):
        self.max_partitions_per_group = max_partitions_per_group
        self.max_rows_per_partition = max_rows_per_partition
        self.bins = bins
        self.epsilon = epsilon
        self.bounds = bounds
        self.mechanism = mechanism
        self.delta = delta
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    def _fit_cost(self, n_features=None):
        return additive_cost(self.epsilon, self.delta)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, groups=None):
        """Release the noisy count of every cell of the grid.

        Parameters
        ----------
        X : array-like or Dask collection of shape (n_samples, n_features)
            Training data. A Dask array or DataFrame is read on its cluster
            (see :ref:`dask`).
        y : None
            Ignored.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit (in memory), with ``max_rows_per_group``:
            neighbours add or remove one whole group (Notes). None: one row.

        Returns
        -------
        self : PrivateJointHistogram
        """
        X = validate_rows(self, X)
        unit = self._privacy_unit(groups, X)
        bound = stated_partition_bound(self, unit)
        k = l2 = float(unit.unit_rows)
        if bound is not None:
            k, l2 = bound.l1(), bound.l2()
        name = type(self).__name__
        edges = grid_edges(self.bins, self.bounds, X.shape[1], name)
        check_mechanism_delta(self.mechanism, self.delta)
        shape = tuple(e.size - 1 for e in edges)
        size = int(np.prod(shape))
        problem = additive_release_problem(k, l2, self.epsilon, self.delta, size)
        if problem is not None:
            raise ValueError(
                f"{name} cannot release {size} counts with epsilon="
                f"{self.epsilon!r} (sensitivity {k:g}, max_rows_per_group="
                f"{self.max_rows_per_group}): {problem} Nothing was charged."
            )
        source = check_random_source(self.random_state)
        cost = additive_cost(self.epsilon, self.delta)
        label = unit.label(f"joint histogram of {X.shape[1]} feature(s)")
        self._charge([(label, cost)], unit=unit)
        if bound is None:
            (X,) = unit.bound(source, X)
            counts = row_statistic(X, exact_joint_counts, edges)
        else:
            kept = unit.kept(source, X)
            groups, seeds = unit.groups[kept], seeds_of(source)
            counts = bounded_joint_counts(X[kept], edges, groups, bound, seeds)
        self._sensitivities = (k, l2)
        noisy = additive_release(counts, k, l2, self.epsilon, self.delta, source)
        self.counts_ = noisy.reshape(shape)
        self.bin_edges_ = edges
        self.noise_std_ = float(
            np.sqrt(additive_noise_variance(k, l2, self.epsilon, self.delta))
        )
        return self

    def confidence_interval(self, alpha=0.05):
        """Intervals for every count that hold despite the noise w.p. 1 - α.

        Parameters
        ----------
        alpha : float, default=0.05
            Failure probability, for all cells at once (union bound).

        Returns
        -------
        low, high : ndarray of the shape of `counts_`
            ``low`` is at least 0.
        """
        check_is_fitted(self)
        l1, l2 = getattr(self, "_sensitivities", (1.0, 1.0))
        alpha_each = alpha / self.counts_.size
        t = additive_noise_bound(alpha_each, l1, l2, self.epsilon, self.delta)
        return np.maximum(self.counts_ - t, 0.0), self.counts_ + t
