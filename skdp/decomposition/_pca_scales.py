"""Centre and clipping norm of PrivatePCA from released feature magnitudes.

PCA is scale-dependent: its counterpart on unscaled data is the PCA of the raw
(centred) rows, so the features are never rescaled. What the private fit
needs from the data is where the rows are (a centre, so that the clipping
norm bounds the rows' spread rather than their distance from 0) and how far
they reach (the clipping norm). Both are read by public rules from the
Gaussian histogram of every feature's sign and binary exponent that the
linear models release (:mod:`skdp.linear_model._scaling`), so they are
post-processing of one charged release.
"""

import math

import numpy as np

from skdp.exceptions import NoiseDominatedWarning
from skdp.linear_model._release import spectral_noise_bound
from skdp.linear_model._scaling import scales_from_histogram
from skdp.sensitivity import exact_clipped_gram
from skdp.utils._warnings import warn_at_caller

__all__ = [
    "FALLBACK_NORM",
    "MAX_NORM_RANGE",
    "centred_moments_gram",
    "covariance_noise_bound",
    "norm_histogram",
    "norm_rule",
    "released_centre",
    "second_moments",
    "unresolved_components",
]

#: Accepted range of the clipping norm (stated or from the rule): the second
#: moments are in units of ``2 max_norm²``, which must be a normal float.
MAX_NORM_RANGE = (1e-150, 1e150)
#: Clipping norm when no bin of the released norm histogram rises above the
#: noise (a public rule; the fit warns).
FALLBACK_NORM = 1.0
#: Bins per factor 2 of the row norms' histogram: the clipping norm is at
#: most ``2**(1/4) = 1.19`` times the largest norm it covers.
NORM_BINS_PER_OCTAVE = 4
#: Norms are binned between ``2**-NORM_LIMIT`` and ``2**NORM_LIMIT``
#: (``MAX_NORM_RANGE`` lies inside).
NORM_LIMIT = 512
_NORM_OFFSET = NORM_BINS_PER_OCTAVE * NORM_LIMIT
N_NORM_BINS = 2 * _NORM_OFFSET
#: A norm bin (or group of bins) counts above this many noise deviations:
#: over the 5,300 bins and groups a false one has probability about 1e-3.
NORM_THRESHOLD = 5.0
#: Coarsenings of the norm histogram tried in turn, finest first (1/4, 1, 4
#: and 16 factors of 2); each divides ``N_NORM_BINS``.
NORM_GROUPS = (1, 4, 16, 64)


def centred_moments_gram(rows, centre, max_norm):
    """Exact Gram of ``[clip(x - centre), c] / (c sqrt(2))``: additive over rows.

    ``centre`` is public (released), so ``x - centre`` is a function of the
    row alone; a difference that overflows (finite rows near the largest
    double) becomes the largest double of its sign, a fixed per-value rule,
    and clipping then bounds it like any other row.
    """
    big = np.finfo(float).max
    with np.errstate(all="ignore"):
        shifted = np.asarray(rows, dtype=float) - centre
    shifted = np.nan_to_num(shifted, nan=0.0, posinf=big, neginf=-big)
    return exact_clipped_gram(shifted, max_norm, intercept=True)[0]


def released_centre(noisy, noise_sd):
    """Per-feature centre from the released exponent histogram.

    The location of :func:`~skdp.linear_model._scaling.scales_from_histogram`
    (the median of the bins near the mode, at the bins' representative
    values ``± 1.5 * 2**e``; 0 for a feature whose magnitude could not be told
    from noise). Post-processing. It only moves the rows before clipping
    (the covariance is the same about any centre); a centre near the data
    shortens the rows, so the clipping norm, and the noise in data units
    (``∝ max_norm²``), are smaller.
    """
    return scales_from_histogram(noisy, noise_sd)[0]


def norm_bins(rows, centre):
    """Bin in ``[0, N_NORM_BINS)`` of each row's norm ``||x - centre||``.

    Bin ``k`` holds the norms in ``[2**((k - OFFSET)/B), 2**((k + 1 -
    OFFSET)/B))``, ``B = NORM_BINS_PER_OCTAVE``, clamped at both ends (0 and
    norms below ``2**-NORM_LIMIT`` go to the first bin, norms above
    ``2**NORM_LIMIT`` and infinite ones to the last). The norm is computed
    as ``m sqrt(Σ (v/m)²)``, ``m = max |v|``, so it does not overflow or
    underflow before the clamp; a function of the row and public values
    only. A difference that overflows becomes the largest double of its sign
    (the rule of :func:`centred_moments_gram`), so its norm is in the last
    bin, not NaN (which went to the first).
    """
    big = np.finfo(float).max
    with np.errstate(all="ignore"):
        shifted = np.asarray(rows, dtype=float) - centre
        shifted = np.nan_to_num(shifted, nan=0.0, posinf=big, neginf=-big)
        top = np.max(np.abs(shifted), axis=1, initial=0.0)
        safe = np.where(top > 0, top, 1.0)
        norms = top * np.sqrt(np.sum((shifted / safe[:, None]) ** 2, axis=1))
        logs = np.floor(NORM_BINS_PER_OCTAVE * np.log2(norms))
    logs = np.nan_to_num(logs, nan=-np.inf)
    bins = np.clip(logs, -_NORM_OFFSET, _NORM_OFFSET - 1) + _NORM_OFFSET
    return bins.astype(np.int64)


def norm_histogram(rows, centre):
    """Exact counts of :func:`norm_bins`: additive over blocks of rows."""
    return np.bincount(norm_bins(rows, centre), minlength=N_NORM_BINS)


def norm_rule(noisy, noise_sd):
    """Clipping norm from the released norm histogram; ``(norm, told)``.

    For each coarsening ``g`` of ``NORM_GROUPS`` (runs of ``g`` adjacent
    bins, noise ``sqrt(g)`` deviations), the upper edge of the highest group
    whose noisy count is at least ``NORM_THRESHOLD`` noise deviations and
    half a row; the finest ``g`` where a group is kept gives the norm
    (clamped to ``MAX_NORM_RANGE``): ``(FALLBACK_NORM, False)`` when none
    is. A public function of released values. As the noise vanishes every
    occupied bin counts at ``g = 1``, so the norm covers every row within a
    factor ``2**(1/NORM_BINS_PER_OCTAVE)`` and clipping vanishes; at small
    ``epsilon`` the rows of the rare largest norms are clipped instead of
    raising the noise of all (it grows like the norm squared), and coarser
    groups gather enough rows to rise above the noise.
    """
    for group in NORM_GROUPS:
        sums = noisy.reshape(-1, group).sum(axis=1)
        threshold = max(NORM_THRESHOLD * noise_sd * math.sqrt(group), 0.5)
        kept = np.flatnonzero(sums >= threshold)
        if kept.size:
            return _bin_edge((kept[-1] + 1) * group), True
    return FALLBACK_NORM, False


def _bin_edge(k):
    """``2**((k - OFFSET)/B)``, rounded up, clamped to ``MAX_NORM_RANGE``."""
    exponent = (k - _NORM_OFFSET) / NORM_BINS_PER_OCTAVE
    norm = math.ldexp(2.0 ** (exponent % 1.0), math.floor(exponent))
    # 2**(j/B) is rounded: step up to cover the bin's exact upper edge
    norm = float(np.nextafter(norm, math.inf))
    return min(max(norm, MAX_NORM_RANGE[0]), MAX_NORM_RANGE[1])


def _finite(values):
    big = np.finfo(float).max
    return np.nan_to_num(values, nan=0.0, posinf=big, neginf=-big)


def second_moments(matrix, max_norm):
    """Count, mean and covariance from the noisy Gram of ``[clip(x), c]/(c√2)``.

    Post-processing: the count is at least 1, the covariance is symmetric
    and returned in units of ``2c²`` (:func:`covariance_units`). The
    released sums are divided by the count before the units are restored,
    so no intermediate grows with the row count.
    """
    d = matrix.shape[0] - 1
    count = max(2.0 * matrix[d, d], 1.0)
    mean = (matrix[:d, d] / count) * (2.0 * max_norm)
    return count, mean, covariance_units(matrix, count)


def covariance_units(matrix, count):
    """The covariance in units of ``2 c²``: ``S/Ñ - 2 m mᵀ`` (finite).

    ``S`` is the noisy second-moment block and ``m`` the noisy sum over
    ``Ñ``, both in the Gram's units, so the entries stay near the noise's
    size whatever ``c``: in data units (``c = 1e150``, tiny ε) the outer
    product of the mean overflowed and ``eigh`` raised after the charge.
    Post-processing; the eigenvectors are those of the covariance, whose
    eigenvalues are ``2c²`` times these.
    """
    d = matrix.shape[0] - 1
    mean = matrix[:d, d] / count
    return _finite(matrix[:d, :d] / count - 2.0 * np.outer(mean, mean))


def covariance_noise_bound(d, multiplier, max_norm, count):
    """Public high-probability bound on the spectral norm of the covariance noise.

    The covariance is ``(2c²/Ñ) M - μ̃ μ̃ᵀ`` with ``M`` the released
    second-moment block, whose noise is symmetric with independent entries
    of standard deviation ``r`` (:func:`~skdp.linear_model._release.
    spectral_noise_bound`), and ``μ̃`` the released mean, of norm at most
    ``c`` plus a noise of norm about ``r sqrt(d) 2c/Ñ``; the outer product's
    noise is then at most ``2 c`` times that. Both together:
    ``(2c²/Ñ) (bound(d, r) + 2 r sqrt(d))``. A function of public
    parameters and released values (``c``, ``Ñ``).
    """
    units = 2.0 * max_norm**2 / max(count, 1.0)
    return units * (
        spectral_noise_bound(d, multiplier) + 2.0 * multiplier * math.sqrt(d)
    )


def unresolved_components(values, noise_bound, n_components):
    """Indices ``i < n_components`` whose eigengap is below ``noise_bound``.

    ``values`` are the released covariance's eigenvalues in decreasing order.
    Component ``i`` is resolved when it is separated from its neighbours:
    ``values[i-1] - values[i]`` (for ``i > 0``) and ``values[i] - values[i+1]``
    (for ``i + 1 < len(values)``) both exceed the noise bound (Davis-Kahan:
    the angle of a component is at most the noise's norm over its gap).
    Post-processing.
    """
    gaps = -np.diff(values)
    small = gaps < noise_bound
    unresolved = np.zeros(len(values), dtype=bool)
    unresolved[:-1] |= small
    unresolved[1:] |= small
    return np.flatnonzero(unresolved[:n_components])


def warn_norm_untold(name):
    """NoiseDominatedWarning: no row norm was told from noise."""
    warn_at_caller(
        f"{name}: no bin of the released histogram of the rows' norms is "
        "above its noise threshold, so the clipping norm is the public "
        f"fallback {FALLBACK_NORM:g}, whatever the data's units: the "
        "components are those of the rows' directions. Raise epsilon, use "
        "more rows, or state max_norm (a bound on the rows' norm about "
        "their centre).",
        NoiseDominatedWarning,
    )


def warn_unresolved(name, unresolved, noise_bound):
    """NoiseDominatedWarning naming the components not resolved from noise."""
    shown = ", ".join(str(int(i)) for i in unresolved[:10])
    warn_at_caller(
        f"{name}: component(s) {shown} are not resolved: their eigenvalue "
        f"gaps in the released covariance are below the public bound on its "
        f"noise ({noise_bound:.3g}), so their directions (and the order of "
        "their variances) are mostly noise. Raise epsilon, keep fewer "
        "components, or use more rows.",
        NoiseDominatedWarning,
    )
