"""The SVT bound search: its public plan, its data pass and its release.

:func:`plan_svt_bounds` fixes everything public before any data is read;
:func:`svt_bounds_statistic` reads the data once, in blocks, into per-bin
tallies over the public grid (integers that add over chunks of rows);
:func:`release_svt_bounds` runs the sign test and the AboveThreshold searches
on the reduced tallies. :func:`run_svt_bounds` is the two in a row. The
estimator is :class:`~skdp.preprocessing.SVTClipSelector` (whose Notes give
the derivations); this module imports no scikit-learn, so ``skdp describe``
can use it without the estimator.
"""

from typing import NamedTuple

import numpy as np

from skdp.accounting._composition import budget_left, equal_shares
from skdp.accounting._group_privacy import row_budget_for_groups
from skdp.mechanisms import above_threshold, laplace_mechanism
from skdp.mechanisms._laplace import _laplace_grid
from skdp.mechanisms._svt import check_svt_feasible
from skdp.sensitivity._soft_counts import (
    LOOKUP_MIN_ROWS,
    GridTally,
    sign_counts_from_tally,
    soft_count_layout,
    soft_count_widths,
    soft_counts_from_tally,
    tally_columns,
)
from skdp.utils._validation import check_per_feature

__all__ = [
    "SVTBoundsPlan",
    "SVTBoundsRelease",
    "bounds_layouts",
    "plan_svt_bounds",
    "release_svt_bounds",
    "release_svt_bounds_record",
    "run_svt_bounds",
    "run_svt_bounds_record",
    "svt_bound_widths",
    "svt_bounds_statistic",
    "svt_plan_for_groups",
]

# Default public grid: widths from upper_limit * 2**-40 to upper_limit, a
# factor 2**(1/4) (about 19%) apart: 161 candidates.
_GRID_OCTAVES = 40
# Default threshold n_above = 3 / (threshold_share * epsilon_run): three
# scales of the threshold noise (SVTClipSelector, Notes).
_NOISE_SCALES = 3.0
_GRID_STEPS_PER_OCTAVE = 4
# Floor of the default threshold, in rows: as epsilon grows, three noise
# scales shrink to 0 and a threshold of 0 rows beyond the candidate is at
# the mercy of noise of the same size (the overshoot stayed ~2 grid steps
# at any epsilon); half a row makes the search stop within a step of the
# data's extreme once the noise is small (SVTClipSelector, Notes).
_MIN_ABOVE = 0.5
# Default share of a search's epsilon spent on the threshold noise (Lyu-Su-Li
# eps1 / eps): 0.8 makes the runaway tail decay like K**-4 (SVTClipSelector,
# Notes).
_THRESHOLD_SHARE = 0.8
# With lower=None: share of the bound budget spent on the sign test, and the
# test's threshold in noise scales (SVTClipSelector, Notes).
_SIGN_SHARE = 0.15
_SIGN_SCALES = 3.0
# With lower=None and the default n_above: a side whose released count is
# small for its budget is searched with the threshold _SIDE_FRACTION times
# that count (at most 2% of its rows above the bound), at least
# _SCARCE_FLOOR_SCALES scales of its threshold noise, and the threshold share
# _SCARCE_SHARE (SVTClipSelector, Notes, "Scarce budget").
_SIDE_FRACTION = 0.02
_SCARCE_SHARE = 0.65
_SCARCE_FLOOR_SCALES = 2.0


def svt_bound_widths(grid, upper_limit):
    """The public, increasing candidate distances from the origin.

    Parameters
    ----------
    grid : "geometric" or array-like of shape (n_candidates,)
        "geometric": ``upper_limit * 2**(-k/4)`` for k = 160, ..., 0. An
        array: strictly increasing positive distances, used as given.
    upper_limit : float
        The largest plausible distance of a value from the origin (public).

    Returns
    -------
    widths : ndarray of shape (n_candidates,)
    """
    if isinstance(grid, str):
        steps = _GRID_OCTAVES * _GRID_STEPS_PER_OCTAVE
        exponents = -np.arange(steps, -1, -1) / _GRID_STEPS_PER_OCTAVE
        return upper_limit * np.exp2(exponents)
    widths = np.asarray(grid, dtype=float)
    if (
        widths.ndim != 1
        or widths.size < 2
        or not np.all(np.isfinite(widths))
        or widths[0] <= 0
        or np.any(np.diff(widths) <= 0)
    ):
        raise ValueError(
            "grid must be 'geometric' or a 1-D array of at least 2 strictly "
            "increasing, positive, finite distances from the origin."
        )
    return widths


class SVTBoundsPlan(NamedTuple):
    """Everything public about one bound search, fixed before any data.

    ``two_sided`` means the lower bound is not public: a sign test (budget
    ``epsilon_sign``) then decides per feature which sides are searched with
    the budget ``epsilon_search``.
    """

    origin: np.ndarray
    widths: np.ndarray
    two_sided: bool
    epsilon_sign: float
    epsilon_search: float
    n_above: float | None
    threshold_share: float

    def cost_items(self, epsilon):
        """Ledger items ``(label, epsilon, delta)``; they sum to ``epsilon``."""
        if not self.two_sided:
            return [("upper bounds (SVT)", epsilon, 0.0)]
        return [
            ("bounds sign test (Laplace counts)", self.epsilon_sign, 0.0),
            ("bounds (SVT)", budget_left(epsilon, self.epsilon_sign), 0.0),
        ]

    def run_parameters(self, n_features, n_sides):
        """``(epsilon_run, n_above)`` of one AboveThreshold run."""
        epsilon_run = equal_shares(self.epsilon_search, n_features * n_sides)
        if self.n_above is not None:
            return epsilon_run, self.n_above
        scales = _NOISE_SCALES / (self.threshold_share * epsilon_run)
        return epsilon_run, max(scales, _MIN_ABOVE)

    def side_run(self, n_features, n_sides, side_count):
        """``(epsilon_run, n_above, threshold_share)`` of one side's search.

        ``side_count`` is the side's released noisy count (the sign test) or
        None (public ``lower``). With the default ``n_above``, a side whose
        count is small for its budget gets the threshold
        ``max(_SIDE_FRACTION * side_count, _SCARCE_FLOOR_SCALES / ε₁)`` (at
        most about 2% of its rows above the bound, but at least two scales of
        the threshold noise) and the share ``s = min(threshold_share,
        _SCARCE_SHARE)``, ``ε₁ = s ε_run``, whenever that threshold is below
        the default: a function of the release and public constants only.
        """
        epsilon_run, n_above = self.run_parameters(n_features, n_sides)
        if self.n_above is not None or side_count is None:
            return epsilon_run, n_above, self.threshold_share
        share = min(self.threshold_share, _SCARCE_SHARE)
        floor = _SCARCE_FLOOR_SCALES / (share * epsilon_run)
        scarce = max(_SIDE_FRACTION * float(side_count), floor)
        if scarce >= n_above:
            return epsilon_run, n_above, self.threshold_share
        return epsilon_run, scarce, share


def plan_svt_bounds(
    n_features,
    epsilon,
    *,
    lower,
    upper_limit,
    grid,
    n_above,
    threshold_share=_THRESHOLD_SHARE,
):
    """Validate the public parameters of a search and fix its budget split.

    Raises before anything is charged when a parameter is invalid.
    """
    widths = svt_bound_widths(grid, float(upper_limit))
    if lower is None:
        origin = np.zeros(n_features)
    else:
        origin = check_per_feature(lower, n_features, "lower")
    two_sided = lower is None
    epsilon_sign = _SIGN_SHARE * epsilon if two_sided else 0.0
    plan = SVTBoundsPlan(
        origin,
        widths,
        two_sided,
        epsilon_sign,
        budget_left(epsilon, epsilon_sign),
        None if n_above is None else float(n_above),
        float(threshold_share),
    )
    _check_feasible(plan, n_features, epsilon)
    return plan


def svt_plan_for_groups(plan, n_features, k):
    """The search ``plan`` run for groups of at most ``k`` rows.

    Group privacy (the generic route): the sign test and the searches run at
    the largest ``ε_r`` with ``k ε_r <= ε`` of their charged budgets
    (:func:`~skdp.accounting._group_privacy.row_budget_for_groups`). For
    these pure-ε steps it is the same as multiplying their sensitivities by
    ``k`` (a group moves each count and soft count by at most ``k``): the
    noise scales are ``k`` times the row's, and the default thresholds,
    measured in noise scales, grow with them. Charge ``plan.cost_items``
    (the stated ε); run the returned plan. ``k = 1`` returns ``plan``.
    Raises before the charge when the noise at ``ε_r`` cannot be represented.
    """
    if k == 1:
        return plan
    sign = row_budget_for_groups(plan.epsilon_sign, 0.0, k)[0]
    search = row_budget_for_groups(plan.epsilon_search, 0.0, k)[0]
    run = plan._replace(epsilon_sign=sign, epsilon_search=search)
    total = plan.epsilon_sign + plan.epsilon_search
    _check_feasible(run, n_features, f"{total!r} / {k} (groups of <= {k} rows)")
    return run


def _check_feasible(plan, n_features, epsilon):
    """Raise before the charge if the search cannot run on any data.

    Everything checked is public: the noise of the sign test and of every
    AboveThreshold run must be representable (a tiny ε makes its scale
    overflow the float range), and the candidate bounds ``origin ± widths``
    must be finite and strictly increasing doubles (near ±1.8e308 they
    overflow or collapse onto the origin, and the search would return
    ``lower_ == upper_``), also as the soft counts compute their widths
    (:func:`~skdp.sensitivity._soft_counts.soft_count_widths`).
    """
    problem = None
    try:
        if plan.two_sided:
            _laplace_grid(float(n_features), plan.epsilon_sign, 2 * n_features)
        for n_sides in (1, 2) if plan.two_sided else (1,):
            epsilon_run, n_above = plan.run_parameters(n_features, n_sides)
            check_svt_feasible(
                epsilon_run,
                -n_above,
                monotonic=True,
                threshold_share=plan.threshold_share,
            )
            if plan.two_sided and plan.n_above is None:  # a scarce side's run
                share = min(plan.threshold_share, _SCARCE_SHARE)
                check_svt_feasible(
                    epsilon_run,
                    -_SCARCE_FLOOR_SCALES / (share * epsilon_run),
                    monotonic=True,
                    threshold_share=share,
                )
    except (ValueError, OverflowError, ZeroDivisionError) as exc:
        problem = f"the noise cannot be represented ({exc})"
    if problem is None:
        with np.errstate(over="ignore", invalid="ignore"):
            for sign in (1.0, -1.0) if plan.two_sided else (1.0,):
                candidates = sign * plan.origin[:, None] + plan.widths
                steps = np.diff(candidates, axis=1)
                if not (
                    np.all(np.isfinite(candidates))
                    and np.all(candidates[:, 0] > sign * plan.origin)
                    and np.all(steps > 0)
                    and all(np.all(soft_count_widths(c) > 0) for c in candidates)
                ):
                    problem = (
                        "the candidate bounds origin + widths overflow or "
                        "collapse onto the origin in floating point (lower is "
                        "too close to the float limit for upper_limit, or "
                        "subnormal candidates merge when a grid reaching the "
                        "float limit is halved)"
                    )
    if problem is not None:
        raise ValueError(
            f"SVTClipSelector cannot search bounds with epsilon={epsilon} over "
            f"{n_features} feature(s): {problem}. Nothing was charged. Use a "
            "larger epsilon, or a lower/upper_limit well inside the float range."
        )


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
    """The noisy sign counts, shape (2, d): negatives, then positives
    (Laplace of scale ``d / epsilon_sign``, ε_sign-DP)."""
    n_features = plan.origin.size
    noisy = laplace_mechanism(
        _sign_counts(statistic),
        float(n_features),
        plan.epsilon_sign,
        random_state=source,
    )
    return np.asarray(noisy, dtype=float).reshape(2, n_features)


class SVTBoundsRelease(NamedTuple):
    """What a bound search released, all of it public after the fit.

    ``side_counts`` (shape (2, d): negatives, then positives) are the sign
    test's noisy counts, None with a public ``lower``; ``searched`` (shape
    (2, d): lower side, upper side) is their post-processing.
    """

    lower: np.ndarray
    upper: np.ndarray
    side_counts: np.ndarray | None
    searched: np.ndarray


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
    """Choose ``(lower, upper)`` per feature from the reduced statistic
    (:func:`release_svt_bounds_record` without the record)."""
    return tuple(release_svt_bounds_record(statistic, plan, source)[:2])


def release_svt_bounds_record(statistic, plan, source):
    """Choose ``(lower, upper)`` per feature from the reduced statistic.

    The caller has charged the cost. Draws the same noise in the same order
    as a search on the whole data: the sign test first (two-sided), then per
    feature the upper and the lower search. The number of features, hence
    the ε split and the sign test's sensitivity, is the plan's (public),
    never read from the statistic; a statistic of another width is a
    programming error, whatever the data.
    """
    n_features = plan.origin.size
    if statistic.counts.shape[0] != n_features:
        raise ValueError(
            f"A bound-search statistic of {statistic.counts.shape[0]} features "
            f"for a plan of {n_features}."
        )
    above, below = soft_counts_from_tally(statistic, two_sided=plan.two_sided)
    lower, upper = plan.origin.copy(), plan.origin.copy()
    if plan.two_sided:
        side_counts = _sign_test(statistic, plan, source)
        search_lower, search_upper = _searched_sides(
            side_counts.ravel(), n_features, plan.epsilon_sign
        )
        negatives, positives = side_counts
    else:
        side_counts = None
        search_lower = np.zeros(n_features, dtype=bool)
        search_upper = np.ones(n_features, dtype=bool)
        negatives = positives = [None] * n_features
    for f in range(n_features):
        n_sides = int(search_lower[f]) + int(search_upper[f])
        if search_upper[f]:
            epsilon_run, n_above, share = plan.side_run(
                n_features, n_sides, positives[f]
            )
            upper[f] = _svt_upper_bound(
                above[f],
                plan.origin[f] + plan.widths,
                n_above,
                epsilon_run,
                share,
                source,
            )
        if search_lower[f]:  # the same search on -x
            epsilon_run, n_above, share = plan.side_run(
                n_features, n_sides, negatives[f]
            )
            lower[f] = -_svt_upper_bound(
                below[f],
                -plan.origin[f] + plan.widths,
                n_above,
                epsilon_run,
                share,
                source,
            )
    searched = np.vstack([search_lower, search_upper])
    return SVTBoundsRelease(lower, upper, side_counts, searched)


def run_svt_bounds(X, plan, source):
    """Choose ``(lower, upper)`` per feature; the caller has charged the cost."""
    return tuple(run_svt_bounds_record(X, plan, source)[:2])


def run_svt_bounds_record(X, plan, source):
    """The :class:`SVTBoundsRelease` of ``X``; the caller has charged the cost."""
    return release_svt_bounds_record(svt_bounds_statistic(X, plan), plan, source)
