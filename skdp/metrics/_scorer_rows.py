"""Per-row rules of the private scorers: which column of ``predict_proba``
a metric reads, and the public prediction of a row the metric could not use
(:meth:`~skdp.metrics.PrivateScorer.usable_predictions`)."""

import numpy as np
from sklearn.utils import _safe_indexing

from skdp.metrics._tables import encode_labels

__all__ = [
    "check_row_level_scorer",
    "column_of",
    "columns_in_order",
    "predictions_row_by_row",
    "usable_per_row",
]


def check_row_level_scorer(kwargs):
    """Refuse ``groups`` and ``max_rows_per_group`` for a scorer: a scorer
    is called by a search or ``cross_validate`` on test folds with no route
    for the groups of the fold's rows (and the folds' parallel composition
    would need every group within one fold), so its unit stays one row."""
    stated = sorted({"groups", "max_rows_per_group"} & set(kwargs))
    if stated:
        raise ValueError(
            f"make_private_scorer does not take {', '.join(stated)}: a private "
            "scorer protects one test row, since neither scikit-learn's "
            "searches nor cross_validate route each test fold's groups to it. "
            "For a person-level score, fit NoisyMaxSearchCV(method='holdout') "
            "or RandomStoppingSearchCV with groups= and max_rows_per_group=k "
            "(they give the held-out part's groups and k to the scorer), or "
            "call the metric on a held-out set yourself, e.g. "
            "private_accuracy_score(y, model.predict(X), labels=..., "
            "groups=person, max_rows_per_group=k)."
        )


def column_of(classes, label):
    """The column of ``label`` in ``predict_proba`` (the model's
    ``classes_`` order, as scikit-learn's scorers pick it); the last column
    when the model states no classes or lacks the label."""
    if classes is None:
        return -1
    where = np.flatnonzero(np.asarray(classes) == label)
    return int(where[0]) if where.size == 1 else -1


def columns_in_order(classes, labels):
    """``predict_proba``'s columns reordered to the scorer's ``labels``
    (the metric reads column ``j`` as ``labels[j]``); as given when the
    model's classes are not those labels."""
    labels = np.asarray(labels)
    if classes is None or np.size(classes) != labels.size:
        return slice(None)
    columns = [column_of(classes, label) for label in labels]
    if sorted(columns) != list(range(labels.size)):
        return slice(None)
    return columns


def predictions_row_by_row(scorer, model, X, n_rows):
    """The scorer's predictions of ``model`` asked one row at a time, the
    public prediction for a row on which the model fails (a per-row rule:
    one row that makes ``predict`` raise changes its own prediction only)."""
    rows = []
    for i in range(n_rows):
        try:
            row = np.asarray(scorer._predictions(model, _safe_indexing(X, [i])))
            if row.shape[0] != 1:
                raise ValueError("not one prediction for one row")
        except Exception:  # this row's public prediction
            row = scorer.fallback_predictions(1, model)
        rows.append(row)
    return np.concatenate(rows) if rows else scorer.fallback_predictions(0, model)


def usable_per_row(scorer, predictions, public, model):
    """``predictions`` with each row the metric would refuse replaced by
    that row of ``public`` (all of it when the shape or the type does
    not fit: a property of the model, not of a row)."""
    try:
        predictions = np.asarray(predictions)
        if predictions.shape != public.shape:
            return public
        if scorer._kind == "labels" and scorer._response == "predict":
            labels = np.asarray(scorer._metric_kwargs(model)["labels"])
            codes = encode_labels(predictions, labels)
            return np.where(codes >= 0, predictions, public)
        values = predictions.astype(np.float64)
    except Exception:  # predictions of another kind than the metric's
        return public
    finite = np.isfinite(values)
    if values.ndim == 2:  # probabilities: a row is usable when all of it is
        finite = np.repeat(finite.all(axis=1, keepdims=True), values.shape[1], 1)
    return np.where(finite, values, public)
