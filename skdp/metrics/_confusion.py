"""The released confusion matrix and the metrics read from it."""

import numpy as np

from skdp.metrics._release import PrivateEstimate, noise_std_error

__all__ = ["PrivateConfusionMatrix"]

_AVERAGES = (None, "binary", "micro", "macro", "weighted")


def _divide(numerator, denominator):
    """``numerator / denominator``, 0 where the denominator is not positive
    (scikit-learn's ``zero_division`` value by default), without a warning."""
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def _cells(flat, k):
    """The released cells as a ``(..., k, k)`` table, negative counts set to 0."""
    flat = np.asarray(flat, dtype=float)
    return np.maximum(flat, 0.0).reshape((*flat.shape[:-1], k, k))


def _margins(table):
    diagonal = np.diagonal(table, axis1=-2, axis2=-1)
    return diagonal, table.sum(axis=-1), table.sum(axis=-2)


def accuracy_of(flat, k):
    """Accuracy from released cells: the diagonal over the total."""
    table = _cells(flat, k)
    diagonal = np.diagonal(table, axis1=-2, axis2=-1).sum(axis=-1)
    return _divide(diagonal, table.sum(axis=(-2, -1)))


def balanced_accuracy_of(flat, k):
    """Mean recall over the classes whose released support is positive."""
    diagonal, support, _ = _margins(_cells(flat, k))
    present = support > 0
    recalls = _divide(diagonal, support)
    return _divide((recalls * present).sum(axis=-1), present.sum(axis=-1))


def per_class_of(flat, k):
    """Precision, recall, F1 and support per class, stacked: ``(..., 4, k)``."""
    diagonal, support, predicted = _margins(_cells(flat, k))
    precision = _divide(diagonal, predicted)
    recall = _divide(diagonal, support)
    f1 = _divide(2 * diagonal, support + predicted)
    return np.stack([precision, recall, f1, support], axis=-2)


def averaged_of(flat, k, average, positive):
    """Precision, recall, F1 and support averaged as scikit-learn averages."""
    scores = per_class_of(flat, k)
    support = scores[..., 3, :]
    total = support.sum(axis=-1)
    if average is None:
        return scores
    if average == "binary":
        return scores[..., positive]
    if average == "micro":
        accuracy = accuracy_of(flat, k)
        return np.stack([accuracy, accuracy, accuracy, total], axis=-1)
    if average == "macro":
        means = scores[..., :3, :].mean(axis=-1)
    else:  # weighted by the released supports
        weights = _divide(support, total[..., None])
        means = (scores[..., :3, :] * weights[..., None, :]).sum(axis=-1)
    return np.concatenate([means, total[..., None]], axis=-1)


class PrivateConfusionMatrix:
    """A confusion matrix released with noise, and the metrics it gives.

    Made by :func:`~skdp.metrics.private_confusion_matrix` (which charges);
    everything here is post-processing of the released cells, free of
    charge: one release can give every classification metric.

    Parameters
    ----------
    counts : array-like of shape (n_labels * n_labels,)
        The released cells, row-major.
    labels : array-like of shape (n_labels,)
        The public labels.
    noise_variance : float
        The public variance of each cell's noise.

    Attributes
    ----------
    counts : ndarray of shape (n_labels, n_labels)
        The released cells (unbiased: may be negative or fractional). Row
        ``i`` is the true label ``labels[i]``, column ``j`` the predicted one.
    labels : ndarray of shape (n_labels,)
        The public labels, in the caller's order.
    noise_std : float
        Standard deviation of each cell's noise (public).

    Notes
    -----
    **Post-processing rule.** Every metric reads the cells with negative
    values set to 0 (a rule on released values only); a ratio whose
    denominator is then 0 is 0, as scikit-learn's ``zero_division``
    default gives. Balanced accuracy averages the recalls of the classes
    whose released support is positive (scikit-learn drops the classes
    absent from ``y_true``). The ``std_error`` of each
    :class:`~skdp.metrics.PrivateEstimate` is the delta-method standard
    deviation of the noise's effect at the released cells
    (:func:`~skdp.metrics._release.noise_std_error`).

    Examples
    --------
    >>> from skdp.metrics import private_confusion_matrix
    >>> cm = private_confusion_matrix([0] * 500 + [1] * 500,
    ...                               [0] * 450 + [1] * 550, labels=[0, 1],
    ...                               random_state=0)
    >>> cm.confusion_matrix().value.round(-1)
    array([[450.,  50.],
           [  0., 500.]])
    >>> round(cm.balanced_accuracy().value, 2)
    0.95
    """

    def __init__(self, counts, labels, noise_variance):
        self.labels = np.asarray(labels)
        k = self.labels.size
        self.counts = np.asarray(counts, dtype=float).reshape(k, k)
        self.noise_std = float(np.sqrt(noise_variance))
        self._variance = float(noise_variance)

    def __repr__(self):
        return (
            f"PrivateConfusionMatrix(labels={self.labels.tolist()!r}, "
            f"noise_std={self.noise_std:.3g})"
        )

    def _estimate(self, statistic):
        flat = self.counts.ravel()
        value = statistic(flat)
        value = float(value) if np.ndim(value) == 0 else value
        return PrivateEstimate(value, noise_std_error(statistic, flat, self._variance))

    def confusion_matrix(self):
        """The released cells with negative counts set to 0.

        Returns
        -------
        matrix : PrivateEstimate
            Arrays of shape ``(n_labels, n_labels)``; the error bar is the
            noise's standard deviation (0 where a cell is clamped far
            below 0).
        """
        k = self.labels.size
        estimate = self._estimate(lambda flat: _cells(flat, k).reshape(flat.shape))
        return PrivateEstimate(
            estimate.value.reshape(k, k), estimate.std_error.reshape(k, k)
        )

    def accuracy(self):
        """Fraction of rows on the diagonal.

        Returns
        -------
        estimate : PrivateEstimate
        """
        k = self.labels.size
        return self._estimate(lambda flat: accuracy_of(flat, k))

    def balanced_accuracy(self):
        """Mean per-class recall.

        Returns
        -------
        estimate : PrivateEstimate
        """
        k = self.labels.size
        return self._estimate(lambda flat: balanced_accuracy_of(flat, k))

    def precision_recall_fscore_support(self, *, average=None, pos_label=1):
        """Precision, recall, F1 and support, per class or averaged.

        Parameters
        ----------
        average : {None, "binary", "micro", "macro", "weighted"}, default=None
            As in :func:`sklearn.metrics.precision_recall_fscore_support`
            (``"weighted"`` weighs by the released supports).
        pos_label : scalar, default=1
            The positive label of ``average="binary"`` (two labels only).

        Returns
        -------
        precision, recall, fscore, support : PrivateEstimate
            Arrays of shape ``(n_labels,)`` for ``average=None``, floats
            otherwise (``support`` is then the released total for the
            averages, the positive class's for ``"binary"``).
        """
        k = self.labels.size
        positive = check_average(average, pos_label, self.labels)
        joint = self._estimate(lambda flat: averaged_of(flat, k, average, positive))
        value, error = np.asarray(joint.value), np.asarray(joint.std_error)
        axis = -2 if average is None else -1
        return tuple(
            PrivateEstimate(_scalar(v), _scalar(e))
            for v, e in zip(
                np.moveaxis(value, axis, 0), np.moveaxis(error, axis, 0), strict=True
            )
        )

    def report(self):
        """Every metric of the matrix, as a dict (scikit-learn's
        ``classification_report(output_dict=True)`` layout, plus
        ``"balanced accuracy"``), each a :class:`~skdp.metrics.PrivateEstimate`.

        Returns
        -------
        report : dict
        """
        names = ("precision", "recall", "f1-score", "support")
        per_class = self.precision_recall_fscore_support(average=None)
        report = {
            str(label): {
                name: PrivateEstimate(float(est.value[i]), float(est.std_error[i]))
                for name, est in zip(names, per_class, strict=True)
            }
            for i, label in enumerate(self.labels)
        }
        report["accuracy"] = self.accuracy()
        report["balanced accuracy"] = self.balanced_accuracy()
        for average in ("macro", "weighted"):
            scores = self.precision_recall_fscore_support(average=average)
            report[f"{average} avg"] = dict(zip(names, scores, strict=True))
        return report


def _scalar(value):
    return float(value) if np.ndim(value) == 0 else value


def check_average(average, pos_label, labels):
    """The index of the positive label for ``average="binary"`` (else None);
    refuses an unknown ``average`` or a binary average over other than two
    labels, before any charge."""
    if average not in _AVERAGES:
        raise ValueError(
            f"average must be one of {_AVERAGES}; got {average!r}. Nothing was charged."
        )
    if average != "binary":
        return None
    where = np.flatnonzero(np.asarray(labels) == pos_label)
    if labels.size != 2 or where.size != 1:
        raise ValueError(
            f"average='binary' needs exactly two labels, pos_label={pos_label!r} "
            f"among them; got labels={labels.tolist()!r}. Pass average='macro', "
            "'micro' or 'weighted' (or None) for more labels, or the right "
            "pos_label. Nothing was charged."
        )
    return int(where[0])
