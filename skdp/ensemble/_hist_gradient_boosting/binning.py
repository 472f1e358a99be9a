"""Features to bin indices: public equal-width bins, or private quantile bins.

Private bins need no bounds. Every double falls in one cell of a public grid
(:func:`grid_cells`: its sign, its binary exponent and the leading
``MANTISSA_BITS`` bits of its significand, exponents clamped to
``[-EXPONENT_LIMIT, EXPONENT_LIMIT)``); the grid's per-feature row counts are
released once with Gaussian noise (:func:`release_cell_counts`, the only
private step of binning), and each feature's bins are runs of consecutive
cells holding about equal released mass (:func:`released_mass` then
:func:`cuts_from_counts`, public rules of the released counts). A value's
bin is then a function of its own cell, so binning is exact for every
double, subnormals and ``±max`` included.
"""

import numpy as np

from skdp.exceptions import NoiseDominatedWarning
from skdp.mechanisms import gaussian_release
from skdp.sensitivity._moments import bin_indices
from skdp.utils._warnings import warn_at_caller

__all__ = [
    "COARSEST_BLOCK",
    "EXPONENT_LIMIT",
    "MANTISSA_BITS",
    "N_CELLS",
    "BinMapper",
    "bins_of_counts",
    "cell_counts",
    "cell_lower_edges",
    "cuts_from_counts",
    "grid_cell_table",
    "grid_cells",
    "release_cell_counts",
    "release_private_bins",
    "released_mass",
    "warn_collapsed_bins",
]

#: Binary exponents ``e`` of ``|x| in [2**e, 2**(e+1))`` are clamped to
#: ``[-EXPONENT_LIMIT, EXPONENT_LIMIT - 1]``: values beyond ``2**32`` share the
#: last cell of their sign, nonzero values below ``2**-32`` the first.
EXPONENT_LIMIT = 32
#: Leading significand bits per cell: ``2**MANTISSA_BITS`` cells per binade.
MANTISSA_BITS = 3
_PER_SIGN = 2 * EXPONENT_LIMIT << MANTISSA_BITS
#: Cells per feature: the negative ones, zero, the positive ones (in order).
N_CELLS = 2 * _PER_SIGN + 1
#: A released cell count counts as mass only above this many noise deviations
#: (d = 1,000 features of N_CELLS cells: a false cell has probability ~3e-5).
NOISE_THRESHOLD = 4.0
#: The widest block of cells whose released counts may count as mass
#: together (:func:`released_mass`): ``2**COARSEST_BLOCK`` = 64 consecutive
#: cells of one sign, 8 binades. Measured on Adult one-hot at ε = 1 (the
#: estimators' Notes): the sparse tail of ``capital-gain`` gets its cuts.
COARSEST_BLOCK = 6
#: A cell or block counts as mass only if its released count is also above
#: half a row (counts are whole rows): the threshold of ``NOISE_THRESHOLD``
#: deviations alone passes empty cells with a probability that does not
#: shrink with the noise, so as the noise vanished a tiny "mass" among empty
#: cells could still add a cut (an empty top bin). Reached only below 1/8
#: row of noise deviation.
MIN_MASS = 0.5


#: A double's magnitude bits shifted right by ``_SHIFT`` are its biased
#: exponent and its leading ``MANTISSA_BITS`` significand bits: a key that
#: increases with ``|x|``; ``_KEYS`` are the keys of the first and last cell.
_SHIFT = 52 - MANTISSA_BITS
_KEYS = (
    (1023 - EXPONENT_LIMIT) << MANTISSA_BITS,
    ((1023 + EXPONENT_LIMIT) << MANTISSA_BITS) - 1,
)


def grid_cells(X):
    """Cell index in ``[0, N_CELLS)`` of every value of a finite array.

    Cells increase with the value: ``x < y`` implies ``cell(x) <= cell(y)``.
    Exact: read from the bits of the double (IEEE 754 binary64: sign,
    biased exponent, significand; a subnormal's exponent field is 0, below
    the first cell), so no value is rounded into a neighbouring cell.
    """
    X = np.asarray(X, dtype=float)
    bits = X.view(np.int64)
    magnitude = bits & np.int64(0x7FFF_FFFF_FFFF_FFFF)
    offset = np.clip(magnitude >> _SHIFT, *_KEYS)
    offset -= _KEYS[0] - 1
    cells = np.where(bits < 0, _PER_SIGN - offset, _PER_SIGN + offset)
    cells[magnitude == 0] = _PER_SIGN  # ±0
    return cells


def cell_lower_edges():
    """The smallest value of every cell, as floats (for display).

    A clamped end cell's edge is the edge its grid would have.
    """
    index = np.arange(_PER_SIGN)
    exponent = (index >> MANTISSA_BITS) - EXPONENT_LIMIT
    mantissa = index & ((1 << MANTISSA_BITS) - 1)
    low = np.ldexp(1.0 + mantissa / 2.0**MANTISSA_BITS, exponent)
    high = np.ldexp(1.0 + (mantissa + 1) / 2.0**MANTISSA_BITS, exponent)
    return np.concatenate([-high[::-1], [0.0], low])


def grid_cell_table(X):
    """:func:`grid_cells` of every value as uint16 (``N_CELLS < 2**16``),
    shape ``(n, d)``, Fortran order: a fit computes it once, for its cell
    counts and its bins (a quarter of ``X``'s memory)."""
    cells = np.empty(X.shape, dtype=np.uint16, order="F")
    for j in range(X.shape[1]):
        cells[:, j] = grid_cells(X[:, j])
    return cells


def cell_counts(X, cells=None):
    """Exact row counts of every (feature, cell), shape ``(d, N_CELLS)``.

    **Sensitivity (add/remove one row).** A row falls in exactly one cell of
    each feature: the counts move by 1 in ``d`` places, L2 norm ``sqrt(d)``.
    Integer counts (int64), exact for any number of rows. ``cells``:
    :func:`grid_cell_table` of ``X`` when the caller has it.
    """
    d = X.shape[1]
    counts = np.zeros((d, N_CELLS), dtype=np.int64)
    for j in range(d):
        column = grid_cells(X[:, j]) if cells is None else cells[:, j]
        counts[j] = np.bincount(column, minlength=N_CELLS)
    return counts


def release_cell_counts(counts, multiplier, source):
    """The private step of binning: ``counts`` with Gaussian noise.

    ``counts`` are :func:`cell_counts` (L2 sensitivity ``sqrt(d)``), released
    by :func:`~skdp.mechanisms.gaussian_release` with noise multiplier
    ``multiplier``. Integers below ``2**53`` are exact floats, so the query
    enters the release exactly.
    """
    d = counts.shape[0]
    noisy = gaussian_release(
        counts.astype(float), np.sqrt(d), multiplier, random_state=source
    )
    return np.asarray(noisy).reshape(counts.shape)


def _aligned_blocks(array, size):
    """``array`` (shape ``(d, N_CELLS)``) as views of its two signs' cells in
    aligned blocks of ``size`` cells, shape ``(d, _PER_SIGN // size,
    size)``: the negative cells, then the positive ones (the zero cell is in
    neither). A block never mixes signs, and a block of 8 or more cells is
    whole binades."""
    d = array.shape[0]
    # splitting a contiguous last axis: numpy returns a view, never a copy
    return [
        array[:, start : start + _PER_SIGN].reshape(d, _PER_SIGN // size, size)
        for start in (0, _PER_SIGN + 1)
    ]


def _threshold(noise_sd, m):
    """The released count (or sum of ``m``) above which cells count as mass:
    ``NOISE_THRESHOLD`` deviations of the sum's noise, and ``MIN_MASS``."""
    return np.maximum(NOISE_THRESHOLD * noise_sd * np.sqrt(m), MIN_MASS)


def _block_mass(noisy, kept, mass, size, noise_sd):
    """One level of :func:`released_mass`, in place: blocks of ``size``."""
    pairs = zip(
        _aligned_blocks(noisy, size),
        _aligned_blocks(kept, size),
        _aligned_blocks(mass, size),
        strict=True,
    )
    for counts, done, out in pairs:
        free = ~done
        m = free.sum(axis=2, keepdims=True)
        total = np.where(free, counts, 0.0).sum(axis=2, keepdims=True)
        threshold = _threshold(noise_sd, np.maximum(m, 1))
        stands_out = (m > 0) & (total > threshold)  # shape (d, blocks, 1)
        last = size - 1 - np.argmax(free[..., ::-1], axis=2)[..., None]
        at_last = (np.arange(size) == last) & stands_out
        out[at_last] = np.broadcast_to(total, out.shape)[at_last]
        done |= free & stands_out


def released_mass(noisy, noise_sd):
    """Each cell's mass read off released cell counts (post-processing).

    A cell counts as mass when its released count exceeds ``NOISE_THRESHOLD
    * noise_sd`` and ``MIN_MASS`` (its mass: that count). Then, for blocks
    of ``2, 4, ..., 2**COARSEST_BLOCK`` aligned consecutive cells of one
    sign, the cells of a block that are still without mass count together
    when the sum of their released counts exceeds ``NOISE_THRESHOLD *
    noise_sd * sqrt(m)`` for ``m`` of them (the noise deviation of that
    sum) and ``MIN_MASS`` (so that the bins become the exact counts' bins
    as the noise vanishes): the sum is the mass of the last of them (so a
    cut after it falls on the block's upper edge, and a block that stood
    out by chance is one cell of mass, which
    alone makes no cut). A thin tail whose every cell drowns in its noise
    (Adult's ``capital-gain`` above 0: about 8 % of the rows over some 40
    cells at ε = 1) still gets mass, and so bins, where a run of its cells
    stands out together; where single cells stand out, the mass is
    theirs, as before. A function of released values and public
    parameters only.

    Parameters
    ----------
    noisy : ndarray of shape (d, N_CELLS)
        Released cell counts (:func:`release_cell_counts`).
    noise_sd : float
        Their noise deviation (public).

    Returns
    -------
    mass : ndarray of shape (d, N_CELLS)
        Non-negative; zero where no cell or block stood out.
    """
    noisy = np.asarray(noisy, dtype=float)
    # extreme released values (sums of ±max) overflow to ±inf or NaN: a
    # defined result of the rule (inf is mass, NaN is none), never a warning
    with np.errstate(over="ignore", invalid="ignore"):
        kept = noisy > _threshold(noise_sd, 1)
        mass = np.where(kept, noisy, 0.0)
        for level in range(1, COARSEST_BLOCK + 1):
            _block_mass(noisy, kept, mass, 1 << level, noise_sd)
    return mass


def cuts_from_counts(noisy, noise_sd, max_bins):
    """Each feature's bin cuts from released cell counts (post-processing).

    Each cell's mass is :func:`released_mass`. A feature's cuts are the
    cell indices ``c`` (a value's bin is the number of cuts ``<= its
    cell``) after which the mass first reaches ``k / max_bins`` of the
    total, ``k = 1 .. max_bins - 1``, each cut once; a level first reached
    at the feature's last cell of mass cuts before that cell instead (after
    the cell of mass before it), so that a heavy top value has its own bin
    (a 0/1 feature with 5 % of zeros had one bin, even without noise). At
    most ``max_bins`` bins, and one bin when at most one cell has mass. A
    function of released values and public parameters only.
    """
    cuts = []
    for mass in released_mass(noisy, noise_sd):
        with np.errstate(over="ignore", invalid="ignore"):  # see released_mass
            cuts.append(_cuts_of_mass(mass, max_bins))
    return cuts


def _cuts_of_mass(mass, max_bins):
    """One feature's cuts from its cells' mass (:func:`cuts_from_counts`)."""
    cumulative = np.cumsum(mass)
    total = cumulative[-1]
    if not total > 0:
        return np.zeros(0, dtype=np.int64)
    held = np.flatnonzero(mass)
    if held.size < 2:  # one cell of mass: one bin
        return np.zeros(0, dtype=np.int64)
    levels = total * np.arange(1, max_bins) / max_bins
    last = np.searchsorted(cumulative, levels, side="left")  # a cell of mass
    # a level first reached at the last cell of mass cuts before that cell,
    # not after it (an empty last bin): a heavy top value has its own bin
    return np.unique(np.minimum(last, held[-2]) + 1)


def release_private_bins(X, multiplier, max_bins, source):
    """Private bins and ``X`` binned on them: the cell counts released
    (:func:`release_cell_counts`), the cuts by the public rule
    (:func:`cuts_from_counts`); each value's cell is computed once, for its
    count and its bin (:func:`grid_cell_table`)."""
    cells = grid_cell_table(X)
    mapper = bins_of_counts(cell_counts(X, cells), multiplier, max_bins, source)
    return mapper, mapper.transform(X, cells)


def bins_of_counts(counts, multiplier, max_bins, source):
    """The private bins' mapper from exact :func:`cell_counts` (in memory,
    or added up over the blocks of a Dask input): the counts released
    (:func:`release_cell_counts`), the cuts by the public rule
    (:func:`cuts_from_counts`)."""
    noisy = release_cell_counts(counts, multiplier, source)
    noise_sd = multiplier * np.sqrt(counts.shape[0])
    return BinMapper(cuts=cuts_from_counts(noisy, noise_sd, max_bins))


def warn_collapsed_bins(name):
    """The warning of a fit whose private bins all collapsed to one (a
    function of the released bins only)."""
    warn_at_caller(
        f"{name}: no feature's private bins stood out of their noise, so "
        "every feature has one bin and the trees cannot split: the model "
        "predicts its baseline. Raise epsilon, fit on more rows, state "
        "feature_bounds, or use a linear model.",
        NoiseDominatedWarning,
    )


def _equal_width_edges(lo, hi, n_bins):
    """``n_bins + 1`` equal-width edges from ``lo`` to ``hi`` (finite).

    ``numpy.linspace`` where ``hi - lo`` is a double; bounds wider than the
    largest double (``(-max, max)``) would make its step infinite and its
    edges NaN, so their edges are ``lo (1 - t) + hi t``: each term is
    finite and of opposite sign.
    """
    with np.errstate(over="ignore"):
        width = hi - lo
    if np.isfinite(width):
        return np.linspace(lo, hi, n_bins + 1)
    t = np.arange(n_bins + 1) / n_bins
    edges = lo * (1.0 - t) + hi * t
    edges[[0, -1]] = lo, hi
    return edges


class BinMapper:
    """Maps features to bin indices (uint8 or uint16), fitted from public or
    released numbers only.

    Parameters
    ----------
    edges : list of ndarray or None
        Public equal-width (or stated) edges per feature, or None.
    cuts : list of ndarray or None
        Released cell cuts per feature (see :func:`cuts_from_counts`), or
        None.
    """

    def __init__(self, edges=None, cuts=None):
        self.edges = edges
        self.cuts = cuts

    @classmethod
    def public(cls, lower, upper, max_bins):
        """Equal-width bins over public bounds (values outside fall in the
        end bins)."""
        edges = [
            _equal_width_edges(lo, hi, max_bins)
            for lo, hi in zip(lower, upper, strict=True)
        ]
        return cls(edges=edges)

    @property
    def n_bins(self):
        """Bins per feature (ndarray of int)."""
        if self.edges is not None:
            return np.array([e.size - 1 for e in self.edges])
        return np.array([c.size + 1 for c in self.cuts])

    def thresholds(self):
        """The value at which each feature's bin ``k + 1`` starts (display)."""
        if self.edges is not None:
            return [e[1:-1] for e in self.edges]
        lower = cell_lower_edges()
        return [lower[c] for c in self.cuts]

    def _cell_bins(self, j, dtype):
        """Feature ``j``'s bin of every grid cell (a lookup table)."""
        return np.searchsorted(self.cuts[j], np.arange(N_CELLS), side="right").astype(
            dtype
        )

    def transform(self, X, cells=None):
        """Bin indices of ``X`` (finite), shape ``(n, d)``, Fortran order
        (the histograms read one feature at a time). ``cells``:
        :func:`grid_cell_table` of ``X`` when the caller has it (private
        bins read a value's cell only)."""
        dtype = np.uint8 if self.n_bins.max() <= 256 else np.uint16
        out = np.empty(X.shape, dtype=dtype, order="F")
        for j in range(X.shape[1]):
            if self.edges is not None:
                out[:, j] = bin_indices(X[:, j], np.asarray(self.edges[j], dtype=float))
            else:
                column = grid_cells(X[:, j]) if cells is None else cells[:, j]
                out[:, j] = self._cell_bins(j, dtype)[column]
        return out
