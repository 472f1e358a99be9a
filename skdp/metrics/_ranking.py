"""Private ranking metrics from noisy per-class histograms of the scores."""

from numbers import Integral

import numpy as np

from skdp.metrics import _tables
from skdp.metrics._histograms import PrivateScoreHistograms
from skdp.metrics._inputs import (
    check_dask_labels,
    check_pair,
    is_dask_pair,
    paired_rows,
)
from skdp.metrics._release import ReleasePlan, metric_unit
from skdp.utils._dask import row_statistic
from skdp.utils._validation import check_required_bounds

__all__ = [
    "private_average_precision_score",
    "private_calibration_curve",
    "private_precision_recall_curve",
    "private_roc_auc_score",
    "private_roc_curve",
    "private_score_histograms",
]

_CALLER = "private_score_histograms"


def check_bins(bins, score_range):
    """Public bin edges: equal-width over the public score range (an int),
    or the caller's increasing edges (an array, as :func:`numpy.histogram`
    takes them; ``score_range`` is then not used)."""
    if np.ndim(bins) == 1:
        edges = np.asarray(bins, dtype=float)
        if edges.size < 2 or not np.all(np.isfinite(edges)):
            raise ValueError(
                f"bins as edges needs at least two finite values; got {bins!r}. "
                "Nothing was charged."
            )
        if not np.all(np.diff(edges) > 0):
            raise ValueError(
                "bins as edges must be strictly increasing. Nothing was charged."
            )
        return edges
    if isinstance(bins, bool) or not isinstance(bins, Integral) or bins < 1:
        raise ValueError(
            f"bins must be a positive integer or an array of edges; got {bins!r}. "
            "Nothing was charged."
        )
    lower, upper = check_required_bounds(score_range, 1, _CALLER)
    if not lower[0] < upper[0]:
        raise ValueError(
            f"score_range=(lower, upper) needs lower < upper; got {score_range!r}. "
            "Nothing was charged."
        )
    return np.linspace(lower[0], upper[0], int(bins) + 1)


def _score_rows(y_true, y_score, pos_label):
    """In-memory rows ``(is positive, score)``: finite scores, 1-D, and a
    ``pos_label`` of the labels' type (else no row could be positive)."""
    y_true, y_score = check_pair(y_true, y_score, ("y_true", "y_score"))
    text_labels = y_true.dtype.kind in "US"
    numeric_labels = y_true.dtype.kind in "biuf"
    if (text_labels and not isinstance(pos_label, str)) or (
        numeric_labels and isinstance(pos_label, str)
    ):
        raise ValueError(
            f"pos_label={pos_label!r} cannot equal a label of y_true (dtype "
            f"{y_true.dtype}): no row would be positive. Pass the positive "
            "label itself, e.g. pos_label=model.classes_[-1]. Nothing was "
            "charged."
        )
    y_score = np.asarray(y_score, dtype=float)
    if not np.all(np.isfinite(y_score)):
        raise ValueError(
            "y_score contains NaN or inf; skdp needs finite scores. Impute or "
            "drop them with a data-independent rule first. Nothing was charged."
        )
    return np.column_stack([(y_true == pos_label).astype(float), y_score])


def private_score_histograms(
    y_true,
    y_score,
    *,
    pos_label=1,
    bins=100,
    score_range=(0.0, 1.0),
    epsilon=1.0,
    delta=0.0,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """Release the histograms of the scores of the negative and positive rows.

    Every ranking metric of skdp is post-processing of this release
    (:class:`~skdp.metrics.PrivateScoreHistograms`): call it once and read
    the ROC and precision–recall curves, their areas and the calibration
    curve for one charge.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or Dask array
        True labels; ``pos_label`` is positive, every other label negative
        (no label set is needed).
    y_score : array-like of shape (n_samples,) or Dask array
        Scores, e.g. ``predict_proba(X)[:, 1]``; higher means positive.
    pos_label : scalar, default=1
        The positive label.
    bins : int or array-like of shape (n_bins + 1,), default=100
        Number of equal-width public bins over ``score_range``, or the
        public increasing bin edges themselves (e.g. spaced on the logit
        scale, for probabilities piled up near 0 or 1).
    score_range : tuple (lower, upper), default=(0.0, 1.0)
        The public range of the scores (for an integer ``bins``); a score
        outside the edges falls in the first or last bin (clipping).
    epsilon : float, default=1.0
        ε of the release.
    delta : float, default=0.0
        0: Laplace noise (ε-DP); > 0: the analytic Gaussian ((ε, δ)-DP).
    groups : array-like of shape (n_samples,), default=None
        Each test row's person, with ``max_rows_per_group``: neighbours add
        or remove one whole group, of which at most ``k`` rows are kept
        (:ref:`user_level_privacy`; in memory only). None: one row.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows (required with ``groups``).
    accountant : BudgetAccountant or None, default=None
        Charged before the labels are read.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws the noise from the operating system's CSPRNG.

    Returns
    -------
    histograms : PrivateScoreHistograms

    Notes
    -----
    **Sensitivity (add/remove one test row).** A row adds 1 to one bin of
    one of the two histograms: the ``2 * bins`` counts move by 1 in L1 and
    L2 norm. Exact integer counts, exact discrete noise on a power-of-two
    grid (:func:`~skdp.mechanisms._additive.additive_release`). With
    ``groups``, a group of at most ``k`` kept rows moves them by ``k`` (L1
    and L2, attained when its rows share a bin): noise ``k`` times the row's.

    **Bins.** The noise on the AUC grows with the number of bins (each
    count's noise meets the count of the other class below it): its
    standard deviation is about ``sqrt(2 bins / 3) / (ε P)`` for ``P``
    positive rows under Laplace noise, while binning ties the scores within
    a bin (for probabilities, ``bins=100`` changes the AUC of a usual model
    by well under 0.001). On Adult's held-out part at ε = 1, 100 bins keep
    the AUC within ±0.01 of scikit-learn's (``benchmarks/README.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.metrics import private_score_histograms
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 5000)
    >>> score = np.clip(0.5 + 0.3 * (y - 0.5) + rng.normal(0, 0.2, 5000), 0, 1)
    >>> hist = private_score_histograms(y, score, random_state=0)
    >>> round(hist.roc_auc().value, 2)
    0.86
    """
    edges = check_bins(bins, score_range)
    unit = metric_unit(_CALLER, groups, max_rows_per_group, y_true)
    k, size = float(unit.unit_rows), 2 * (edges.size - 1)
    plan = ReleasePlan(size, k, k, epsilon, delta, random_state, unit)
    if is_dask_pair(y_true, y_score):
        check_dask_labels([pos_label], _CALLER)
        rows, label = paired_rows(y_true, y_score), pos_label
    else:
        rows, label = _score_rows(y_true, y_score, pos_label), 1.0
    plan.charge(accountant, f"{_CALLER}: 2 x {edges.size - 1} bins")
    if unit.groups is not None:  # in memory: Dask is refused with groups
        rows = rows[plan.kept(rows)]
    exact = row_statistic(rows, _tables.score_histogram_counts, label, edges)
    return PrivateScoreHistograms(plan.release(exact), edges, plan.variance)


def private_roc_auc_score(y_true, y_score, **kwargs):
    """ROC AUC from private score histograms.

    Parameters
    ----------
    y_true, y_score : array-like of shape (n_samples,)
        As for :func:`private_score_histograms`.
    **kwargs
        ``pos_label``, ``bins``, ``score_range``, ``epsilon``, ``delta``,
        ``groups``, ``max_rows_per_group``, ``accountant``, ``random_state``
        of :func:`private_score_histograms`.

    Returns
    -------
    auc : PrivateEstimate

    Notes
    -----
    One release of sensitivity 1 (:func:`private_score_histograms`), then
    the Mann–Whitney statistic of the counts (post-processing, see
    :class:`PrivateScoreHistograms`).

    Examples
    --------
    >>> from skdp.metrics import private_roc_auc_score
    >>> y = [0] * 500 + [1] * 500
    >>> score = [0.2] * 400 + [0.6] * 100 + [0.6] * 100 + [0.9] * 400
    >>> round(private_roc_auc_score(y, score, random_state=0).value, 2)
    0.9
    """
    return private_score_histograms(y_true, y_score, **kwargs).roc_auc()


def private_roc_curve(y_true, y_score, **kwargs):
    """ROC curve from private score histograms.

    Parameters
    ----------
    y_true, y_score : array-like of shape (n_samples,)
        As for :func:`private_score_histograms`.
    **kwargs
        As for :func:`private_roc_auc_score`.

    Returns
    -------
    fpr, tpr : PrivateEstimate
    thresholds : ndarray

    Notes
    -----
    Post-processing of one release of sensitivity 1
    (:func:`private_score_histograms`).

    Examples
    --------
    >>> from skdp.metrics import private_roc_curve
    >>> fpr, tpr, thr = private_roc_curve([0, 1] * 500, [0.3, 0.7] * 500,
    ...                                   bins=2, random_state=0)
    >>> fpr.value.round(2), tpr.value.round(2), thr
    (array([0., 0., 1.]), array([0., 1., 1.]), array([inf, 0.5, 0. ]))
    """
    return private_score_histograms(y_true, y_score, **kwargs).roc_curve()


def private_precision_recall_curve(y_true, y_score, **kwargs):
    """Precision–recall curve from private score histograms.

    Parameters
    ----------
    y_true, y_score : array-like of shape (n_samples,)
        As for :func:`private_score_histograms`.
    **kwargs
        As for :func:`private_roc_auc_score`.

    Returns
    -------
    precision, recall : PrivateEstimate
    thresholds : ndarray

    Notes
    -----
    Post-processing of one release of sensitivity 1
    (:func:`private_score_histograms`).

    Examples
    --------
    >>> from skdp.metrics import private_precision_recall_curve
    >>> p, r, thr = private_precision_recall_curve(
    ...     [0, 1] * 500, [0.3, 0.7] * 500, bins=2, random_state=0)
    >>> p.value.round(2), r.value.round(2)
    (array([0.5, 1. , 1. ]), array([1., 1., 0.]))
    """
    return private_score_histograms(y_true, y_score, **kwargs).precision_recall_curve()


def private_average_precision_score(y_true, y_score, **kwargs):
    """Average precision from private score histograms.

    Parameters
    ----------
    y_true, y_score : array-like of shape (n_samples,)
        As for :func:`private_score_histograms`.
    **kwargs
        As for :func:`private_roc_auc_score`.

    Returns
    -------
    average_precision : PrivateEstimate

    Notes
    -----
    Post-processing of one release of sensitivity 1
    (:func:`private_score_histograms`).

    Examples
    --------
    >>> from skdp.metrics import private_average_precision_score
    >>> est = private_average_precision_score([0, 1] * 500, [0.3, 0.7] * 500,
    ...                                       random_state=0)
    >>> round(est.value, 2)
    1.0
    """
    return private_score_histograms(y_true, y_score, **kwargs).average_precision()


def private_calibration_curve(y_true, y_prob, *, n_bins=5, bins=100, **kwargs):
    """Calibration curve from private score histograms.

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n_samples,)
        As ``y_true`` and ``y_score`` of :func:`private_score_histograms`.
    n_bins : int, default=5
        Calibration bins (scikit-learn's ``n_bins``, uniform strategy); must
        divide ``bins``.
    bins : int, default=100
        The released histogram's bins.
    **kwargs
        As for :func:`private_roc_auc_score`.

    Returns
    -------
    prob_true, prob_pred : PrivateEstimate

    Notes
    -----
    Post-processing of one release of sensitivity 1
    (:func:`private_score_histograms`); see
    :meth:`PrivateScoreHistograms.calibration_curve`.

    Examples
    --------
    >>> from skdp.metrics import private_calibration_curve
    >>> y = [0] * 800 + [1] * 200 + [0] * 200 + [1] * 800
    >>> prob = [0.25] * 1000 + [0.75] * 1000
    >>> t, p = private_calibration_curve(y, prob, n_bins=2, random_state=0)
    >>> t.value.round(2), p.value.round(2)
    (array([0.2 , 0.81]), array([0.26, 0.75]))
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, Integral) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer; got {n_bins!r}.")
    n_released = np.size(bins) - 1 if np.ndim(bins) == 1 else bins
    if isinstance(n_released, Integral) and n_released % n_bins:
        raise ValueError(
            f"n_bins={n_bins} must divide the {n_released} released bins: each "
            "calibration bin is "
            "a group of released bins. Nothing was charged."
        )
    hist = private_score_histograms(y_true, y_prob, bins=bins, **kwargs)
    return hist.calibration_curve(n_bins)
