"""The data pass and the release of the SVT bound search, split for chunks.

:func:`svt_bounds_statistic` reads the data once, in blocks, into per-bin
tallies over the public grid (integers that add over chunks of rows);
:func:`release_svt_bounds` runs the sign test and the AboveThreshold searches
on the reduced tallies. :func:`run_svt_bounds` is the two in a row. The plan
and the estimator are in :mod:`skdp.preprocessing._svt_clip`.
"""

import numpy as np

from skdp.mechanisms import above_threshold, laplace_mechanism
from skdp.sensitivity._soft_counts import (
    LOOKUP_MIN_ROWS,
    GridTally,
    sign_counts_from_tally,
    soft_count_layout,
    soft_counts_from_tally,
    tally_columns,
)

__all__ = [
    "bounds_layouts",
    "release_svt_bounds",
    "run_svt_bounds",
    "svt_bounds_statistic",
]

# With lower=None: the sign test's threshold in noise scales
# (SVTClipSelector, Notes).
_SIGN_SCALES = 3.0


def _svt_upper_bound(soft_counts, candidates, n_above, epsilon, share, source):
    """AboveThreshold over candidate upper bounds; returns the chosen bound.

    Query j is ``-q_j`` with ``q_j = soft_counts[j]`` the soft count of rows
    above ``candidates[j]`` (ramping up to ``candidates[j+1]``); it fires once
    at most about ``n_above`` rows lie above, and the bound returned is
    ``candidates[j + 1]``, above which at most ``q_j`` rows lie. No hit: the
    largest candidate (data-independent).
    """
    hit = above_threshold(
        -soft_counts,
        -n_above,
        epsilon,
        sensitivity=1.0,
        monotonic=True,
        threshold_share=share,
        random_state=source,
    )
    return candidates[-1] if hit is None else candidates[hit + 1]


def _sign_counts(statistic):
    """Counts of negative, then of positive values per feature: shape (2d,).

    Read from the two-sided tally (:func:`svt_bounds_statistic`). Under
    add/remove one row adds or removes 1 in at most one of the two counts of
    each feature (a value is negative, positive or 0), so the vector has L1
    sensitivity d (brute-forced in the tests).
    """
    negatives, positives = sign_counts_from_tally(statistic)
    return np.concatenate([negatives, positives]).astype(float)


def _searched_sides(noisy_counts, n_features, epsilon_sign):
    """Post-processing of the noisy sign counts: ``(search_lower, search_upper)``.

    A side is searched when its noisy count exceeds ``_SIGN_SCALES`` noise
    scales ``n_features / epsilon_sign``; if neither does, the upper side is.
    Works row-wise on an array of shape (..., 2d).
    """
    noisy = np.asarray(noisy_counts, dtype=float)
    cutoff = _SIGN_SCALES * n_features / epsilon_sign
    negatives = noisy[..., :n_features] > cutoff
    positives = noisy[..., n_features:] > cutoff
    return negatives, positives | ~negatives


def _sign_test(statistic, plan, source):
    """Per feature, which sides to search: the noisy sign counts (Laplace of
    scale ``d / epsilon_sign``, ε_sign-DP), post-processed."""
    n_features = statistic.counts.shape[0]
    noisy = laplace_mechanism(
        _sign_counts(statistic),
        float(n_features),
        plan.epsilon_sign,
        random_state=source,
    )
    return _searched_sides(noisy, n_features, plan.epsilon_sign)


def bounds_layouts(plan, n_features, *, lookup=True):
    """``[(columns, layout), ...]``: the public binning of every feature.

    Two-sided (origin 0), one layout of the widths serves both sides of every
    feature; one-sided, features with the same public origin share the layout
    of their candidates ``origin + widths``. ``lookup`` as in
    :func:`skdp.sensitivity._soft_counts.soft_count_layout`.
    """
    if plan.two_sided:  # candidates 0 + w and -0 + w: the widths themselves
        layout = soft_count_layout(plan.widths, two_sided=True, lookup=lookup)
        return [(None, layout)]
    origins, group = np.unique(plan.origin[:n_features], return_inverse=True)
    return [
        (
            None if origins.size == 1 else np.flatnonzero(group == g),
            soft_count_layout(origin + plan.widths, origin=origin, lookup=lookup),
        )
        for g, origin in enumerate(origins)
    ]


def svt_bounds_statistic(X, plan, layouts=None):
    """The data's statistic for the bound search: per-feature bin tallies.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite data, or one chunk of the rows.
    plan : SVTBoundsPlan
        From :func:`plan_svt_bounds`.
    layouts : list or None, default=None
        From :func:`bounds_layouts`, to build them once for many chunks.

    Returns
    -------
    statistic : GridTally of shape (n_features, n_bins)
        Counts and rounded ramp sums per bin of the public grid (and the sign
        counts, two-sided). The statistic of a union of chunks is the sum
        ``a + b`` of theirs (exact integers), so
        ``release_svt_bounds(sum of chunks' statistics)`` is the same release
        as on the whole data.
    """
    n_samples, n_features = X.shape
    if layouts is None:
        lookup = n_samples >= LOOKUP_MIN_ROWS
        layouts = bounds_layouts(plan, n_features, lookup=lookup)
    n_bins = layouts[0][1].n_bins
    counts = np.zeros((n_features, n_bins), dtype=np.int64)
    units = np.zeros((n_features, n_bins), dtype=np.int64)
    for columns, layout in layouts:
        tally = tally_columns(X, layout, columns)
        where = slice(None) if columns is None else columns
        counts[where], units[where] = tally.counts, tally.units
    return GridTally(counts, units)


def release_svt_bounds(statistic, plan, source):
    """Choose ``(lower, upper)`` per feature from the reduced statistic.

    The caller has charged the cost. Draws the same noise in the same order
    as a search on the whole data: the sign test first (two-sided), then per
    feature the upper and the lower search.
    """
    n_features = statistic.counts.shape[0]
    above, below = soft_counts_from_tally(statistic, two_sided=plan.two_sided)
    lower, upper = plan.origin.copy(), plan.origin.copy()
    if plan.two_sided:
        search_lower, search_upper = _sign_test(statistic, plan, source)
    else:
        search_lower = np.zeros(n_features, dtype=bool)
        search_upper = np.ones(n_features, dtype=bool)
    share = plan.threshold_share
    for f in range(n_features):
        n_sides = int(search_lower[f]) + int(search_upper[f])
        epsilon_run, n_above = plan.run_parameters(n_features, n_sides)
        if search_upper[f]:
            upper[f] = _svt_upper_bound(
                above[f],
                plan.origin[f] + plan.widths,
                n_above,
                epsilon_run,
                share,
                source,
            )
        if search_lower[f]:  # the same search on -x
            lower[f] = -_svt_upper_bound(
                below[f],
                -plan.origin[f] + plan.widths,
                n_above,
                epsilon_run,
                share,
                source,
            )
    return lower, upper


def run_svt_bounds(X, plan, source):
    """Choose ``(lower, upper)`` per feature; the caller has charged the cost."""
    return release_svt_bounds(svt_bounds_statistic(X, plan), plan, source)
