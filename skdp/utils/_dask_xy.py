"""Supervised fits on Dask input: the target travels as one more column.

A supervised statistic (a Gram matrix with cross products) is a sum over
rows of ``(x, y)``; on Dask input :func:`validate_dask_xy` appends ``y`` to
the rows of ``X`` as a last column, lazily, so that every block holds whole
rows with their targets and :func:`~skdp.utils._dask.row_statistic` applies
its per-row rule to both (a row whose target is not a real number is
dropped with it). Nothing is computed and nothing imported from Dask before
a fit reads the blocks.
"""

from functools import partial

import numpy as np

from skdp.utils._dask import (
    ChunkedRows,
    _block_rows,
    is_dask_collection,
    validate_dask_data,
)
from skdp.utils._warnings import silenced

__all__ = ["split_target", "validate_dask_xy"]


def _target_column(y, row_chunks):
    """``y`` as a Dask array of one column with the given row chunks."""
    if hasattr(y, "ndim") and hasattr(y, "chunks") and not hasattr(y, "index"):
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim == 1 and tuple(y.chunks[0]) == tuple(row_chunks):
            return y.reshape(-1, 1)
        known = np.all(np.isfinite(row_chunks)) and np.isfinite(y.shape[0])
        if y.ndim == 1 and known and y.shape[0] == sum(row_chunks):
            return y.rechunk({0: row_chunks}).reshape(-1, 1)
    raise ValueError(
        "On Dask input y must be a 1-D Dask array with the same, known number "
        "of rows as X (rechunked to X's rows if needed); a Dask DataFrame or "
        "Series is not aligned row by row here: pass X.to_dask_array("
        "lengths=True) and y.to_dask_array(lengths=True). Nothing was charged."
    )


def validate_dask_xy(estimator, X, y):
    """Validate a supervised Dask input; its rows are ``[X, y]``.

    Parameters
    ----------
    estimator : estimator instance
        Gets ``n_features_in_`` (and ``feature_names_in_``) of ``X`` as
        :func:`~skdp.utils._dask.validate_dask_data` records them.
    X : dask.array.Array of shape (n_samples, n_features)
    y : dask.array.Array of shape (n_samples,)
        Numeric targets.

    Returns
    -------
    data : ChunkedRows
        Lazy rows of ``n_features + 1`` columns, the target last; nothing is
        computed.

    Raises
    ------
    ValueError or TypeError
        Before any charge, when only one of ``X`` and ``y`` is a Dask
        collection, ``X`` is not a valid Dask input, or ``y`` cannot be
        aligned with its rows from the metadata (a 1-D array of the same
        known length, or of the same row chunks).
    """
    if not (is_dask_collection(X) and is_dask_collection(y)):
        raise TypeError(
            "Pass X and y both as Dask collections or both in memory. Nothing "
            "was charged."
        )
    data = validate_dask_data(estimator, X)
    if hasattr(X, "columns"):
        raise ValueError(
            "A supervised fit on Dask input takes a Dask array X: pass "
            "X.to_dask_array(lengths=True) (and y the same way). Nothing was "
            "charged."
        )
    if not np.issubdtype(getattr(y, "dtype", np.dtype(object)), np.number):
        raise ValueError(
            f"skdp needs numeric Dask targets; got dtype {y.dtype}. Nothing "
            "was charged."
        )
    rows, width = data.rows, data.n_features + 1
    target = _target_column(y, rows.chunks[0])
    both = rows.map_blocks(
        partial(_join_target, n_features=data.n_features),
        target,
        chunks=(rows.chunks[0], (width,)),
        dtype=np.float64,
        meta=np.empty((0, width)),
    )
    return ChunkedRows(both, data.n_samples, width)


def _join_target(block, target, *, n_features):
    """Float64 rows ``[x, y]`` of a block of ``X`` and its block of ``y``.

    Total, like the reading of ``X`` alone (:func:`~skdp.utils._dask.
    _block_rows`): values that are not real numbers read as NaN (their rows
    are then dropped), and blocks that do not match the schema (a block of
    ``X`` not of its width, or blocks of ``X`` and ``y`` of different
    lengths) hold no rows. Never raises or warns, whatever the blocks hold.
    """
    with silenced():
        x = _block_rows(block, n_features)
        t = _block_rows(target, 1)
        if x.shape[0] != t.shape[0]:
            return np.empty((0, n_features + 1))
        return np.hstack([x, t])


def split_target(rows):
    """``(X, y)`` of a block of rows whose last column is the target."""
    return rows[:, :-1], rows[:, -1]
