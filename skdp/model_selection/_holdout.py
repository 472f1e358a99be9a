"""Holdout selection of ``NoisyMaxSearchCV(method='holdout')``.

Private candidates are trained on one part of the rows and scored on the
disjoint rest with a per-row score of bounded range; the summed scores are
monotone in the held-out rows, and permute-and-flip releases one candidate.
"""

import math

import numpy as np
from sklearn.base import clone
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils.validation import _num_samples, column_or_1d

from skdp.mechanisms import permute_and_flip
from skdp.model_selection._cost import (
    check_fit_inputs,
    prepaid_accountant,
    route_accountant,
)
from skdp.utils._groups import group_codes
from skdp.utils._warnings import silenced
from skdp.utils._zero_rows import fits_on_zero_rows

__all__ = [
    "check_fits_on_zero_rows",
    "check_holdout_targets",
    "fit_on_part",
    "group_scores",
    "holdout_row_scores",
    "holdout_total",
    "select_by_holdout_scores",
]

# Holdout scores with sensitivity 1 (correct predictions) or ``loss_bound``
# (clipped per-row losses); anything else has no a-priori sensitivity.
_HOLDOUT_SCORINGS = ("accuracy", "neg_absolute_error", "neg_squared_error")

# Per-row scores (in units of the sensitivity) are rounded to this grid, so
# that their sum over up to 2**29 held-out rows is exact (holdout_total).
_SCORE_GRID = 2.0**-24


def _fit_prepaid(candidate, cost, X, y, **fit_params):
    """Fit a private candidate under an accountant holding exactly its cost."""
    model = route_accountant(clone(candidate), prepaid_accountant(cost))
    return model.fit(X, y, **fit_params)


def fit_on_part(candidate, cost, X, y, **fit_params):
    """A candidate trained on its part after the charge, or None if it failed.

    The part may hold any number of rows, zero included
    (:func:`~skdp.utils._zero_rows.fits_on_zero_rows`). ``fit_params``
    (``groups``: the part's own labels) go to ``fit``. Nothing raises or
    warns: a fit that fails all the same gives None, which scores the worst
    on every held-out row (:func:`holdout_total`).
    """
    with silenced(), fits_on_zero_rows():
        try:
            return _fit_prepaid(candidate, cost, X, y, **fit_params)
        except Exception:  # a failure after the charge: the public rule
            return None


def check_fits_on_zero_rows(candidate, X, y, groups=None):
    """Refuse, before the charge, a candidate that cannot fit zero rows.

    Its training part may hold no rows; the candidate is probed up to its
    charge on the schema of ``X`` and ``y`` (and ``groups``) with none
    (nothing else of the data), so that one which would refuse them (a
    pipeline of scikit-learn transformers) is refused now and not after the
    charge.
    """
    no_rows = np.array([], dtype=np.intp)
    X_none, y_none = _safe_indexing(X, no_rows), _safe_indexing(y, no_rows)
    fit_params = {} if groups is None else {"groups": groups[no_rows]}
    try:
        with fits_on_zero_rows():
            check_fit_inputs(candidate, X_none, y_none, **fit_params)
    except (ValueError, TypeError) as exc:
        raise ValueError(
            "method='holdout' fits every candidate on a random part of the "
            "rows, which may hold no rows (or one class only); "
            f"{type(candidate).__name__} cannot be fitted on zero rows: {exc} "
            "Apply public preprocessing (scikit-learn transformers) before "
            "the search, or use method='subsample'. Nothing was charged."
        ) from exc


def _timed_fit_on_part(progress, label, candidate, cost, X, y, **fit_params):
    """:func:`fit_on_part`, then a progress line with its time."""
    return progress.timed(
        2, lambda: fit_on_part(candidate, cost, X, y, **fit_params), f"END {label}"
    )


def check_holdout_targets(estimator, y):
    """``y`` as the holdout scoring compares it, checked before the charge.

    The held-out rows' predictions are compared with their targets row by
    row (:func:`holdout_row_scores`), so the targets must have the shape of
    the predictions. For an estimator that predicts one output (its tags do
    not say ``multi_output``), ``y`` of shape ``(n_samples, 1)`` becomes
    ``(n_samples,)`` exactly as scikit-learn's ``column_or_1d`` makes it
    (with its ``DataConversionWarning``), and ``y`` of several columns is
    refused. The shape of ``y`` and the estimator's tags are public, so
    this decides nothing on the data.
    """
    if get_tags(estimator).target_tags.multi_output or np.ndim(y) != 2:
        return y
    shape = np.shape(y)
    if shape[1] == 1:
        return column_or_1d(y, warn=True)
    raise ValueError(
        f"method='holdout' compares each held-out row's prediction with its "
        f"target, but y has shape {shape} and {type(estimator).__name__} "
        "predicts one output (its tags do not say multi_output). Pass y of "
        "shape (n_samples,), or an estimator that predicts several outputs "
        "(scikit-learn's MultiOutputMixin). Nothing was charged."
    )


def _worst_score(scoring):
    """The worst score of one row in units of ``Δ``: 0 correct, or -1."""
    return 0.0 if scoring == "accuracy" else -1.0


def _scores_of_predictions(pred, targets, scoring, loss_bound):
    """Each row's score in units of ``Δ``, or None if the shapes differ.

    ``targets`` holds one row per held-out row (``(n_rows, n_outputs)``);
    ``pred`` is taken as one row per held-out row too, so that a row is
    only ever compared with its own target (a prediction of shape
    ``(n,)`` against targets ``(n, 1)`` broadcast to ``(n, n)`` before).
    """
    pred = np.asarray(pred)
    n_rows = targets.shape[0]
    if pred.ndim == 0 or pred.shape[0] != n_rows:
        return None
    pred = pred.reshape(n_rows, -1)
    if pred.shape != targets.shape:
        return None
    if scoring == "accuracy":
        return np.all(pred == targets, axis=1).astype(np.float64)
    error = np.abs(pred.astype(np.float64) - targets.astype(np.float64))
    if scoring == "neg_squared_error":
        error = error**2
    # each output clipped to [0, loss_bound] (NaN counts as loss_bound), in
    # units of loss_bound: [0, 1] exactly, so the mean is in [0, 1] too
    return -np.mean(np.fmin(error, loss_bound) / loss_bound, axis=1)


def _batch_scores(model, X, targets, scoring, loss_bound):
    """The rows' scores from one prediction of all of them, or None."""
    try:
        scores = _scores_of_predictions(model.predict(X), targets, scoring, loss_bound)
    except Exception:  # a failure after the charge: scored row by row
        return None
    if scores is None or not np.all(np.isfinite(scores)):
        return None
    return scores


def _single_row_score(model, X, targets, row, scoring, loss_bound):
    """One row's score from its own prediction; the worst if it fails."""
    try:
        pred = model.predict(_safe_indexing(X, [row]))
        score = _scores_of_predictions(
            pred, targets[row : row + 1], scoring, loss_bound
        )
    except Exception:  # a failure after the charge: the public rule
        return _worst_score(scoring)
    return _worst_score(scoring) if score is None else score[0]


def holdout_row_scores(model, X, y, scoring, loss_bound):
    """Each held-out row's score, from that row alone, in units of ``Δ``.

    ``Δ`` is the sensitivity: 1 for ``"accuracy"`` (a row scores 1 if its
    prediction is correct, all outputs of it, else 0), ``loss_bound`` for
    the losses (a row scores minus the mean over its outputs of each
    output's absolute or squared error clipped to ``[0, loss_bound]``,
    divided by ``loss_bound``: a value in ``[-1, 0]``; an error that is NaN
    counts as ``loss_bound``).

    Predictions and targets are compared row by row: each is taken as one
    row per held-out row, ``(n_rows, n_outputs)``, and a prediction whose
    shape is not the targets' (a public property of the candidate and of
    ``y``) scores the worst. The rows are predicted together; if that
    fails (an exception, a prediction of another shape, a score that is
    not finite), each row is predicted alone, and a row whose own
    prediction fails or has another shape scores the worst (0, or -1).
    Warnings and floating-point errors are silenced.

    Notes
    -----
    A row's score is a function of that row and of ``model`` only: when
    the rows are predicted alone by construction, and when they are
    predicted together because ``predict`` treats the rows of its input
    independently (scikit-learn's contract for ``predict``), so that the
    batch gives every row the prediction it would get alone. One held-out
    row added or removed therefore changes one score, by at most 1 (in
    units of ``Δ``). Before, a batch that failed on one row scored every
    row the worst (sensitivity the number of held-out rows).
    """
    n_rows = _num_samples(X)
    if n_rows == 0:
        return np.zeros(0)
    targets = np.asarray(y).reshape(n_rows, -1)
    with silenced():
        scores = _batch_scores(model, X, targets, scoring, loss_bound)
        if scores is None:
            scores = np.array(
                [
                    _single_row_score(model, X, targets, row, scoring, loss_bound)
                    for row in range(n_rows)
                ],
                dtype=np.float64,
            )
    return scores


def _on_score_grid(scores):
    """Scores rounded to multiples of ``_SCORE_GRID`` (exact in ``[-1, 1]``)."""
    return np.rint(scores / _SCORE_GRID) * _SCORE_GRID


def group_scores(scores, groups, max_rows_per_group):
    """One score per group: the mean of its rows' scores times
    ``min(m, k) / k`` (``m`` its rows, ``k = max_rows_per_group``).

    ``scores`` are the rows' scores on the ``2**-24`` grid, in ``[0, 1]`` or
    ``[-1, 0]`` (:func:`holdout_total`); a group's value is in the same
    range, rounded to the same grid, in units of ``k Δ``.

    Notes
    -----
    **Sensitivity (add/remove one whole group).** A group's value is a
    function of its own rows' scores only (their exact sum ``S`` and count
    ``m``): ``S / m`` then ``× min(m, k) / k``, each correctly rounded,
    clipped to the range and rounded to the grid. It lies in ``[0, 1]`` for
    a score in ``[0, 1]`` (``[-1, 0]`` for a loss), so a held-out group
    added or removed moves every candidate's total by at most 1 in units
    of ``k Δ``, all in the same direction: permute-and-flip at sensitivity
    1 on these totals is the mechanism for a group of ``k`` rows of
    sensitivity ``Δ`` each. It is the weight a group would have if it kept
    ``min(m, k)`` of its rows drawn uniformly (the expected value of that
    draw's sum, :func:`~skdp.utils._groups.kept_rows`), without the draw's
    variance and without reading the rows' content, so any ``X`` will do.
    ``S`` is exact: the scores are multiples of ``2**-24`` and every partial
    sum over up to ``2**29`` rows is below ``2**29``; so is the sum of the
    groups' values.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.model_selection._holdout import group_scores
    >>> scores = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0])
    >>> group_scores(scores, [0, 0, 0, 0, 1, 2], 2).tolist()  # 2/4, 1/2, 0
    [0.5, 0.5, 0.0]
    """
    codes, n_codes = group_codes(groups)
    sums = np.bincount(codes, weights=scores, minlength=n_codes)  # exact
    rows = np.bincount(codes, minlength=n_codes).astype(np.float64)
    sums, rows = sums[rows > 0], rows[rows > 0]  # codes may skip values
    k = float(max_rows_per_group)
    values = (sums / rows) * (np.minimum(rows, k) / k)
    return _on_score_grid(np.clip(values, -1.0, 1.0))


def _checked_scores(model, X, y, scoring, loss_bound, row_scores):
    """Each row's score in units of ``Δ`` on the ``2**-24`` grid, the worst
    where a row's score is NaN or out of range, and on every row where the
    model is None or ``row_scores`` fails or gives the wrong shape."""
    n_rows = _num_samples(X)
    worst = np.full(n_rows, _worst_score(scoring))
    if model is None:
        return worst
    with silenced():
        try:
            scores = np.asarray(
                row_scores(model, X, y, scoring, loss_bound), dtype=np.float64
            )
        except Exception:  # a failure after the charge: the public rule
            return worst
        if scores.shape != (n_rows,):
            return worst
        low, high = (0.0, 1.0) if scoring == "accuracy" else (-1.0, 0.0)
        in_range = (scores >= low) & (scores <= high)  # False for NaN
        return _on_score_grid(np.where(in_range, scores, worst))


def holdout_total(
    model,
    X,
    y,
    scoring,
    loss_bound,
    row_scores=holdout_row_scores,
    groups=None,
    max_rows_per_group=1,
):
    """A candidate's summed score over the held-out rows, in units of ``Δ``
    (of ``k Δ`` with ``groups``).

    A per-row rule: each held-out row adds its score in units of the
    sensitivity ``Δ`` (1 for ``"accuracy"``, ``loss_bound`` for the
    losses), a value in ``[0, 1]`` or ``[-1, 0]``, given by ``row_scores``
    (:func:`holdout_row_scores`, which scores each row from that row
    alone); the sum over no rows is 0. A row whose score is NaN or out of
    its range scores the worst (0, or -1) alone. A candidate that could not
    be trained (``model`` None), or a ``row_scores`` that fails as a whole
    or does not give one score per row, scores the worst on every row: a
    function of the candidate and of the number of held-out rows.

    With ``groups`` (the held-out rows' labels) and ``k =
    max_rows_per_group`` each group adds one value instead, its rows'
    scores weighted to at most ``k`` rows and divided by ``k``
    (:func:`group_scores`): again a
    value in ``[0, 1]`` or ``[-1, 0]``, now per group.

    Notes
    -----
    Each row's score is rounded to a multiple of ``2**-24`` (a function of
    that row's score only; half a step at most, ``3e-8 Δ``), so every
    partial sum over up to ``2**29`` rows is a multiple of ``2**-24`` below
    ``2**29`` in magnitude, which a double holds exactly: the total is the
    exact sum of the rows' scores, and one held-out row added or removed
    moves every total by at most 1, all in the same direction (the row's
    score is in ``[0, 1]``, or ``[-1, 0]``, whatever the candidate), so
    permute-and-flip runs at sensitivity 1 on these totals. A correctly
    rounded sum of unrounded scores (``math.fsum``, as before) could move
    by 1 plus an ulp of the total. Beyond ``2**29`` rows the sum is
    correctly rounded (``math.fsum``). The total is at most the number of
    rows in magnitude, so it neither overflows nor raises, whatever
    ``loss_bound`` is. The groups' values are on the same grid and in the
    same ranges, so the same holds for groups: one held-out group moves
    every total by at most 1 (``k Δ``), in the same direction.
    """
    if _num_samples(X) == 0:
        return 0.0
    scores = _checked_scores(model, X, y, scoring, loss_bound, row_scores)
    if groups is not None:
        scores = group_scores(scores, groups, max_rows_per_group)
    return math.fsum(scores)


def select_by_holdout_scores(totals, epsilon, sensitivity, random_state):
    """Permute-and-flip over summed holdout scores (monotone, ``Δ/ε``)."""
    return permute_and_flip(
        totals, epsilon, sensitivity, monotonic=True, random_state=random_state
    )
