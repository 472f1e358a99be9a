"""Rank scores of every point of a public grid, grouped into classes.

The exponential-mechanism quantile releases a point of the public grid
``G = {j 2**k : j integer} ∩ [L, U]``, with ``k`` fixed by the bounds alone.
Its utility is the rank score of :mod:`skdp.sensitivity._quantile`,

    u(c; x) = -|(1 - q) #{x_i < c} - q #{x_i > c}|,

with rows equal to ``c`` on neither side, so a grid point equal to a tied
data value (an atom) scores by its rank interval. The score is constant on
the grid points strictly between two consecutive distinct data values, so the
``|G|`` candidates (up to ``2**33``) fall into at most ``2m + 1`` classes for
``m`` distinct values: the gaps between them and the atoms on the grid. Each
class is a run of consecutive grid indices, described by its first index, its
number of points and its score; nothing here is random.
"""

import math

import numpy as np

__all__ = ["GRID_BITS", "grid_score_classes", "quantile_grid_exponent"]

#: The grid step is at most ``(U - L) / 2**GRID_BITS``: between 2**33 and
#: 2**34 points over the bounds (a step of 7.5e-9 for ages in [0, 120]).
GRID_BITS = 33


def quantile_grid_exponent(lower, upper, bits=GRID_BITS):
    """Public grid exponent ``k`` of the release on ``[lower, upper]``.

    ``2**k`` is the largest power of two at most ``(upper - lower) /
    2**bits``, raised if needed to the spacing of doubles at the larger
    of ``|lower|`` and ``|upper|``, so that every grid point is a double and
    every grid index ``j`` satisfies ``|j| <= 2**53``.

    Parameters
    ----------
    lower, upper : float
        Public finite bounds, ``lower < upper``.
    bits : int, default=GRID_BITS
        The grid has between ``2**bits`` and ``2**(bits + 1)`` points (fewer
        where doubles are sparser).

    Returns
    -------
    k : int

    Examples
    --------
    >>> from skdp.sensitivity._quantile_grid import quantile_grid_exponent
    >>> quantile_grid_exponent(0.0, 120.0)
    -27
    >>> quantile_grid_exponent(1e9, 1e9 + 1.0)  # doubles are 2**-23 apart there
    -23
    """
    half_width = float(upper) * 0.5 - float(lower) * 0.5  # no overflow
    k = math.frexp(half_width)[1] - bits  # 2**k <= 2 * half_width / 2**bits
    spacing = math.ulp(max(abs(float(lower)), abs(float(upper))))
    return max(k, math.frexp(spacing)[1] - 1, -1074)


@np.errstate(over="ignore")
def _grid_floor(values, step):
    """``floor(v / step)`` exactly, as floats holding integers.

    ``v / step`` is a power-of-two scaling, exact unless it lands among the
    subnormal numbers; the correction below makes the result exact anyway
    (``j * step`` is exact for every index the grid can hold). The upper
    check ``(j + 1) step`` overflows to ``inf`` for a value in the last cell
    below the largest double, which is the right comparison (``inf > v``);
    it is not reported, as it depends on the values.
    """
    index = np.floor(values / step)
    index -= index * step > values
    index += (index + 1.0) * step <= values
    return index


def grid_score_classes(sorted_clipped, lower, upper, k, q, rows=None):
    """Classes of grid points with equal rank score.

    Parameters
    ----------
    sorted_clipped : ndarray of shape (n_samples,)
        One feature, clipped to ``[lower, upper]`` and sorted.
    lower, upper : float
        Public bounds.
    k : int
        Grid exponent from :func:`quantile_grid_exponent`.
    q : float
        Quantile level in ``[0, 1]``.
    rows : tuple of (int, int), default=None
        Only the classes of the rows ``start <= i < stop`` (widened to whole
        tie runs) and of the gaps next to them; None for all rows.

    Returns
    -------
    first : ndarray of float64
        First grid index ``j`` of each class (an integer-valued float).
    counts : ndarray of int64
        Number of grid points in each class, all ``>= 1``.
    scores : ndarray of float64
        The rank score of every point of the class.

    Notes
    -----
    With distinct values ``v_1 < ... < v_m``, ``a_i = #{x < v_i}`` and
    ``b_i = #{x <= v_i}``: the grid points strictly between ``v_i`` and
    ``v_{i+1}`` have ``b_i`` rows below and ``n - b_i`` above, score
    ``-|b_i - q n|``; an atom ``v_i`` on the grid has score ``-|(1 - q) a_i -
    q (n - b_i)|``. Checked against the score of every single grid point,
    computed by :func:`~skdp.sensitivity._quantile.candidate_rank_scores`, on
    small grids in the tests.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._quantile_grid import grid_score_classes
    >>> first, counts, scores = grid_score_classes(
    ...     np.array([1.0, 1.0, 2.5]), 0.0, 4.0, -1, 0.5)
    >>> first.tolist(), counts.tolist(), scores.tolist()
    ([0.0, 2.0, 3.0, 5.0, 6.0], [2, 1, 2, 1, 3], [-1.5, -0.5, -0.5, -1.0, -1.5])
    """
    n = sorted_clipped.shape[0]
    step = 2.0**k
    start, stop = (0, n) if rows is None else _whole_tie_runs(sorted_clipped, *rows)
    window = sorted_clipped[start:stop]
    if start > 0:  # the gap below the window starts after the previous value
        gap_start = _grid_floor(sorted_clipped[start - 1 : start], step)[0] + 1.0
    else:
        gap_start = -_grid_floor(np.array([-lower]), step)[0]  # ceil(lower / step)
    if stop < n:  # ... and the gap above ends before the next value
        after = sorted_clipped[stop : stop + 1]
        gap_end = _grid_floor(after, step)[0]
        gap_end -= gap_end * step == after[0]
    else:
        gap_end = _grid_floor(np.array([upper]), step)[0]
    starts = np.flatnonzero(window[1:] != window[:-1]) + 1
    first_row = np.concatenate([[0], starts]) if window.size else starts
    values = window[first_row]
    below = (first_row + start).astype(np.float64)  # a_i
    upto = np.append(first_row[1:], window.size).astype(np.float64) + start  # b_i
    floor_v = _grid_floor(values, step)
    on_grid = floor_v * step == values
    # gap i (i = 0..m) lies strictly between v_i and v_{i+1} (padded by the
    # window's neighbours or the bounds)
    gap_first = np.concatenate([[gap_start], floor_v + 1.0])
    gap_last = np.concatenate([np.where(on_grid, floor_v - 1.0, floor_v), [gap_end]])
    gap_rows = np.concatenate([[float(start)], upto])
    gap_scores = -np.abs(gap_rows - q * n)
    atom_scores = -np.abs((1.0 - q) * below - q * (n - upto))
    first = np.concatenate([gap_first, floor_v[on_grid]])
    last = np.concatenate([gap_last, floor_v[on_grid]])
    scores = np.concatenate([gap_scores, atom_scores[on_grid]])
    order = np.argsort(first, kind="stable")
    first, last, scores = first[order], last[order], scores[order]
    counts = last - first + 1.0
    keep = counts >= 1.0
    return first[keep], counts[keep].astype(np.int64), scores[keep]


def _whole_tie_runs(sorted_clipped, start, stop):
    """Widen ``[start, stop)`` so that no run of tied values is cut."""
    n = sorted_clipped.shape[0]
    start, stop = max(0, int(start)), min(n, int(stop))
    if start >= stop:
        return start, start
    start = int(np.searchsorted(sorted_clipped, sorted_clipped[start], side="left"))
    last = sorted_clipped[stop - 1]
    stop = int(np.searchsorted(sorted_clipped, last, side="right"))
    return start, stop
