"""Histogram counts with a group's partitions bounded (``p`` bins, ``c`` rows each).

With ``max_partitions_per_group = p`` and ``max_rows_per_partition = c``
each group (after its ``k`` rows) keeps, per released histogram, the rows
of its ``p`` bins of smallest keyed hash and at most ``c`` rows in each
(:func:`~skdp.utils._partitions.partition_rows`); one group then moves a
histogram's counts by at most ``min(k, p c)`` in L1 and ``sqrt(q c² +
r²)`` in L2 (:func:`~skdp.utils._partitions.partition_contribution`).
"""

import numpy as np

from skdp.mechanisms._grid import FixedPoint
from skdp.sensitivity._moments import bin_indices
from skdp.utils._partitions import partition_rows

__all__ = ["bounded_histogram_counts", "bounded_joint_counts", "joint_cells"]


def joint_cells(X, edges):
    """Flat index (C order) of each row's cell of the public grid."""
    shape = tuple(e.size - 1 for e in edges)
    flat = np.zeros(X.shape[0], dtype=np.intp)
    for j, feature_edges in enumerate(edges):
        flat *= shape[j]
        flat += bin_indices(X[:, j], np.asarray(feature_edges, dtype=float))
    return flat


def bounded_histogram_counts(X, edges, groups, bound, seeds):
    """Per-feature counts (as :func:`~skdp.sensitivity.exact_histogram_counts`)
    with each group's rows bounded feature by feature: a group adds to at
    most ``p`` bins of each feature, at most ``c`` rows to each.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.utils._partitions import partition_contribution
    >>> X = np.array([[0.1], [0.2], [0.3], [0.9]])
    >>> bound = partition_contribution(4, 2, 1)
    >>> edges = [np.array([0.0, 0.5, 1.0])]
    >>> bounded_histogram_counts(X, edges, np.zeros(4), bound, (0, 1)).numerators
    (1, 1)
    """
    counts = []
    for j, feature_edges in enumerate(edges):
        bins = bin_indices(X[:, j], np.asarray(feature_edges, dtype=float))
        rows = partition_rows(groups, bins, bound, seeds, [X])
        counts.extend(
            np.bincount(bins[rows], minlength=feature_edges.size - 1).tolist()
        )
    return FixedPoint(tuple(int(c) for c in counts), 0, (len(counts),))


def bounded_joint_counts(X, edges, groups, bound, seeds):
    """Counts of every cell of the grid (C order) with each group's rows
    bounded to ``p`` cells of at most ``c`` rows.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.utils._partitions import partition_contribution
    >>> X = np.array([[0.1, 0.1], [0.2, 0.2], [0.3, 0.9]])
    >>> bound = partition_contribution(3, 1, 1)
    >>> edges = [np.array([0.0, 0.5, 1.0])] * 2
    >>> sum(bounded_joint_counts(X, edges, np.zeros(3), bound, (0, 1)).numerators)
    1
    """
    shape = tuple(e.size - 1 for e in edges)
    flat = joint_cells(X, edges)
    rows = partition_rows(groups, flat, bound, seeds, [X])
    counts = np.bincount(flat[rows], minlength=int(np.prod(shape)))
    return FixedPoint(tuple(counts.tolist()), 0, shape)
