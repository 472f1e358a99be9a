"""Private random decision trees: splits drawn from public bounds, leaves'
class counts released with noise."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from skdp.base import PrivateEstimatorMixin
from skdp.tree._fit import fit_random_trees, forest_proba, random_trees_cost
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._validation import validate_private_data

__all__ = ["BaseRandomTreesClassifier", "PrivateDecisionTreeClassifier"]

#: Largest accepted ``max_depth``: a tree has ``2**max_depth`` leaves, each
#: released with noise, so deeper trees are noise (and memory) only.
MAX_DEPTH = 20


class BaseRandomTreesClassifier(
    GroupsMixin, PrivateEstimatorMixin, ClassifierMixin, BaseEstimator
):
    """What the private tree and forest share: parameters, fit and predict."""

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "max_depth": [Interval(Integral, 0, MAX_DEPTH, closed="both")],
        "bounds": ["array-like", tuple, None],
        "classes": ["array-like", None],
        "bounds_share": [Interval(Real, 0, 1, closed="neither")],
        "upper_limit": [Interval(Real, 0, None, closed="neither")],
        "mechanism": [StrOptions({"laplace", "gaussian"})],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def _n_trees_and_rows(self):
        return 1, "all"

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, groups=None):
        """Charge the budget, draw the random splits and release the leaves.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or Dask array
            Training data (finite). A Dask array is read on its cluster
            (see :ref:`dask`), with ``y`` a Dask array of its rows and the
            public ``classes`` given; the leaf counts are summed block by
            block (Notes).
        y : array-like of shape (n_samples,) or Dask array
            Class labels, all in the public ``classes`` when stated
            (refused before the charge otherwise).
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights in [0, 1] (in-memory data only): each row adds its
            weight to its leaf's class count, at the noise of the
            unweighted fit (Notes). Weights outside [0, 1] are refused
            before the charge.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit, with ``max_rows_per_group`` (and public
            ``classes`` and ``bounds``): neighbours add or remove one whole
            group (Notes). None: one row.

        Returns
        -------
        self : object
        """
        n_trees, tree_rows = self._n_trees_and_rows()
        release = fit_random_trees(
            self, X, y, n_trees, tree_rows, groups, sample_weight
        )
        self.classes_ = release.classes
        self.lower_, self.upper_ = release.lower, release.upper
        self.noise_std_ = release.noise_std
        self._store_trees(release)
        return self

    def _fit_cost(self, n_features=None):
        return random_trees_cost(self, n_features)

    def predict_proba(self, X):
        """Class probabilities (post-processing; free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            The probabilities of the leaf each row reaches, averaged over
            the trees with the forest's ``tree_weights_``.
        """
        check_is_fitted(self)
        X = validate_private_data(self, X, reset=False)
        return forest_proba(X, *self._stacked_trees())

    def predict_log_proba(self, X):
        """Log class probabilities (post-processing; free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """Most probable class of each row (post-processing; free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)  # first: it checks that self is fitted
        return self.classes_[np.argmax(proba, axis=1)]

    def score(self, X, y, sample_weight=None):
        """Accuracy on ``(X, y)`` (not private: it reads ``y``).

        Evaluate on private rows with :mod:`skdp.metrics` instead (see
        :ref:`evaluating`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        return super().score(X, y, sample_weight=sample_weight)


class PrivateDecisionTreeClassifier(BaseRandomTreesClassifier):
    """A random decision tree whose leaves' class counts are released privately.

    Private counterpart of diffprivlib's ``DecisionTreeClassifier``: the
    splits are drawn at random from the public (or privately released)
    feature bounds, never from the data; the only release is the histogram
    of the rows over (leaf, class), with noise. Prediction reads the
    released counts (post-processing, free). Alone a random tree is a weak
    model; :class:`~skdp.ensemble.PrivateRandomForestClassifier` averages
    many.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total ε of one ``fit``.
    max_depth : int, default=5
        Depth of the complete tree (``2**max_depth`` leaves), 0 to 20.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        Public ``(lower, upper)`` per feature, where the thresholds are
        drawn; values outside go where the bound would. ``None`` chooses
        them privately as :class:`~skdp.PrivateMean` does, spending
        ``bounds_share`` of the model's ε (never reads them from the data).
    classes : array-like or None, default=None
        The public label set; labels of ``y`` outside it are refused before
        the charge. ``None`` selects it privately with ``LABELS_SHARE`` =
        10 % of ``epsilon`` and all of ``delta`` (Laplace) or 10 % of it
        (Gaussian), as :class:`~skdp.naive_bayes.PrivateGaussianNB` does.
    bounds_share : float, default=0.3
        Share of the model's ε for private bounds (``bounds=None`` only),
        as for :class:`~skdp.PrivateMean`. Measured (10 trees, 7 seeds, AUC
        on fair at ε = 1 / 3): 0.690 / 0.713 against 0.688 / 0.695 with
        0.1.
    upper_limit : float, default=1e9
        Largest plausible magnitude of a value, for private bounds.
    mechanism : {"laplace", "gaussian"}, default="laplace"
        Noise of the leaf counts: Laplace (ε-DP) or the analytic Gaussian
        ((ε, δ)-DP).
    delta : float, default=1e-6
        Total δ of one ``fit``. With Laplace noise only the private label
        selection (``classes=None``) spends it.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows with ``fit(X, y, groups=...)``
        (required then, refused without; ``classes`` and ``bounds`` must
        then be stated): the noise is ``k`` times the row's (Notes, and
        :ref:`user_level_privacy`).
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit``; ``None`` uses the default accountant at fit time.
    random_state : int, RandomState instance or None, default=None
        Source of the splits and the noise; ``None`` draws from the
        operating system's CSPRNG (an int is reproducible, not secure).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels: stated, or released by the private selection.
    feature_, threshold_ : ndarray of shape (2**max_depth - 1,)
        The random splits, in heap order: node ``i``'s children are
        ``2 i + 1`` (``x <= threshold_[i]``) and ``2 i + 2``.
    leaf_counts_ : ndarray of shape (2**max_depth, n_classes)
        The released (noisy) row counts per leaf and class.
    leaf_proba_ : ndarray of shape (2**max_depth, n_classes)
        Each leaf's class probabilities, read from ``leaf_counts_``.
    lower_, upper_ : ndarray of shape (`n_features_in_`,)
        The bounds the splits were drawn in: given, or chosen privately.
    noise_std_ : float
        Standard deviation of the noise on each leaf count (public).
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    skdp.ensemble.PrivateRandomForestClassifier : Many such trees.

    Notes
    -----
    **Splits.** Each internal node splits a feature drawn uniformly at a
    threshold drawn uniformly in the node's box along it (the bounds cut by
    the splits above), computed as ``(1 - u) lower + u upper`` so that bounds
    at ``±max double`` and subnormal widths give thresholds within the box
    (:func:`~skdp.tree._random_tree.split_point`). They depend on the bounds
    and the random source only: no privacy cost (Fletcher and Islam 2017;
    diffprivlib's trees).

    **Release and sensitivity (add/remove one row).** The histogram of the
    rows over (leaf, class): a row reaches exactly one leaf and adds 1 to
    its class there, so the vector of ``2**max_depth × n_classes`` counts
    moves by exactly 1 in L1 and L2 norm
    (:func:`~skdp.tree._leaf_counts.leaf_count_sensitivity`, brute-forced in
    the tests). Laplace noise of scale ``1/ε``, or the analytic Gaussian,
    as exact discrete noise on the integer counts (:mod:`skdp.mechanisms`).
    diffprivlib releases only each leaf's majority class (permute-and-flip);
    the counts cost the same and keep the class proportions that
    ``predict_proba`` and the forest's average need.

    **Sample weights** (``fit(X, y, sample_weight=w)``, ``w`` in [0, 1];
    neighbours add or remove one ``(x, y, w)`` row). A row adds its weight
    ``ŵ`` (``w`` truncated to a multiple of ``2**-32``, so ``0 <= ŵ <= w``)
    to its leaf's count of its class, instead of 1: the counts move by
    ``ŵ <= 1`` in one coordinate, the unweighted sensitivity, and the noise
    is unchanged (weights above 1 would break that bound and are refused
    before the charge; brute-forced with weights at both ends of [0, 1] in
    tests/tree/test_tree_inputs.py). The weighted counts are summed in
    integers on the grid ``2**-32`` and handed to the release exactly
    (:func:`~skdp.tree._leaf_counts.weighted_leaf_class_counts`). Weights 1
    give the unweighted fit bit for bit without groups; with groups a row's
    weight is part of the content the kept-rows choice hashes, so all-ones
    weights keep other rows than no weights (equally private). A weight 0
    is the row removed only with public ``bounds`` and ``classes``, no
    groups and ``tree_rows="all"``: such a row still widens private bounds,
    counts in the label selection, takes one of its group's ``k`` places,
    and draws a tree with ``tree_rows="disjoint"`` (moving the other rows'
    draws). As
    ε → ∞ each non-empty leaf's probabilities are its rows' weighted class
    frequencies (scikit-learn's weighted leaves). The splits, the private
    bounds and the label selection do not read the weights.

    **Dask input** (see :ref:`dask`): with the public ``classes``, the
    leaf counts of a Dask array are summed block by block (every row in
    every tree, integers: the same counts as in memory, so the same release
    for the same seed) and private bounds come from the blocks' SVT
    tallies; ``tree_rows="disjoint"`` (a tree drawn per row) and
    ``sample_weight`` are refused before the charge on Dask input.

    **Groups** (``fit(X, y, groups=g)``, ``max_rows_per_group=k``;
    add/remove one whole group). Each group keeps at most k rows (a keyed
    choice among its own rows, the same for any row order); its rows move
    the counts by at most k in L1 and L2 (k equal rows in one leaf and
    class: :func:`~skdp.tree._leaf_counts.group_leaf_count_sensitivity`,
    brute-forced in tests/test_groups_models.py), so the noise is k times
    the row's. The label selection and the bounds search are stated for one
    row: with groups ``classes`` and ``bounds`` must be stated (refused
    before the charge otherwise).

    **Probabilities** (post-processing, a public rule:
    :func:`~skdp.tree._leaf_counts.leaf_probabilities`): negative counts
    become 0, a node's counts are the sums of its leaves', and each node's
    class distribution is its counts plus ``noise_std_`` rows distributed as
    its parent's, normalised (hierarchical shrinkage, Agarwal et al. 2022):
    a leaf whose counts are within the noise takes its parent's
    distribution, a tree whose counts are all non-positive the uniform one.
    As ε → ∞ each non-empty leaf's probabilities are its rows' class
    frequencies (tested), and an empty leaf takes its nearest non-empty
    ancestor's. (A forest shrinks with ``noise_std_ / n_estimators`` rows
    and weighs its trees: see
    :class:`~skdp.ensemble.PrivateRandomForestClassifier`.)

    **Budget.** Label selection (``classes=None``) first, then private
    bounds (``bounds=None``, ``bounds_share`` of what is left), then the
    counts with the rest; all charged at once before the data is read.

    References
    ----------
    .. [1] S. Fletcher and M. Z. Islam, "Differentially private random
       decision forests using smooth sensitivity", Expert Systems with
       Applications 78, 2017.
    .. [2] A. Agarwal, Y. S. Tan, O. Ronen, C. Singh and B. Yu,
       "Hierarchical shrinkage: improving the accuracy and interpretability
       of tree-based methods", ICML 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant
    >>> from skdp.tree import PrivateDecisionTreeClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(20_000, 2))
    >>> y = (X[:, 0] > 0.5).astype(int)
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> tree = PrivateDecisionTreeClassifier(
    ...     1.0, max_depth=4, bounds=(0, 1), classes=[0, 1], accountant=acc,
    ...     random_state=0).fit(X, y)
    >>> tree.leaf_counts_.shape, acc.total()
    ((16, 2), (1.0, 0.0))
    """

    def __init__(
        self,
        epsilon=1.0,
        *,
        max_depth=5,
        bounds=None,
        classes=None,
        bounds_share=0.3,
        upper_limit=1e9,
        mechanism="laplace",
        delta=1e-6,
        max_rows_per_group=None,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.bounds = bounds
        self.classes = classes
        self.bounds_share = bounds_share
        self.upper_limit = upper_limit
        self.mechanism = mechanism
        self.delta = delta
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    def _store_trees(self, release):
        self.feature_ = release.features[0]
        self.threshold_ = release.thresholds[0]
        self.leaf_counts_ = release.leaf_counts[0]
        self.leaf_proba_ = release.leaf_proba[0]

    def _stacked_trees(self):
        """Splits, leaf probabilities and weights of the trees, stacked."""
        return (
            self.feature_[None],
            self.threshold_[None],
            self.leaf_proba_[None],
            np.ones(1),
        )
