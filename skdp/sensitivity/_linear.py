"""Exact sums for linear models: clipped Gram matrices and clipped gradients.

Both sums are over per-row terms whose L2 (Frobenius) norm is bounded by a
public constant, rounded toward zero onto a public fixed-point grid and added
exactly, so adding or removing one row moves the released vector by at most
that constant, in floats as in the reals (Casacuberta et al. 2022 show how a
float sum can move further).

Integer-valued float64 arrays are exact while every partial sum stays below
``2**53``; the blocks below are sized so that they do, which lets numpy and
BLAS add them in any order, and the block totals are added as Python ints.
"""

import math
from typing import NamedTuple

import numpy as np
from scipy import sparse

from skdp.mechanisms._grid import FixedPoint

__all__ = [
    "GRADIENT_BITS",
    "GRAM_BITS",
    "exact_clipped_gradient_sum",
    "exact_clipped_gram",
]

#: A clipped gradient term is a multiple of ``max_norm * 2**-GRADIENT_BITS``.
GRADIENT_BITS = 20
#: A clipped row (and a clipped target) is a multiple of ``2**-GRAM_BITS`` of
#: its bound, so one product is a multiple of ``2**-(2 GRAM_BITS)``.
GRAM_BITS = 16
#: Rows per block (exactness needs ``rows * 2**(2 GRAM_BITS) <= 2**52``; the
#: block is kept small so that its scaled copy costs little memory).
_GRAM_BLOCK_ROWS = 1 << 16
#: Elements per gradient block (rows x parameters), to bound temporaries.
_GRADIENT_BLOCK_ELEMENTS = 1 << 21
#: Relative margin under the norm bound: covers the float error of a computed
#: norm and of the scaling. A sum of ``m`` squares carries a relative error of
#: at most ``m 2**-53 / (1 - m 2**-53)``, i.e. below ``2**-29`` for
#: ``m <= _MAX_TERM_SIZE = 2**24``; the square root halves it, and the product
#: of two norms and the scaling add a few units of 2**-53. The error is
#: relative at every magnitude because norms are taken of rows scaled by a
#: power of two and the clip factor is a normal float (:func:`_clip_factors`);
#: entries that underflow add absolute errors of ``2**-1075`` that vanish next
#: to the margin (``2**-24`` of ``2**16``).
_NORM_MARGIN = 2.0**-24
_MAX_TERM_SIZE = 1 << 24
#: Rows whose sum of squares lies in this range keep their scale.
_SAFE_LOW, _SAFE_HIGH = 2.0**-900, 2.0**900


class _Scaled(NamedTuple):
    """Rows ``x = x̂ 2**e`` with ``||x̂||`` a normal float (see _exponent_scaled)."""

    norms: np.ndarray  # ||x̂||
    exponents: np.ndarray  # e (0 for a row left as it is)
    rescaled: np.ndarray  # mask of the rows with e chosen (x̂ != x)
    rows: np.ndarray  # x̂ of those rows

    def times(self, block, factors):
        """``x̂ * factor`` per row (``block`` holds the rows ``x``)."""
        out = block * factors[:, None]
        out[self.rescaled] = self.rows * factors[self.rescaled, None]
        return out


def _exponent_scaled(block):
    """Each row as ``x̂ 2**e`` whose norm ``||x̂||`` is accurate and normal.

    A row whose sum of squares lies in ``[2**-900, 2**900]`` is kept
    (``e = 0``): the sum carries a relative error of at most
    ``d 2**-53 / (1 - d 2**-53)`` (Higham 2002, §3.1; squares that underflow
    err by ``2**-1075`` each, nothing next to ``2**-900``). Any other row
    (zero, tiny, subnormal, huge, or whose squares overflow) is scaled by
    ``2**-e``, ``e`` the exponent of its largest magnitude, so that its
    largest entry lies in ``[0.5, 1)``: exact except for entries that
    underflow (``2**-1075`` each, next to ``||x̂|| >= 0.5``), and its squares
    cannot overflow. Either way ``||x̂||`` is normal (in ``[2**-450,
    2**450]``) and accurate, which ``||x||`` itself, a subnormal or an
    overflowing float, could not be. A zero row has norm 0. The rescaling
    runs on a possibly empty subset, as a rule per row.
    """
    with np.errstate(over="ignore", under="ignore"):
        squares = np.einsum("ij,ij->i", block, block)
    norms = np.sqrt(squares)
    rescaled = ~((squares >= _SAFE_LOW) & (squares <= _SAFE_HIGH))
    rows = block[rescaled]
    exponents = np.zeros(block.shape[0], dtype=np.int64)
    exponents[rescaled] = np.frexp(np.abs(rows).max(axis=1, initial=0.0))[1]
    rows = np.ldexp(rows, -exponents[rescaled, None])
    norms[rescaled] = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    return _Scaled(norms, exponents, rescaled, rows)


def _clip_factors(norms, exponents, unit, bound):
    """Per-row ``min(unit 2**e, bound / n)``: the factor of a scaled row.

    For a row ``x = x̂ 2**e`` with ``n = ||x̂||``, ``x̂`` times this factor is
    ``x min(unit, bound / ||x||)``: the row clipped to norm ``bound / unit``
    and multiplied by ``unit``. ``bound / n`` is normal (``bound`` about
    ``2**16`` or ``2**20`` and ``n`` in ``[2**-900, 2**900]``), so its rounding
    error is relative, ``2**-53``: the clipped row's norm exceeds ``bound``
    by no more than a few units of ``2**-53`` plus the norm's own relative
    error, covered by ``_NORM_MARGIN``. (Before, ``min(1, c / ||x||)`` was
    formed first: for a small public ``c`` and a huge row it was a
    subnormal, rounded by up to half of ``2**-1074``, i.e. up to twice its
    value.) ``unit 2**e`` may overflow (the other term is then the minimum)
    or underflow (the row is then tiny, and an absolute error of
    ``2**-1075`` times ``||x̂||`` vanishes on the grid). A zero row
    (``n = 0``) gets the factor 0: it is zero anyway, and ``unit 2**e``
    might be infinite (a zero residual of a huge row).
    """
    with np.errstate(divide="ignore", over="ignore", under="ignore"):
        factors = np.minimum(np.ldexp(unit, exponents), bound / norms)
    return np.where(norms > 0, factors, 0.0)


def _clipped_outer_products(block, residuals, unit, bound):
    """Per-row ``x ⊗ r min(unit, bound / (||x|| ||r||))``, shape (rows, d, k).

    Both factors are taken as ``x = x̂ 2**e`` and ``r = r̂ 2**f`` with normal
    norms (:func:`_exponent_scaled`), so the clip factor of ``x̂ ⊗ r̂`` is
    ``min(unit 2**(e + f), bound / (||x̂|| ||r̂||))`` with a normal quotient
    (:func:`_clip_factors`; ``||x̂|| ||r̂||`` lies in ``[2**-900, 2**900]``
    or is 0) and nothing overflows, whatever the magnitudes of ``x`` and
    ``r``.
    """
    x = _exponent_scaled(block)
    r = _exponent_scaled(residuals)
    factors = _clip_factors(x.norms * r.norms, x.exponents + r.exponents, unit, bound)
    weights = r.times(residuals, factors)
    terms = block[:, :, None] * weights[:, None, :]
    terms[x.rescaled] = x.rows[:, :, None] * weights[x.rescaled, None, :]
    return terms


def _on_grid(values):
    """Round toward zero (so no norm grows) onto the integers."""
    return np.trunc(values, out=values)


def check_term_size(n_values):
    """Refuse terms too long for the norm margin (a public shape check)."""
    if n_values > _MAX_TERM_SIZE:
        raise ValueError(
            f"a linear model with {n_values} coefficients is beyond the "
            f"{_MAX_TERM_SIZE} supported by the exact clipped sums."
        )


def _as_float_rows(X):
    """float64 rows: a dense array, or CSR (densified block by block)."""
    if sparse.issparse(X):
        return sparse.csr_matrix(X, dtype=np.float64)
    return np.asarray(X, dtype=np.float64)  # float32 products would not be exact


def _dense(block):
    return block.toarray() if sparse.issparse(block) else block


def _with_intercept(block, intercept):
    """The block with a column of ones appended (a copy of the block only)."""
    block = _dense(block)
    if not intercept:
        return block
    return np.hstack([block, np.ones((block.shape[0], 1))])


def _clipped_rows_on_grid(block, max_norm, intercept):
    """Rows ``[clip(x), max_norm] / (max_norm sqrt(1 + intercept))`` on the grid.

    ``clip(x) = x min(1, max_norm / ||x||)``; the result is scaled by
    ``2**GRAM_BITS (1 - _NORM_MARGIN)`` and truncated to integers, with norm
    below ``2**GRAM_BITS``. The clip factor and the scale are one factor
    ``min(unit, bound / ||x||)`` on the exponent-scaled row, so that it is a
    normal float at every magnitude (:func:`_clip_factors`).
    """
    bound = math.ldexp(1.0 - _NORM_MARGIN, GRAM_BITS) / math.sqrt(1.0 + intercept)
    scaled = _exponent_scaled(block)
    factors = _clip_factors(scaled.norms, scaled.exponents, bound / max_norm, bound)
    rows = scaled.times(block, factors)
    if intercept:  # max_norm times the unit, which is bound
        rows = np.hstack([rows, np.full((rows.shape[0], 1), bound)])
    return _on_grid(rows)


@np.errstate(all="ignore")  # overflowing norms are handled, not reported
def exact_clipped_gram(X, max_norm, y=None, *, intercept=False, sample_weight=None):
    """Exact Gram matrix (and cross products) of rows clipped to a norm bound.

    Each row ``x`` is scaled to ``clip(x) = x min(1, max_norm / ||x||)``; with
    ``intercept``, the constant ``max_norm`` is appended; the row is divided
    by ``s = max_norm sqrt(1 + intercept)`` and truncated to a multiple of
    ``2**-16``, giving ``q`` with ``||q|| <= 1``. The sums ``Σ q qᵀ`` (and
    ``Σ t q`` for targets ``t``) are formed exactly.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Finite rows; a sparse matrix is densified one block at a time.
    max_norm : float
        Public bound on a row's L2 norm, in ``[2**-500, 2**500]``.
    y : ndarray of shape (n_samples,), default=None
        Targets already mapped into ``[-1, 1]`` by a public rule, or None.
    intercept : bool, default=False
        Append the constant column (after clipping); the copy is made block
        by block, never of the whole of ``X``.
    sample_weight : ndarray of shape (n_samples,), default=None
        Row weights in [0, 1]: ``q`` and ``t`` are multiplied by
        ``sqrt(w)`` and truncated again (so ``Σ q qᵀ`` and ``Σ t q`` become
        the weighted sums), which never increases ``||q||`` or ``|t|``:
        ``fl(sqrt(w)) <= 1`` and a correctly rounded product of an integer
        by it is at most the integer in magnitude. All ones change nothing.

    Returns
    -------
    gram : FixedPoint of shape (n_features * (n_features + 1) // 2,)
        The upper triangle (row by row) of ``Σ q qᵀ`` (``n_features + 1``
        with ``intercept``).
    cross : FixedPoint of shape (n_features,) or None
        ``Σ t q``, with ``t`` the target truncated to a multiple of
        ``2**-16``.

    Notes
    -----
    **Sensitivity (add/remove one row).** The row's term ``q`` is a function
    of that row alone with ``||q|| <= 1`` (truncation toward zero never
    increases a norm, and the scaling leaves a relative margin of ``2**-24``
    for its own float error). Its Gram term ``q qᵀ`` has Frobenius norm
    ``||q||² <= 1``, and the upper triangle keeps a subset of its entries, so
    adding or removing a row moves ``gram`` by at most 1 in L2 norm; ``t q``
    has norm at most ``|t| ||q|| <= 1``. The sums are exact, so these bounds
    hold for the computed values. Sheffet (2017) and Wang (2018) release the
    same statistics; their sensitivity ``||x||²`` (replace-one doubles it)
    is for the relation used here.

    **Floats at the extremes.** The clip factor and the unit are applied in
    one factor ``min(u, b / ||x||)`` (``u = b / max_norm``, ``b`` the grid
    norm ``2**16 (1 - 2**-24) / sqrt(1 + intercept)``) to the row scaled by
    a power of two (:func:`_clip_factors`): the quotient is a normal float
    for every finite row, so it rounds by a relative ``2**-53``, which the
    margin covers. Forming ``min(1, max_norm / ||x||)`` first made it a
    subnormal for a small ``max_norm`` and a huge row (``2**-500`` and
    ``2**575``), rounded up to twice its value: one row then moved the Gram
    by 4 and the cross products by 2. Norms of subnormal and huge rows are
    as accurate as any (no overflow: a huge row is clipped, not dropped).
    ``max_norm`` must keep ``2**16 / max_norm`` normal, e.g. in
    ``[2**-500, 2**500]`` (the range the estimators accept).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity import exact_clipped_gram
    >>> gram, _ = exact_clipped_gram(np.array([[3.0, 4.0], [0.5, 0.0]]), 1.0)
    >>> gram.as_float().round(3)  # rows (0.6, 0.8) and (0.5, 0)
    array([0.61, 0.48, 0.64])
    """
    X = _as_float_rows(X)
    n, d = X.shape
    d += bool(intercept)
    check_term_size(d * d)
    upper = np.triu_indices(d)
    gram = [0] * upper[0].size
    cross = None if y is None else [0] * d
    unit = float(2**GRAM_BITS)
    roots = None if sample_weight is None else np.sqrt(sample_weight)
    for start in range(0, n, _GRAM_BLOCK_ROWS):
        q = _clipped_rows_on_grid(
            _dense(X[start : start + _GRAM_BLOCK_ROWS]), max_norm, intercept
        )
        if roots is not None:
            root = roots[start : start + _GRAM_BLOCK_ROWS]
            q = _on_grid(q * root[:, None])
        gram = _add_ints(gram, (q.T @ q)[upper])
        if y is not None:
            t = _on_grid(np.clip(y[start : start + _GRAM_BLOCK_ROWS], -1, 1) * unit)
            if roots is not None:
                t = _on_grid(t * root)
            cross = _add_ints(cross, t @ q)
    exponent = -2 * GRAM_BITS
    gram = FixedPoint(tuple(gram), exponent, (upper[0].size,))
    if cross is not None:
        cross = FixedPoint(tuple(cross), exponent, (d,))
    return gram, cross


def _add_ints(totals, block_sums):
    """Add integer-valued float sums (each exact, below 2**53) to Python ints."""
    values = np.asarray(block_sums).astype(np.int64).tolist()
    return [a + b for a, b in zip(totals, values, strict=True)]


@np.errstate(all="ignore")
def exact_clipped_gradient_sum(
    X, residuals, max_norm, *, intercept=False, sample_weight=None
):
    """Exact sum of per-row outer products ``x ⊗ r`` clipped to a norm bound.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Finite rows; a sparse matrix is densified one block at a time.
    residuals : callable
        ``residuals(start, stop)`` returns the finite residuals of rows
        ``start:stop``, shape ``(stop - start, n_outputs)``: the gradient of
        a row's loss is ``x ⊗ r`` (e.g. ``r = p - y`` for the logistic loss).
        Called once per block, so a caller computes residuals block by block
        without materialising an ``(n_samples, n_outputs)`` array twice.
    max_norm : float
        Public bound on a term's Frobenius norm, in ``[2**-500, 2**500]``.
    intercept : bool, default=False
        Append a column of ones to every row (block by block).
    sample_weight : ndarray of shape (n_samples,), default=None
        Row weights in [0, 1]: each clipped term is multiplied by its row's
        weight before the truncation, ``trunc(w c)`` with ``|w c| <= |c|``
        in floats (a correctly rounded product by ``w <= 1``): the
        sensitivity is unchanged and all ones change nothing.

    Returns
    -------
    total : FixedPoint of shape (n_features + intercept, n_outputs)
        ``Σ_i clip(x_i ⊗ r_i)`` in units of ``max_norm``.

    Notes
    -----
    **Sensitivity (add/remove one row).** A row's term is ``x ⊗ r`` times
    ``min(1, c / (||x|| ||r||))`` (the Frobenius norm of an outer product is
    the product of the norms), divided by ``c = max_norm``, with a relative
    margin of ``2**-24`` for float error, and truncated toward zero onto
    ``2**-20``: a function of the row (and of public parameters) with
    Frobenius norm at most 1, summed exactly. Adding or removing one row
    moves the sum by at most 1 in L2 norm: per-example clipping as in
    DP-SGD (Abadi et al. 2016), in floats.

    **Floats at the extremes.** ``x`` and ``r`` are scaled by powers of two
    before their norms are taken, and the clip factor is applied to the
    scaled outer product as ``min(u 2**(e + f), b / (||x̂|| ||r̂||))``
    (:func:`_clipped_outer_products`): a normal quotient rounded by a
    relative ``2**-53``, for any finite ``x`` and ``r``, however huge or
    subnormal, with no overflow (a huge row is clipped, not dropped). Before,
    ``min(1, c / (||x|| ||r||))`` was a subnormal for a small ``c`` and a
    huge row, rounded up to twice its value: one row moved the sum by 2.
    ``max_norm`` must keep ``2**20 / max_norm`` normal, e.g. in
    ``[2**-500, 2**500]`` (the range the estimators accept).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity import exact_clipped_gradient_sum
    >>> X = np.array([[3.0, 4.0], [0.3, 0.4]])
    >>> r = np.array([[1.0], [-1.0]])
    >>> total = exact_clipped_gradient_sum(X, lambda a, b: r[a:b], 1.0)
    >>> np.round(total.as_float().ravel(), 6)  # (0.6, 0.8) - (0.3, 0.4)
    array([0.3, 0.4])
    """
    X = _as_float_rows(X)
    n, d = X.shape
    d += bool(intercept)
    totals = None
    bound = math.ldexp(1.0 - _NORM_MARGIN, GRADIENT_BITS)
    step = max(1, _GRADIENT_BLOCK_ELEMENTS // max(d, 1))
    for start in range(0, n, step):
        block = _with_intercept(X[start : start + step], intercept)
        r = np.asarray(residuals(start, start + block.shape[0]), dtype=np.float64)
        check_term_size(d * r.shape[1])
        terms = _clipped_outer_products(block, r, bound / max_norm, bound)
        if sample_weight is not None:
            terms *= sample_weight[start : start + block.shape[0], None, None]
        block_sums = _on_grid(terms).sum(axis=0)
        totals = _add_ints(totals or [0] * block_sums.size, block_sums.ravel())
    if totals is None:  # no rows: the shape of the residuals of none
        empty = np.asarray(residuals(0, 0), dtype=np.float64)
        n_outputs = empty.shape[1] if empty.ndim == 2 else 1
        totals = [0] * (d * n_outputs)
    else:
        n_outputs = len(totals) // d
    return FixedPoint(tuple(totals), -GRADIENT_BITS, (d, n_outputs))
