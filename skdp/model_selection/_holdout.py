"""Holdout selection of ``NoisyMaxSearchCV(method='holdout')``.

Private candidates are trained on one part of the rows and scored on the
disjoint rest with a per-row score of bounded range; the summed scores are
monotone in the held-out rows, and permute-and-flip releases one candidate.
"""

import math

import numpy as np
from sklearn.base import clone
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _num_samples

from skdp.mechanisms import permute_and_flip
from skdp.model_selection._cost import (
    check_fit_inputs,
    prepaid_accountant,
    route_accountant,
)
from skdp.utils._warnings import silenced
from skdp.utils._zero_rows import fits_on_zero_rows

__all__ = [
    "check_fits_on_zero_rows",
    "fit_on_part",
    "holdout_row_scores",
    "holdout_total",
    "select_by_holdout_scores",
]

# Holdout scores with sensitivity 1 (correct predictions) or ``loss_bound``
# (clipped per-row losses); anything else has no a-priori sensitivity.
_HOLDOUT_SCORINGS = ("accuracy", "neg_absolute_error", "neg_squared_error")


def _fit_prepaid(candidate, cost, X, y):
    """Fit a private candidate under an accountant holding exactly its cost."""
    model = route_accountant(clone(candidate), prepaid_accountant(cost))
    return model.fit(X, y)


def fit_on_part(candidate, cost, X, y):
    """A candidate trained on its part after the charge, or None if it failed.

    The part may hold any number of rows, zero included
    (:func:`~skdp.utils._zero_rows.fits_on_zero_rows`). Nothing raises or
    warns: a fit that fails all the same gives None, which scores the worst
    on every held-out row (:func:`holdout_total`).
    """
    with silenced(), fits_on_zero_rows():
        try:
            return _fit_prepaid(candidate, cost, X, y)
        except Exception:  # a failure after the charge: the public rule
            return None


def check_fits_on_zero_rows(candidate, X, y):
    """Refuse, before the charge, a candidate that cannot fit zero rows.

    Its training part may hold no rows; the candidate is probed up to its
    charge on the schema of ``X`` and ``y`` with none (nothing else of the
    data), so that one which would refuse them (a pipeline of scikit-learn
    transformers) is refused now and not after the charge.
    """
    no_rows = np.array([], dtype=np.intp)
    X_none, y_none = _safe_indexing(X, no_rows), _safe_indexing(y, no_rows)
    try:
        with fits_on_zero_rows():
            check_fit_inputs(candidate, X_none, y_none)
    except (ValueError, TypeError) as exc:
        raise ValueError(
            "method='holdout' fits every candidate on a random part of the "
            "rows, which may hold no rows (or one class only); "
            f"{type(candidate).__name__} cannot be fitted on zero rows: {exc} "
            "Apply public preprocessing (scikit-learn transformers) before "
            "the search, or use method='subsample'. Nothing was charged."
        ) from exc


def _timed_fit_on_part(progress, label, candidate, cost, X, y):
    """:func:`fit_on_part`, then a progress line with its time."""
    return progress.timed(2, lambda: fit_on_part(candidate, cost, X, y), f"END {label}")


def holdout_row_scores(model, X, y, scoring, loss_bound):
    """Per-row scores in ``[0, 1]`` (correct) or ``[-loss_bound, 0]``.

    A row of several outputs is correct when all of them are; its loss is
    the mean over the outputs. A loss that is NaN or beyond ``loss_bound``
    (a prediction of NaN or infinity) is ``loss_bound``.
    """
    pred = np.asarray(model.predict(X))
    if scoring == "accuracy":
        correct = pred == np.asarray(y)
        if correct.ndim > 1:
            correct = correct.all(axis=tuple(range(1, correct.ndim)))
        return correct.astype(np.float64)
    with np.errstate(all="ignore"):
        error = np.abs(pred.astype(np.float64) - np.asarray(y, np.float64))
        if scoring == "neg_squared_error":
            error = error**2
        if error.ndim > 1:
            error = error.mean(axis=1)
        return -np.fmin(error, loss_bound)


def holdout_total(model, X, y, scoring, loss_bound, row_scores=holdout_row_scores):
    """A candidate's summed score over the held-out rows, in units of ``Δ``.

    A per-row rule: each held-out row adds its score divided by the
    sensitivity ``Δ`` (1 for ``"accuracy"``, ``loss_bound`` for the losses),
    a value in ``[0, 1]`` or ``[-1, 0]``; the sum over no rows is 0. A
    candidate that could not be trained (``model`` None), or whose
    prediction fails or does not give one finite score per row, scores the
    worst possible on every row (0, or -1). The sum is correctly rounded
    (``math.fsum``) and at most the number of rows in magnitude, so it
    neither overflows nor raises, whatever ``loss_bound`` is (a sum of
    ``-loss_bound`` per row would overflow at ``loss_bound`` near the
    largest double). ``row_scores`` gives the per-row scores
    (:func:`holdout_row_scores`).

    Notes
    -----
    Dividing by ``Δ`` rounds correctly, hence monotonically: a score in
    ``[-Δ, 0]`` gives a value in ``[-1, 0]`` exactly, so one held-out row
    moves every total by at most 1, all in the same direction, and
    permute-and-flip runs at sensitivity 1 on these totals.
    """
    n_rows = _num_samples(X)
    if n_rows == 0:
        return 0.0
    low, high = (0.0, 1.0) if scoring == "accuracy" else (-1.0, 0.0)
    worst = low
    if model is None:
        return worst * n_rows
    sensitivity = 1.0 if scoring == "accuracy" else float(loss_bound)
    with silenced():
        try:
            scores = np.asarray(row_scores(model, X, y, scoring, loss_bound))
            scores = scores.astype(np.float64) / sensitivity
        except Exception:  # a failure after the charge: the public rule
            return worst * n_rows
        in_range = (scores >= low) & (scores <= high)  # False for NaN
    if scores.shape != (n_rows,) or not in_range.all():
        return worst * n_rows
    return math.fsum(scores)


def select_by_holdout_scores(totals, epsilon, sensitivity, random_state):
    """Permute-and-flip over summed holdout scores (monotone, ``Δ/ε``)."""
    return permute_and_flip(
        totals, epsilon, sensitivity, monotonic=True, random_state=random_state
    )


def _holdout_split(n_samples, holdout_size, source):
    """Independent Bernoulli(holdout_size) row labels: data-independent."""
    held = source.random(n_samples) < holdout_size
    return np.flatnonzero(~held), np.flatnonzero(held)
