"""Exact counts behind the private metrics: labels to codes, cells, bins.

Pure and deterministic (no noise, no accountant). Each statistic is a sum of
per-row terms that depend on the row and on public parameters only, so it is
the same on a Dask collection summed block by block
(:func:`~skdp.utils._dask.row_statistic`) as in memory.
"""

import numpy as np

from skdp.mechanisms._grid import FixedPoint
from skdp.sensitivity._moments import bin_indices

__all__ = ["contingency_counts", "encode_labels", "score_histogram_counts"]


def encode_labels(values, labels):
    """The index of each value in ``labels``, ``-1`` for a value not in it.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.metrics._tables import encode_labels
    >>> encode_labels(np.array(["b", "a", "z"]), np.array(["a", "b"]))
    array([ 1,  0, -1])
    """
    values, labels = np.asarray(values), np.asarray(labels)
    order = np.argsort(labels, kind="stable")
    ordered = labels[order]
    position = np.clip(np.searchsorted(ordered, values), 0, labels.size - 1)
    found = ordered[position] == values
    return np.where(found, order[position], -1)


def contingency_counts(rows, labels):
    """Exact counts of the ``(true, predicted)`` label pairs of ``rows``.

    Parameters
    ----------
    rows : ndarray of shape (n_samples, 2)
        Column 0 the true labels, column 1 the predicted ones.
    labels : ndarray of shape (n_labels,)
        The public labels; a row with a label outside them counts nowhere
        (a per-row rule; in memory such rows are refused before the charge).

    Returns
    -------
    counts : FixedPoint of shape (n_labels * n_labels,)
        Cell ``i * n_labels + j`` counts the rows of true label ``labels[i]``
        predicted ``labels[j]`` (row-major confusion matrix).

    Notes
    -----
    **Sensitivity (add/remove one row).** A row adds 1 to exactly one cell
    (or to none), so the vector moves by 1 in L1 and in L2 norm. The counts
    are Python integers: exact for any number of rows.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.metrics._tables import contingency_counts
    >>> rows = np.array([[0, 0], [0, 1], [1, 1], [1, 1]])
    >>> contingency_counts(rows, np.array([0, 1])).numerators
    (1, 1, 0, 2)
    """
    labels = np.asarray(labels)
    k = labels.size
    true = encode_labels(rows[:, 0], labels)
    pred = encode_labels(rows[:, 1], labels)
    keep = (true >= 0) & (pred >= 0)
    cells = np.bincount(true[keep] * k + pred[keep], minlength=k * k)
    return FixedPoint(tuple(int(c) for c in cells), 0, (k * k,))


def score_histogram_counts(rows, pos_label, edges):
    """Exact histograms of the scores of the negative and the positive rows.

    Parameters
    ----------
    rows : ndarray of shape (n_samples, 2)
        Column 0 the true labels, column 1 the scores (clipped to the public
        range by the bins: a score below the first edge counts in the first
        bin, above the last in the last).
    pos_label : scalar
        The positive label; every other label is negative.
    edges : ndarray of shape (n_bins + 1,)
        Public increasing bin edges.

    Returns
    -------
    counts : FixedPoint of shape (2 * n_bins,)
        The negatives' histogram, then the positives'.

    Notes
    -----
    **Sensitivity (add/remove one row).** A row adds 1 to one bin of one of
    the two histograms: L1 = L2 = 1.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.metrics._tables import score_histogram_counts
    >>> rows = np.array([[0, 0.2], [1, 0.9], [1, 0.7]])
    >>> score_histogram_counts(rows, 1, np.array([0.0, 0.5, 1.0])).numerators
    (1, 0, 0, 2)
    """
    n_bins = edges.size - 1
    positive = (rows[:, 0] == pos_label).astype(np.intp)
    bins = bin_indices(np.asarray(rows[:, 1], dtype=float), edges)
    cells = np.bincount(positive * n_bins + bins, minlength=2 * n_bins)
    return FixedPoint(tuple(int(c) for c in cells), 0, (2 * n_bins,))
