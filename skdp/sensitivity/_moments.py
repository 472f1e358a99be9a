"""Exact sums for counts, means and variances in one vector, and histograms.

A row's clipped value, mapped to ``a = (clip(x) - L) / (U - L)`` in [0, 1],
adds the quadratic Bernstein basis ``((1 - a)², 2a(1 - a), a²)`` to its
feature's triple. The three terms are non-negative and add up to 1, so the
triple sums carry the row count (their total), ``Σ a`` (``P1/2 + P2``) and
``Σ a²`` (``P2``) at the sensitivity of the count alone: one row moves a
feature's triple by exactly 1 in L1 norm and at most 1 in L2 norm. It is
the second-degree version of the split sums of the private mean
(:func:`~skdp.sensitivity.exact_split_sums`, the first-degree basis
``(1 - a, a)``).

Each term is rounded to the fixed-point grid ``2**-FIXED_POINT_BITS`` with
the three rounded terms still summing to exactly 1 (a per-row map), and the
integers are added exactly, so the bounds hold for the computed sums
(Casacuberta et al. 2022 show how a float sum can exceed them).
"""

import numpy as np

from skdp.mechanisms._grid import FixedPoint
from skdp.sensitivity._mean import (
    _BLOCK_ROWS,
    FIXED_POINT_BITS,
    _normalised_terms,
    centre_and_radius,
)
from skdp.sensitivity._weights import grid_weights, weighted_terms

__all__ = [
    "bin_indices",
    "exact_histogram_counts",
    "exact_moment_sums",
    "moments_from_sums",
]

_ONE = 1 << FIXED_POINT_BITS


def _bernstein_terms(block, lower, upper, centre, radius):
    """Integer Bernstein terms of one block, shape (3, rows, d), summing to 2**32."""
    z = _normalised_terms(block, lower, upper, centre, radius)
    a = (z + 1.0) * 0.5
    top = np.rint(a * a * _ONE).astype(np.int64)
    middle = np.rint(2.0 * a * (1.0 - a) * _ONE).astype(np.int64)
    np.clip(top, 0, _ONE, out=top)
    np.minimum(middle, _ONE - top, out=middle)
    np.maximum(middle, 0, out=middle)
    return _ONE - middle - top, middle, top


def _weighted_bernstein_terms(terms, weights):
    """A row's terms times its grid weight ``ŵ``, still summing to
    ``W = ŵ 2**32`` (an integer in ``[0, 2**32]``).

    ``trunc(ŵ p)`` is at most ``p`` and at most ``W``
    (:mod:`skdp.sensitivity._weights`); the middle term is capped so that
    the two upper ones leave a non-negative rest, which the first term
    takes: three non-negative integers adding up to ``W``.
    """
    _, middle, top = terms
    w = weights[:, None]
    units = np.ldexp(w, FIXED_POINT_BITS).astype(np.int64)
    top = weighted_terms(top.astype(np.float64), w).astype(np.int64)
    middle = weighted_terms(middle.astype(np.float64), w).astype(np.int64)
    np.minimum(top, units, out=top)
    np.minimum(middle, units - top, out=middle)
    return units - middle - top, middle, top


def exact_moment_sums(X, lower, upper, codes=None, n_groups=1, sample_weight=None):
    """Exact Bernstein-basis sums per group and feature: count, mean, variance.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite data.
    lower, upper : ndarray of shape (n_features,)
        Public bounds, ``lower < upper``.
    codes : ndarray of int of shape (n_samples,), default=None
        The group of each row, in ``[0, n_groups)`` (e.g. the encoded class
        label); None puts every row in group 0.
    n_groups : int, default=1
        The public number of groups.
    sample_weight : ndarray of shape (n_samples,), default=None
        Row weights in [0, 1]: a row's three terms become three
        non-negative integers that add up to its grid weight ``W <= 2**32``
        instead of ``2**32`` (:func:`_weighted_bernstein_terms`), so the
        sensitivity is unchanged and the triple totals are the weighted
        counts. All ones give the unweighted sums.

    Returns
    -------
    sums : FixedPoint of shape (n_groups, 3, n_features)
        ``Σ (1 - a)²``, ``Σ 2a(1 - a)`` and ``Σ a²`` over each group's rows,
        ``a = (clip(x) - L) / (U - L)``, times ``2**-32``.

    Notes
    -----
    **Sensitivity (add/remove one row).** A row belongs to one group and
    adds to each feature of it three non-negative integers that sum to
    ``2**32`` (a function of that row alone), and the sums are exact: the
    released vector moves by exactly ``d`` in L1 norm and by at most
    ``sqrt(d)`` in L2 norm (``p0² + p1² + p2² <= (p0 + p1 + p2)² = 1``).
    Releasing the count, the sum and the sum of squares separately would
    cost sensitivity ``1 + d + d`` (L1) for the same information; the
    basis is that of Bernstein polynomials, whose moments are linear in
    it. Brute-forced in the tests.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity import exact_moment_sums
    >>> X = np.array([[0.0], [5.0], [10.0], [30.0]])
    >>> exact_moment_sums(X, np.array([0.0]), np.array([10.0])).as_float()
    array([[[1.25],
            [0.5 ],
            [2.25]]])
    """
    n, d = X.shape
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    centre, radius = centre_and_radius(lower, upper)
    totals = np.zeros((n_groups, 3, d), dtype=object)
    totals[...] = 0
    weights = None if sample_weight is None else grid_weights(sample_weight)
    for start in range(0, n, _BLOCK_ROWS):
        block = X[start : start + _BLOCK_ROWS]
        terms = _bernstein_terms(block, lower, upper, centre, radius)
        if weights is not None:
            block_weights = weights[start : start + _BLOCK_ROWS]
            terms = _weighted_bernstein_terms(terms, block_weights)
        if codes is None:
            block_sums = np.stack([t.sum(axis=0) for t in terms])[None]
        else:
            block_codes = codes[start : start + _BLOCK_ROWS]
            block_sums = _group_sums(terms, block_codes, n_groups)
        totals += block_sums.astype(object)
    numerators = tuple(int(v) for v in totals.ravel())
    return FixedPoint(numerators, -FIXED_POINT_BITS, (n_groups, 3, d))


def _group_sums(terms, codes, n_groups):
    """Per-group column sums of the three int64 term arrays (exact)."""
    sums = np.zeros((n_groups, 3, terms[0].shape[1]), dtype=np.int64)
    for group in range(n_groups):
        rows = codes == group
        for k, term in enumerate(terms):
            sums[group, k] = term[rows].sum(axis=0)
    return sums


def moments_from_sums(sums, lower, upper, *, return_std=False):
    """Counts, means and variances from (noisy) Bernstein sums (post-processing).

    Parameters
    ----------
    sums : ndarray of shape (n_groups, 3, n_features)
        Released sums of :func:`exact_moment_sums`, as floats.
    lower, upper : ndarray of shape (n_features,)
        The public bounds used for the sums.
    return_std : bool, default=False
        Also return the standard deviations, computed without squaring the
        width (finite for any finite bounds, where a variance may overflow).

    Returns
    -------
    counts : ndarray of shape (n_groups,)
        Each group's row count: the mean over features of the triple totals,
        at least 1.
    means, variances : ndarray of shape (n_groups, n_features)
        In data units; the means are clipped to the bounds and the variances
        to ``[0, ((U - L)/2)²]`` (a data-independent rule; ``inf`` only where
        that square overflows).
    stds : ndarray of shape (n_groups, n_features)
        With ``return_std``: ``sqrt`` of the variances, in ``[0, (U - L)/2]``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity import moments_from_sums
    >>> sums = np.array([[[1.25], [0.5], [2.25]]])  # rows 0, 5, 10, 10
    >>> moments_from_sums(sums, np.array([0.0]), np.array([10.0]))
    (array([4.]), array([[6.25]]), array([[17.1875]]))
    """
    sums = np.asarray(sums, dtype=float)
    with np.errstate(all="ignore"):  # post-processing: nothing may warn
        counts = np.maximum(sums.sum(axis=1).mean(axis=1), 1.0)
        first = (0.5 * sums[:, 1] + sums[:, 2]) / counts[:, None]
        second = sums[:, 2] / counts[:, None]
        mean_a = np.clip(first, 0.0, 1.0)
        var_a = np.clip(second - mean_a**2, 0.0, 0.25)
        centre, half = upper / 2 + lower / 2, upper / 2 - lower / 2
        means = np.clip(centre + half * (2 * mean_a - 1), lower, upper)
        stds = half * (2 * np.sqrt(var_a))  # 2 * half may overflow; this never
        variances = stds**2
    if return_std:
        return counts, means, variances, stds
    return counts, means, variances


def exact_histogram_counts(X, edges):
    """Per-feature row counts over public bins, in one pass without a sort.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite data.
    edges : list of ndarray
        Public increasing bin edges per feature (at least two each). Values
        below the first edge count in the first bin and values above the
        last in the last bin (clipping, as
        :class:`~sklearn.preprocessing.KBinsDiscretizer` does).

    Returns
    -------
    counts : FixedPoint of shape (sum of the numbers of bins,)
        The features' counts one after another, bins ``[e_k, e_{k+1})``
        (the last bin closed).

    Notes
    -----
    **Sensitivity (add/remove one row).** A row falls into exactly one bin
    of each feature: the vector moves by ``d`` in L1 norm and ``sqrt(d)``
    in L2 norm. Counts are integers, exact for any ``n``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity import exact_histogram_counts
    >>> X = np.array([[0.5], [1.5], [1.7], [9.0]])
    >>> exact_histogram_counts(X, [np.array([0.0, 1.0, 2.0])]).numerators
    (1, 3)
    """
    counts = []
    for j, feature_edges in enumerate(edges):
        bins = bin_indices(X[:, j], np.asarray(feature_edges, dtype=float))
        counts.extend(np.bincount(bins, minlength=feature_edges.size - 1).tolist())
    return FixedPoint(tuple(int(c) for c in counts), 0, (len(counts),))


@np.errstate(over="ignore", invalid="ignore")
def bin_indices(column, edges):
    """Bin of each value: ``k`` with ``e_k <= x < e_{k+1}``, clipped to the ends.

    Evenly spaced (public) edges give the bin by one multiplication,
    corrected by one comparison on each side, as numpy's histogram does
    (the rounding of the multiplication is off by one bin at most); other
    edges by binary search.
    """
    last = edges.size - 2
    width = edges[-1] - edges[0]
    factor = (last + 1) / width
    even = np.allclose(np.diff(edges), width / (last + 1), rtol=1e-9, atol=0.0)
    if not (even and np.isfinite(width) and np.isfinite(factor) and factor > 0):
        return np.searchsorted(edges[1:-1], column, side="right")
    guess = np.floor((column - edges[0]) * factor)
    bins = np.clip(guess, 0, last).astype(np.intp)
    bins -= (column < edges[bins]) & (bins > 0)
    bins += (column >= edges[bins + 1]) & (bins < last)
    return bins
