"""Every classification metric from one private confusion matrix."""

from skdp.metrics._classification import private_confusion_matrix

__all__ = ["private_classification_report"]


def private_classification_report(
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
    """Every classification metric from one private confusion matrix (one charge).

    Parameters
    ----------
    y_true, y_pred, labels, epsilon, delta, accountant, random_state
        As for :func:`private_confusion_matrix`.
    groups, max_rows_per_group
        As for :func:`private_confusion_matrix` (one whole group as the unit).

    Returns
    -------
    report : dict
        scikit-learn's ``classification_report(..., output_dict=True)``
        layout (per label, ``"accuracy"``, ``"macro avg"``,
        ``"weighted avg"``) plus ``"balanced accuracy"``; every value a
        :class:`PrivateEstimate`.

    Notes
    -----
    One release of sensitivity 1 (:func:`private_confusion_matrix`); all
    the metrics are post-processing of it, so the whole report costs ε (and
    δ) once.

    Examples
    --------
    >>> from skdp import BudgetAccountant
    >>> from skdp.metrics import private_classification_report
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> report = private_classification_report(
    ...     [0] * 500 + [1] * 500, [0] * 400 + [1] * 600, labels=[0, 1],
    ...     accountant=acc, random_state=0)
    >>> round(report["accuracy"].value, 2), round(report["1"]["recall"].value, 2)
    (0.9, 1.0)
    >>> acc.total()
    (1.0, 0.0)
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
    ).report()
