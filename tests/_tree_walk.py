"""A released complete tree walked by hand, row by row: the brute force the
tree and forest tests compare the package's vectorised leaf lookup with."""


def leaf_of(row, tree):
    """The leaf (0 to ``2**max_depth - 1``) that ``row`` reaches in ``tree``
    (``feature_`` and ``threshold_`` in level order; ``<=`` goes left)."""
    node = 0
    for _ in range(tree.max_depth):
        f, t = tree.feature_[node], tree.threshold_[node]
        node = 2 * node + (1 if row[f] <= t else 2)
    return node - (2**tree.max_depth - 1)
