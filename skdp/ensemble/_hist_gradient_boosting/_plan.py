"""The public plan of a fit: its releases, their budget shares, and the
refusals that must happen before the charge."""

import numpy as np

from skdp.ensemble._hist_gradient_boosting._settings import (
    BIN_SHARE,
    resolved_boosting,
    resolved_setting,
)
from skdp.ensemble._hist_gradient_boosting.binning import N_CELLS
from skdp.ensemble._hist_gradient_boosting.grower import (
    leaf_sensitivity,
    sampled_per_node,
)
from skdp.ensemble._hist_gradient_boosting.histogram import level_sensitivity
from skdp.ensemble._hist_gradient_boosting.loss import MAX_ROWS
from skdp.linear_model._release import check_release_plan
from skdp.linear_model._scaling import N_BINS, histogram_sensitivity
from skdp.utils._sample_weight import weights_of_kept_rows
from skdp.utils._validation import check_bounds

__all__ = [
    "BASELINE_SHARE",
    "BIN_SHARE",
    "HISTOGRAM_SHARE",
    "MAX_NOISE_VALUES",
    "MAX_RAW_SCORES",
    "MAX_RELEASE_VALUES",
    "MAX_TREES",
    "check_plan",
    "check_run_time",
    "check_target_bounds",
    "keep_planned_classes",
    "planned_trees",
    "release_shares",
    "weights_of_planned_classes",
]

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
#: The most noise values one fit may draw (every release summed): a fit
#: draws about 6 million values per second end to end (measured: depth 8,
#: 255 bins, 16 features, 2.1e6 values in 0.35 s on a shared 2-core machine;
#: the adversarial review measured 0.7 million on a loaded one), so 2**27
#: values are 20 s to 3 minutes. Checked before the charge, so that a plan
#: of days (``max_iter=10**4`` rounds of ``2**24``-value histograms) is
#: refused instead of running after it.
MAX_NOISE_VALUES = 1 << 27
#: The most trees one fit may grow (``max_iter`` times the trees per round):
#: a tree costs Python calls per level whatever its size (measured 0.5 ms
#: at depth 1, 1.2 ms at depth 3 on 100 rows), so 2**16 trees are about a
#: minute of overhead.
MAX_TREES = 1 << 16


def planned_trees(classes, max_classes):
    """Trees per round the plan is checked for, from public parameters: one
    for two classes, ``K`` for ``K`` stated classes, and, with
    ``classes=None``, the most the fit may keep: ``max_classes`` (the
    released label set is known only after the charge)."""
    k = max_classes if classes is None else classes.size
    return 1 if k == 2 else k


def keep_planned_classes(classes, X, codes, max_classes):
    """The public rule on a released label set larger than the plan: keep
    its first ``max_classes`` labels (in sorted order) and the rows labelled
    with them. A function of the released labels and of each row's own
    label (post-processing, and a stable row selection); it cannot raise."""
    if classes.size <= max_classes:
        return classes, X, codes
    kept = codes < max_classes
    return classes[:max_classes], X[kept], codes[kept]


def weights_of_planned_classes(weights, y, released, codes, max_classes):
    """The weights of the rows the label steps keep: those whose label was
    released (:meth:`~skdp.mechanisms._labels.LabelPlan.run`), then those of
    the planned classes (:func:`keep_planned_classes`); per-row
    rules of the released labels. None stays None."""
    if weights is None:
        return None
    weights = weights_of_kept_rows(weights, y, released)
    return weights if released.size <= max_classes else weights[codes < max_classes]


def release_shares(extra_shares, max_iter, max_depth, cyclic_features=None):
    """Public shares of the fit's squared GDP parameter, one per release, in
    order: ``extra_shares`` (private bins, target range), the baseline, then
    per round one share for each level's histograms and one for the leaves
    (a round's ``K`` trees split its shares evenly, see the estimators'
    Notes); with ``cyclic_features=d`` (``boosting="cyclic"``), per round
    ``d`` equal shares, one per feature's bin sums."""
    extra_shares = [*extra_shares, BASELINE_SHARE]
    rest = 1.0 - sum(extra_shares)
    if cyclic_features is not None:
        step = rest / (max_iter * cyclic_features)
        return [*extra_shares, *([step] * (max_iter * cyclic_features))]
    level = rest * HISTOGRAM_SHARE / (max_iter * max_depth)
    leaf = rest * (1.0 - HISTOGRAM_SHARE) / max_iter
    per_round = [level] * max_depth + [leaf]
    return [*extra_shares, *(per_round * max_iter)]


def check_plan(estimator, name, shape, multipliers, offset, n_trees, loss, target=None):
    """Refuse, before the charge, a release the exact sampler could not draw
    (or sums that would not be exact) or a fit too large for memory, from
    public parameters only: after the charge nothing may raise. ``n_trees``
    is :func:`planned_trees`; ``target`` is the noise multiplier of the
    regressor's private target range (its histogram of ``N_BINS`` counts),
    or None. Sizes are checked earlier, by :func:`check_run_time`. With
    ``classes=None`` a refusal names ``max_classes``, which the plan assumes."""
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
            "on a sample, or on fewer classes (with classes=None the plan "
            "assumes max_classes labels: state classes=[...] or a smaller "
            "max_classes). Nothing was charged."
        )
    width = resolved_setting(estimator, "max_bins") * d
    baseline = ("baseline", loss.baseline_sensitivity, multipliers[offset - 1])
    plan = [
        (*baseline, max(n_trees, 2)),
        *_round_plan(estimator, d, multipliers[offset:], n_trees, loss, width),
    ]
    if estimator.feature_bounds is None:
        _check_bins_release(estimator, name, d, multipliers[0])
    if target is not None:
        plan.append(("target range", histogram_sensitivity(1), target, N_BINS))
    try:
        check_release_plan(name, plan)
    except ValueError as exc:
        if getattr(estimator, "classes", ()) is not None:
            raise
        hint = (
            f" With classes=None the plan assumes max_classes={n_trees} labels "
            "(noise multipliers times sqrt(max_classes)): state classes=[...] "
            "or a smaller max_classes."
        )
        message = str(exc).replace(" Nothing was charged.", "")
        raise ValueError(f"{message}{hint} Nothing was charged.") from exc


def _check_bins_release(estimator, name, d, multiplier):
    """Refuse private bins whose noise the sampler cannot draw, naming the
    caller's ``bin_share`` (its share of the budget sets that noise)."""
    try:
        check_release_plan(
            name, [("private bins", np.sqrt(d), multiplier, d * N_CELLS)]
        )
    except ValueError as exc:
        message = str(exc).replace(" Nothing was charged.", "")
        share = resolved_setting(estimator, "bin_share")
        raise ValueError(
            f"{message} Or raise bin_share (now {share!r}, at "
            "most 0.5), or state feature_bounds. Nothing was charged."
        ) from exc


def _round_plan(estimator, d, multipliers, n_trees, loss, width):
    """A round's releases for :func:`check_plan`: (what, sensitivity,
    multiplier, size)."""
    k = np.sqrt(n_trees)
    leaf = leaf_sensitivity(loss.g_max, loss.h_max)
    if resolved_boosting(estimator) == "cyclic":
        bins = resolved_setting(estimator, "max_bins")
        return [("bin sums", leaf, multipliers[0] * k, 2 * bins)]
    m = sampled_per_node(estimator.max_features, d)
    depth = estimator.max_depth
    return [
        (
            "deepest histograms",
            level_sensitivity(m, loss.g_max, loss.h_max),
            multipliers[0] * k,
            2 * width << (depth - 1),
        ),
        ("leaves", leaf, multipliers[depth] * k, 2 << depth),
    ]


def check_run_time(estimator, name, d, n_trees, private_target=False):
    """Refuse, before the charge (and before the plan's shares are built), a
    release of more than ``MAX_RELEASE_VALUES`` values, or a fit of more
    than ``MAX_TREES`` trees or ``MAX_NOISE_VALUES`` noise values in all:
    the baseline, private bins and target range once, and per round and
    tree every level's histograms (``2 * 2**l * max_bins * d`` values at
    level ``l``, at most) and the leaves' sums; with ``boosting="cyclic"``
    per round, tree and feature one step of ``2 * max_bins`` sums (a step
    counts as a tree). Public parameters only."""
    depth, rounds = estimator.max_depth, resolved_setting(estimator, "max_iter")
    width = resolved_setting(estimator, "max_bins") * d
    once = [("baseline", max(n_trees, 2))]
    if estimator.feature_bounds is None:
        once.append(("private bins", d * N_CELLS))
    if private_target:
        once.append(("target range", N_BINS))
    hint = _auto_mode_hint(estimator)
    if resolved_boosting(estimator) == "cyclic":  # a step per feature: its bins' sums
        _check_sizes(name, once, hint)
        trees = rounds * n_trees * d
        per_tree = 2 * resolved_setting(estimator, "max_bins")
    else:
        deepest = ("deepest histograms", 2 * width << (depth - 1))
        _check_sizes(name, [*once, deepest], hint)
        trees = rounds * n_trees
        per_tree = 2 * width * ((1 << depth) - 1) + (2 << depth)
    total = sum(size for _, size in once) + trees * per_tree
    if trees > MAX_TREES or total > MAX_NOISE_VALUES:
        raise ValueError(
            f"{name}: its max_iter={rounds} rounds of {n_trees} tree(s) would "
            f"grow {trees} trees (a cyclic step per feature counts as one) and "
            f"draw {total} noise values; a fit grows at "
            f"most {MAX_TREES} trees (2**16) and draws at most "
            f"{MAX_NOISE_VALUES} values (2**27, about 3 minutes of exact noise "
            "at 0.7 million values per second). Lower max_iter, max_depth or "
            "max_bins, or use fewer features (or fewer classes: with "
            f"classes=None the plan assumes max_classes).{hint} Nothing was "
            "charged."
        )


def _auto_mode_hint(estimator):
    """What a size refusal adds when ``boosting="auto"`` chose the mode and
    its settings (public: from ε), so that the caller, who stated neither,
    learns what was planned and how to state something smaller; else ""."""
    if estimator.boosting != "auto":
        return ""
    mode = resolved_boosting(estimator)
    settings = ", ".join(
        f"{key}={resolved_setting(estimator, key)!r}"
        for key in ("max_iter", "max_bins")
    )
    return (
        f" boosting='auto' chose {mode!r} at epsilon={estimator.epsilon!r} "
        f"({settings}): state boosting='trees' or 'cyclic', or smaller "
        "settings."
    )


def check_target_bounds(target_bounds, name):
    """The regressor's stated ``(low, high)`` as floats, or None (a private
    range); refused before the charge unless ``low < high`` with a finite
    width."""
    if target_bounds is None:
        return None
    bounds = check_bounds(target_bounds, 1, name="target_bounds")
    stated = (float(bounds[0][0]), float(bounds[1][0]))
    if not (np.isfinite(stated[1] - stated[0]) and stated[1] > stated[0]):
        raise ValueError(
            f"{name}: target_bounds must be (low, high) with low < high and a "
            f"finite width; got {target_bounds!r}. Nothing was charged."
        )
    return stated


def _check_sizes(name, sizes, hint=""):
    """Refuse, before the charge, a release of more than
    ``MAX_RELEASE_VALUES`` values (public sizes only); ``hint`` is
    :func:`_auto_mode_hint`'s."""
    for what, size in sizes:
        if size > MAX_RELEASE_VALUES:
            raise ValueError(
                f"{name}: its {what} would release {size} values at once, more "
                f"than {MAX_RELEASE_VALUES} (2**24, about 134 MB each of the "
                "arrays the release holds). Lower max_depth or max_bins, use "
                "fewer features (or state feature_bounds: the private bins "
                f"release {N_CELLS} counts per feature).{hint} Nothing was "
                "charged."
            )
