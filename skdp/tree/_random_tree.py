"""Random tree structures drawn from public bounds, and how rows reach leaves.

A tree here is complete and stored in heap order: internal node ``i`` has
children ``2 i + 1`` (``x <= threshold``) and ``2 i + 2``; a tree of depth
``D`` has ``2**D - 1`` internal nodes and ``2**D`` leaves. Nothing in this
module reads the private data's values to choose anything: the splits are a
function of the public bounds and the random source only.
"""

import numpy as np

__all__ = ["draw_random_splits", "leaf_indices", "split_point"]


def split_point(lower, upper, u):
    """The point a fraction ``u`` in [0, 1) of the way from ``lower`` to
    ``upper``, inside ``[lower, upper]`` for all finite doubles.

    ``(1 - u) lower + u upper`` never forms ``upper - lower``, which
    overflows for bounds near ``±max double``; each product is at most the
    larger bound in magnitude, and the sum of two terms of opposite signs
    cannot overflow. Rounding may step one ulp outside; the clip restores
    the box (and keeps a subnormal width's point in it).
    """
    with np.errstate(over="ignore", under="ignore"):
        point = (1.0 - u) * lower + u * upper
    return np.minimum(np.maximum(point, lower), upper)


def draw_random_splits(lower, upper, max_depth, source, n_trees=1):
    """Draw ``n_trees`` random complete trees over the box ``[lower, upper]``.

    Each internal node splits a feature drawn uniformly at a threshold drawn
    uniformly in the node's box along that feature (the public bounds cut
    by the splits above it), as in Fletcher and Islam's random decision
    trees and diffprivlib's ``DecisionTreeClassifier``.

    Parameters
    ----------
    lower, upper : ndarray of shape (n_features,)
        Public (or privately released) bounds, finite, ``lower <= upper``.
    max_depth : int
        Depth ``D >= 0`` of every tree.
    source : RandomSource
        The fit's random source (public randomness: it never sees the data).
    n_trees : int, default=1

    Returns
    -------
    features : ndarray of int of shape (n_trees, 2**D - 1)
    thresholds : ndarray of float of shape (n_trees, 2**D - 1)
    """
    n_nodes = 2**max_depth - 1
    features = source.integers(lower.size, size=(n_trees, n_nodes)).astype(np.intp)
    fractions = source.random(size=(n_trees, n_nodes))
    thresholds = np.empty((n_trees, n_nodes))
    trees = np.arange(n_trees)[:, None]
    for level in range(max_depth):  # a node's ancestors come first
        nodes = np.arange(2**level - 1, 2 ** (level + 1) - 1)
        f = features[:, nodes]
        low, high = _box_along(features, thresholds, trees, nodes, f, lower, upper)
        thresholds[:, nodes] = split_point(low, high, fractions[:, nodes])
    return features, thresholds


def _box_along(features, thresholds, trees, nodes, f, lower, upper):
    """The box of each node along its own feature ``f``: the bounds, cut by
    the thresholds of the ancestors that split the same feature (memory of
    the order of the number of nodes, not nodes x features)."""
    low, high = lower[f], upper[f]
    child = np.broadcast_to(nodes, f.shape)
    while child[0, 0] > 0:
        parent = (child - 1) // 2
        same = features[trees, parent] == f
        cut = thresholds[trees, parent]
        went_left = child == 2 * parent + 1
        high = np.where(same & went_left, np.minimum(high, cut), high)
        low = np.where(same & ~went_left, np.maximum(low, cut), low)
        child = parent
    return low, high


def leaf_indices(X, features, thresholds):
    """The leaf (``0 .. 2**D - 1``) each row of ``X`` reaches in each tree.

    A row goes right where its value is above the threshold. Values outside
    the bounds go where their clipped value would (the thresholds lie within
    the bounds), so no clipping is needed.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    features, thresholds : ndarray of shape (n_trees, 2**D - 1)

    Returns
    -------
    leaves : ndarray of int of shape (n_trees, n_samples)
    """
    n_trees, n_nodes = features.shape
    depth = int(n_nodes + 1).bit_length() - 1
    leaves = np.empty((n_trees, X.shape[0]), dtype=np.intp)
    for tree in range(n_trees):
        node = np.zeros(X.shape[0], dtype=np.intp)
        for _ in range(depth):
            f = features[tree, node]
            right = X[np.arange(X.shape[0]), f] > thresholds[tree, node]
            node = 2 * node + 1 + right
        leaves[tree] = node - n_nodes
    return leaves
