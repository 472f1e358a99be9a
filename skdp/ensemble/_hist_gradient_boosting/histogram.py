"""Per-node histograms of gradients and hessians: exact sums, then noise.

One level of a tree is one release: for every node of the level, every
feature and every bin, the sum of the gradients and of the hessians of the
node's rows in that bin (:func:`exact_level_histograms`), with Gaussian noise
(:func:`release_level_histograms`, the only private step of this stage).
"""

import math

import numpy as np

from skdp.mechanisms import gaussian_release

__all__ = [
    "JointBins",
    "exact_level_histograms",
    "level_sensitivity",
    "release_level_histograms",
    "sampled_features",
]


def level_sensitivity(n_features, g_max, h_max):
    """L2 sensitivity of one level's histograms: ``sqrt(d (g_max² + h_max²))``.

    **Add/remove one row.** The nodes of a level partition the rows, so a row
    is in one node; there it is in one bin of each of the ``d`` features,
    and adds its gradient (``|g| <= g_max``) and hessian (``|h| <= h_max``)
    to that bin's two sums: ``2d`` sums move, by at most ``g_max`` and
    ``h_max``. Brute-forced in ``tests/ensemble/test_histogram.py``.

    With ``max_features < 1`` each node releases the histograms of its own
    ``m`` sampled features only (:func:`sampled_features`, drawn without
    reading the data): a row is in one node and there in one bin of each of
    its ``m`` features, so ``n_features`` is ``m`` (also brute-forced).
    """
    return math.sqrt(n_features * (g_max**2 + h_max**2))


def sampled_features(n_nodes, n_features, n_sampled, source):
    """Each node's ``n_sampled`` features, uniformly without replacement.

    Drawn from ``source`` alone (never from the data), a fixed number of
    draws for public sizes; ``None`` when every feature is kept (then
    nothing is drawn).

    Returns
    -------
    mask : ndarray of bool, shape (n_nodes, n_features), or None
        ``mask[i, j]``: node ``i`` releases and splits on feature ``j``.
    """
    if n_sampled >= n_features:
        return None
    keys = source.integers(1 << 62, size=(n_nodes, n_features))
    chosen = np.argsort(keys, axis=1, kind="stable")[:, :n_sampled]
    mask = np.zeros((n_nodes, n_features), dtype=bool)
    np.put_along_axis(mask, chosen, True, axis=1)
    return mask


#: Features are summed in groups whose joint bins number at most this many
#: per node (a table that stays in the cache), at most ``JOINT_TABLE`` cells
#: for all nodes of a level: one ``bincount`` serves a whole group.
JOINT_CELLS = 4096
JOINT_TABLE = 1 << 18


class JointBins:
    """Each row's joint bin in each group of consecutive features.

    A group's joint bin is its features' bins in mixed radix (the last
    feature fastest), so one ``bincount`` per node gives the group's joint
    histogram; each feature's histogram is a marginal of it. Depends on the
    bins and on public sizes only.

    Parameters
    ----------
    binned : ndarray of shape (n, d), uint8 or uint16
        Bin indices.
    offsets : ndarray of shape (d + 1,)
        Feature ``j``'s bins are the columns ``offsets[j]:offsets[j + 1]``.
    max_nodes : int, default=1
        The most nodes summed at once (bounds a group's table).
    """

    def __init__(self, binned, offsets, max_nodes=1):
        self.offsets = np.asarray(offsets)
        self.widths = np.diff(self.offsets).astype(np.intp)
        cap = max(1, min(JOINT_CELLS, JOINT_TABLE // max(int(max_nodes), 1)))
        self.groups = _consecutive_groups(self.widths, cap)
        self.codes = np.empty((binned.shape[0], len(self.groups)), dtype=np.int32)
        for k, group in enumerate(self.groups):
            code = np.zeros(binned.shape[0], dtype=np.int32)
            for j in group:
                code *= int(self.widths[j])
                code += binned[:, j]
            self.codes[:, k] = code

    def level_sums(self, node, n_nodes, g, h, rows=None):
        """Exact sums (see :func:`exact_level_histograms`) of the rows
        ``rows`` (all if None; ``node``, ``g``, ``h`` given for them)."""
        codes = self.codes if rows is None else self.codes.take(rows, axis=0)
        sums = np.empty((2, n_nodes, int(self.offsets[-1])))
        for k, group in enumerate(self.groups):
            shape = tuple(int(self.widths[j]) for j in group)
            size = math.prod(shape)
            index = node * size
            index += codes[:, k]
            for part, weights in enumerate((g, h)):
                table = np.bincount(index, weights=weights, minlength=n_nodes * size)
                table = table.reshape(n_nodes, *shape)
                for axis, j in enumerate(group):
                    other = tuple(a + 1 for a in range(len(group)) if a != axis)
                    marginal = table.sum(axis=other) if other else table
                    sums[part, :, self.offsets[j] : self.offsets[j + 1]] = marginal
        return sums


#: The most features in one group: its joint table has one axis per feature
#: plus the node axis, and numpy arrays have at most 64 axes (features of one
#: bin, e.g. collapsed private bins, would otherwise join one group without
#: end: 85 of them raised after the charge).
MAX_GROUP_FEATURES = 32


def _consecutive_groups(widths, cap):
    """Runs of consecutive features with at most ``cap`` joint bins and at
    most ``MAX_GROUP_FEATURES`` features (a feature with more bins is a
    group alone)."""
    groups, size = [], cap + 1
    for j, width in enumerate(widths):
        full = bool(groups) and len(groups[-1]) >= MAX_GROUP_FEATURES
        if size * width > cap or full:
            groups.append([])
            size = 1
        groups[-1].append(j)
        size *= int(width)
    return groups


def exact_level_histograms(binned, offsets, node, n_nodes, g, h, rows=None):
    """Exact per-node sums of ``g`` and ``h`` per feature and bin.

    Parameters
    ----------
    binned : ndarray of shape (n, d), uint8 or uint16
        Bin indices.
    offsets : ndarray of shape (d + 1,)
        Feature ``j``'s bins are the columns ``offsets[j]:offsets[j + 1]``.
    node : ndarray of shape (n,), int
        Each row's node in ``[0, n_nodes)``.
    g, h : ndarray of shape (n,)
        On-grid gradients and hessians (:func:`~.loss.on_grid`).
    rows : ndarray of int or None, default=None
        Read only these rows of ``binned`` (then ``node``, ``g`` and ``h``
        are given for them alone); None reads all.

    Returns
    -------
    sums : ndarray of shape (2, n_nodes, offsets[-1])
        Gradient sums, then hessian sums. Multiples of the grid step below
        ``2**53`` steps, so the float sums are exact in any order (a
        feature's sums are marginals of its group's joint sums:
        :class:`JointBins`).
    """
    if rows is not None:
        binned = binned.take(rows, axis=0)
    return JointBins(binned, offsets, n_nodes).level_sums(node, n_nodes, g, h)


def release_level_histograms(sums, sensitivity, multiplier, source, columns=None):
    """The private step: a level's sums with Gaussian noise, one release of
    L2 sensitivity ``sensitivity`` (:func:`level_sensitivity`).

    ``columns`` (bool, shape ``(n_nodes, n_columns)``, or None for all) are
    the sums released; the others are not released and come back as 0.
    """
    if columns is None:
        noisy = gaussian_release(sums, sensitivity, multiplier, random_state=source)
        return np.asarray(noisy, dtype=float).reshape(sums.shape)
    kept = sums[:, columns]
    noisy = gaussian_release(kept, sensitivity, multiplier, random_state=source)
    out = np.zeros(sums.shape)
    out[:, columns] = np.asarray(noisy, dtype=float).reshape(kept.shape)
    return out
