"""The released score histograms and the ranking metrics read from them."""

import numpy as np

from skdp.metrics._release import PrivateEstimate, noise_std_error

__all__ = ["PrivateScoreHistograms"]


def _split(flat, n_bins):
    flat = np.asarray(flat, dtype=float)
    return flat[..., :n_bins], flat[..., n_bins:]


def _divide(numerator, denominator, empty=0.0):
    out = np.full(np.broadcast(numerator, denominator).shape, float(empty))
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def roc_auc_of(flat, n_bins):
    """Mann–Whitney AUC from the raw released histograms (ties in a bin: 1/2).

    The statistic is bilinear in the counts, so the raw (unbiased) counts
    enter it unclamped; the AUC is then clipped to [0, 1], and is 1/2 when
    a released class total is not positive (public rules).
    """
    negative, positive = _split(flat, n_bins)
    below = np.cumsum(negative, axis=-1) - negative
    pairs = (positive * (below + negative / 2)).sum(axis=-1)
    total = positive.sum(axis=-1) * negative.sum(axis=-1)
    valid = (positive.sum(axis=-1) > 0) & (negative.sum(axis=-1) > 0)
    return np.clip(np.where(valid, _divide(pairs, total * valid), 0.5), 0.0, 1.0)


def _from_top(counts):
    """Rows scored in the top ``j + 1`` bins, for every ``j``: cumulative
    sums from the highest bin, made non-negative and non-decreasing by a
    running maximum (a rule on released values)."""
    cumulative = np.maximum(np.cumsum(counts[..., ::-1], axis=-1), 0.0)
    return np.maximum.accumulate(cumulative, axis=-1)


def roc_points_of(flat, n_bins):
    """``(fpr, tpr)`` at every bin's lower edge, from the top, after (0, 0)."""
    negative, positive = _split(flat, n_bins)
    fps, tps = _from_top(negative), _from_top(positive)
    fpr = _divide(fps, fps[..., -1:])
    tpr = _divide(tps, tps[..., -1:])
    zero = np.zeros((*fpr.shape[:-1], 1))
    return np.stack(
        [np.concatenate([zero, fpr], -1), np.concatenate([zero, tpr], -1)], -2
    )


def precision_recall_of(flat, n_bins):
    """``(precision, recall)`` at every bin's lower edge, from the top."""
    negative, positive = _split(flat, n_bins)
    fps, tps = _from_top(negative), _from_top(positive)
    precision = _divide(tps, tps + fps, empty=1.0)
    recall = _divide(tps, tps[..., -1:])
    return np.stack([precision, recall], -2)


def average_precision_of(flat, n_bins):
    """``Σ_j (R_j - R_{j-1}) P_j`` over the thresholds from the top."""
    precision, recall = np.moveaxis(precision_recall_of(flat, n_bins), -2, 0)
    steps = np.diff(recall, axis=-1, prepend=0.0)
    return (steps * precision).sum(axis=-1)


def calibration_of(flat, n_bins, n_groups, centres):
    """Fraction of positives, mean score and released total per group of
    ``n_bins / n_groups`` adjacent bins.

    The raw counts are summed over each group (their noise averages out;
    clamping each bin at 0 would add the positive part of every empty bin's
    noise), then the fraction is clipped to [0, 1] and the mean score to
    the group's range.
    """
    negative, positive = _split(flat, n_bins)
    shape = (*negative.shape[:-1], n_groups, n_bins // n_groups)
    both = (negative + positive).reshape(shape)
    total = both.sum(axis=-1)
    fraction = np.clip(_divide(positive.reshape(shape).sum(axis=-1), total), 0, 1)
    grouped = centres.reshape(n_groups, -1)
    mean_score = _divide((both * grouped).sum(axis=-1), total)
    mean_score = np.clip(mean_score, grouped[:, 0], grouped[:, -1])
    return np.stack([fraction, mean_score, total], -2)


class PrivateScoreHistograms:
    """Per-class histograms of the scores, released with noise, and the
    ranking metrics they give.

    Made by :func:`~skdp.metrics.private_score_histograms` (which charges);
    everything here is post-processing, free of charge.

    Parameters
    ----------
    counts : array-like of shape (2 * n_bins,)
        The released histograms: the negatives', then the positives'.
    bin_edges : array-like of shape (n_bins + 1,)
        The public edges.
    noise_variance : float
        The public variance of each count's noise.

    Attributes
    ----------
    negative_counts, positive_counts : ndarray of shape (n_bins,)
        The released histograms (unbiased: may be negative or fractional).
    bin_edges : ndarray of shape (n_bins + 1,)
        The public edges.
    noise_std : float
        Standard deviation of each count's noise (public).

    Notes
    -----
    **Post-processing rules** (released values only). The AUC is the
    Mann–Whitney statistic of the raw counts, pairs in one bin counting 1/2;
    it is bilinear in the counts, so the raw counts enter unclamped (their
    noise averages out), the result is clipped to [0, 1] and is 1/2 when a
    released class total is not positive. The curves count the rows above
    each bin's lower edge by cumulative sums from the top bin, made
    non-negative and non-decreasing by a running maximum; ratios with a
    zero denominator are 0 (a precision with nothing predicted positive
    is 1, scikit-learn's end point). Calibration sums the raw counts of
    each group of bins, keeps the groups whose released total is at least
    1/2, and clips the fractions to [0, 1] and the mean scores to the
    group's bin centres. Binning: scores in one bin are tied, so the
    metrics are those of the scores rounded to their bins (exactly
    scikit-learn's when the scores are constant on the bins).

    Examples
    --------
    >>> from skdp.metrics import private_score_histograms
    >>> hist = private_score_histograms([0] * 500 + [1] * 500,
    ...                                 [0.2] * 450 + [0.8] * 550, bins=10,
    ...                                 random_state=0)
    >>> round(hist.roc_auc().value, 2), round(hist.average_precision().value, 1)
    (0.95, 0.9)
    """

    def __init__(self, counts, bin_edges, noise_variance):
        self.bin_edges = np.asarray(bin_edges, dtype=float)
        self._n_bins = self.bin_edges.size - 1
        self._flat = np.asarray(counts, dtype=float)
        self.negative_counts, self.positive_counts = _split(self._flat, self._n_bins)
        self.noise_std = float(np.sqrt(noise_variance))
        self._variance = float(noise_variance)

    def __repr__(self):
        return (
            f"PrivateScoreHistograms(n_bins={self._n_bins}, "
            f"noise_std={self.noise_std:.3g})"
        )

    def _estimate(self, statistic):
        value = statistic(self._flat)
        error = noise_std_error(statistic, self._flat, self._variance)
        return PrivateEstimate(float(value) if np.ndim(value) == 0 else value, error)

    def roc_auc(self):
        """Area under the ROC curve (Mann–Whitney, ties in a bin count 1/2).

        Returns
        -------
        auc : PrivateEstimate
        """
        return self._estimate(lambda flat: roc_auc_of(flat, self._n_bins))

    def roc_curve(self):
        """False and true positive rates at every bin's lower edge.

        Returns
        -------
        fpr, tpr : PrivateEstimate
            Arrays of shape ``(n_bins + 1,)``, from the top: the first point
            is (0, 0), the last (1, 1).
        thresholds : ndarray of shape (n_bins + 1,)
            ``inf``, then the bins' lower edges, decreasing (public).
        """
        points = self._estimate(lambda flat: roc_points_of(flat, self._n_bins))
        fpr, tpr = (PrivateEstimate(v, e) for v, e in zip(*points, strict=True))
        thresholds = np.concatenate([[np.inf], self.bin_edges[-2::-1]])
        return fpr, tpr, thresholds

    def precision_recall_curve(self):
        """Precision and recall at every bin's lower edge, in scikit-learn's
        order (thresholds increasing, then the end point (1, 0)).

        Returns
        -------
        precision, recall : PrivateEstimate
            Arrays of shape ``(n_bins + 1,)``.
        thresholds : ndarray of shape (n_bins,)
            The bins' lower edges, increasing (public).
        """

        def statistic(flat):
            curve = precision_recall_of(flat, self._n_bins)[..., ::-1]
            end = np.broadcast_to(np.array([1.0, 0.0])[:, None], (*curve.shape[:-1], 1))
            return np.concatenate([curve, end], -1)

        points = self._estimate(statistic)
        precision, recall = (
            PrivateEstimate(v, e) for v, e in zip(*points, strict=True)
        )
        return precision, recall, self.bin_edges[:-1].copy()

    def average_precision(self):
        """Average precision: ``Σ (R_j - R_{j-1}) P_j`` over the thresholds.

        Returns
        -------
        average_precision : PrivateEstimate
        """
        return self._estimate(lambda flat: average_precision_of(flat, self._n_bins))

    def calibration_curve(self, n_groups=5):
        """Fraction of positives against the mean score, on ``n_groups``
        equal groups of adjacent bins (scikit-learn's ``n_bins``).

        Parameters
        ----------
        n_groups : int, default=5
            Must divide the number of bins (public).

        Returns
        -------
        prob_true, prob_pred : PrivateEstimate
            For the groups whose released total is at least 1/2 (a rule on
            released values); the mean score of a group is that of its bins'
            centres, weighted by their released counts.
        """
        n_groups = int(n_groups)
        if n_groups < 1 or self._n_bins % n_groups:
            raise ValueError(
                f"n_groups={n_groups} must divide the {self._n_bins} bins of the "
                "release: choose bins as a multiple of the calibration groups."
            )
        centres = (self.bin_edges[:-1] + self.bin_edges[1:]) / 2

        def statistic(flat):
            return calibration_of(flat, self._n_bins, n_groups, centres)

        curve = self._estimate(statistic)
        keep = curve.value[2] >= 0.5
        return tuple(
            PrivateEstimate(curve.value[i][keep], curve.std_error[i][keep])
            for i in (0, 1)
        )
