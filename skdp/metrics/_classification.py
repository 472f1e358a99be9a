"""Private classification metrics from one noisy confusion matrix."""

from skdp.metrics import _tables
from skdp.metrics._confusion import PrivateConfusionMatrix, check_average
from skdp.metrics._inputs import (
    check_dask_labels,
    check_labels,
    is_dask_pair,
    label_rows,
    paired_rows,
)
from skdp.metrics._release import ReleasePlan, metric_unit
from skdp.utils._dask import row_statistic

__all__ = [
    "private_accuracy_score",
    "private_balanced_accuracy_score",
    "private_confusion_matrix",
    "private_f1_score",
    "private_precision_recall_fscore_support",
    "private_precision_score",
    "private_recall_score",
]


def private_confusion_matrix(
    y_true,
    y_pred,
    *,
    labels,
    epsilon=1.0,
    delta=0.0,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """Release the confusion matrix of ``(y_true, y_pred)`` with noise, once.

    Every classification metric of skdp is post-processing of this release
    (:class:`~skdp.metrics.PrivateConfusionMatrix`): call it once and read
    all of them for one charge.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or Dask array
        True and predicted labels of the private test rows. Dask inputs
        (numeric labels) are counted block by block on their cluster.
    labels : array-like of shape (n_labels,)
        The public labels (stated by the caller, e.g. a private model's
        ``classes_``), in the order of the matrix's rows and columns. Never
        read from the data: without it the function refuses.
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
        Charged before the labels are read; ``None`` uses the default
        accountant in effect.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws the noise from the operating system's CSPRNG.

    Returns
    -------
    matrix : PrivateConfusionMatrix
        The released cells and the metrics computed from them.

    Notes
    -----
    **Sensitivity (add/remove one test row).** A row adds 1 to the one cell
    ``(its true label, its predicted label)``: the ``n_labels²`` cells move
    by 1 in L1 and in L2 norm. The counts are exact integers and receive
    exact discrete Laplace noise of scale ``1/ε`` or discrete Gaussian noise
    of the analytic σ for L2 sensitivity 1, on a power-of-two grid
    (:func:`~skdp.mechanisms._additive.additive_release`): each released
    cell is the rounded image of an exact random variable whose support
    does not depend on the data. ε-DP (or (ε, δ)-DP) under add/remove-one-
    row neighbours of the test set; the model is public here (a release of
    its own fit). With ``groups``, a group of at most ``k`` kept rows adds
    at most ``k`` to the cells (L1 and L2 ``k``, attained when its rows
    share a cell): the noise is ``k`` times the row's.

    **Labels.** ``labels`` is public; a label of ``y_true`` or ``y_pred``
    outside it is refused before the charge (an input error, as a NaN is).
    On Dask such a row, or one with a missing value, counts in no cell
    (a per-row rule applied after the charge).

    Examples
    --------
    >>> from skdp import BudgetAccountant
    >>> from skdp.metrics import private_confusion_matrix
    >>> y_true = [0] * 600 + [1] * 400
    >>> y_pred = [0] * 500 + [1] * 100 + [1] * 400
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> cm = private_confusion_matrix(y_true, y_pred, labels=[0, 1],
    ...                               accountant=acc, random_state=0)
    >>> round(cm.accuracy().value, 2), acc.total()
    (0.9, (1.0, 0.0))
    """
    caller = "private_confusion_matrix"
    labels = check_labels(labels, caller)
    unit = metric_unit(caller, groups, max_rows_per_group, y_true)
    k = float(unit.unit_rows)
    plan = ReleasePlan(labels.size**2, k, k, epsilon, delta, random_state, unit)
    if is_dask_pair(y_true, y_pred):
        check_dask_labels(labels, caller)
        rows = paired_rows(y_true, y_pred)
    else:
        rows, codes = label_rows(y_true, y_pred, labels, caller)
    plan.charge(accountant, f"{caller}: {labels.size}x{labels.size} cells")
    if unit.groups is not None:  # in memory: Dask is refused with groups
        rows = rows[plan.kept(codes)]
    exact = row_statistic(rows, _tables.contingency_counts, labels)
    return PrivateConfusionMatrix(plan.release(exact), labels, plan.variance)


def private_accuracy_score(
    y_true,
    y_pred,
    *,
    labels,
    epsilon=1.0,
    delta=0.0,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """Accuracy from a private confusion matrix.

    Parameters
    ----------
    y_true, y_pred, labels, epsilon, delta, accountant, random_state
        As for :func:`private_confusion_matrix`.
    groups, max_rows_per_group
        As for :func:`private_confusion_matrix` (one whole group as the unit).

    Returns
    -------
    accuracy : PrivateEstimate
        ``(value, std_error)``; see :class:`PrivateConfusionMatrix`.

    Notes
    -----
    One release of the confusion matrix (sensitivity 1: see
    :func:`private_confusion_matrix`), then the diagonal over the total of
    the cells with negative values set to 0 (post-processing).

    Examples
    --------
    >>> from skdp.metrics import private_accuracy_score
    >>> y_true = [0] * 600 + [1] * 400
    >>> y_pred = [0] * 500 + [1] * 500
    >>> est = private_accuracy_score(y_true, y_pred, labels=[0, 1],
    ...                              epsilon=1.0, random_state=0)
    >>> round(est.value, 2), est.std_error < 0.01
    (0.9, True)
    """
    return private_confusion_matrix(
        y_true,
        y_pred,
        labels=labels,
        epsilon=epsilon,
        delta=delta,
        groups=groups,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    ).accuracy()


def private_balanced_accuracy_score(
    y_true,
    y_pred,
    *,
    labels,
    epsilon=1.0,
    delta=0.0,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """Balanced accuracy (mean per-class recall) from a private confusion matrix.

    Parameters
    ----------
    y_true, y_pred, labels, epsilon, delta, accountant, random_state
        As for :func:`private_confusion_matrix`.
    groups, max_rows_per_group
        As for :func:`private_confusion_matrix` (one whole group as the unit).

    Returns
    -------
    balanced_accuracy : PrivateEstimate

    Notes
    -----
    Post-processing of one release of sensitivity 1
    (:func:`private_confusion_matrix`); the classes whose released support
    is not positive are left out of the mean.

    Examples
    --------
    >>> from skdp.metrics import private_balanced_accuracy_score
    >>> y_true = [0] * 800 + [1] * 200
    >>> y_pred = [0] * 800 + [0] * 100 + [1] * 100
    >>> est = private_balanced_accuracy_score(y_true, y_pred, labels=[0, 1],
    ...                                       random_state=0)
    >>> round(est.value, 2)
    0.75
    """
    return private_confusion_matrix(
        y_true,
        y_pred,
        labels=labels,
        epsilon=epsilon,
        delta=delta,
        groups=groups,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    ).balanced_accuracy()


def private_precision_recall_fscore_support(
    y_true,
    y_pred,
    *,
    labels,
    average=None,
    pos_label=1,
    epsilon=1.0,
    delta=0.0,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """Precision, recall, F1 and support from a private confusion matrix.

    Parameters
    ----------
    y_true, y_pred, labels, epsilon, delta, accountant, random_state
        As for :func:`private_confusion_matrix`.
    groups, max_rows_per_group
        As for :func:`private_confusion_matrix` (one whole group as the unit).
    average : {None, "binary", "micro", "macro", "weighted"}, default=None
        As in :func:`sklearn.metrics.precision_recall_fscore_support`.
    pos_label : scalar, default=1
        The positive label for ``average="binary"``.

    Returns
    -------
    precision, recall, fscore, support : PrivateEstimate

    Notes
    -----
    Post-processing of one release of sensitivity 1
    (:func:`private_confusion_matrix`).

    Examples
    --------
    >>> from skdp.metrics import private_precision_recall_fscore_support
    >>> y_true = [0] * 500 + [1] * 500
    >>> y_pred = [0] * 400 + [1] * 600
    >>> p, r, f, s = private_precision_recall_fscore_support(
    ...     y_true, y_pred, labels=[0, 1], random_state=0)
    >>> p.value.round(2), r.value.round(2)
    (array([1.  , 0.83]), array([0.8, 1. ]))
    """
    labels = check_labels(labels, "private_precision_recall_fscore_support")
    check_average(average, pos_label, labels)
    return private_confusion_matrix(
        y_true,
        y_pred,
        labels=labels,
        epsilon=epsilon,
        delta=delta,
        groups=groups,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    ).precision_recall_fscore_support(average=average, pos_label=pos_label)


def _one_score(index, y_true, y_pred, labels, average, pos_label, **budget):
    return private_precision_recall_fscore_support(
        y_true, y_pred, labels=labels, average=average, pos_label=pos_label, **budget
    )[index]


def private_precision_score(
    y_true,
    y_pred,
    *,
    labels,
    average="binary",
    pos_label=1,
    epsilon=1.0,
    delta=0.0,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """Precision from a private confusion matrix.

    Parameters
    ----------
    y_true, y_pred, labels, epsilon, delta, accountant, random_state
        As for :func:`private_confusion_matrix`.
    groups, max_rows_per_group
        As for :func:`private_confusion_matrix` (one whole group as the unit).
    average : {None, "binary", "micro", "macro", "weighted"}, default="binary"
        As in :func:`sklearn.metrics.precision_score`.
    pos_label : scalar, default=1

    Returns
    -------
    precision : PrivateEstimate

    Notes
    -----
    Post-processing of one release of sensitivity 1
    (:func:`private_confusion_matrix`).

    Examples
    --------
    >>> from skdp.metrics import private_precision_score
    >>> y_true = [0] * 500 + [1] * 500
    >>> y_pred = [0] * 400 + [1] * 600
    >>> round(private_precision_score(y_true, y_pred, labels=[0, 1],
    ...                               random_state=0).value, 2)
    0.83
    """
    return _one_score(
        0,
        y_true,
        y_pred,
        labels,
        average,
        pos_label,
        epsilon=epsilon,
        delta=delta,
        groups=groups,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    )


def private_recall_score(
    y_true,
    y_pred,
    *,
    labels,
    average="binary",
    pos_label=1,
    epsilon=1.0,
    delta=0.0,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """Recall from a private confusion matrix.

    Parameters
    ----------
    y_true, y_pred, labels, epsilon, delta, accountant, random_state
        As for :func:`private_confusion_matrix`.
    groups, max_rows_per_group
        As for :func:`private_confusion_matrix` (one whole group as the unit).
    average : {None, "binary", "micro", "macro", "weighted"}, default="binary"
    pos_label : scalar, default=1

    Returns
    -------
    recall : PrivateEstimate

    Notes
    -----
    Post-processing of one release of sensitivity 1
    (:func:`private_confusion_matrix`).

    Examples
    --------
    >>> from skdp.metrics import private_recall_score
    >>> y_true = [0] * 500 + [1] * 500
    >>> y_pred = [0] * 400 + [1] * 600
    >>> round(private_recall_score(y_true, y_pred, labels=[0, 1],
    ...                            random_state=0).value, 2)
    1.0
    """
    return _one_score(
        1,
        y_true,
        y_pred,
        labels,
        average,
        pos_label,
        epsilon=epsilon,
        delta=delta,
        groups=groups,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    )


def private_f1_score(
    y_true,
    y_pred,
    *,
    labels,
    average="binary",
    pos_label=1,
    epsilon=1.0,
    delta=0.0,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """F1 score from a private confusion matrix.

    Parameters
    ----------
    y_true, y_pred, labels, epsilon, delta, accountant, random_state
        As for :func:`private_confusion_matrix`.
    groups, max_rows_per_group
        As for :func:`private_confusion_matrix` (one whole group as the unit).
    average : {None, "binary", "micro", "macro", "weighted"}, default="binary"
    pos_label : scalar, default=1

    Returns
    -------
    f1 : PrivateEstimate

    Notes
    -----
    ``2 TP / (2 TP + FP + FN)`` per class from one release of sensitivity 1
    (:func:`private_confusion_matrix`), post-processing.

    Examples
    --------
    >>> from skdp.metrics import private_f1_score
    >>> y_true = [0] * 500 + [1] * 500
    >>> y_pred = [0] * 400 + [1] * 600
    >>> round(private_f1_score(y_true, y_pred, labels=[0, 1],
    ...                        random_state=0).value, 2)
    0.91
    """
    return _one_score(
        2,
        y_true,
        y_pred,
        labels,
        average,
        pos_label,
        epsilon=epsilon,
        delta=delta,
        groups=groups,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    )
