"""A fitted tree as flat arrays, and its predictions on binned rows.

Trees are complete binary trees of a public depth: level ``l`` has ``2**l``
nodes, node ``i``'s children are ``2i`` (left) and ``2i + 1`` (right), and
the ``2**depth`` leaves carry the values. A node whose threshold is
:data:`~.splitting.NO_SPLIT` sends every row left.
"""

import numpy as np

__all__ = ["BinTables", "TreePredictor", "staged_raw_scores"]


class TreePredictor:
    """One tree: split features and thresholds per level, leaf values.

    Parameters
    ----------
    features, thresholds : list of ndarray of int
        Level ``l``'s split feature and threshold bin per node.
    leaves : ndarray of float of shape (2**depth,)
        Leaf values (raw-score increments, learning rate included).
    """

    def __init__(self, features, thresholds, leaves):
        self.features = features
        self.thresholds = thresholds
        self.leaves = leaves

    @property
    def depth(self):
        return len(self.features)

    def leaf_of(self, binned):
        """The leaf each binned row reaches (int array)."""
        node = np.zeros(binned.shape[0], dtype=np.intp)
        rows = np.arange(binned.shape[0])
        for feature, threshold in zip(self.features, self.thresholds, strict=True):
            value = binned[rows, feature[node]].astype(np.intp)
            node = 2 * node + (value > threshold[node])
        return node

    def predict_binned(self, binned):
        """The tree's raw-score increment for every binned row."""
        return self.leaves[self.leaf_of(binned)]


class BinTables:
    """One round of cyclic boosting for one raw score: a value per bin of
    each feature in turn.

    Parameters
    ----------
    tables : list of ndarray of float
        ``tables[j]``: each bin of feature ``j``'s raw-score increment
        (learning rate included).
    """

    def __init__(self, tables):
        self.tables = tables

    def predict_binned(self, binned):
        """The round's raw-score increment for every binned row."""
        raw = np.zeros(binned.shape[0])
        for j, table in enumerate(self.tables):
            raw += table[binned[:, j].astype(np.intp)]
        return raw


def staged_raw_scores(predictors, binned, baseline):
    """Raw scores after each round (one array, updated in place).

    ``predictors`` holds one list of trees (or :class:`BinTables`) per
    round, one per raw score; ``baseline`` is the raw score every tree starts from.
    """
    raw = np.zeros((binned.shape[0], np.size(baseline))) + baseline
    for trees in predictors:
        for c, tree in enumerate(trees):
            raw[:, c] += tree.predict_binned(binned)
        yield raw
