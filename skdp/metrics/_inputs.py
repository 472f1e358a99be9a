"""Input checks of the private metrics: all before the charge, all public."""

import numpy as np

from skdp.metrics._tables import encode_labels
from skdp.utils._dask import ChunkedRows, is_dask_collection

__all__ = [
    "check_dask_labels",
    "check_labels",
    "check_pair",
    "label_rows",
    "paired_rows",
]


def check_labels(labels, caller):
    """The public label set: stated by the caller, at least two, unique."""
    if labels is None:
        raise ValueError(
            f"{caller} needs the public labels=[...]: they must be stated, not "
            "read from y_true or y_pred (which labels occur is private). Pass "
            "e.g. labels=model.classes_ when the model's classes are public. "
            "Nothing was charged."
        )
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size < 2:
        raise ValueError(
            f"{caller} needs at least two labels in a 1-D list; got "
            f"labels={labels!r}. Nothing was charged."
        )
    if np.unique(labels).size != labels.size:
        raise ValueError(
            f"{caller}: labels={labels.tolist()!r} repeat a label; pass each "
            "once. Nothing was charged."
        )
    return labels


def _column(values, name):
    values = np.asarray(values)
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D (one value per row); got shape {values.shape}. "
            "Nothing was charged."
        )
    return values


def check_pair(first, second, names):
    """Two in-memory columns of one value per row, of the same length."""
    a, b = _column(first, names[0]), _column(second, names[1])
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"{names[0]} and {names[1]} have {a.shape[0]} and {b.shape[0]} rows; "
            "they must describe the same rows. Nothing was charged."
        )
    return a, b


def label_rows(y_true, y_pred, labels, caller):
    """In-memory rows ``(true, predicted)`` and their label indices, shape
    (n, 2); a label outside the public set is refused (an input error, like
    a NaN value) before the charge."""
    y_true, y_pred = check_pair(y_true, y_pred, ("y_true", "y_pred"))
    codes = np.column_stack([encode_labels(v, labels) for v in (y_true, y_pred)])
    for name, column in zip(("y_true", "y_pred"), codes.T, strict=True):
        if np.any(column < 0):
            raise ValueError(
                f"{caller}: {name} holds labels outside the public "
                f"labels={labels.tolist()!r}; add them to labels or drop those "
                "rows with a public rule. Nothing was charged."
            )
    rows = np.empty((y_true.shape[0], 2), dtype=np.result_type(y_true, y_pred))
    rows[:, 0], rows[:, 1] = y_true, y_pred
    return rows, codes


def is_dask_pair(first, second):
    return is_dask_collection(first) or is_dask_collection(second)


def check_dask_labels(labels, caller):
    """Refuse, before the charge, labels that a Dask input cannot hold.

    Dask labels are read as numbers (:func:`paired_rows`): a label (or
    ``pos_label``) that is not a number would match no row, and the charged
    release would count nothing.
    """
    values = np.asarray(labels)
    if values.dtype.kind not in "biuf":
        raise ValueError(
            f"{caller}: Dask labels are read as numbers, so the public labels "
            f"must be numbers too; got {values.tolist()!r}. Encode the labels "
            "as numbers (e.g. their index in model.classes_) or pass in-memory "
            "arrays. Nothing was charged."
        )


def paired_rows(first, second):
    """Two Dask columns as :class:`~skdp.utils._dask.ChunkedRows` of width 2
    (numbers only; nothing is computed). A row with a missing or non-number
    value is dropped by the statistic (a per-row rule, see
    :func:`~skdp.utils._dask.row_statistic`)."""
    import dask.array as da  # only here: an optional dependency

    columns = []
    for values in (first, second):
        values = values.to_dask_array() if hasattr(values, "to_dask_array") else values
        values = da.asarray(values)
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1:
            raise ValueError(
                f"Expected one value per row; got a Dask array of shape "
                f"{values.shape}. Nothing was charged."
            )
        if not np.issubdtype(values.dtype, np.number) and values.dtype != bool:
            raise TypeError(
                "Dask inputs of the private metrics must be numeric (labels "
                f"as numbers); got dtype {values.dtype}. Nothing was charged."
            )
        columns.append(values.astype(np.float64))
    rows = da.stack(columns, axis=1).rechunk({1: -1})
    n = rows.shape[0]
    return ChunkedRows(rows, None if not np.isfinite(n) else int(n), 2)
