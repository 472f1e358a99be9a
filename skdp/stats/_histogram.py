"""Private histograms over public bins."""

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
    check_additive_release,
)
from skdp.sensitivity import exact_histogram_counts
from skdp.sensitivity._mean import per_feature_sensitivities
from skdp.stats._mean import check_mechanism_delta
from skdp.stats._partition_counts import bounded_histogram_counts
from skdp.utils._dask import row_statistic, validate_rows
from skdp.utils._partitions import seeds_of, stated_partition_bound
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._validation import check_required_bounds

__all__ = ["PrivateHistogram"]


class PrivateHistogram(GroupsMixin, PrivateEstimatorMixin, BaseEstimator):
    """Per-feature histograms over public bins, released with noise.

    Parameters
    ----------
    bins : int, default=10
        Number of equal-width bins per feature over the public bounds.
    epsilon : float, default=1.0
        Total ε of one ``fit``, over all features.
    bounds : tuple of (float or array-like, float or array-like)
        Public ``(lower, upper)`` per feature. Values outside fall in the
        first or last bin.
    mechanism : {"laplace", "gaussian"}, default="laplace"
        Laplace noise (ε-DP) or the analytic Gaussian ((ε, δ)-DP).
    delta : float, default=0.0
        δ of one ``fit`` (Gaussian only).
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on the rows of one privacy unit when ``fit`` is
        given ``groups`` (required then, refused without them); the noise
        is ``k`` times the row-level noise (see Notes).
    max_partitions_per_group, max_rows_per_partition : int or None, \
            default=None
        With groups, public bounds ``p`` on the bins of a feature a group
        adds rows to and ``c`` on the rows it adds to one bin (``None``:
        ``k``); the noise then follows ``min(k, p c)`` (L1) and ``sqrt(q c²
        + r²)`` (L2), see Notes.
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit``; ``None`` uses the default accountant at fit time.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG.

    Attributes
    ----------
    counts_ : ndarray of shape (`n_features_in_`, bins)
        Noisy counts (may be negative or fractional: unbiased).
    bin_edges_ : ndarray of shape (`n_features_in_`, bins + 1)
        The public edges.
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
    PrivateKBinsDiscretizer : Bins as a transformer.

    Notes
    -----
    One pass over the data, no sort (:func:`~skdp.sensitivity.
    exact_histogram_counts`): a row falls into exactly one bin of each
    feature, so adding or removing it moves the vector of all counts by
    ``d`` in L1 norm and ``sqrt(d)`` in L2 norm. Laplace noise of scale
    ``d/ε`` per count (Dwork and Roth 2014, §3.3), or the analytic Gaussian
    for L2 sensitivity ``sqrt(d)``, exact discrete noise on sums that are
    exact integers.

    **Groups (user-level privacy).** With ``groups`` and
    ``max_rows_per_group = k``, neighbours add or remove one whole group.
    Each group keeps at most ``k`` rows by a rule that depends on its own
    rows only (:func:`~skdp.utils._groups.kept_rows`); its kept rows add at
    most ``k`` to the counts of each feature, spread over at most ``k``
    bins: the count vector moves by ``k d`` in L1 and at most ``k sqrt(d)``
    in L2 (``sqrt(Σ_b m_b²) <= Σ_b m_b = k`` per feature; attained when the
    ``k`` rows share a bin), so the noise is ``k`` times the row-level noise
    (brute-forced in ``tests/test_groups_sensitivity.py``). A group that
    touches fewer bins moves the L2 norm less, but the bound holds for the
    worst group and the noise cannot depend on the data.

    **Bins per group.** With ``max_partitions_per_group = p`` or
    ``max_rows_per_partition = c`` stated, each group (after its ``k``
    rows) keeps, feature by feature, the rows of its ``p`` bins of smallest
    keyed hash and at most ``c`` rows of each (:func:`~skdp.utils.
    _partitions.partition_rows`, its own rows only). It then adds ``m_b <=
    c`` to at most ``p`` bins with ``Σ m_b <= L = min(k, p c)``: L1
    ``L d``, and L2 ``sqrt(d (q c² + r²))`` with ``q = floor(L/c)``, ``r =
    L - q c`` (``Σ m_b²`` is convex, largest at that vertex;
    :func:`~skdp.utils._partitions.partition_contribution`, brute-forced in
    ``tests/utils/test_partitions.py``). With ``k = 10``, ``c = 1``,
    ``p = 3`` the Gaussian noise is ``sqrt(3)/10`` of ``k``'s (L2 ``1.73``
    against ``10``), at the price of counting each person at most once per
    bin and in three bins.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.stats import PrivateHistogram
    >>> X = np.random.default_rng(0).uniform(0, 10, size=(10_000, 1))
    >>> hist = PrivateHistogram(5, bounds=(0, 10), random_state=0).fit(X)
    >>> np.round(hist.counts_ / 1000).astype(int)
    array([[2, 2, 2, 2, 2]])
    """

    _parameter_constraints = {
        "bins": [Interval(Integral, 1, None, closed="left")],
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
        """Release the noisy counts of every feature's bins.

        Parameters
        ----------
        X : array-like or Dask collection of shape (n_samples, n_features)
            Training data. A Dask array or DataFrame is read on its cluster
            (see :ref:`dask`).
        y : None
            Ignored.
        groups : array-like of shape (n_samples,), default=None
            The privacy unit of each row (in-memory data only), with
            ``max_rows_per_group`` (see Notes). ``None``: one row.

        Returns
        -------
        self : PrivateHistogram
        """
        X = validate_rows(self, X)
        unit = self._privacy_unit(groups, X)
        bound = stated_partition_bound(self, unit)
        d = X.shape[1]
        lower, upper = check_required_bounds(self.bounds, d, type(self).__name__)
        check_mechanism_delta(self.mechanism, self.delta)
        edges = [
            np.linspace(lo, hi, self.bins + 1)
            for lo, hi in zip(lower, upper, strict=True)
        ]
        l1, l2 = per_feature_sensitivities(d, unit.unit_rows)
        if bound is not None:
            l1, l2 = bound.l1(d), bound.l2(d)
        name = type(self).__name__
        check_additive_release(name, l1, l2, self.epsilon, self.delta, d * self.bins)
        source = check_random_source(self.random_state)
        cost = additive_cost(self.epsilon, self.delta)
        self._charge([(unit.label(f"histograms of {d} feature(s)"), cost)], unit=unit)
        if bound is None:
            (X,) = unit.bound(source, X)
            counts = row_statistic(X, exact_histogram_counts, edges)
        else:
            kept = unit.kept(source, X)
            groups = unit.groups[kept]
            seeds = seeds_of(source)
            counts = bounded_histogram_counts(X[kept], edges, groups, bound, seeds)
        self._sensitivities = (l1, l2)
        noisy = additive_release(counts, l1, l2, self.epsilon, self.delta, source)
        self.counts_ = noisy.reshape(d, self.bins)
        self.bin_edges_ = np.array(edges)
        self.noise_std_ = float(
            np.sqrt(additive_noise_variance(l1, l2, self.epsilon, self.delta))
        )
        return self

    def confidence_interval(self, alpha=0.05):
        """Intervals for every count that hold despite the noise w.p. 1 - α.

        Parameters
        ----------
        alpha : float, default=0.05
            Failure probability, for all counts at once (union bound).

        Returns
        -------
        low, high : ndarray of shape (`n_features_in_`, bins)
            ``low`` is at least 0.
        """
        check_is_fitted(self)
        d = self.n_features_in_
        t = additive_noise_bound(
            alpha / self.counts_.size,
            *getattr(self, "_sensitivities", per_feature_sensitivities(d)),
            self.epsilon,
            self.delta,
        )
        return np.maximum(self.counts_ - t, 0.0), self.counts_ + t
