"""Rules on PrivateGaussianNB's released values (post-processing, free)."""

import numpy as np

__all__ = ["class_mean_noise", "share_unresolved_variances"]


def share_unresolved_variances(counts, variances, noise_floor):
    """Give every class the pooled variance of a feature whose variance some
    class does not resolve (post-processing of released values only).

    Parameters
    ----------
    counts : ndarray of shape (n_classes,)
        Released class counts (at least 1).
    variances : ndarray of shape (n_classes, n_features)
        Released class variances (clipped to ``[0, ((U - L)/2)²]``).
    noise_floor : ndarray of shape (n_classes, n_features)
        The noise level of each variance (public: from the noise scale, the
        released bounds and the released counts).

    Returns
    -------
    variances : ndarray of shape (n_classes, n_features)
        At least the noise floor. Where some class's released variance is at
        or below its floor, every class gets the count-weighted mean of the
        floored variances (one shared variance, as in linear discriminant
        analysis): a difference of variances that the noise decides would
        otherwise add ``log(var_1 / var_0) / 2`` per feature to the log-odds.
    unresolved : ndarray of bool, shape (n_features,)
        The features that get a shared variance.
    """
    with np.errstate(all="ignore"):  # post-processing: nothing may warn
        floored = np.maximum(variances, noise_floor)
        unresolved = np.any(~(variances > noise_floor), axis=0)
        weights = (counts / counts.sum())[:, None]
        shared = (weights * floored).sum(axis=0)
    return np.where(unresolved, shared, floored), unresolved


def class_mean_noise(half_width, noise_std, counts):
    """Public noise standard deviation of each released class mean, in data
    units, for the smallest class: ``max_k 2 r noise_std / count_k`` per
    feature, ``r = (U - L)/2`` (about that of :func:`moments_from_sums`'s
    mean, ``centre + r (2 m_a - 1)`` with ``m_a`` a noisy sum over the
    count). A function of the released bounds and counts and the public
    noise level; ``r`` multiplies last so that it overflows only where the
    result exceeds the largest double.
    """
    with np.errstate(over="ignore"):
        return half_width * (2 * noise_std / np.min(counts))
