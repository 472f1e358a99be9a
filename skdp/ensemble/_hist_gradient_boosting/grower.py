"""One tree, level by level: noisy histograms, splits, noisy leaves.

Each level is one release of histograms (:mod:`.histogram`) and the splits
are post-processing of it (:mod:`.splitting`); the leaves are one more
release, of each leaf's gradient and hessian sums
(:func:`release_leaf_sums`, the only private step of this stage). The
grower gets noise multipliers and a random source, never an accountant.
"""

import math
from dataclasses import dataclass

import numpy as np
from sklearn.base import is_classifier

from skdp.ensemble._hist_gradient_boosting._settings import resolved_setting
from skdp.ensemble._hist_gradient_boosting.histogram import (
    JointBins,
    level_sensitivity,
    release_level_histograms,
    sampled_features,
)
from skdp.ensemble._hist_gradient_boosting.predictor import TreePredictor
from skdp.ensemble._hist_gradient_boosting.splitting import NO_SPLIT, best_splits
from skdp.mechanisms import gaussian_release

__all__ = [
    "LEAF_NOISE_ALLOWANCE",
    "NOISE_ALLOWANCE",
    "TreePlan",
    "exact_leaf_sums",
    "grow_tree",
    "joint_bins",
    "leaf_sensitivity",
    "release_leaf_sums",
    "shrunk_gradient_sums",
]

#: λ of a split's gain and of a leaf value is ``l2_regularization`` plus this
#: many noise deviations of a released hessian sum (a public rule: noisy
#: hessians near 0 would make any gain or leaf value huge), plus
#: ``MIN_HESSIAN``. Measured on Adult at ε = 1 (Notes of the estimators).
NOISE_ALLOWANCE = 2.0
#: The leaves' allowance (deviations of a leaf's released hessian sum): two,
#: so that a leaf of a few rows, whose noisy ``G`` could be many times its
#: true size, moves its rows' raw scores little. Measured (5 seeds, ε = 0.3,
#: 1, 3): with one, Caravan's accuracy fell below its majority rate with a
#: learning rate of 0.5 (0.935, 0.939 against 0.940); with two it stays
#: there, and the defaults gain ROC AUC on Caravan and ``fair``.
LEAF_NOISE_ALLOWANCE = 2.0
MIN_HESSIAN = 1e-3
#: The regressor's leaf shrinkage (public): a leaf's released gradient sum
#: ``G̃`` is multiplied by ``G̃² / (G̃² + k σ²)``, ``σ`` its noise deviation,
#: ``k`` this (two deviations). Under the squared loss a row's hessian is 1
#: and its score collects every round's leaf noise: on diabetes (442 rows)
#: at its defaults held-out R² was -0.12 at ε = 1 and -1.0 at ε = 3; with
#: it -0.10 and -0.05 (5 seeds; Bikeshare 0.30 -> 0.36 at ε = 1, 0.55 ->
#: 0.52 at ε = 3; randhie 0.00 -> 0.03). Not for the classifier: on Adult
#: it cost 0.2-0.5 points (its log-loss hessians, at most 1/4, keep the
#: leaves' allowance large against ``H``).
REGRESSOR_LEAF_SHRINKAGE = 4.0


def sampled_per_node(max_features, n_features):
    """scikit-learn's rule: ``max(1, int(max_features * n_features))``
    features per node (public: a parameter and the data's width)."""
    return max(1, int(max_features * n_features))


def leaf_sensitivity(g_max, h_max):
    """L2 sensitivity of the leaf sums: ``sqrt(g_max² + h_max²)``.

    **Add/remove one row.** The leaves partition the rows: a row adds its
    gradient and hessian to one leaf's two sums. Brute-forced in
    ``tests/ensemble/test_grower.py``.
    """
    return math.sqrt(g_max**2 + h_max**2)


@dataclass(frozen=True)
class TreePlan:
    """Public parameters of one tree: depth, noise multipliers (``None``:
    no noise, for tests of the limit), bounds of ``g`` and ``h``, ``λ``,
    the learning rate and the features each node samples (``None``: all);
    the regressor's leaf shrinkage (:func:`shrunk_gradient_sums`) and
    whether the classifier's cyclic steps are shrunk
    (:func:`~.cyclic.shrunk_feature_step`)."""

    depth: int
    level_multiplier: float | None
    leaf_multiplier: float | None
    g_max: float
    h_max: float
    l2_regularization: float
    learning_rate: float
    max_features: int | None = None
    leaf_shrinkage: float = 0.0
    shrink_feature_steps: bool = False

    @classmethod
    def of_round(cls, estimator, round_multipliers, k, g_max, h_max, n_features):
        """The plan of a round's trees: its ``k`` trees share its shares
        (multipliers times ``sqrt(k)``); ``None`` multipliers: no noise."""
        level = leaf = None
        if round_multipliers is not None:
            level = float(round_multipliers[0]) * math.sqrt(k)
            leaf = float(round_multipliers[-1]) * math.sqrt(k)
        return cls(
            estimator.max_depth,
            level,
            leaf,
            g_max,
            h_max,
            float(estimator.l2_regularization),
            float(resolved_setting(estimator, "learning_rate")),
            sampled_per_node(estimator.max_features, n_features),
            0.0 if is_classifier(estimator) else REGRESSOR_LEAF_SHRINKAGE,
            is_classifier(estimator),
        )

    def n_sampled(self, n_features):
        """How many features a node releases and splits on."""
        return n_features if self.max_features is None else self.max_features

    def split_lambda(self, n_features):
        noise = 0.0
        if self.level_multiplier is not None:
            m = self.n_sampled(n_features)
            sens = level_sensitivity(m, self.g_max, self.h_max)
            noise = NOISE_ALLOWANCE * self.level_multiplier * sens
        return self.l2_regularization + noise + MIN_HESSIAN

    def leaf_noise_sd(self):
        """Standard deviation of the noise of a released leaf (or cyclic
        bin) sum: its multiplier times :func:`leaf_sensitivity`; 0 without
        noise."""
        if self.leaf_multiplier is None:
            return 0.0
        return self.leaf_multiplier * leaf_sensitivity(self.g_max, self.h_max)

    def leaf_lambda(self):
        noise = LEAF_NOISE_ALLOWANCE * self.leaf_noise_sd()
        return self.l2_regularization + noise + MIN_HESSIAN


def shrunk_gradient_sums(sums, plan):
    """Released ``(G̃, H̃)`` sums with ``G̃`` multiplied by ``G̃² / (G̃² + k
    σ²)`` (``k = plan.leaf_shrinkage``, ``σ`` the sums' noise deviation):
    post-processing of released values and public parameters. Returned
    as they are without noise or shrinkage, so the noise-free limit is
    unchanged. Written as ``1 / (1 + k (σ / |G̃|)²)`` so that no
    intermediate overflows or divides 0 by 0 (``G̃ = 0``: a factor of 0).
    """
    if plan.leaf_multiplier is None or plan.leaf_shrinkage == 0.0:
        return sums
    sd, g = plan.leaf_noise_sd(), sums[0]
    with np.errstate(all="ignore"):  # under any caller's errstate, no raise
        ratio = np.divide(sd, np.abs(g), out=np.full(g.shape, np.inf), where=g != 0)
        factor = 1.0 / (1.0 + plan.leaf_shrinkage * ratio * ratio)
        return np.stack([g * factor, sums[1]])


def exact_leaf_sums(leaf, n_leaves, g, h):
    """Exact gradient and hessian sums per leaf, shape ``(2, n_leaves)``."""
    return np.stack([np.bincount(leaf, weights=w, minlength=n_leaves) for w in (g, h)])


def release_leaf_sums(sums, plan, source):
    """The private step of the leaves: their sums with Gaussian noise."""
    if plan.leaf_multiplier is None:
        return sums
    sens = leaf_sensitivity(plan.g_max, plan.h_max)
    noisy = gaussian_release(sums, sens, plan.leaf_multiplier, random_state=source)
    return np.asarray(noisy, dtype=float).reshape(sums.shape)


def joint_bins(binned, offsets, depth):
    """The joint bins the histograms of a tree of this depth read (one per
    fit: the bins do not change between trees)."""
    return JointBins(binned, offsets, 1 << max(depth - 2, 0))


def _exact_sums(joint, node, n_nodes, g, h, parent):
    """A level's exact sums; below the root, summed over the left children's
    rows only, each right child's being its parent's minus its sibling's
    (exact: all sums are multiples of the grid step below ``2**53`` steps).
    Which child is summed is a public rule, not the data's."""
    if parent is None:
        return joint.level_sums(node, n_nodes, g, h)
    left = np.flatnonzero(node % 2 == 0)
    half = joint.level_sums(node[left] // 2, n_nodes // 2, g[left], h[left], left)
    sums = np.empty((2, n_nodes, half.shape[2]))
    sums[:, 0::2] = half
    sums[:, 1::2] = parent - half
    return sums


def _release(sums, m, plan, source, columns):
    if plan.level_multiplier is None:
        return sums
    sens = level_sensitivity(m, plan.g_max, plan.h_max)
    return release_level_histograms(sums, sens, plan.level_multiplier, source, columns)


#: Up to this many nodes a level routes its rows node by node (a few passes
#: over contiguous columns); above, by one gather of every row's bin.
ROUTE_BY_NODE = 16


def _children(binned, node, feature, threshold):
    """Each row's child: ``2 node``, plus 1 when its bin of its node's
    feature is above its node's threshold."""
    if feature.size > ROUTE_BY_NODE:
        value = binned[np.arange(binned.shape[0]), feature[node]].astype(np.intp)
        return 2 * node + (value > threshold[node])
    right = np.zeros(node.shape, dtype=bool)
    for i in np.flatnonzero(threshold < NO_SPLIT):
        right |= (node == i) & (binned[:, feature[i]] > int(threshold[i]))
    return 2 * node + right


def grow_tree(binned, offsets, g, h, plan, source, joint=None):
    """Grow one tree on on-grid ``g`` and ``h``; returns the predictor and
    each row's leaf.

    The number of levels and of releases is ``plan.depth`` whatever the
    data: a node without a useful split sends all its rows left, so no
    branch depends on the data. ``joint`` is :func:`joint_bins` of
    ``binned`` (made here when None).
    """
    if joint is None:
        joint = joint_bins(binned, offsets, plan.depth)
    node = np.zeros(binned.shape[0], dtype=np.intp)
    d = binned.shape[1]
    m = plan.n_sampled(d)
    lam = plan.split_lambda(d)
    feature_of = np.repeat(np.arange(d), np.diff(offsets))
    features, thresholds, exact = [], [], None
    for level in range(plan.depth):
        n_nodes = 1 << level
        exact = _exact_sums(joint, node, n_nodes, g, h, exact)
        sampled = sampled_features(n_nodes, d, m, source)
        columns = None if sampled is None else sampled[:, feature_of]
        hist = _release(exact, m, plan, source, columns)
        feature, threshold = best_splits(hist, offsets, lam, columns)
        features.append(feature)
        thresholds.append(threshold)
        node = _children(binned, node, feature, threshold)
    n_leaves = 1 << plan.depth
    sums = release_leaf_sums(exact_leaf_sums(node, n_leaves, g, h), plan, source)
    sums = shrunk_gradient_sums(sums, plan)
    with np.errstate(all="ignore"):
        values = (
            -plan.learning_rate
            * sums[0]
            / (np.maximum(sums[1], 0.0) + plan.leaf_lambda())
        )
    return TreePredictor(features, thresholds, values), node
