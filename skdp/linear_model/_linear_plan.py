"""Checks and the release plan of PrivateLinearRegression (before the charge)."""

from skdp.linear_model._noise_plan import (
    Release,
    gram_l1_sensitivity,
    sum_l1_sensitivity,
)
from skdp.linear_model._row_norms import N_NORM_BINS, ROW_NORM_SHARE
from skdp.linear_model._scaling import N_BINS, SCALE_SHARE, histogram_sensitivity
from skdp.linear_model._target_range import TARGET_SHARE
from skdp.utils._validation import check_bounds, check_finite_width

__all__ = [
    "GRAM_SHARE",
    "check_norm",
    "check_target_bounds",
    "linear_releases",
    "release_plan",
]

#: Share of the squared GDP parameter spent on the Gram matrix (the rest on
#: the cross products with the target). Public.
GRAM_SHARE = 0.5


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


def linear_releases(private_target, private_scales, d, size):
    """The fit's releases in order, with their shares and sensitivities.

    Shares: ``TARGET_SHARE`` for the target histogram (private target
    range), ``SCALE_SHARE`` for the feature scales (private scales: their
    histogram and, with ``ROW_NORM_SHARE`` of it, the row norms), the rest
    split ``GRAM_SHARE`` / ``1 - GRAM_SHARE`` between the Gram matrix and
    the cross products. One row moves the target and row-norm histograms by
    one count (L1 = L2 = 1), the feature histogram by one count per feature
    (L2 ``sqrt(d)``, L1 ``d``), the Gram matrix's upper triangle by at most
    1 in L2 and ``(D + 1)/2`` in L1, the cross products by 1 and
    ``sqrt(D)`` (``D = size``; :func:`~skdp.linear_model._noise_plan.
    gram_l1_sensitivity`).
    """
    releases = [
        Release(
            "Gram matrix",
            GRAM_SHARE,
            1.0,
            gram_l1_sensitivity(size),
            size * (size + 1) // 2,
        ),
        Release(
            "cross products", 1.0 - GRAM_SHARE, 1.0, sum_l1_sensitivity(size), size
        ),
    ]
    if private_scales:
        rest = 1.0 - SCALE_SHARE
        releases = [
            Release(
                "feature scales",
                SCALE_SHARE - ROW_NORM_SHARE,
                histogram_sensitivity(d),
                float(d),
                d * N_BINS,
                True,
            ),
            Release("row norms", ROW_NORM_SHARE, 1.0, 1.0, N_NORM_BINS, True),
            *(item._replace(share=rest * item.share) for item in releases),
        ]
    if private_target:
        rest = 1.0 - TARGET_SHARE
        releases = [
            Release("target range", TARGET_SHARE, 1.0, 1.0, N_BINS, True),
            *(item._replace(share=rest * item.share) for item in releases),
        ]
    return releases


def release_plan(releases, noises):
    """``(what, sensitivity, noise, n_values)`` of every release, for
    :func:`~skdp.linear_model._release.check_release_plan`."""
    return [
        (item.what, item.l2, noise, item.size)
        for item, noise in zip(releases, noises, strict=True)
    ]


def check_target_bounds(bounds):
    if bounds is None:
        return None, None  # released privately (TARGET_SHARE)
    low, high = check_bounds(bounds, 1, name="target_bounds")
    check_finite_width(low, high, "PrivateLinearRegression (target_bounds)")
    return float(low[0]), float(high[0])
