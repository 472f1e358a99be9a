"""Holdout selection of ``NoisyMaxSearchCV(method='holdout')``.

Private candidates are trained on one part of the rows and scored on the
disjoint rest with a per-row score of bounded range; the summed scores are
monotone in the held-out rows, and permute-and-flip releases one candidate.
"""

import numpy as np
from sklearn.base import clone

from skdp.mechanisms import permute_and_flip
from skdp.model_selection._cost import prepaid_accountant, route_accountant

__all__ = ["holdout_row_scores", "select_by_holdout_scores"]

# Holdout scores with sensitivity 1 (correct predictions) or ``loss_bound``
# (clipped per-row losses); anything else has no a-priori sensitivity.
_HOLDOUT_SCORINGS = ("accuracy", "neg_absolute_error", "neg_squared_error")


def _fit_prepaid(candidate, cost, X, y):
    """Fit a private candidate under an accountant holding exactly its cost."""
    model = route_accountant(clone(candidate), prepaid_accountant(cost))
    return model.fit(X, y)


def _timed_fit_prepaid(progress, label, candidate, cost, X, y):
    """:func:`_fit_prepaid`, then a progress line with its time."""
    return progress.timed(
        2, lambda: _fit_prepaid(candidate, cost, X, y), f"END {label}"
    )


def holdout_row_scores(model, X, y, scoring, loss_bound):
    """Per-row scores in ``[0, 1]`` (correct) or ``[-loss_bound, 0]``."""
    pred = model.predict(X)
    if scoring == "accuracy":
        return (np.asarray(pred) == np.asarray(y)).astype(np.float64)
    error = np.abs(np.asarray(pred, dtype=np.float64) - np.asarray(y, np.float64))
    if scoring == "neg_squared_error":
        error = error**2
    if error.ndim > 1:
        error = error.mean(axis=1)
    return -np.minimum(error, loss_bound)


def select_by_holdout_scores(totals, epsilon, sensitivity, random_state):
    """Permute-and-flip over summed holdout scores (monotone, ``Δ/ε``)."""
    return permute_and_flip(
        totals, epsilon, sensitivity, monotonic=True, random_state=random_state
    )


def _holdout_split(n_samples, holdout_size, source):
    """Independent Bernoulli(holdout_size) row labels: data-independent."""
    held = source.random(n_samples) < holdout_size
    return np.flatnonzero(~held), np.flatnonzero(held)
