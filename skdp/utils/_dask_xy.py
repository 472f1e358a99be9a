"""Supervised fits on Dask input: the target travels as one more column.

A supervised statistic (a Gram matrix with cross products, per-class sums,
clipped gradients) is a sum over rows of ``(x, y)``. On Dask input
:func:`validate_dask_xy` joins ``y`` to the rows of ``X`` as a last column,
lazily and block by block, so that every block holds whole rows with their
targets and :func:`~skdp.utils._dask.row_statistic` applies its per-row
rule to both (a row whose target is not a real number, or not one of the
public classes, is dropped with it). :func:`xy_statistic` then computes a
statistic of ``(X, y)`` the same way for in-memory data and for such rows.
Nothing is computed before a fit reads the blocks, and Dask is imported only
when a Dask input is fitted.
"""

from functools import partial

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from skdp.utils._dask import (
    ChunkedRows,
    _block_rows,
    _has_schema_width,
    is_dask_collection,
    row_statistic,
    validate_dask_data,
)
from skdp.utils._validation import check_public_classes
from skdp.utils._warnings import silenced

__all__ = [
    "JOINED_CODES",
    "feature_rows",
    "public_dask_classes",
    "validate_dask_xy",
    "xy_statistic",
]

#: The ``codes`` of a classifier's moment sums on joined Dask rows: each
#: row's class index is its last column (see ``release_moment_sums``).
JOINED_CODES = "joined"


def public_dask_classes(classes, estimator_name):
    """A classifier's public classes on Dask input, where they must be given.

    Raises before any charge when ``classes`` is None (taking the labels
    from ``y`` would read the data), holds fewer than two labels, or labels
    scikit-learn does not take for classes (continuous values), as ``y``
    is checked in memory.
    """
    if classes is None:
        raise ValueError(
            f"{estimator_name} on Dask input needs the public classes=[...]: "
            "taking them from y would read the data before the charge. Nothing "
            "was charged."
        )
    labels = np.asarray(classes)
    check_classification_targets(labels)  # as y is checked in memory
    return check_public_classes(labels, labels[:0], estimator_name)


def feature_rows(data):
    """The rows of :func:`validate_dask_xy` without their target column."""
    return ChunkedRows(data.rows[:, :-1], data.n_samples, data.n_features - 1)


def _column_values(block):
    """A block of one column as its values; any other block as it is (the
    join then finds it holds no rows of the schema). Total."""
    if isinstance(block, np.ndarray) and block.ndim == 2 and block.shape[1] == 1:
        return block[:, 0]
    return block


_STATE_LENGTHS = (
    "State the block lengths where the arrays are built (da.from_array, "
    "da.from_delayed(..., shape=(rows, ...)), to_dask_array(lengths=[...]) "
    "with the lengths you know). Computing them (compute_chunk_sizes(), "
    "to_dask_array(lengths=True)) reads the data before the fit, outside the "
    "budget: do it only where the number of rows of each block is not private "
    "to you."
)


def _known(chunks):
    """Whether every size of a chunking is stated (none is NaN)."""
    return all(np.isfinite(size) for size in chunks)


def _check_known_row_chunks(X, y):
    """Refuse unknown (NaN) row chunks of ``X`` or ``y`` before the charge."""
    y_chunks = getattr(y, "chunks", ((),))[0]
    if _known(X.chunks[0]) and _known(y_chunks):
        return
    raise ValueError(
        "On Dask input the row chunks of X and y must be known: unknown (NaN) "
        "sizes compare equal to any other unknown sizes, so they would say "
        "nothing about which block of y holds the targets of which rows of X. "
        f"{_STATE_LENGTHS} Nothing was charged."
    )


def _target_column(y, row_chunks):
    """``y`` as a 1-D Dask array with the given row chunks; its blocks are
    not reshaped by Dask (which would trust their declared shapes)."""
    if hasattr(y, "ndim") and hasattr(y, "chunks") and not hasattr(y, "index"):
        if y.ndim == 2 and y.shape[1] == 1:
            meta = np.empty((0,), dtype=y.dtype)
            y = y.map_blocks(_column_values, drop_axis=1, meta=meta)
        if y.ndim == 1 and tuple(y.chunks[0]) == tuple(row_chunks):
            return y
    # Not rechunked here: Dask would cut y's blocks at their declared
    # offsets while X's blocks are read whole, so a block holding one row
    # more than declared would shift or drop the targets of other rows.
    # Block k of X is joined with block k of y, whatever their real lengths.
    raise ValueError(
        "On Dask input y must be a 1-D Dask array with exactly the row chunks "
        "of X (y.chunks[0] == X.chunks[0]): build both from one array (X = "
        "a[:, :-1], y = a[:, -1]) or chunk both alike where they are read. A "
        "Dask DataFrame or Series is not aligned row by row here: pass "
        "X.to_dask_array(lengths=[...]) and y.to_dask_array(lengths=[...]). "
        f"{_STATE_LENGTHS} Nothing was charged."
    )


def validate_dask_xy(estimator, X, y, *, classes=None):
    """Validate a supervised Dask input; its rows are ``[X, y]``.

    Parameters
    ----------
    estimator : estimator instance
        Gets ``n_features_in_`` (and ``feature_names_in_``) of ``X`` as
        :func:`~skdp.utils._dask.validate_dask_data` records them.
    X : dask.array.Array of shape (n_samples, n_features)
    y : dask.array.Array of shape (n_samples,)
        Numeric targets, or labels when ``classes`` is given, with the row
        chunks of ``X``: block ``k`` of ``y`` holds the targets of block
        ``k`` of ``X``.
    classes : ndarray or None, default=None
        The public, sorted class labels of a classifier: the last column then
        holds each row's index in ``classes`` (NaN, hence a dropped row, for
        any other label).

    Returns
    -------
    data : ChunkedRows
        Lazy rows of ``n_features + 1`` columns, the target (or class index)
        last; nothing is computed.

    Raises
    ------
    ValueError or TypeError
        Before any charge, when only one of ``X`` and ``y`` is a Dask
        collection, ``X`` is not a valid Dask array, or ``y`` is not a 1-D
        array (or one column) with exactly the row chunks of ``X``, all of
        them known: unknown (NaN) chunk sizes compare equal to anything
        unknown, so they would state nothing about which block of ``y``
        holds the targets of which rows.

    Notes
    -----
    The declared row chunks are the caller's statement that block ``k`` of
    ``y`` holds the targets of block ``k`` of ``X``; the blocks' real
    lengths are data (a reader may return another length than declared)
    and are never checked: the join pairs the rows of block ``k`` in order
    and drops unpaired ones one by one, a per-row rule
    (:func:`_join_target`, Notes).
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
            "X.to_dask_array(lengths=[...]) (and y the same way). "
            f"{_STATE_LENGTHS} Nothing was charged."
        )
    dtype = getattr(y, "dtype", np.dtype(object))
    if classes is None and not np.issubdtype(dtype, np.number):
        raise ValueError(
            f"skdp needs numeric Dask targets; got dtype {dtype}. Nothing was charged."
        )
    _check_known_row_chunks(X, y)
    import dask.array as da  # only here: an optional dependency

    rows, width = data.rows, data.n_features + 1
    join = partial(_join_target, n_features=data.n_features, classes=classes)
    # Blockwise on the row index, each block of y handed over as it is:
    # Dask's own reshape of y would assume its declared block shapes and
    # fail, after the charge, on a block that does not hold them.
    both = da.blockwise(
        join,
        "ij",
        rows,
        "ij",
        _target_column(y, rows.chunks[0]),
        "i",
        adjust_chunks={"j": width},
        dtype=np.float64,
        meta=np.empty((0, width)),
    )
    return ChunkedRows(both, data.n_samples, width)


def _join_target(block, target, *, n_features, classes):
    """Float64 rows ``[x, y]`` of a block of ``X`` and its block of ``y``.

    Total, like the reading of ``X`` alone (:func:`~skdp.utils._dask.
    _block_rows`): values that are not real numbers (or not public labels)
    read as NaN, and their rows are then dropped; a block of ``X`` not of
    the schema's width, or a block of ``y`` not of one column, holds no
    rows. The ``i``-th row of the block of ``X`` is paired with the
    ``i``-th target of the block of ``y``, for ``i`` below the shorter of
    the two real lengths; a row of the longer part that has no partner (a
    row whose target a reader lost at the end of the block, or a target
    without its row) is dropped, alone. Never raises or warns, whatever the
    blocks hold.

    Notes
    -----
    **Per-row rule (add/remove one row).** A row is an ``x`` and its ``y``
    at the same place of block ``k`` of ``X`` and of ``y``. Let the real
    lengths be ``a`` (``X``) and ``b`` (``y``), ``a >= b`` say, and add
    the row ``(x, y)`` at place ``j`` of both (``j <= b + 1``, since the
    shorter part holds the row too). The first ``b + 1`` places of the new
    parts hold the ``b`` old pairs, in order, and ``(x, y)``: the joined
    rows gain exactly that row, and the unpaired tail of ``X`` is the same
    ``a - b`` rows. Removing a row is the converse. So every statistic of
    the joined rows moves by at most its one-row sensitivity, whatever the
    real lengths; and equal lengths (every well-formed block) join every
    row. The previous rule (a block of unequal lengths holds no rows) made a
    reader that loses the last target of a block drop that block's rows
    with it: the released sums moved by ten rows at sensitivity one.

    **What no rule can repair.** A reader that loses a target in the middle
    of a block shifts every later target of that block onto the previous
    row; the blocks no longer say which target belongs to which row, so the
    pairs after the lost target are wrong (at most the block's rows). Read
    ``X`` and ``y`` from one source in one pass (``X = a[:, :-1]``,
    ``y = a[:, -1]`` of one Dask array) so that a reader keeps or loses a
    row whole.
    """
    with silenced():
        x = _block_rows(block, n_features)
        if isinstance(target, np.ndarray) and target.ndim == 1:
            target = target[:, None]
        if classes is None:
            t = _block_rows(target, 1)
        else:
            t = _label_codes(target, classes)
        paired = min(x.shape[0], t.shape[0])
        return np.hstack([x[:paired], t[:paired]])


def _label_codes(target, classes):
    """Each label's index in ``classes`` as a float column, NaN for any value
    that is not one of them; total (an unhashable or odd value is NaN)."""
    if not _has_schema_width(target, 1):
        return np.empty((0, 1))
    values = target[:, 0]
    codes = np.full(values.shape, np.nan)
    kinds = values.dtype.kind + classes.dtype.kind
    if kinds in ("UU", "SS") or set(kinds) <= set("biuf"):  # ordered alike
        place = np.minimum(np.searchsorted(classes, values), classes.size - 1)
        found = classes[place] == values
        codes[found] = place[found]
        return codes[:, None]
    lookup = {label: code for code, label in enumerate(classes.tolist())}
    for i, value in enumerate(values.tolist()):
        try:
            codes[i] = lookup.get(value, np.nan)
        except Exception:  # unhashable, or a comparison that fails: no label
            pass
    return codes[:, None]


def _split_statistic(rows, statistic, args):
    return statistic(rows[:, :-1], rows[:, -1], *args)


def xy_statistic(data, statistic, *args):
    """``statistic(X, y, *args)`` of in-memory data or of joined Dask rows.

    Parameters
    ----------
    data : tuple (X, y) or ChunkedRows
        Validated in-memory arrays, or the rows of :func:`validate_dask_xy`
        (then ``y`` is the last column of each block, as float64).
    statistic : callable
        Additive over rows (:func:`~skdp.utils._dask.row_statistic`); a
        module-level function, importable by the workers.
    *args
        Public arguments.
    """
    if isinstance(data, ChunkedRows):
        return row_statistic(data, _split_statistic, statistic, args)
    X, y = data
    return statistic(X, y, *args)
