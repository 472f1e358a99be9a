"""Rank scores of quantile candidates.

One utility serves both private quantile methods (public candidates, and
every point of a public grid, grouped in
:mod:`skdp.sensitivity._quantile_grid`). For a quantile level ``q`` and an
output value ``y``,

    u(y; x) = -|(1 - q) * #{x_i < y} - q * #{x_i > y}|,

the (negated) distance between the rank of ``y`` and the target rank ``q n``,
with rows equal to ``y`` counted on neither side (OpenDP's
``make_quantile_score_candidates``). For ``y`` that is not a data value,
``#{x_i < y} + #{x_i > y} = n`` and ``u(y; x) = -|#{x_i < y} - q n|``.

The scores of public candidates need only how many rows fall below, on and
above each candidate: :func:`candidate_cell_counts` counts them in one pass
without sorting, per block of rows (the counts of blocks add up), and
:func:`scores_from_cell_counts` turns the counts into the same scores as
:func:`candidate_rank_scores` on the sorted column.

Everything here is derived for add/remove-one-row neighbours (n is private)
and is deterministic: no noise, no accountant.
"""

import numpy as np

__all__ = [
    "candidate_cell_counts",
    "candidate_rank_scores",
    "quantile_score_sensitivity",
    "scores_from_cell_counts",
]

#: Rows counted at a time: the temporaries of a block stay in cache.
COUNT_BLOCK_ROWS = 1 << 16


def quantile_score_sensitivity(q):
    """Sensitivity of the rank score ``u(y; x)`` under add/remove-one-row.

    Parameters
    ----------
    q : float
        Quantile level in ``[0, 1]``.

    Returns
    -------
    sensitivity : float
        ``max(q, 1 - q)``, between 1/2 (the median) and 1 (min and max).

    Notes
    -----
    Fix an output ``y``. Adding a row ``z`` to ``x`` changes
    ``s(y) = (1 - q) #{x_i < y} - q #{x_i > y}`` by ``1 - q`` when ``z < y``,
    by ``-q`` when ``z > y`` and by 0 when ``z = y``; removing a row gives the
    opposite changes. So ``|s|``, and hence ``u = -|s|``, moves by at most
    ``max(q, 1 - q)``, for every ``y`` at once. The bound is attained (a row
    below a ``y`` at which ``s >= 0``). The row count ``n`` is not treated as
    public: its change is the ``q`` in the two cases. Checked by brute force
    over every add/remove neighbour of small datasets in the tests.

    The scores are not monotone: adding a row below the target rank moves
    scores above it down and scores below it up. The selection mechanisms
    therefore need the general scale ``2Δ/ε``.

    Examples
    --------
    >>> from skdp.sensitivity._quantile import quantile_score_sensitivity
    >>> quantile_score_sensitivity(0.5), quantile_score_sensitivity(0.9)
    (0.5, 0.9)
    """
    q = float(q)
    return max(q, 1.0 - q)


def candidate_rank_scores(sorted_values, candidates, q):
    """Rank score ``u(c; x)`` of each public candidate ``c``.

    Parameters
    ----------
    sorted_values : ndarray of shape (n_samples,)
        One feature, sorted (clipped or not: only comparisons matter).
    candidates : ndarray of shape (n_candidates,)
        Public candidates, sorted.
    q : float
        Quantile level in ``[0, 1]``.

    Returns
    -------
    scores : ndarray of shape (n_candidates,)
        ``-|(1 - q) #{x < c} - q #{x > c}|``, from two binary searches per
        candidate on the sorted data (O(m log n) after the sort).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._quantile import candidate_rank_scores
    >>> candidate_rank_scores(np.array([1.0, 2.0, 2.0, 3.0]),
    ...                       np.array([0.0, 2.0, 2.5]), 0.5)
    array([-2., -0., -1.])
    """
    n = sorted_values.shape[0]
    below = np.searchsorted(sorted_values, candidates, side="left")
    above = n - np.searchsorted(sorted_values, candidates, side="right")
    return -np.abs((1.0 - q) * below - q * above)


def candidate_cell_counts(values, candidates, lower, upper):
    """Rows per cell of the line cut at the public candidates: exact, no sort.

    The values are clipped to ``[lower, upper]`` first (as for
    :func:`candidate_rank_scores` on the clipped column). The cells are, in
    order, the open gaps and the candidates themselves: cell ``2 j`` holds
    the rows with ``c_{j-1} < x < c_j`` (``c_{-1} = -inf``, ``c_m = +inf``)
    and cell ``2 j + 1`` the rows equal to ``c_j`` (to the first of equal
    candidates). The counts of blocks of rows add up, so a column can be
    counted chunk by chunk and released once
    (:func:`scores_from_cell_counts`).

    Parameters
    ----------
    values : ndarray of shape (n_samples,)
        One feature's values, finite (a NaN is counted above every
        candidate, as it sorts last).
    candidates : ndarray of shape (n_candidates,)
        Public candidates, non-decreasing.
    lower, upper : float
        Public clipping bounds.

    Returns
    -------
    counts : ndarray of int64, shape (2 * n_candidates + 1,)

    Notes
    -----
    Each row's cell is ``2 #{c < x} + [x = c_{#{c < x}}]``. ``#{c < x}`` is
    first guessed by interpolating between the end candidates (exact for an
    evenly spaced grid up to rounding), then checked by the two comparisons
    that define it, ``c_{l-1} < x <= c_l``; rows that fail the check get a
    binary search. The result is therefore exact for any candidates, and
    costs a few passes over the rows when the guess is good.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._quantile import candidate_cell_counts
    >>> candidate_cell_counts(np.array([1.0, 2.0, 2.0, 3.0, 9.0]),
    ...                       np.array([0.0, 2.0, 2.5]), 0.0, 4.0)
    array([0, 0, 1, 2, 0, 0, 2])
    """
    candidates = np.asarray(candidates, dtype=np.float64)
    counts = np.zeros(2 * candidates.size + 1, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64).ravel()
    # c_{l-1} and c_l for l = #{c < x} in 0..m (c_{-1} = -inf, c_m = +inf;
    # a clipped x is never +inf)
    before = np.concatenate([[-np.inf], candidates])
    at = np.append(candidates, np.inf)
    for start in range(0, values.size, COUNT_BLOCK_ROWS):
        clipped = np.clip(values[start : start + COUNT_BLOCK_ROWS], lower, upper)
        cells = _cells(clipped, candidates, before, at)
        counts += np.bincount(cells, minlength=counts.size)
    return counts


def feature_cell_counts(X, grid, lower, upper):
    """:func:`candidate_cell_counts` of every feature, one row each.

    ``grid[:, j]`` holds feature ``j``'s public candidates and ``lower[j]``,
    ``upper[j]`` its bounds. Returns int64 counts of shape ``(n_features,
    2 * n_candidates + 1)``; the counts of disjoint blocks of rows add up
    (the statistic of a Dask input, :func:`~skdp.utils._dask.row_statistic`).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._quantile import feature_cell_counts
    >>> X = np.array([[1.0, 5.0], [2.0, 6.0]])
    >>> grid = np.array([[0.0, 5.0], [2.0, 7.0]])
    >>> feature_cell_counts(X, grid, np.array([0.0, 5.0]), np.array([2.0, 7.0]))
    array([[0, 0, 1, 1, 0],
           [0, 1, 1, 0, 0]])
    """
    return np.stack(
        [
            candidate_cell_counts(X[:, j], grid[:, j], lower[j], upper[j])
            for j in range(X.shape[1])
        ]
    ).reshape(X.shape[1], 2 * grid.shape[0] + 1)


def _cells(x, candidates, before, at):
    """``2 l + [x = c_l]`` per row with ``l = #{c < x}`` (see the caller)."""
    below = _guess_candidates_below(x, candidates)
    nearest = at[below]
    right = before[below] < x
    right &= x <= nearest  # c_{l-1} < x <= c_l: l is #{c < x}
    cells = below * 2
    cells += nearest == x
    wrong = np.flatnonzero(~right)
    if wrong.size:
        below = np.searchsorted(candidates, x[wrong], side="left")
        cells[wrong] = 2 * below + (at[below] == x[wrong])
    return cells


def _guess_candidates_below(x, candidates):
    """About ``#{c < x}`` per row, in ``[0, m]``: exact for evenly spaced
    candidates up to rounding (the caller checks every row)."""
    m = candidates.size
    width = candidates[-1] * 0.5 - candidates[0] * 0.5 if m else 0.0  # no overflow
    if m < 2 or not width > 0:
        return np.searchsorted(candidates, x, side="left")
    # Overflow to inf with a subnormal width, or a NaN, only makes a wrong
    # guess, which the caller fixes.
    with np.errstate(over="ignore", invalid="ignore"):
        guess = x * 0.5
        guess -= candidates[0] * 0.5
        guess *= (m - 1) / width
    np.ceil(guess, out=guess)
    np.fmax(guess, 0.0, out=guess)  # fmax/fmin: a NaN becomes 0
    np.fmin(guess, float(m), out=guess)
    return guess.astype(np.intp)


def scores_from_cell_counts(counts, candidates, q):
    """Rank scores of the candidates from :func:`candidate_cell_counts`.

    Parameters
    ----------
    counts : ndarray of int64, shape (2 * n_candidates + 1,)
        The cell counts of a whole column (summed over its blocks).
    candidates : ndarray of shape (n_candidates,)
        The candidates they were counted at.
    q : float
        Quantile level in ``[0, 1]``.

    Returns
    -------
    scores : ndarray of shape (n_candidates,)
        The same array as :func:`candidate_rank_scores` on the sorted,
        clipped column: ``#{x <= c_j}`` is the sum of the cells up to
        ``c_j``'s, and ``#{x < c_j}`` that minus the rows equal to ``c_j``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._quantile import (
    ...     candidate_cell_counts, scores_from_cell_counts)
    >>> candidates = np.array([0.0, 2.0, 2.5])
    >>> counts = candidate_cell_counts(np.array([1.0, 2.0, 2.0, 3.0]),
    ...                                candidates, 0.0, 4.0)
    >>> scores_from_cell_counts(counts, candidates, 0.5)
    array([-2., -0., -1.])
    """
    candidates = np.asarray(candidates, dtype=np.float64)
    n = counts.sum()
    upto = np.cumsum(counts)[1::2]  # #{x <= c_j}
    first_equal = np.searchsorted(candidates, candidates, side="left")
    below = upto - counts[1::2][first_equal]  # #{x < c_j}
    above = n - upto
    return -np.abs((1.0 - q) * below - q * above)
