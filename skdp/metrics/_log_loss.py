"""Private log-loss from an exact clipped sum of the per-row losses."""

import numpy as np

from skdp.metrics._inputs import check_dask_labels, check_labels, is_dask_pair
from skdp.metrics._regression import _estimate, _moments
from skdp.metrics._release import ReleasePlan, metric_unit
from skdp.metrics._tables import encode_labels
from skdp.sensitivity import exact_moment_sums
from skdp.utils._dask import ChunkedRows, row_statistic

__all__ = ["labelled_log_loss_sums", "log_loss_sums", "private_log_loss"]


def log_loss_sums(rows, eps):
    """Exact moment sums of each row's loss ``-log(clip(p, eps, 1))`` in
    ``[0, -log(eps)]``; ``rows[:, 0]`` is the probability of the true label.
    L1 = L2 = 1 (one column, :func:`~skdp.sensitivity.exact_moment_sums`)."""
    loss = -np.log(np.clip(rows[:, :1], eps, 1.0))
    return exact_moment_sums(loss, np.array([0.0]), np.array([-np.log(eps)]))


def labelled_log_loss_sums(rows, labels, eps):
    """:func:`log_loss_sums` of rows ``(label, p_1, ..., p_L)`` (a Dask
    block): each row's probability of its own label, a row whose label is
    not among ``labels`` dropped (a per-row rule: the input is read after
    the charge)."""
    codes = encode_labels(rows[:, 0], labels)
    kept = codes >= 0
    p_true = rows[kept, 1:][np.arange(int(kept.sum())), codes[kept]]
    return log_loss_sums(p_true[:, None], eps)


def _dask_rows(y_true, y_prob, labels):
    """``(label, p_1, ..., p_L)`` per row as :class:`ChunkedRows` (lazy;
    shapes refused before the charge, values only read after it)."""
    import dask.array as da  # only here: an optional dependency

    check_dask_labels(labels, "private_log_loss")
    y_true = da.asarray(
        y_true.to_dask_array() if hasattr(y_true, "to_dask_array") else y_true
    )
    y_prob = da.asarray(
        y_prob.to_dask_array() if hasattr(y_prob, "to_dask_array") else y_prob
    )
    if y_prob.ndim == 1 and labels.size == 2:
        y_prob = da.stack([1.0 - y_prob, y_prob], axis=1)
    if y_true.ndim != 1 or y_prob.ndim != 2 or y_prob.shape[1] != labels.size:
        raise ValueError(
            f"y_true must be one label per row and y_prob of shape (n_samples, "
            f"{labels.size}); got {y_true.shape} and {y_prob.shape}. Nothing "
            "was charged."
        )
    rows = da.concatenate(
        [y_true.astype(np.float64)[:, None], y_prob.astype(np.float64)], axis=1
    ).rechunk({1: -1})
    n = rows.shape[0]
    return ChunkedRows(rows, None if not np.isfinite(n) else int(n), rows.shape[1])


def _true_probabilities(y_true, y_prob, labels):
    """The probability each row gives its true label (refusals before the
    charge: unknown labels, a shape that does not match the labels)."""
    labels = check_labels(labels, "private_log_loss")
    y_true = np.asarray(y_true)
    y_prob = np.asarray(y_prob, dtype=float)
    if y_prob.ndim == 1 and labels.size == 2:
        y_prob = np.column_stack([1.0 - y_prob, y_prob])
    if y_prob.ndim != 2 or y_prob.shape != (y_true.shape[0], labels.size):
        raise ValueError(
            f"y_prob must have shape (n_samples, {labels.size}) (one column per "
            f"label, in the order of labels); got {y_prob.shape}. Nothing was "
            "charged."
        )
    codes = encode_labels(y_true, labels)
    if np.any(codes < 0) or not np.all(np.isfinite(y_prob)):
        raise ValueError(
            "y_true holds labels outside the public labels, or y_prob is not "
            "finite; fix the input with a public rule. Nothing was charged."
        )
    return y_prob[np.arange(codes.size), codes]


def private_log_loss(
    y_true,
    y_prob,
    *,
    labels,
    eps=1e-15,
    epsilon=1.0,
    delta=0.0,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """Log-loss (cross-entropy) from a private clipped sum.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or Dask array
        True labels (numbers, for Dask input).
    y_prob : array-like of shape (n_samples, n_labels) or (n_samples,)
        Predicted probabilities, one column per label in the order of
        ``labels`` (for two labels, 1-D: the probability of ``labels[1]``).
        A Dask array with ``y_true``: read block by block after the charge;
        a row with a label outside ``labels`` or a missing value is dropped
        (a per-row rule), where in memory such input is refused.
    labels : array-like of shape (n_labels,)
        The public labels (e.g. a private model's ``classes_``).
    eps : float, default=1e-15
        Public clip: probabilities are clipped to ``[eps, 1]``, so a row's
        loss lies in ``[0, -log(eps)]`` (about 34.5 by default).
    epsilon, delta, groups, max_rows_per_group, accountant, random_state
        As for :func:`private_mean_squared_error` (with ``groups``, a group
        of at most ``k`` kept rows moves the sums by ``k`` times a row).

    Returns
    -------
    log_loss : PrivateEstimate

    Notes
    -----
    One release of the moment sums of the per-row loss in
    ``[0, -log(eps)]`` (:func:`~skdp.sensitivity.exact_moment_sums`, one
    column): L1 = L2 = 1 after normalisation by the public width
    ``-log(eps)``, so a row's loss of up to ``-log(eps)`` moves ``Σ loss``
    by at most that. The noise on the mean grows with ``-log(eps)``: a
    larger ``eps`` (e.g. 1e-4) trades a bias on confident mistakes for less
    noise. The probabilities are used as given (not renormalised).

    Examples
    --------
    >>> from skdp.metrics import private_log_loss
    >>> y = [0, 1] * 1000
    >>> prob = [0.2, 0.8] * 1000  # P(label 1)
    >>> est = private_log_loss(y, prob, labels=[0, 1], random_state=0)
    >>> round(est.value, 1)
    0.2
    """
    if not (isinstance(eps, float | int) and 0 < eps < 1):
        raise ValueError(f"eps must be in (0, 1); got {eps!r}. Nothing was charged.")
    unit = metric_unit("private_log_loss", groups, max_rows_per_group, y_true)
    k = float(unit.unit_rows)
    plan = ReleasePlan(3, k, k, epsilon, delta, random_state, unit)
    if is_dask_pair(y_true, y_prob):
        labels = check_labels(labels, "private_log_loss")
        rows = _dask_rows(y_true, y_prob, labels)
        plan.charge(accountant, "private_log_loss: clipped sum of losses")
        exact = row_statistic(rows, labelled_log_loss_sums, labels, float(eps))
    else:
        p_true = _true_probabilities(y_true, y_prob, labels)
        plan.charge(accountant, "private_log_loss: clipped sum of losses")
        if unit.groups is not None:  # a row's content as the release sees it
            p_true = p_true[plan.kept(p_true)]
        exact = log_loss_sums(p_true[:, None], float(eps))
    flat = plan.release(exact).ravel()
    low, high = np.array([0.0]), np.array([-np.log(eps)])

    def mean_loss(values):
        return _moments(values, low, high)[1][..., 0]

    return _estimate(mean_loss, flat, plan.variance)
