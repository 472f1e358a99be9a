"""Fitting on Dask collections: additive statistics per chunk, one release.

A fit on a Dask array or DataFrame follows the in-memory path step by step:
the public schema is validated without reading any value
(:func:`validate_dask_data`), the release is planned and charged in the
client process, and only then is the data read, by
:func:`row_statistic`: a statistic computed on every block of whole rows on
the cluster (or the current Dask scheduler), added up in a tree and
returned to the client, which draws the noise. Dask is imported only when a
Dask collection is fitted; skdp never imports it at import time.
"""

from decimal import Decimal
from functools import partial, reduce
from numbers import Complex, Real
from typing import NamedTuple

import numpy as np
from sklearn.utils.validation import validate_data

from skdp.mechanisms._grid import FixedPoint
from skdp.utils._validation import validate_private_data
from skdp.utils._warnings import silenced

__all__ = [
    "ChunkedRows",
    "add_statistics",
    "is_dask_collection",
    "row_statistic",
    "transform_rows",
    "validate_dask_data",
    "validate_rows",
]

# Partial sums combined per task of the reduction tree (as dask's split_every).
_SPLIT_EVERY = 8
_LARGEST = np.finfo(np.float64).max
COMPUTE_FAILED = (
    "The Dask computation of the statistic failed after the budget was charged; "
    "the charge stays (a spend is never under-counted). skdp does not show the "
    "cause: it may quote the data (e.g. a value Dask could not parse), and the "
    "failure itself may depend on the data. Check the input with Dask before "
    "fitting (dtypes, parsing, da.isfinite(X).all()), and read the workers' logs "
    "yourself if needed."
)


def is_dask_collection(X):
    """Whether ``X`` is a Dask collection (duck typing; dask is not imported).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.utils._dask import is_dask_collection
    >>> is_dask_collection(np.zeros((2, 2)))
    False
    """
    graph = getattr(X, "__dask_graph__", None)
    # an in-memory xarray object has the method too, and returns None
    return callable(graph) and graph() is not None


class ChunkedRows(NamedTuple):
    """A validated Dask input: a lazy array of whole rows and the public schema.

    ``rows`` is a Dask array of shape (n_samples, n_features) whose blocks
    each hold every column of their rows (any dtype; read as float64 by the
    statistic); ``n_samples`` is None when the chunk sizes are unknown (e.g.
    a Dask DataFrame). Nothing in it has been computed.
    """

    rows: object
    n_samples: object
    n_features: int

    @property
    def shape(self):
        return (self.n_samples, self.n_features)


def _is_numeric(dtype):
    """Numeric numpy or pandas (e.g. nullable ``Int64``) dtype: read as floats."""
    return getattr(dtype, "kind", None) in ("b", "i", "u", "f")


def _real_value(value):
    """``value`` as a float if it is a real number (or a string of one), else
    NaN: total, for one value alone, and without a warning."""
    if isinstance(value, str | bytes):
        try:
            return float(value)
        except ValueError:
            return np.nan
    if isinstance(value, Real | Decimal | np.bool_):
        try:
            return float(value)
        except OverflowError:  # an int beyond the doubles
            return np.inf if value > 0 else -np.inf
    if isinstance(value, Complex) and value.imag == 0:
        return _real_value(value.real)
    return np.nan


_real_values = np.frompyfunc(_real_value, 1, 1)


def _by_value(values):
    """An array of any dtype as float64, value by value (:func:`_real_value`)."""
    with np.errstate(all="ignore"):  # e.g. a long double beyond the doubles
        return _real_values(np.asarray(values, dtype=object)).astype(np.float64)


def _is_double_like(dtype):
    """Reals that convert to float64 exactly or by rounding, never failing."""
    return getattr(dtype, "kind", None) in ("b", "i", "u", "f") and dtype.itemsize <= 8


def _real_column(column):
    """One pandas column as float64; a missing or non-real value becomes NaN."""
    if _is_double_like(column.dtype):
        try:  # numpy and nullable pandas numbers (pd.NA -> NaN)
            return column.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            pass
    return _by_value(column.to_numpy(dtype=object))


def _frame_rows(frame, columns):
    """A pandas partition as float64 rows of the public columns.

    A public per-row rule, whatever the partition holds: the columns are
    taken by the schema's names (a missing one is NaN, an extra one is
    ignored, the order is the schema's) and every value that is not a real
    number becomes NaN, so that its row is dropped (:func:`finite_rows`).
    A partition that is not a DataFrame holds no rows of the schema.
    """
    if getattr(frame, "ndim", None) != 2 or not hasattr(frame, "reindex"):
        return np.empty((0, len(columns)))
    frame = frame.loc[:, ~frame.columns.duplicated()].reindex(columns=columns)
    out = np.empty((len(frame), len(columns)))
    for j in range(len(columns)):
        out[:, j] = _real_column(frame.iloc[:, j])
    return out


def _has_schema_width(block, n_features):
    """Whether a block of a Dask array is 2-D numpy of ``n_features`` columns."""
    return (
        isinstance(block, np.ndarray)
        and block.ndim == 2
        and block.shape[1] == n_features
    )


def _block_rows(block, n_features):
    """A block of a Dask array as float64 rows of the public width.

    As :func:`_frame_rows`: a block that is not a 2-D numpy array of
    ``n_features`` columns holds no rows of the schema (its rows do not have
    the public length), and values that are not real numbers become NaN.
    """
    if not _has_schema_width(block, n_features):
        return np.empty((0, n_features))
    if _is_double_like(block.dtype):
        return np.asarray(block, dtype=np.float64)
    return _by_value(block)


def _dataframe_rows(X):
    """Rows and an empty pandas frame of the schema of a Dask DataFrame."""
    meta = X._meta  # the empty pandas frame every Dask DataFrame carries
    columns = zip(meta.columns, meta.dtypes, strict=True)
    bad = [str(c) for c, dtype in columns if not _is_numeric(dtype)]
    if bad:
        raise ValueError(
            f"skdp needs numeric columns; the Dask DataFrame has non-numeric "
            f"column(s) {bad}. Encode or drop them first. Nothing was charged."
        )
    rows = X.map_partitions(
        partial(_frame_rows, columns=list(meta.columns)),
        meta=np.empty((0, meta.shape[1])),
    )
    return rows, None, meta


def _array_rows(X):
    """Rows and an empty array of the schema of a Dask array."""
    if X.ndim != 2:
        raise ValueError(
            f"Expected a 2-D Dask array of shape (n_samples, n_features); got "
            f"{X.ndim} dimension(s). Nothing was charged."
        )
    n_samples, n_features = X.shape
    if not np.isfinite(n_features):
        raise ValueError(
            "The Dask array has unknown chunk sizes along its columns, so its "
            "number of features is unknown; call X.compute_chunk_sizes() first. "
            "Nothing was charged."
        )
    if not _is_numeric(X.dtype):
        raise ValueError(
            f"skdp needs a numeric Dask array; got dtype {X.dtype}. Nothing was "
            "charged."
        )
    if not isinstance(getattr(X, "_meta", None), np.ndarray):
        raise ValueError(
            f"skdp needs a Dask array of dense numpy blocks; this one has "
            f"{type(getattr(X, '_meta', None)).__name__} blocks (e.g. sparse or "
            "GPU). Convert them with X.map_blocks first. Nothing was charged."
        )
    if len(X.chunks[1]) > 1:  # a block must hold whole rows
        X = X.rechunk({1: -1})
    known = None if not np.isfinite(n_samples) else int(n_samples)
    return X, known, np.empty((0, int(n_features)), dtype=X.dtype)


def validate_dask_data(estimator, X, *, reset=True):
    """Validate the public schema of a Dask input, without computing it.

    The counterpart of :func:`~skdp.utils.validate_private_data` for Dask
    arrays and DataFrames: records ``n_features_in_`` (and
    ``feature_names_in_`` for string column names) on the estimator and
    refuses, before any charge, what cannot be fitted: not 2-D, an unknown
    number of columns, non-numeric dtypes, no rows (when the number of rows
    is known). Blocks split along the columns are merged into whole rows
    (a rechunk in the graph).

    Parameters
    ----------
    estimator : estimator instance
    X : dask.array.Array or dask.dataframe.DataFrame
        A 2-D numeric Dask collection.
    reset : bool, default=True
        Record the schema (``fit``) or check it against the recorded one
        (``transform``).

    Returns
    -------
    data : ChunkedRows
        The lazy rows, for :func:`row_statistic`.

    Notes
    -----
    **Non-finite values** are not checked here (that would be a pass over
    the data before the charge); the statistic drops them row by row after
    it instead (:func:`row_statistic`, Notes).
    """
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        rows, n_samples, meta = _dataframe_rows(X)
    elif hasattr(X, "ndim") and hasattr(X, "chunks"):
        rows, n_samples, meta = _array_rows(X)
    else:
        raise TypeError(
            f"Expected a Dask array or DataFrame; got {type(X).__name__}. "
            "Nothing was charged."
        )
    if n_samples == 0:
        raise ValueError(
            "Found a Dask array with 0 sample(s) while a minimum of 1 is "
            "required. Nothing was charged."
        )
    validate_data(
        estimator,
        meta,
        reset=reset,
        dtype=np.float64,
        ensure_min_samples=0,
        ensure_all_finite=False,
    )
    return ChunkedRows(rows, n_samples, meta.shape[1])


def finite_rows(block):
    """The rows of one block as finite float64: a public per-row rule.

    A row with a NaN (or a missing value) is dropped and ``±inf`` becomes
    ``±`` the largest double (which every statistic then clips to its public
    bounds). Finite data pass unchanged (the same array values).
    """
    block = np.asarray(block, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.add.reduce(block, axis=None)):
            return block  # a finite sum: no NaN and no infinity
    keep = ~np.isnan(block).any(axis=1)
    return np.clip(block[keep], -_LARGEST, _LARGEST)


def add_statistics(a, b):
    """The statistic of two disjoint sets of rows from theirs: ``a + b``.

    :class:`~skdp.mechanisms._grid.FixedPoint` values add numerator by
    numerator (exact integers), tuples element by element, anything else
    (arrays, :class:`~skdp.sensitivity._soft_counts.GridTally`) with ``+``.

    Examples
    --------
    >>> from skdp.mechanisms._grid import FixedPoint
    >>> from skdp.utils._dask import add_statistics
    >>> add_statistics(FixedPoint((1, 2), -1, (2,)), FixedPoint((3, -4), -1, (2,)))
    FixedPoint(numerators=(4, -2), exponent=-1, shape=(2,))
    """
    if isinstance(a, FixedPoint):
        if a.exponent != b.exponent or a.shape != b.shape:
            raise ValueError("Fixed-point statistics on different grids.")
        numerators = tuple(
            x + y for x, y in zip(a.numerators, b.numerators, strict=True)
        )
        return FixedPoint(numerators, a.exponent, a.shape)
    if isinstance(a, tuple):
        return tuple(add_statistics(x, y) for x, y in zip(a, b, strict=True))
    if np.shape(a) != np.shape(b) or _tally_shape(a) != _tally_shape(b):
        raise ValueError("Statistics of blocks with different shapes.")
    return a + b


def _tally_shape(value):
    counts = getattr(value, "counts", None)
    return None if counts is None else counts.shape


def _cell(value):
    """``value`` in a 1 x 1 object array: a block of Dask's reduction tree."""
    cell = np.empty((1, 1), dtype=object)
    cell[0, 0] = value
    return cell


def _cells(parts):
    """The values of the (nested lists of) cells that Dask hands a combine."""
    if isinstance(parts, list):
        for part in parts:
            yield from _cells(part)
    else:
        yield from parts.ravel()


def _chunk_statistic(block, axis, keepdims, *, statistic, args, n_features):
    with silenced():  # nothing a block holds may show (see row_statistic)
        rows = finite_rows(_block_rows(block, n_features))
        return _cell(statistic(rows, *args))


def _combine_statistics(parts, axis, keepdims):
    return _cell(reduce(add_statistics, _cells(parts)))


def row_statistic(X, statistic, *args):
    """``statistic(X, *args)``, for in-memory data or a Dask input.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or ChunkedRows
        Validated data: in memory (the statistic is called directly) or the
        blocks of a Dask input (:func:`validate_dask_data`).
    statistic : callable
        ``statistic(rows, *args)`` of an array of rows; additive: its value
        on a union of disjoint blocks is the :func:`add_statistics` of its
        values on the blocks. It must be importable by the workers (a
        module-level function of skdp).
    *args
        Public arguments (bounds, plans): small, as they travel with every
        block's task.

    Returns
    -------
    statistic
        On Dask input the total over all blocks, computed with the current
        Dask scheduler (a distributed ``Client`` if one is active) and
        returned to the calling process.

    Notes
    -----
    **Exactness.** skdp's additive statistics are integers on public grids
    (:func:`~skdp.sensitivity.exact_centred_sums`, the SVT tallies, the
    moment sums) whose per-row terms depend on the row and on public
    parameters only, never on the number of rows or on other rows: the
    total over blocks equals the in-memory value bit for bit, for any
    chunking (including blocks of one row and empty blocks), so the release
    with the same seed is the same.

    **What a block holds.** In memory skdp refuses NaN, infinities and
    values that are not numbers before the charge. Here the data is read
    only after the charge, and nothing may then raise, warn or change path
    depending on it; so every block first goes through a fixed per-row rule
    (:func:`_frame_rows`, :func:`_block_rows`, :func:`finite_rows`): a row
    is taken as the schema's columns, by name for a DataFrame (a missing
    column reads as NaN, an extra one is ignored) and only from 2-D blocks
    of the schema's width for an array; a value that is not a real number
    (a string that is not one, a date, a missing value, a complex number
    with an imaginary part) reads as NaN; a row with a NaN is dropped; and
    ``±inf`` becomes ``±`` the largest double. A map applied to each row on
    its own turns add/remove neighbours into add/remove neighbours (or into
    the same data set), so every sensitivity, and hence the guarantee, is
    unchanged; in particular a block wider than the schema cannot make a
    release longer than its noise was calibrated for. Whether the data had
    such values is not released. To be told about them as in memory, check
    with Dask before fitting (e.g. ``da.isfinite(X).all().compute()`` and
    the partitions' dtypes). Warnings raised by the work on the blocks are
    silenced (:func:`~skdp.utils._warnings.silenced`).

    **Failures.** The caller charges before this runs. If the computation
    cannot finish, the fit raises ``RuntimeError`` with a fixed message and
    the charge stays: the spend is never under-counted. The message carries
    no cause and no chained exception, since Dask's own errors may quote the
    data (a value its CSV reader could not parse, the categories a
    ``get_dummies`` produced); the failure itself may still depend on the
    data (it happens only when a value breaks Dask's own reading), which is
    why the input should be checked before the fit. Dask's workers may log
    the cause on their side. A worker lost mid-way is recovered by Dask,
    which recomputes its blocks; the statistic is a deterministic function
    of the rows, so the result is the same.
    """
    if not isinstance(X, ChunkedRows):
        return statistic(X, *args)
    import dask.array as da  # only here: an optional dependency

    chunk = partial(
        _chunk_statistic, statistic=statistic, args=args, n_features=X.n_features
    )
    total = da.reduction(
        X.rows,
        chunk,
        _combine_statistics,
        combine=_combine_statistics,
        axis=(0, 1),
        keepdims=True,
        dtype=object,
        split_every=_SPLIT_EVERY,
        concatenate=False,
        meta=np.empty((0, 0), dtype=object),
    )
    failed = False
    with silenced():
        try:
            result = total.compute()[0, 0]
        except Exception:
            failed = True
    if failed:  # raised here, outside the handler: no chained cause either
        raise RuntimeError(COMPUTE_FAILED)
    return result


def validate_rows(estimator, X, **kwargs):
    """Validate a ``fit`` input: a Dask collection's schema, or the data.

    Returns :class:`ChunkedRows` for a Dask array or DataFrame
    (:func:`validate_dask_data`, nothing computed), else the float64 array
    of :func:`~skdp.utils.validate_private_data` (given ``kwargs``).
    """
    if is_dask_collection(X):
        return validate_dask_data(estimator, X)
    return validate_private_data(estimator, X, **kwargs)


def _schema_width_rows(block, n_features):
    """As :func:`_block_rows`, keeping every row: a block not of the
    schema's width gives rows of NaN (a transform keeps the row count)."""
    if _has_schema_width(block, n_features):
        return _block_rows(block, n_features)
    return np.full((np.shape(block)[0] if np.ndim(block) else 0, n_features), np.nan)


def _transform_block(block, *, function, args, n_features):
    with silenced():
        return function(_schema_width_rows(block, n_features), *args)


def transform_rows(estimator, X, function, *args):
    """``function(rows, *args)`` on each block of a Dask input, lazily.

    The ``transform`` of a fitted estimator on a Dask array or DataFrame: the
    schema is checked against the one seen in ``fit`` (before anything is
    computed) and a lazy Dask array of float64 rows is returned, so that a
    pipeline's next step fits on the cluster too. Nothing is checked on the
    values: a transform is post-processing, and the values that are not
    real numbers read as NaN (as for ``fit``) and pass through, to be
    dropped row by row by the next private fit (:func:`row_statistic`).
    """
    data = validate_dask_data(estimator, X, reset=False)
    block_function = partial(
        _transform_block, function=function, args=args, n_features=data.n_features
    )
    return data.rows.map_blocks(
        block_function, dtype=np.float64, meta=np.empty((0, data.n_features))
    )
