"""Checking a Dask input's values before a private fit, as fit does in memory."""

from functools import partial

import numpy as np
from sklearn.base import BaseEstimator

from skdp.utils._dask import (
    _block_rows,
    _frame_rows,
    _has_schema_width,
    is_dask_collection,
    validate_dask_data,
)

__all__ = ["check_dask_input"]


class _Probe(BaseEstimator):
    """Holds the schema read from a collection (no estimator is touched)."""


def _block_problems(block, n_features, as_rows):
    """``[blocks off the schema, rows off it, non-finite values per column]``.

    ``as_rows`` reads the block the way a fit does; a block is off the schema
    when it is not a 2-D block of the schema's width (array) or its columns
    differ from the schema's names (DataFrame).
    """
    if hasattr(block, "columns"):
        off_schema = int(list(block.columns) != as_rows.keywords["columns"])
    else:
        off_schema = int(not _has_schema_width(block, n_features))
    rows = as_rows(block)
    with np.errstate(all="ignore"):
        bad = ~np.isfinite(rows)
    lost = np.shape(block)[0] - rows.shape[0] if np.ndim(block) else 0
    counts = np.concatenate([[off_schema, lost], bad.sum(axis=0)])
    return counts.astype(np.int64)[None, :]


def check_dask_input(X):
    """Check a Dask array or DataFrame as an in-memory ``fit`` checks its data.

    In memory, skdp refuses non-finite values, values that are not numbers
    and a wrong shape before it charges anything. On a Dask input a ``fit``
    cannot (it reads the data only after the charge) and applies a public
    per-row rule instead (see :ref:`dask`). Call this first to be told, at
    no privacy cost, what the rule would silently drop or clip, and to let
    any error of Dask's own reading (a value its CSV reader cannot parse)
    happen now rather than after a charge.

    Parameters
    ----------
    X : dask.array.Array or dask.dataframe.DataFrame
        A 2-D numeric Dask collection.

    Returns
    -------
    X : the same collection, unchanged.

    Raises
    ------
    ValueError
        Naming the problem and the columns where it is, never a value or a
        count: blocks or partitions that do not match the declared schema,
        values that are not real numbers, or NaN and infinite values.

    Notes
    -----
    This reads every chunk once (one pass on the cluster) and its outcome
    depends on the data: it is the validity check that an in-memory ``fit``
    makes before its charge, not a private release. Run it before fitting,
    as part of preparing the data; a fit never calls it.

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> from skdp.utils import check_dask_input
    >>> X = np.array([[1.0, 2.0], [np.nan, 3.0], [4.0, np.inf]])
    >>> check_dask_input(da.from_array(X, chunks=2))
    Traceback (most recent call last):
    ...
    ValueError: The Dask input is not what its schema declares: ...'0', '1'...
    >>> check_dask_input(da.from_array(X[:1], chunks=1)).shape
    (1, 2)
    """
    if not is_dask_collection(X):
        raise TypeError(f"Expected a Dask array or DataFrame; got {type(X).__name__}.")
    probe = _Probe()
    data = validate_dask_data(probe, X)
    names = getattr(probe, "feature_names_in_", None)
    if hasattr(X, "columns"):
        columns = list(X._meta.columns)
        as_rows = partial(_frame_rows, columns=columns)
        blocks = X.to_delayed()
    else:
        as_rows = partial(_block_rows, n_features=data.n_features)
        blocks = data.rows.to_delayed().ravel()
    import dask  # only here: an optional dependency

    check = partial(_block_problems, n_features=data.n_features, as_rows=as_rows)
    parts = dask.compute(*[dask.delayed(check)(block) for block in blocks])
    totals = np.sum(np.concatenate(parts), axis=0)
    if names is None:
        names = [str(c) for c in getattr(X, "columns", range(data.n_features))]
    _raise_on(totals, list(names))
    return X


def _raise_on(totals, names):
    off_schema, lost, bad = int(totals[0]), int(totals[1]), totals[2:]
    problems = []
    # names of columns, never how many values: the message may end up in
    # logs, and a count is a statistic of the data (in memory a fit names
    # the column only, too)
    if off_schema:
        problems.append(
            "some block(s) or partition(s) do not match the declared schema "
            "(other columns or another shape): a fit takes no rows from a "
            "block of another shape and reads a partition by the schema's "
            "column names"
        )
    if lost:
        problems.append("some rows are not rows of the schema's columns")
    flagged = [repr(names[j]) for j, n in enumerate(bad) if n]
    if flagged:
        problems.append(
            "values that are NaN, infinite or not real numbers in column(s) "
            + ", ".join(flagged)
            + ": a fit drops a row with a NaN (a non-number reads as NaN) and "
            "clips an infinity"
        )
    if problems:
        raise ValueError(
            "The Dask input is not what its schema declares: "
            + "; ".join(problems)
            + ". Fix the data (impute, drop, or cast with a data-independent "
            "rule) before the private fit; nothing was charged."
        )
