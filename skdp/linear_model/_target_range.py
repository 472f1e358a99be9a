"""The target's clipping range of :class:`PrivateLinearRegression`, released.

When the user states no ``target_bounds``, the regression releases one
Gaussian histogram of the target's sign and binary exponent (the same bins as
the feature scales, :mod:`skdp.linear_model._scaling`) inside its Gaussian
composition, and clips the target to the hull of the bins that stand out of
the noise: a public rule on released values, whose range covers every row
once the noise vanishes, so the fit converges to least squares.
"""

import numpy as np

from skdp.exceptions import NoiseDominatedWarning
from skdp.linear_model._scaling import (
    _ZERO_BIN,
    REACH_THRESHOLD,
    _bin_intervals,
    exponent_histogram,
    release_exponent_histogram,
    scale_rows,
)
from skdp.sensitivity._linear import exact_clipped_gram
from skdp.utils._dask_xy import xy_statistic
from skdp.utils._warnings import warn_at_caller

__all__ = [
    "TARGET_SHARE",
    "regression_sums",
    "release_target_range",
    "scaled_targets",
    "target_range_from_histogram",
    "target_scale",
]

#: Share of the fit's squared GDP parameter spent on the target's range when
#: ``target_bounds`` is not stated. Public.
TARGET_SHARE = 0.1


def xy_target_histogram(X, y):
    """Exact counts of the targets' exponent bins, shape ``(1, N_BINS)``
    (a statistic of rows and targets, additive over blocks of rows)."""
    return exponent_histogram(np.asarray(y, dtype=float).reshape(-1, 1))


def target_range_from_histogram(noisy, noise_sd):
    """``(low, high, resolved)`` from the released target histogram.

    Public rule on released values only: the bins whose noisy count exceeds
    ``REACH_THRESHOLD`` noise deviations (and half a row) count as occupied;
    ``high`` is the upper edge ``2**(e+1)`` of the largest occupied positive
    bin (0 if none), ``low`` minus that of the largest occupied negative bin
    (0 if none); the clamped end bins, which hold every magnitude beyond
    ``2**EXPONENT_LIMIT``, reach the largest double (``_bin_intervals``, the
    feature scales' own bins). As the noise vanishes every occupied bin
    counts, so ``[low, high]`` covers every target (within a factor 2 of the
    largest magnitude below ``2**EXPONENT_LIMIT``). When no bin but the
    zero bin, or none at all, stands out, the range is ``(-1, 1)`` and
    ``resolved`` is False.
    """
    counts = np.asarray(noisy, dtype=float).reshape(-1)
    occupied = counts >= max(REACH_THRESHOLD * noise_sd, 0.5)
    lows, highs = _bin_intervals()  # the clamped end bins reach ±max double
    positive = occupied[_ZERO_BIN + 1 :]
    negative = occupied[:_ZERO_BIN]
    high = float(highs[_ZERO_BIN + 1 :][positive].max()) if positive.any() else 0.0
    low = float(lows[:_ZERO_BIN][negative].min()) if negative.any() else 0.0
    if not high > low:
        return -1.0, 1.0, False
    return low, high, True


def release_target_range(data, noise, source, name):
    """Release the target histogram and return ``(low, high)``; warns (from
    the release only) when the range could not be told from noise.

    Notes
    -----
    **Sensitivity (add/remove one row).** A row adds one count to one bin of
    the target's histogram: L2 and L1 sensitivity 1. The counts are exact
    integers, so the release is the rounded image of an exact Gaussian
    mechanism with noise multiplier ``noise``, composed with the fit's other
    Gaussian releases (Gaussian DP), or of an exact Laplace mechanism in a
    Laplace plan (:mod:`~skdp.linear_model._noise_plan`).
    """
    counts = xy_statistic(data, xy_target_histogram)
    noisy, noise_sd = release_exponent_histogram(counts, noise, source)
    low, high, resolved = target_range_from_histogram(noisy, noise_sd)
    if not resolved:
        warn_at_caller(
            f"{name}: the private range of the target could not be told from "
            "noise (no bin of the released histogram of its magnitudes stands "
            "out of it); the target is clipped to (-1, 1). Raise epsilon, or "
            "state target_bounds=(low, high).",
            NoiseDominatedWarning,
        )
    return low, high


def regression_sums(
    X, y, max_norm, low, high, intercept, affine=None, sample_weight=None
):
    """Exact ``(gram, cross)`` of clipped rows and targets scaled to ``[-1, 1]``.

    The target is clipped to ``[low, high]``, centred and divided by its half
    width (with an intercept; else divided by its largest magnitude, see
    :func:`scaled_targets`), a
    function of the row alone; the sums add up over blocks of rows. With
    ``sample_weight`` (in [0, 1], in memory) the sums are weighted.
    """
    X = X if affine is None else scale_rows(X, *affine)
    with np.errstate(all="ignore"):
        t = scaled_targets(np.clip(y, low, high), low, high, intercept)
        return exact_clipped_gram(
            X, max_norm, t, intercept=intercept, sample_weight=sample_weight
        )


def scaled_targets(y, low, high, intercept):
    """Clipped targets mapped onto ``[-1, 1]``, the bounds onto its ends.

    With an intercept, ``((y - low) - (high - y)) / (high - low)``: every
    difference is at most the accepted (finite) width, rounding is monotone,
    so the result stays in ``[-1, 1]`` and ``low``, ``high`` map to exactly
    ``-1``, ``1``; the centred form ``(y - centre) / half`` sent one end to 0
    when the bounds were a few ulps apart near the largest double, where the
    centre rounds onto a bound. Without one, ``y`` over its largest bound.
    """
    if intercept:
        return ((y - low) - (high - y)) / (high - low)
    return y / max(abs(low), abs(high))


def target_scale(low, high, intercept):
    """Centre and half width of the targets' map onto ``[-1, 1]`` (public).

    Halved before adding, so that bounds near the largest double (accepted:
    their width is finite) do not make the centre overflow to ``inf``, which
    mapped every target to -1.
    """
    if intercept:
        return 0.5 * low + 0.5 * high, 0.5 * (high - low)
    return 0.0, max(abs(low), abs(high))
