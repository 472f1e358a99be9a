"""Checks and the release plan of PrivateLinearRegression (before the charge)."""

from skdp.linear_model._row_norms import N_NORM_BINS
from skdp.linear_model._scaling import N_BINS, histogram_sensitivity
from skdp.utils._validation import check_bounds, check_finite_width

__all__ = ["check_norm", "check_target_bounds", "release_plan"]


def check_norm(value):
    if value is None:
        raise ValueError(
            "PrivateLinearRegression needs data_norm, a public bound on the L2 "
            "norm of a row of X (from the feature schema, e.g. sqrt(n_features) "
            "for features scaled to [-1, 1]; never from the data). Rows above "
            "it are scaled down to it. To get one privately, clip or scale the "
            "features first (skdp.DPClipper with norm='l2')."
        )
    return float(value)


def release_plan(private_target, private_scales, multipliers, d, size):
    """``(what, sensitivity, multiplier, n_values)`` of every release."""
    plan, multipliers = [], list(multipliers)
    if private_target:
        target = histogram_sensitivity(1)
        plan.append(("target range", target, multipliers.pop(0), N_BINS))
    if private_scales:
        features = histogram_sensitivity(d)
        plan.append(("feature scales", features, multipliers.pop(0), d * N_BINS))
        plan.append(("row norms", 1.0, multipliers.pop(0), N_NORM_BINS))
    return [
        *plan,
        ("Gram matrix", 1.0, multipliers[0], size * (size + 1) // 2),
        ("cross products", 1.0, multipliers[1], size),
    ]


def check_target_bounds(bounds):
    if bounds is None:
        return None, None  # released privately (TARGET_SHARE)
    low, high = check_bounds(bounds, 1, name="target_bounds")
    check_finite_width(low, high, "PrivateLinearRegression (target_bounds)")
    return float(low[0]), float(high[0])
