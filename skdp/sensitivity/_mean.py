"""Clipped sums for the private mean, normalised to sensitivity one.

The sums are exact: each row's normalised term is rounded to the public
fixed-point grid ``2**-FIXED_POINT_BITS`` (a per-row map, so a row still adds
at most 1) and the integers are added exactly, for any number of rows. A
float sum could move by more than the stated sensitivity when a row is added,
through rounding (Casacuberta, Shoemate, Vadhan and Wagaman 2022).
"""

import math

import numpy as np

from skdp.mechanisms._grid import FixedPoint
from skdp.sensitivity._weights import grid_weights, weight_units, weighted_terms

__all__ = [
    "FIXED_POINT_BITS",
    "centre_and_radius",
    "exact_centred_sums",
    "exact_count",
    "exact_split_sums",
    "exact_weighted_count",
    "float_average_error",
    "normalised_centred_sums",
    "normalised_split_sums",
]

#: Each normalised term is rounded to a multiple of ``2**-32``.
FIXED_POINT_BITS = 32
#: Rows per block: a block's int64 column sums stay below
#: ``2**16 * 2**32 = 2**48`` in magnitude.
_BLOCK_ROWS = 1 << 16

# Below this magnitude, differences of bounded values cannot overflow.
_HALF_MAX = np.finfo(np.float64).max / 4


def per_feature_sensitivities(n_features, unit_rows=1):
    """``(L1, L2)`` sensitivity of a vector in which one row moves each of
    ``n_features`` coordinates by at most 1: ``(d, sqrt(d))``.

    The shape of every per-feature release here: centred and split sums,
    Bernstein moment sums (per group), histogram counts.

    With ``unit_rows = k`` the unit is a group of at most ``k`` rows: its
    rows' moves add up, so each coordinate moves by at most ``k`` and the
    vector by ``k d`` in L1 and at most ``k sqrt(d)`` in L2 (the triangle
    inequality over the rows; attained when the ``k`` rows are equal),
    computed as ``sqrt(k² d)`` so that ``k = 1`` gives ``sqrt(d)`` bit for
    bit.
    """
    k = int(unit_rows)  # math.sqrt: exact integers beyond int64 too
    return float(k * n_features), math.sqrt(k * k * n_features)


def centre_and_radius(lower, upper):
    """Midpoint and half-width of public bounds, without overflow.

    Parameters
    ----------
    lower, upper : ndarray of shape (n_features,)
        Public bounds, ``lower < upper``, finite.

    Returns
    -------
    centre, radius : ndarray of shape (n_features,)
        ``(lower + upper) / 2`` and ``(upper - lower) / 2``, computed as
        ``lower/2 + upper/2`` so that bounds near ±1.8e308 stay finite.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity import centre_and_radius
    >>> centre_and_radius(np.array([0.0, -1e308]), np.array([10.0, 1e308]))
    (array([5., 0.]), array([5.e+000, 1.e+308]))
    """
    return lower / 2 + upper / 2, upper / 2 - lower / 2


def _near_float_limit(lower, upper):
    """Whether differences of values within the bounds may overflow."""
    return max(np.abs(lower).max(), np.abs(upper).max()) >= _HALF_MAX


def _normalised_terms(block, lower, upper, centre, radius, out=None, halve=None):
    """``(clip(x) - centre) / radius``, in [-1, 1], for one block of rows
    (written into ``out`` when given; ``halve`` is
    ``_near_float_limit(lower, upper)``, computed if None)."""
    terms = np.clip(block, lower, upper, out=out)
    if halve is None:
        halve = _near_float_limit(lower, upper)
    if not halve:
        terms -= centre
        terms /= radius
    else:  # near the float limit: halve before subtracting so nothing overflows
        factors = _halving_factors(lower, upper)
        terms *= factors
        terms -= centre * factors
        terms /= radius * factors
    return np.clip(terms, -1.0, 1.0, out=terms)


def _halving_factors(lower, upper):
    """0.5 for the features whose bounds reach a quarter of the largest double,
    1 for the others.

    Only those features are halved: halving every feature once one was near
    the limit halved a subnormal radius (bounds ``(0, 1e-323)``) to 0 and
    divided by it (NaN terms, cast to integers after the charge). A feature
    near the limit has a radius of at least half a unit in the last place of
    ``max / 8``, about ``2**968``, so halving it is exact; the other features
    are computed as when no bound is near the limit (no overflow below it).
    """
    near = np.maximum(np.abs(lower), np.abs(upper)) >= _HALF_MAX
    return np.where(near, 0.5, 1.0)


def exact_centred_sums(X, lower, upper, sample_weight=None):
    """Exact per-feature sums of the normalised terms on the fixed-point grid.

    Each row's term ``(clip(x_j) - c_j) / r_j`` lies in [-1, 1]; it is
    rounded to the nearest multiple of ``2**-32`` (still in [-1, 1]) and the
    multiples are added exactly: within a block of at most ``2**16`` rows
    as doubles (integers of magnitude at most ``2**32``, so every partial
    sum is an integer below ``2**48 < 2**53`` and exact in any order),
    across blocks as Python ints, so the sum is exact for every number of
    rows. A block of ``2**16`` values is processed flat, with the bounds
    tiled to it (numpy's broadcasting over a short last axis is slow), in
    one reused buffer: no temporary of the size of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite data.
    lower, upper : ndarray of shape (n_features,)
        Public bounds, ``lower < upper``.
    sample_weight : ndarray of shape (n_samples,), default=None
        Row weights in [0, 1]: each rounded term ``t`` becomes
        ``trunc(ŵ t)`` (:mod:`skdp.sensitivity._weights`), still an integer
        of magnitude at most ``|t|``; all ones give the unweighted sums.

    Returns
    -------
    sums : FixedPoint of shape (n_features,)
        ``numerators * 2**-32``.

    Notes
    -----
    **Sensitivity.** The rounded term of a row is a function of that row
    alone with magnitude at most 1, and the sum is exact, so adding or
    removing a row changes each feature's sum by at most 1 exactly: L1
    sensitivity d and L2 sensitivity sqrt(d) for the vector, with no float
    error to cover, whatever n. The rounding of each term (at most
    ``2**-33``) is a bias of the query, not a privacy cost.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity import exact_centred_sums
    >>> X = np.array([[0.0], [10.0], [20.0]])
    >>> exact_centred_sums(X, np.array([0.0]), np.array([10.0])).as_float()
    array([1.])
    """
    n_features = X.shape[1]
    rows = max(1, _BLOCK_ROWS // n_features)
    bounds = (lower, upper, *centre_and_radius(lower, upper))
    halve = _near_float_limit(lower, upper)
    size = min(X.shape[0], rows) * n_features
    if n_features > 1:  # the bounds of a flattened block, tiled once
        bounds = tuple(np.tile(b, size // n_features) for b in bounds)
        columns = np.tile(np.arange(n_features), size // n_features)
    totals = [0] * n_features
    scale = float(2**FIXED_POINT_BITS)
    buffer = np.empty(size)
    weights = None if sample_weight is None else grid_weights(sample_weight)
    for start in range(0, X.shape[0], rows):
        block = X[start : start + rows].ravel()  # row-major, as the tiles
        terms = buffer[: block.size]
        _normalised_terms(
            block, *(b[: block.size] for b in bounds), out=terms, halve=halve
        )
        terms *= scale  # exact: a power of two, |terms| <= 2**32
        np.rint(terms, out=terms)
        if weights is not None:  # one weight per row, repeated per feature
            row_weights = np.repeat(weights[start : start + rows], n_features)
            weighted_terms(terms, row_weights, out=terms)
        # integers below 2**48 per feature: every partial sum is exact
        if n_features == 1:
            sums = [terms.sum()]
        else:
            sums = np.bincount(columns[: block.size], terms, n_features)
        totals = [t + int(b) for t, b in zip(totals, sums, strict=True)]
    return FixedPoint(tuple(totals), -FIXED_POINT_BITS, (n_features,))


def exact_split_sums(X, lower, upper, sample_weight=None):
    """Exact per-feature distances to both bounds, in widths; shape (2, d).

    Row 0 holds ``sum_i (clip(x_ij) - L_j) / (U_j - L_j)`` and row 1
    ``sum_i (U_j - clip(x_ij)) / (U_j - L_j)``, each term on the fixed-point
    grid ``2**-33`` (half the centred term's grid). A row adds ``(a, 1 - a)``
    with ``a`` in [0, 1] to each feature's pair, so the pairs add up to the
    row count exactly and their difference is the centred sum of
    :func:`exact_centred_sums`: one vector carries both the count and the
    sums.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite data.
    lower, upper : ndarray of shape (n_features,)
        Public bounds, ``lower < upper``.

    sample_weight : ndarray of shape (n_samples,), default=None
        Row weights in [0, 1]: a row adds ``(W + s, W - s) 2**-33`` with
        ``W`` its weight in units of ``2**-32`` and ``s = trunc(ŵ q)``.

    Returns
    -------
    sums : FixedPoint of shape (2, n_features)

    Notes
    -----
    With weights, ``|s| <= W <= 2**32``
    (:mod:`skdp.sensitivity._weights`): both entries of the pair are
    non-negative and add up to ``2 W``, so a row moves the vector by
    ``d ŵ <= d`` in L1 norm and at most ``sqrt(d)`` in L2 norm, as without
    weights; the pairs add up to the weighted row count.

    Adding or removing a row changes feature j's pair by ``±(a_j, 1 - a_j)``
    with ``a_j = (2**32 + q_j) 2**-33`` for the row's rounded centred term
    ``q_j 2**-32``: the 2d-vector moves by exactly d in L1 norm and by at
    most sqrt(d) in L2 norm (``a² + (1 - a)² <= 1``), all coordinates in the
    same direction. The count and the centred sums released separately have
    L1 sensitivity ``1 + d`` together; in this basis the count comes with the
    sums at no extra sensitivity, which halves the variance of a one-feature
    mean (checked by brute force in the tests).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity import exact_split_sums
    >>> X = np.array([[0.0], [2.5], [20.0]])
    >>> exact_split_sums(X, np.array([0.0]), np.array([10.0])).as_float()
    array([[1.25],
           [1.75]])
    """
    centred = exact_centred_sums(X, lower, upper, sample_weight)
    if sample_weight is None:
        rows = X.shape[0] << FIXED_POINT_BITS
    else:  # the weighted count, in units of 2**-32
        rows = _exact_integer_sum(weight_units(sample_weight))
    below = tuple(rows + s for s in centred.numerators)
    above = tuple(rows - s for s in centred.numerators)
    return FixedPoint(below + above, -FIXED_POINT_BITS - 1, (2, X.shape[1]))


def _exact_integer_sum(values):
    """Exact sum of integer-valued doubles below ``2**32`` (blocks of
    ``2**16`` sum below ``2**48``, exactly; blocks add as Python ints)."""
    return sum(
        int(values[start : start + _BLOCK_ROWS].sum())
        for start in range(0, values.size, _BLOCK_ROWS)
    )


def exact_weighted_count(sample_weight):
    """The weighted row count ``Σ ŵ_i``, exactly.

    Parameters
    ----------
    sample_weight : ndarray of shape (n_samples,)
        Row weights in [0, 1], truncated to the grid ``2**-32``
        (:func:`~skdp.sensitivity._weights.grid_weights`).

    Returns
    -------
    count : FixedPoint of shape ()
        Sensitivity 1 under add/remove of one ``(x, w)`` row (it moves by
        ``ŵ <= 1``). All weights 1 give the value of :func:`exact_count`.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._mean import exact_weighted_count
    >>> exact_weighted_count(np.array([1.0, 0.5, 0.25])).as_float()
    array(1.75)
    """
    total = _exact_integer_sum(weight_units(sample_weight))
    return FixedPoint((total,), -FIXED_POINT_BITS, ())


def exact_count(X):
    """The row count as an exact value (a float count rounds beyond 2**53).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The data (only its number of rows is used).

    Returns
    -------
    count : FixedPoint of shape ()
        ``n_samples * 2**0``; sensitivity 1 under add/remove-one-row.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity import exact_count
    >>> exact_count(np.zeros((3, 2)))
    FixedPoint(numerators=(3,), exponent=0, shape=())
    """
    return FixedPoint((int(X.shape[0]),), 0, ())


def float_average_error(n_terms, magnitudes):
    """Bound on the rounding error of a float average of ``n_terms`` values.

    For values ``|v_ij| <= M_j`` (public), ``sum(v, axis=0) / n`` computed in
    IEEE double arithmetic, in any order of additions, differs from the exact
    average by at most ``M_j (γ + u (1 + γ))`` per coordinate, with ``u =
    2**-53`` and ``γ = (n - 1) u / (1 - (n - 1) u)`` (Higham, *Accuracy and
    Stability of Numerical Algorithms*, 2002, §4.2: any summation tree of
    ``n`` terms has error at most ``γ_{n-1} Σ|v_i|``; the division adds one
    rounding). Both inputs are public, so the bound is too: a release of the
    average adds twice it to the sensitivity and covers the rounding of both
    neighbours' averages, whatever the data.

    Parameters
    ----------
    n_terms : int
        Number of values averaged, ``1 <= n_terms < 2**50``.
    magnitudes : ndarray
        Public bounds ``M_j`` on the magnitude of each coordinate.

    Returns
    -------
    bound : ndarray
        Per coordinate, rounded up.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity import float_average_error
    >>> bool(float_average_error(100, np.array([1.0]))[0] < 1e-13)
    True
    """
    unit = 2.0**-53
    gamma = (n_terms - 1) * unit / (1.0 - (n_terms - 1) * unit)
    factor = (gamma + unit * (1.0 + gamma)) * (1.0 + 2.0**-40)  # rounded up
    return np.asarray(magnitudes, dtype=np.float64) * factor


def normalised_centred_sums(X, lower, upper):
    """Per-feature sums of ``(clip(x, lower, upper) - centre) / radius``.

    The nearest floats to :func:`exact_centred_sums` (for reports and tests;
    releases use the exact sums).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite data.
    lower, upper : ndarray of shape (n_features,)
        Public bounds, ``lower < upper``.

    Returns
    -------
    sums : ndarray of shape (n_features,)

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity import normalised_centred_sums
    >>> X = np.array([[0.0], [10.0], [20.0]])
    >>> normalised_centred_sums(X, np.array([0.0]), np.array([10.0]))
    array([1.])
    """
    return exact_centred_sums(X, lower, upper).as_float()


def normalised_split_sums(X, lower, upper):
    """The nearest floats to :func:`exact_split_sums`, shape (2, n_features).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite data.
    lower, upper : ndarray of shape (n_features,)
        Public bounds, ``lower < upper``.

    Returns
    -------
    sums : ndarray of shape (2, n_features)

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity import normalised_split_sums
    >>> X = np.array([[0.0], [2.5], [20.0]])
    >>> normalised_split_sums(X, np.array([0.0]), np.array([10.0]))
    array([[1.25],
           [1.75]])
    """
    return exact_split_sums(X, lower, upper).as_float()
