"""Per-node histograms of gradients and hessians: exact sums, then noise.

One level of a tree is one release: for every node of the level, every
feature and every bin, the sum of the gradients and of the hessians of the
node's rows in that bin (:func:`exact_level_histograms`), with Gaussian noise
(:func:`release_level_histograms`, the only private step of this stage).
"""

import math

import numpy as np

from skdp.mechanisms import gaussian_release

__all__ = ["exact_level_histograms", "level_sensitivity", "release_level_histograms"]


def level_sensitivity(n_features, g_max, h_max):
    """L2 sensitivity of one level's histograms: ``sqrt(d (g_max² + h_max²))``.

    **Add/remove one row.** The nodes of a level partition the rows, so a row
    is in one node; there it is in one bin of each of the ``d`` features,
    and adds its gradient (``|g| <= g_max``) and hessian (``|h| <= h_max``)
    to that bin's two sums: ``2d`` sums move, by at most ``g_max`` and
    ``h_max``. Brute-forced in ``tests/ensemble/test_histogram.py``.
    """
    return math.sqrt(n_features * (g_max**2 + h_max**2))


def exact_level_histograms(binned, offsets, node, n_nodes, g, h, rows=None):
    """Exact per-node sums of ``g`` and ``h`` per feature and bin.

    Parameters
    ----------
    binned : ndarray of shape (n, d), uint8 or uint16
        Bin indices (Fortran order reads a feature's column fastest).
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
        ``2**53`` steps, so the float sums are exact in any order.
    """
    width = int(offsets[-1])
    size = n_nodes * width
    sums = np.zeros((2, size))
    base = node * width
    for j in range(binned.shape[1]):  # a column of Fortran-ordered bins
        index = base + offsets[j]
        index += binned[:, j] if rows is None else binned[:, j].take(rows)
        sums[0] += np.bincount(index, weights=g, minlength=size)
        sums[1] += np.bincount(index, weights=h, minlength=size)
    return sums.reshape(2, n_nodes, width)


def release_level_histograms(sums, sensitivity, multiplier, source):
    """The private step: all of a level's sums with Gaussian noise, one
    release of L2 sensitivity ``sensitivity`` (:func:`level_sensitivity`)."""
    noisy = gaussian_release(sums, sensitivity, multiplier, random_state=source)
    return np.asarray(noisy, dtype=float).reshape(sums.shape)
