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

__all__ = [
    "GRID_BITS",
    "RelativeGrid",
    "grid_score_classes",
    "quantile_grid_exponent",
]

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
    if half_width == 0.0:  # both halves underflowed: subnormal bounds, exact
        half_width = math.ldexp(float(upper) - float(lower), -1) or 2.0**-1074
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


# -- the relative grid of the joint release ------------------------------------

#: The relative grid has ``2**RELATIVE_BITS`` points in every binade
#: ``[2**(e-1), 2**e)``: every integer below ``2**(RELATIVE_BITS + 1)`` is a
#: point, and the step is at most ``2**-RELATIVE_BITS`` of the magnitude.
RELATIVE_BITS = 8
#: Binades of relative resolution below the coarse step's; under them the
#: grid is uniform with the finest step ``2**(coarse - RELATIVE_BINADES)``.
RELATIVE_BINADES = 24
_SMALLEST_NORMAL = 2.0**-1022
#: The coarse (largest) step is at most ``(U - L) / 2**COARSE_BITS``.
COARSE_BITS = 11
#: At most this many bits of refinement (:func:`refinement_bits`): the
#: grid then has ``RELATIVE_BITS + 10`` bits per binade, a coarse step of
#: ``(U - L) / 2**21`` and ``RELATIVE_BINADES + 10`` binades under it, and
#: its total multiplicity stays below ``2**58`` (exact int64, tested); times
#: the 4097 states per point it can pass ``2**63`` (bounds ``2**17`` doubles
#: wide), so block sizes from ``2**62`` on are Python ints.
MAX_REFINEMENT = 10


def refinement_bits(epsilon):
    """Extra bits of grid resolution for a release with ``epsilon`` (public).

    ``clip(floor(log2(ε)), 0, MAX_REFINEMENT)``: none up to ε < 2 (the
    grid of the default ε), then one more bit per doubling of ε. The
    exponential mechanism's rank error shrinks like ``1 / ε``; a grid of
    fixed resolution would leave the rows of one cell as an error that no
    ε removes (at ε = 1e6 the joint quantiles were 6 ranks off). Doubling
    the resolution when ε doubles makes the grid's share of the error shrink
    at the mechanism's rate, up to a relative step of ``2**-19`` and a
    coarse step of ``(U - L) / 2**21``.

    Examples
    --------
    >>> from skdp.sensitivity._quantile_grid import refinement_bits
    >>> refinement_bits(1.0), refinement_bits(8.0), refinement_bits(1e6)
    (0, 3, 10)
    """
    if not epsilon >= 2.0:
        return 0
    return min(MAX_REFINEMENT, math.frexp(float(epsilon))[1] - 1)


class RelativeGrid:
    """A public grid, fine near every scale, fixed by the bounds alone.

    The points of ``[lower, upper]`` that are multiples of their own step::

        step(x) = 2**clip(e(x) - 1 - b, fine, coarse),  |x| in [2**(e-1), 2**e),

    with ``b = RELATIVE_BITS + refine``, ``coarse`` the exponent of
    :func:`quantile_grid_exponent` at ``COARSE_BITS + refine`` bits (the
    uniform grid of ``2**11`` to ``2**12`` points over the bounds when
    ``refine = 0``) and ``fine = coarse - RELATIVE_BINADES - refine``.
    ``refine`` (public, :func:`refinement_bits` of the release's ε) adds
    resolution everywhere; the description below is for ``refine = 0``.
    It is the union of that uniform grid with a floating-point format of
    ``b + 1`` significant bits and gradual underflow
    below ``2**(fine + b + 1)``, symmetric about 0: never coarser than the
    uniform grid, every integer of magnitude below ``2**(b + 1)`` a point,
    whatever the bounds. At most ``2 (2**(b + 1) + RELATIVE_BINADES 2**b +
    2**12) + 1`` points (21,505).

    Points are numbered by a monotone integer index, 0 at 0 and odd in ``x``:
    ``|x| < T1 = 2**(fine + b + 1)`` has index ``|x| / 2**fine``; binade ``e``
    between ``T1`` and ``T2 = 2**(coarse + b + 1)`` starts at index ``2**(b + 1)
    + (e - 1 - fine - b - 1) 2**b``; above ``T2`` the step is ``2**coarse``.
    Indices are int64 (above ``T2``, ``|x| / 2**coarse`` is below ``2**53``
    by the uniform grid's guarantee, and the index adds ``RELATIVE_BINADES
    2**b`` to it); every point is a double, and all the arithmetic is exact:
    power-of-two scalings by ``ldexp``, integers below ``2**53`` converted to
    floats.
    """

    def __init__(self, lower, upper, refine=0):
        self.bits = RELATIVE_BITS + refine
        self.coarse = quantile_grid_exponent(lower, upper, bits=COARSE_BITS + refine)
        self.fine = max(self.coarse - RELATIVE_BINADES - refine, -1074)
        self._t1 = math.ldexp(1.0, self.fine + self.bits + 1)
        top = self.coarse + self.bits + 1
        self._t2 = math.ldexp(1.0, top) if top < 1024 else math.inf
        self._index_t2 = (1 << (self.bits + 1)) + (self.coarse - self.fine) * (
            1 << self.bits
        )
        # index - shift_t2 = w / 2**coarse above T2: below 2**53 in magnitude
        self._shift_t2 = self._index_t2 - (1 << (self.bits + 1))
        self.first = -int(self.floor_index(np.array([-float(lower)]))[0])  # ceil
        self.last = int(self.floor_index(np.array([float(upper)]))[0])

    @property
    def size(self):
        """Number of grid points in the bounds."""
        return self.last - self.first + 1

    def _magnitude_floor(self, w):
        """Index of the largest point ``<= w`` for ``w >= 0`` (int64 array)."""
        b = self.bits
        index = np.zeros(w.shape, dtype=np.int64)
        low = w < self._t1  # uniform, fine
        index[low] = np.floor(np.ldexp(w[low], -self.fine))
        middle = (w >= self._t1) & (w < self._t2)
        if middle.any():
            mantissa, e = np.frexp(w[middle])  # w = mantissa 2**e, in [1/2, 1)
            offset = e.astype(np.int64) - 1 - (self.fine + b + 1)
            digits = np.floor(np.ldexp(mantissa, b + 1)).astype(np.int64)
            index[middle] = (1 << b) + offset * (1 << b) + digits
        top = w >= self._t2
        if top.any():
            shifted = np.floor(np.ldexp(w[top], -self.coarse)).astype(np.int64)
            index[top] = self._shift_t2 + shifted
        return index

    def _magnitude_point(self, index):
        """The point of index ``index >= 0`` (int64 array)."""
        b = self.bits
        index = np.asarray(index, dtype=np.int64)
        point = np.ldexp(np.minimum(index, 1 << (b + 1)).astype(float), self.fine)
        middle = (index >= (1 << (b + 1))) & (index < self._index_t2)
        if middle.any():
            t = index[middle] - (1 << (b + 1))
            offset = t >> b
            digits = (t & ((1 << b) - 1)) + (1 << b)
            point[middle] = np.ldexp(digits.astype(float), self.fine + 1 + offset)
        top = index >= self._index_t2
        if top.any():
            shifted = (index[top] - self._shift_t2).astype(float)  # exact
            point[top] = np.ldexp(shifted, self.coarse)
        return point

    def locate(self, values):
        """Floor index of each finite value and whether it is a grid point.

        Returns ``(index, on_grid)``: the index (int64) of the largest grid
        point ``<= v`` and ``v == point(index)``.
        """
        values = np.asarray(values, dtype=np.float64)
        index, on_grid, _ = self._magnitude_locate(np.abs(values), nearest=False)
        negative = values < 0
        if negative.any():  # floor(-w) = -ceil(w)
            index = np.where(negative, -(index + ~on_grid), index)
        return index, on_grid

    def nearest_index(self, values):
        """Index of the grid point nearest to each finite value.

        A value exactly halfway between two consecutive points goes to the
        one of even index (as ``np.round``; the index is odd in ``x``, so
        ``nearest_index(-v) = -nearest_index(v)``). Values must lie within
        the grid's first and last points (clip them first).

        Notes
        -----
        Exact: between ``T1`` and ``T2`` the grid is a format of ``b``
        fraction bits, so the nearest point is the double's bit pattern
        rounded to ``52 - b`` fewer bits (ties to even); below ``T1`` and
        above ``T2`` the value scaled by the uniform step is exact and its
        fraction ``s - floor(s)`` too (Sterbenz). Near the subnormals the
        distances to both neighbours are compared; each difference is exact
        (Sterbenz: same sign, within a factor 2) except ``c_1 - v`` for
        ``0 < v < c_1 / 2``, which then rounds to at least ``c_1 / 2 > v``,
        so the comparison is still right. Checked against exact rational
        distances in the tests.

        Examples
        --------
        >>> import numpy as np
        >>> from skdp.sensitivity._quantile_grid import RelativeGrid
        >>> grid = RelativeGrid(0.0, 1e5)
        >>> grid.points(grid.nearest_index(np.array([40.0, 40.01, 40.1]))).tolist()
        [40.0, 40.0, 40.125]
        """
        values = np.asarray(values, dtype=np.float64)
        index, _, up = self._magnitude_locate(np.abs(values), nearest=True)
        index += up
        return np.where(values < 0, -index, index)

    def snap(self, values):
        """Each value clipped to the grid and moved to its nearest point."""
        low, high = self.points(np.array([self.first, self.last]))
        clipped = np.clip(np.asarray(values, dtype=np.float64), low, high)
        return self.points(self.nearest_index(clipped))

    def _magnitude_locate(self, w, nearest):
        """Floor index of ``w >= 0``, whether it is a point, and (if
        ``nearest``, else None) whether its nearest point is the next one
        (ties to the even index)."""
        if self._t1 >= _SMALLEST_NORMAL:
            return self._bits_locate(w, nearest)
        index = self._magnitude_floor(w)  # bounds near the subnormals: slower
        below = self._magnitude_point(index)
        on_grid = below == w
        if not nearest:
            return index, on_grid, None
        up = np.zeros(w.shape, dtype=bool)
        off = np.flatnonzero(~on_grid)
        if off.size:
            above = self._magnitude_point(index[off] + 1)
            to_below, to_above = w[off] - below[off], above - w[off]
            odd = (index[off] & 1) == 1
            up[off] = (to_above < to_below) | ((to_above == to_below) & odd)
        return index, on_grid, up

    def _bits_locate(self, w, nearest):
        """:meth:`_magnitude_locate` with a normal ``T1``: bit patterns.

        Between ``T1`` and ``T2`` the grid is a floating-point format of
        ``b`` fraction bits, so the floor index is the double's bit pattern
        shifted right by ``52 - b`` (monotone in ``w``, consecutive for
        consecutive points) plus a constant, and ``w`` is a point iff the
        shifted-out bits are zero; they are above half a step iff they
        exceed ``2**(51 - b)``. Below ``T1`` and above ``T2`` the grid is
        uniform (exact power-of-two scalings).
        """
        b = self.bits
        bits = w.view(np.int64)
        shift = 52 - b
        index = bits >> shift
        index += (1 << (b + 1)) - (1024 + self.fine + b) * (1 << b)
        rest = bits & ((1 << shift) - 1)
        on_grid = rest == 0
        up = None
        if nearest:
            half = 1 << (shift - 1)
            up = (rest > half) | ((rest == half) & ((index & 1) == 1))
        for part, exponent, shift_index in (
            (w < self._t1, self.fine, 0),
            (w >= self._t2, self.coarse, self._shift_t2),
        ):
            if part.any():
                # exact, but for subnormal quotients (w far below a step)
                scaled = np.ldexp(w[part], -exponent)
                whole = np.floor(scaled)
                index[part] = shift_index + whole.astype(np.int64)
                on_grid[part] = np.ldexp(whole, exponent) == w[part]
                if nearest:
                    fraction = scaled - whole  # exact (Sterbenz, or whole = 0)
                    odd = (index[part] & 1) == 1
                    up[part] = (fraction > 0.5) | ((fraction == 0.5) & odd)
        return index, on_grid, up

    def multiplicity(self, index):
        """``step(x) / 2**fine`` at the points of the given indices (int64).

        The joint release gives each point this many copies of its states,
        so that its base measure is the step, as on a uniform grid: the
        relative grid adds points without pulling the release towards 0.
        """
        magnitude = np.abs(np.asarray(index, dtype=np.int64))
        binade = (magnitude - (1 << (self.bits + 1))) >> self.bits
        exponent = np.where(
            magnitude < (1 << (self.bits + 1)),
            0,
            1 + np.minimum(binade, self.coarse - self.fine - 1),
        )
        return np.left_shift(1, exponent).astype(np.int64)

    def cumulative(self, index):
        """``Σ_{0 <= j < i} w_j`` (``-Σ_{i <= j < 0} w_j`` for ``i < 0``).

        ``w`` is :meth:`multiplicity`, so the total multiplicity of the
        points ``a <= j < c`` is ``cumulative(c) - cumulative(a)``. In
        closed form, int64 with wrap-around: far from 0 the value itself
        may exceed ``2**63``, but differences over the points of the bounds
        are exact (modular arithmetic, and their true value is below
        ``2**63``, see ``MAX_REFINEMENT``); use only differences.
        """
        index = np.asarray(index, dtype=np.int64)
        negative = index < 0
        magnitude = np.where(negative, 1 - index, index)
        total = self._magnitude_cumulative(magnitude)
        return np.where(negative, 1 - total, total)

    @np.errstate(over="ignore")
    def _magnitude_cumulative(self, m):
        """``Σ_{0 <= j < m} w_j`` for ``m >= 0``, int64 with wrap-around.

        With ``fine = coarse`` (bounds of subnormal width, ``fine`` clamped
        at -1074) every multiplicity is 1 and the sum is ``m``; the general
        formula would shift by ``span - 1 = -1`` there.
        """
        b, span = self.bits, self.coarse - self.fine
        if span == 0:
            return np.asarray(m, dtype=np.int64)
        low = np.int64(1 << (b + 1))
        u = np.maximum(m - low, 0)
        binades = np.minimum(u >> b, span)
        inside = u - (binades << b)
        weight = np.left_shift(np.int64(2), np.minimum(binades, span - 1))
        full = (np.left_shift(np.int64(2), binades) - 2) << b
        return np.where(m <= low, m, low + full + inside * weight)

    def floor_index(self, values):
        """Index of the largest grid point ``<= v`` for each finite ``v``."""
        return self.locate(values)[0]

    def points(self, index):
        """The grid points of the given integer indices."""
        index = np.asarray(index, dtype=np.int64)
        point = self._magnitude_point(np.abs(index))
        return np.where(index < 0, -point, point)
