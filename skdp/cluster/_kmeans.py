"""Private k-means: noisy Lloyd steps on exact per-cluster split sums."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.cluster import KMeans
from sklearn.metrics import euclidean_distances
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from skdp.base import PrivateEstimatorMixin
from skdp.linear_model._release import (
    check_release_plan,
    gaussian_fit_cost,
    unit_multipliers,
)
from skdp.mechanisms import (
    check_random_source,
    gaussian_noise_multipliers,
    gaussian_release,
)
from skdp.mechanisms._grid import FixedPoint
from skdp.sensitivity import exact_split_sums
from skdp.stats._joint_histogram import MAX_CELLS
from skdp.utils._dask import row_statistic, validate_rows
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._validation import check_required_bounds

__all__ = ["PrivateKMeans", "centres_from_split_sums", "cluster_split_sums"]


def lloyd_release_plan(n_features, n_steps, epsilon, delta):
    """``(l2_sensitivity, noise multipliers)`` of ``n_steps`` noisy steps.

    One row moves one cluster's split sums by at most ``sqrt(d)`` in L2 norm
    (:func:`cluster_split_sums`); equal shares of one Gaussian budget
    (:func:`~skdp.mechanisms.gaussian_noise_multipliers`) compose to
    ``(epsilon, delta)``.
    """
    multipliers = gaussian_noise_multipliers(epsilon, delta, [1.0] * n_steps)
    return float(np.sqrt(n_features)), multipliers


def nearest_centre(X, centres):
    """Index of each row's nearest centre (ties to the lowest index).

    Silent on rows whose distances overflow (near ``±max double``): the
    labels of the training rows are computed after the charge.
    """
    if X.shape[0] == 0:  # an empty block of a Dask input
        return np.zeros(0, dtype=np.intp)
    with np.errstate(all="ignore"):
        return np.argmin(euclidean_distances(X, centres, squared=True), axis=1)


def cluster_split_sums(X, centres, lower, upper):
    """Exact split sums of the rows nearest each centre, shape (k, 2, d).

    Each row is clipped to the public bounds, assigned to its nearest
    (public, previously released) centre, and adds ``(a_j, 1 - a_j)``,
    ``a_j = (clip(x_j) - L_j)/(U_j - L_j)``, to its cluster's pairs
    (:func:`~skdp.sensitivity.exact_split_sums`): integers on a fixed-point
    grid, added exactly.

    Notes
    -----
    **Sensitivity (add/remove one row).** The centres are fixed before the
    step, so a row's cluster depends on the row alone and the other rows'
    clusters do not move: adding or removing it changes one cluster's
    ``2d`` values, each pair by ``(a_j, 1 - a_j)``, in L2 norm by at most
    ``sqrt(sum_j a_j² + (1 - a_j)²) <= sqrt(d)``.
    """
    clipped = np.clip(X, lower, upper)
    labels = nearest_centre(clipped, centres)
    numerators, exponent = [], None
    for k in range(centres.shape[0]):
        sums = exact_split_sums(clipped[labels == k], lower, upper)
        numerators.extend(sums.numerators)
        exponent = sums.exponent
    shape = (centres.shape[0], 2, X.shape[1])
    return FixedPoint(tuple(numerators), exponent, shape)


def centres_from_split_sums(noisy, lower, upper, previous):
    """Released centres and counts from noisy split sums (post-processing).

    A cluster's count is the mean over features of ``u_j + v_j``; its
    centre ``L + (U - L) u / count``, clipped to the bounds. A cluster whose
    released count is below 1 keeps its previous centre (a rule on released
    values).
    """
    counts = noisy.sum(axis=1).mean(axis=1)
    with np.errstate(all="ignore"):
        fractions = np.clip(noisy[:, 0] / np.maximum(counts, 1.0)[:, None], 0, 1)
        centre, half = upper / 2 + lower / 2, upper / 2 - lower / 2  # no overflow
        centres = np.clip(centre + half * (2 * fractions - 1), lower, upper)
    keep = ~(counts >= 1.0)
    centres[keep] = previous[keep]
    return centres, counts


def split_centres(centres, lower, upper, rng):
    """Each centre twice, moved apart along a random direction (public
    randomness): the next Lloyd step splits its cluster by the hyperplane
    through it, so two groups that shared a centre get one each (the
    splitting initialisation of Linde, Buzo and Gray 1980)."""
    directions = rng.standard_normal(centres.shape)
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    offset = 1e-3 * (upper / 2 - lower / 2) * directions
    return np.clip(np.concatenate([centres - offset, centres + offset]), lower, upper)


def reduce_centres(centres, weights, n_clusters, seed, lower, upper):
    """``n_clusters`` centres from weighted released ones (post-processing).

    scikit-learn's k-means on the released centres, weighted by their
    released counts (at least a tiny positive weight): no data is read. It
    runs in units of the bounds' half-widths (finite squares for any finite
    bounds) and maps back.
    """
    weights = np.maximum(np.nan_to_num(weights, nan=0.0), 0.0) + 1e-9
    centre, half = upper / 2 + lower / 2, upper / 2 - lower / 2
    units = (centres / 2 - centre / 2) / (half / 2)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # duplicate centres: a public rule
        model = KMeans(n_clusters, n_init=10, random_state=seed)
        model.fit(units, sample_weight=weights)
        reduced = centre + half * model.cluster_centers_
    return np.clip(reduced, lower, upper)


class PrivateKMeans(
    GroupsMixin,
    PrivateEstimatorMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    ClusterMixin,
    BaseEstimator,
):
    """k-means clustering under differential privacy, from public bounds.

    Lloyd's algorithm with noisy steps: each step assigns the rows to the
    nearest of the current (released) centres and releases every cluster's
    count and clipped sums with Gaussian noise. The centres start from a
    private clustering into more clusters (``init_clusters``), grown by
    splitting and reduced to ``n_clusters`` by post-processing.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters (public).
    epsilon : float, default=1.0
        Total ε of one ``fit``.
    delta : float, default=1e-6
        Total δ of one ``fit``.
    bounds : tuple of (float or array-like, float or array-like)
        Public ``(lower, upper)`` per feature. Required; rows are clipped to
        them.
    max_iter : int, default=4
        Number of noisy Lloyd steps with ``n_clusters`` centres (public: the
        steps run whatever the data).
    init : {"split", "uniform"}, default="split"
        ``"split"``: the private splitting initialisation (see Notes).
        ``"uniform"``: centres drawn uniformly in the bounds (public
        randomness, no budget; often stuck in poor local optima).
    init_clusters : int or None, default=None
        Number of centres the splitting initialisation grows to (rounded up
        to a power of two; ``None``: four per cluster), at least
        ``n_clusters``.
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit``; ``None`` uses the default accountant at fit time.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows with ``fit(X, groups=...)``
        (required then, refused without): the noise is ``k`` times the
        row's (Notes, and :ref:`user_level_privacy`).
    random_state : int, RandomState instance or None, default=None
        Noise and the initial centres. ``None`` draws from the operating
        system's CSPRNG.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, `n_features_in_`)
        The private centres.
    counts_ : ndarray of shape (n_clusters,)
        The noisy cluster sizes of the last step.
    n_iter_ : int
        Number of Lloyd steps with ``n_clusters`` centres (``max_iter``).
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    sklearn.cluster.KMeans : The non-private estimator.

    Notes
    -----
    **Privacy.** (ε, δ)-DP under add/remove-one-row neighbours. One fit is
    ``ceil(log2(init_clusters)) + max_iter`` Gaussian releases, chosen adaptively (each
    step's centres come from the previous release): the per-cluster split
    sums (:func:`cluster_split_sums`), of L2 sensitivity ``sqrt(d)`` whatever
    the number of clusters, since a row is in one cluster. Their noise
    multipliers come from :func:`~skdp.mechanisms.gaussian_noise_multipliers`
    with equal shares: Gaussian releases compose exactly (Gaussian
    differential privacy, Dong, Roth and Su 2022), so the fit is one
    Gaussian mechanism calibrated to (ε, δ), and its zCDP cost is recorded
    for the accountant. The split-sum basis carries the cluster's count at
    no extra sensitivity (see :class:`~skdp.PrivateMean`).

    **Groups** (``fit(X, groups=g)``, ``max_rows_per_group=k``; add/remove
    one whole group). Each group keeps at most k rows (a keyed choice among
    its own rows, the same for any row order); in every step its rows move
    the split sums of their clusters by at most ``k sqrt(d)`` (triangle
    inequality; k equal rows in one cluster attain it; brute-forced in
    tests/test_groups_models.py), so every multiplier is multiplied by k
    (:func:`~skdp.linear_model._release.unit_multipliers`): each step has
    the row's noise-to-sensitivity ratio and the fit the same (ε, δ).

    **Initialisation** (``init="split"``, after Linde, Buzo and Gray 1980).
    From the centre of the bounds, every centre is doubled (moved apart by
    a small step along a random direction: public randomness) and one noisy
    Lloyd step is run, with 2, 4, 8, ... centres up to ``init_clusters``;
    the released centres, weighted by their released counts, are then
    clustered into ``n_clusters`` by scikit-learn's k-means
    (post-processing). A step splits each cluster by a hyperplane through
    its centre, so two groups that share a centre get one each; centres
    drawn uniformly in a 10-dimensional box instead often leave one centre
    nearest to two groups (3 to 7 times scikit-learn's cost on the blobs of
    ``benchmarks/bench_kmeans.py``). The sensitivity does not grow with the
    number of centres, so these steps cost as much as the others.

    **Size.** A step releases ``2 k d`` values for ``k`` centres; a fit
    whose largest step would release more than ``2**24`` (the cap of
    :class:`~skdp.PrivateJointHistogram`'s grid) is refused before the
    charge.

    **After the charge** nothing raises or warns on the data: a cluster whose
    released count is below 1 keeps its centre (a rule on released values).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> from skdp.cluster import PrivateKMeans
    >>> X, _ = make_blobs(20_000, centers=[[-5, -5], [5, 5]], random_state=0)
    >>> km = PrivateKMeans(2, bounds=(-10, 10), random_state=0).fit(X)
    >>> np.round(np.sort(km.cluster_centers_, axis=0))
    array([[-5., -5.],
           [ 5.,  5.]])
    """

    _parameter_constraints = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "bounds": ["array-like", tuple, None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "init": [StrOptions({"split", "uniform"})],
        "init_clusters": [Interval(Integral, 2, None, closed="left"), None],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        epsilon=1.0,
        delta=1e-6,
        bounds=None,
        max_iter=4,
        init="split",
        init_clusters=None,
        accountant=None,
        max_rows_per_group=None,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.max_iter = max_iter
        self.init = init
        self.init_clusters = init_clusters
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    def _fit_cost(self, n_features=None):
        return gaussian_fit_cost(self.epsilon, self.delta)

    def _steps(self):
        """Number of centres in each noisy step (public): the splitting
        initialisation doubles them from 2 up to ``init_clusters`` (rounded up
        to a power of two), then ``max_iter`` steps with ``n_clusters``."""
        k = self.n_clusters
        if self.init == "uniform":
            return [k] * self.max_iter
        target = 4 * k if self.init_clusters is None else self.init_clusters
        levels = max(int(np.ceil(np.log2(max(target, 2)))), 1)
        return [2**level for level in range(1, levels + 1)] + [k] * self.max_iter

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, groups=None):
        """Release the private centres.

        Parameters
        ----------
        X : array-like or Dask collection of shape (n_samples, n_features)
            Training data. A Dask array or DataFrame is read on its cluster
            (see :ref:`dask`): each step's sums are added over its blocks,
            exactly.
        y : None
            Ignored.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit (in memory), with ``max_rows_per_group``:
            neighbours add or remove one whole group (Notes). None: one row.

        Returns
        -------
        self : PrivateKMeans
        """
        X = validate_rows(self, X)
        d = X.shape[1]
        name = type(self).__name__
        lower, upper = check_required_bounds(self.bounds, d, name)
        unit = self._privacy_unit(groups, X)
        if self.init_clusters is not None and self.init_clusters < self.n_clusters:
            raise ValueError(
                f"{name}: init_clusters={self.init_clusters} must be at least "
                f"n_clusters={self.n_clusters}."
            )
        steps = self._steps()
        largest = 2 * max(steps) * d
        if largest > MAX_CELLS:
            raise ValueError(
                f"{name}: a step with {max(steps)} centres releases {largest} "
                f"noisy values (2 per centre and feature), more than {MAX_CELLS}; "
                "every row is compared with every centre. Use fewer clusters "
                "(n_clusters, init_clusters) or fewer features. Nothing was "
                "charged."
            )
        sensitivity, multipliers = lloyd_release_plan(
            d, len(steps), self.epsilon, self.delta
        )
        multipliers = unit_multipliers(multipliers, unit.unit_rows)
        check_release_plan(
            name,
            [
                ("cluster sums", sensitivity, r, 2 * k * d)
                for k, r in zip(steps, multipliers, strict=True)
            ],
        )
        source = check_random_source(self.random_state)
        # public randomness for the starting centres (not noise on data)
        seeds = np.random.default_rng(source.uint64(size=4))
        label = unit.label(f"{len(steps)} noisy Lloyd steps")
        self._charge([(label, self._fit_cost(d))], unit=unit)
        (X,) = unit.bound(source, X)

        if self.init == "uniform":
            centres = seeds.uniform(lower, upper, size=(steps[0], d))
        else:
            centres = (lower / 2 + upper / 2)[None, :]
        counts = np.ones(centres.shape[0])
        for k, multiplier in zip(steps, multipliers, strict=True):
            if k == 2 * centres.shape[0] and self.init == "split":
                centres = split_centres(centres, lower, upper, seeds)
            elif k != centres.shape[0]:  # end of the initialisation
                seed = int(seeds.integers(2**31))
                centres = reduce_centres(centres, counts, k, seed, lower, upper)
            statistic = row_statistic(X, cluster_split_sums, centres, lower, upper)
            noisy = gaussian_release(
                statistic, sensitivity, multiplier, random_state=source
            )
            centres, counts = centres_from_split_sums(
                np.asarray(noisy, float), lower, upper, centres
            )
        self.cluster_centers_ = centres
        self.counts_ = counts
        self.n_iter_ = self.max_iter
        return self

    def fit_predict(self, X, y=None, groups=None):
        """Fit, then return the nearest centre of each training row.

        The estimator keeps no ``labels_`` (scikit-learn's clusterers do): its
        length is the number of training rows, which is not public, and each
        entry is a row's own label. They are returned to the caller, who
        holds the rows, and not stored.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.
        groups : array-like of shape (n_samples,), default=None
            As for :meth:`fit`.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        return self.fit(X, groups=groups).predict(X)

    def predict(self, X):
        """The nearest centre of each row (post-processing, free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return nearest_centre(X, self.cluster_centers_)

    def transform(self, X):
        """Distances of each row to every centre (post-processing, free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        distances : ndarray of shape (n_samples, n_clusters)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return euclidean_distances(X, self.cluster_centers_)

    def score(self, X, y=None):
        """Minus the k-means cost of ``X`` with the private centres.

        Not private when ``X`` is sensitive: it reads every row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        score : float
            ``-sum_i min_k ||x_i - c_k||²``, as
            :meth:`sklearn.cluster.KMeans.score`.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        distances = euclidean_distances(X, self.cluster_centers_, squared=True)
        return -float(distances.min(axis=1).sum())

    @property
    def _n_features_out(self):
        return self.n_clusters
