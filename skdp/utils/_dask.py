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

from functools import partial, reduce
from typing import NamedTuple

import numpy as np
from sklearn.utils.validation import validate_data

from skdp.mechanisms._grid import FixedPoint
from skdp.utils._validation import validate_private_data

__all__ = [
    "ChunkedRows",
    "add_statistics",
    "is_dask_collection",
    "row_statistic",
    "validate_dask_data",
    "validate_rows",
]

# Partial sums combined per task of the reduction tree (as dask's split_every).
_SPLIT_EVERY = 8
_LARGEST = np.finfo(np.float64).max


def is_dask_collection(X):
    """Whether ``X`` is a Dask collection (duck typing; dask is not imported).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.utils._dask import is_dask_collection
    >>> is_dask_collection(np.zeros((2, 2)))
    False
    """
    return callable(getattr(X, "__dask_graph__", None))


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


def _frame_rows(frame):
    """A pandas block as float64 rows, a missing value as NaN."""
    return frame.to_numpy(dtype=np.float64, na_value=np.nan)


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
    rows = X.map_partitions(_frame_rows, meta=np.empty((0, meta.shape[1])))
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


def validate_dask_data(estimator, X):
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
        reset=True,
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
    return a + b


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


def _chunk_statistic(block, axis, keepdims, *, statistic, args):
    return _cell(statistic(finite_rows(block), *args))


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

    **Non-finite values.** In memory skdp refuses NaN and infinities before
    the charge. Here the data is read only after the charge, and nothing
    may then raise or change path depending on it; so every block first
    goes through a fixed per-row rule (:func:`finite_rows`): a row with a
    NaN is dropped, ``±inf`` becomes ``±`` the largest double. A map applied
    to each row on its own turns add/remove neighbours into add/remove
    neighbours (or into the same data set), so every sensitivity, and hence
    the guarantee, is unchanged. Whether the data had such values is not
    released. To be told about them as in memory, check with Dask before
    fitting (e.g. ``da.isfinite(X).all().compute()``).

    **Failures.** The caller charges before this runs. If the cluster
    cannot finish (e.g. every worker is lost) the error propagates and the
    charge stays: the spend is never under-counted. A worker lost mid-way
    is recovered by Dask, which recomputes its blocks; the statistic is a
    deterministic function of the rows, so the result is the same.
    """
    if not isinstance(X, ChunkedRows):
        return statistic(X, *args)
    import dask.array as da  # only here: an optional dependency

    chunk = partial(_chunk_statistic, statistic=statistic, args=args)
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
    return total.compute()[0, 0]


def validate_rows(estimator, X):
    """Validate a ``fit`` input: a Dask collection's schema, or the data.

    Returns :class:`ChunkedRows` for a Dask array or DataFrame
    (:func:`validate_dask_data`, nothing computed), else the float64 array
    of :func:`~skdp.utils.validate_private_data`.
    """
    if is_dask_collection(X):
        return validate_dask_data(estimator, X)
    return validate_private_data(estimator, X)
