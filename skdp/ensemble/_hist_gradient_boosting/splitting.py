"""The best split of every node of a level, from its released histograms.

Pure post-processing of released values and public parameters: it never
reads the data. With exact (noise-free) histograms it is scikit-learn's
greedy choice for the gain ``G_L²/(H_L+λ) + G_R²/(H_R+λ) - G²/(H+λ)``.
"""

import numpy as np

__all__ = ["NO_SPLIT", "best_splits"]

#: The threshold of a node that keeps all its rows left (no useful split):
#: above every bin index (bins are uint8 or uint16).
NO_SPLIT = 1 << 16


def _term(gradient, hessian, lam):
    """``G² / (max(H, 0) + λ)``: a noisy hessian sum can be negative."""
    return gradient**2 / (np.maximum(hessian, 0.0) + lam)


def best_splits(histograms, offsets, lam, columns=None):
    """Feature and threshold bin of the best split of every node.

    Parameters
    ----------
    histograms : ndarray of shape (2, n_nodes, n_columns)
        Released gradient and hessian sums (see
        :func:`~.histogram.exact_level_histograms` for the layout).
    offsets : ndarray of shape (d + 1,)
        Column offsets of the features.
    lam : float
        ``λ > 0`` of the gain (L2 regularisation plus the public noise
        allowance of the estimator).
    columns : ndarray of bool, shape (n_nodes, n_columns), default=None
        The columns each node may split on (its sampled features); None:
        all.

    Returns
    -------
    feature : ndarray of int, shape (n_nodes,)
    threshold : ndarray of int, shape (n_nodes,)
        Rows with bin ``<= threshold`` go left; ``NO_SPLIT`` keeps all rows
        left (no split has a positive gain, or no feature has two bins).
    """
    n_nodes = histograms.shape[1]
    cumulative = np.cumsum(histograms, axis=2)
    feature_of = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    first = offsets[:-1][feature_of]
    last = offsets[1:][feature_of] - 1
    start_value = np.where(first > 0, cumulative[..., np.maximum(first - 1, 0)], 0.0)
    left = cumulative - start_value
    total = cumulative[..., last] - start_value
    right = total - left
    gain = _term(left[0], left[1], lam) + _term(right[0], right[1], lam)
    gain -= _term(total[0], total[1], lam)
    column = np.arange(offsets[-1])
    gain[:, column == last] = -np.inf  # the last bin of a feature: no split
    if columns is not None:
        gain[~columns] = -np.inf  # a feature the node did not sample
    best = np.argmax(gain, axis=1)
    positive = gain[np.arange(n_nodes), best] > 0
    feature = np.where(positive, feature_of[best], 0)
    threshold = np.where(positive, best - offsets[feature_of[best]], NO_SPLIT)
    return feature, threshold
