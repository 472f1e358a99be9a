"""Exact (Clopper–Pearson) confidence bounds for a proportion."""

import numpy as np
from scipy import stats

__all__ = ["clopper_pearson_interval"]


# --------------------------------------------------------------------------
# Clopper–Pearson bounds
# --------------------------------------------------------------------------
def _cp_lower(k, n, level):
    """One-sided Clopper–Pearson lower bound: P[p < bound] <= level."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    safe_k = np.where(k > 0, k, 1.0)
    bound = stats.beta.ppf(level, safe_k, n - safe_k + 1.0)
    return np.where(k > 0, bound, 0.0)


def _cp_upper(k, n, level):
    """One-sided Clopper–Pearson upper bound: P[p > bound] <= level."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    safe_k = np.where(k < n, k, n - 1.0)
    bound = stats.beta.isf(level, safe_k + 1.0, n - safe_k)
    return np.where(k < n, bound, 1.0)


def clopper_pearson_interval(k, n, *, confidence_level=0.95):
    """Exact two-sided Clopper–Pearson confidence interval for a proportion.

    Parameters
    ----------
    k : int
        Number of successes, ``0 <= k <= n``.
    n : int
        Number of trials, ``n >= 1``.
    confidence_level : float, default=0.95
        Coverage of the interval; each tail has probability
        ``(1 - confidence_level) / 2``.

    Returns
    -------
    low, high : float
        The interval; equals
        ``scipy.stats.binomtest(k, n).proportion_ci(confidence_level,
        method='exact')``.

    Examples
    --------
    >>> from skdp.audit import clopper_pearson_interval
    >>> low, high = clopper_pearson_interval(5, 10)
    >>> round(low, 4), round(high, 4)
    (0.1871, 0.8129)
    """
    k, n = int(k), int(n)
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1; got k={k}, n={n}.")
    if not 0.0 < confidence_level < 1.0:
        raise ValueError(f"confidence_level must be in (0, 1); got {confidence_level}.")
    tail = (1.0 - confidence_level) / 2.0
    return float(_cp_lower(k, n, tail)), float(_cp_upper(k, n, tail))
