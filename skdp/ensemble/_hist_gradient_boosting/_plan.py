"""The public plan of a fit: its releases, their budget shares, and the
refusals that must happen before the charge."""

import numpy as np

from skdp.ensemble._hist_gradient_boosting.binning import N_CELLS
from skdp.ensemble._hist_gradient_boosting.grower import leaf_sensitivity
from skdp.ensemble._hist_gradient_boosting.histogram import level_sensitivity
from skdp.ensemble._hist_gradient_boosting.loss import MAX_ROWS
from skdp.linear_model._release import check_release_plan
from skdp.linear_model._scaling import N_BINS, histogram_sensitivity

__all__ = [
    "BASELINE_SHARE",
    "BIN_SHARE",
    "HISTOGRAM_SHARE",
    "MAX_RAW_SCORES",
    "MAX_RELEASE_VALUES",
    "check_plan",
    "release_shares",
]

#: Share of the fit's squared GDP parameter that releases the private bins
#: (``feature_bounds=None``). Public.
BIN_SHARE = 0.1
#: Share of the release of the raw score the trees start from (class counts,
#: or the target's sum and count). Public.
BASELINE_SHARE = 0.02
#: Of the rest (after the bins, the target range and the baseline), the share of the
#: trees' levels' histograms; the leaves get ``1 - HISTOGRAM_SHARE``.
HISTOGRAM_SHARE = 0.7
#: The most values one release may hold (the deepest level's histograms are
#: the largest: ``2 * 2**(max_depth - 1) * max_bins * d``): 2**24 float64
#: values are 134 MB, and a release holds a few arrays of them (exact sums,
#: a parent level, the noise). Checked before the charge, so that a fit too
#: large for memory is refused instead of failing after it.
MAX_RELEASE_VALUES = 1 << 24
#: The most raw scores (rows times classes) of a multiclass fit: a round
#: holds about six float64 arrays of that size (scores, probabilities,
#: gradients, hessians), 512 MB each at 2**26. Checked before the charge.
MAX_RAW_SCORES = 1 << 26


def release_shares(extra_shares, max_iter, max_depth):
    """Public shares of the fit's squared GDP parameter, one per release, in
    order: ``extra_shares`` (private bins, target range), the baseline, then
    per round one share for each level's histograms and one for the leaves
    (a round's ``K`` trees split its shares evenly, see the estimators'
    Notes)."""
    extra_shares = [*extra_shares, BASELINE_SHARE]
    rest = 1.0 - sum(extra_shares)
    level = rest * HISTOGRAM_SHARE / (max_iter * max_depth)
    leaf = rest * (1.0 - HISTOGRAM_SHARE) / max_iter
    per_round = [level] * max_depth + [leaf]
    return [*extra_shares, *(per_round * max_iter)]


def check_plan(estimator, name, shape, multipliers, offset, n_trees, loss, target=None):
    """Refuse, before the charge, a release the exact sampler could not draw
    (or sums that would not be exact), from public parameters only: after
    the charge nothing may raise. ``target`` is the noise multiplier of the
    regressor's private target range (its histogram of ``N_BINS`` counts),
    or None."""
    n, d = shape
    if n >= MAX_ROWS:
        raise ValueError(
            f"{name} sums gradients exactly in float64 for fewer than "
            f"{MAX_ROWS} rows; got {n}. Fit on a sample. Nothing was charged."
        )
    if n_trees > 1 and n * n_trees > MAX_RAW_SCORES:
        raise ValueError(
            f"{name} keeps one raw score per row and class: {n} rows x "
            f"{n_trees} classes = {n * n_trees}, more than {MAX_RAW_SCORES} "
            "(2**26, about 512 MB for each of the six arrays of a round). Fit "
            "on a sample, or on fewer classes. Nothing was charged."
        )
    width = estimator.max_bins * d
    level = multipliers[offset] * np.sqrt(n_trees)
    leaf = multipliers[offset + estimator.max_depth] * np.sqrt(n_trees)
    plan = [
        (
            "baseline",
            loss.baseline_sensitivity,
            multipliers[offset - 1],
            max(n_trees, 2),
        ),
        (
            "deepest histograms",
            level_sensitivity(d, loss.g_max, loss.h_max),
            level,
            2 * width << (estimator.max_depth - 1),
        ),
        (
            "leaves",
            leaf_sensitivity(loss.g_max, loss.h_max),
            leaf,
            2 << estimator.max_depth,
        ),
    ]
    if estimator.feature_bounds is None:
        plan.append(("private bins", np.sqrt(d), multipliers[0], d * N_CELLS))
    if target is not None:
        plan.append(("target range", histogram_sensitivity(1), target, N_BINS))
    _check_sizes(name, plan)
    check_release_plan(name, plan)


def _check_sizes(name, plan):
    """Refuse, before the charge, a release of more than
    ``MAX_RELEASE_VALUES`` values (public sizes only)."""
    for what, _, _, size in plan:
        if size > MAX_RELEASE_VALUES:
            raise ValueError(
                f"{name}: its {what} would release {size} values at once, more "
                f"than {MAX_RELEASE_VALUES} (2**24, about 134 MB each of the "
                "arrays the release holds). Lower max_depth or max_bins, use "
                "fewer features (or state feature_bounds: the private bins "
                f"release {N_CELLS} counts per feature). Nothing was charged."
            )
