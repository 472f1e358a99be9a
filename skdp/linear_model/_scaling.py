"""Per-feature location and scale of the linear models: private, public or none.

The linear models fit in scaled units ``z = (x - location) / scale`` and report
their coefficients in the user's units. The map is affine per feature with
released (or stated) numbers, so it is post-processing, and the models' own
per-row clipping bounds every row's influence in scaled units: no feature
clipping is needed, and the model class is the same as scikit-learn's, so the
fit converges to it as ``epsilon`` grows.

The private release is one Gaussian histogram of every feature's signed
binary exponent, part of the fit's Gaussian composition (see
:func:`release_exponent_histogram`); location and scale are read off it by
public rules (:func:`scales_from_histogram`).
"""

import math

import numpy as np
import scipy.sparse as sp

from skdp.exceptions import NoiseDominatedWarning
from skdp.linear_model._noise_plan import is_laplace, release, rule_deviation
from skdp.mechanisms import gaussian_release
from skdp.utils._dask_xy import xy_statistic
from skdp.utils._validation import (
    check_bounds,
    check_finite_columns,
    check_finite_width,
)
from skdp.utils._warnings import warn_at_caller

__all__ = [
    "SCALE_SHARE",
    "FeatureScaling",
    "cells_stored_once",
    "exponent_bins",
    "histogram_sensitivity",
    "release_exponent_histogram",
    "scales_from_histogram",
]

#: Share of the fit's squared GDP parameter spent on the private scales
#: (``feature_bounds=None``). Public. Measured (benchmarks/README.md): 10 %
#: left breast cancer (569 x 30) at 0.900 at eps = 1 against 0.932 pre-scaled,
#: 30 % gives 0.933; the Adult pipeline loses 0.001 per 10 %.
SCALE_SHARE = 0.3
#: Binary exponents ``e`` of ``|x| in [2**e, 2**(e+1))`` are clamped to
#: ``[-EXPONENT_LIMIT, EXPONENT_LIMIT - 1]``; 0 has its own bin.
EXPONENT_LIMIT = 64
N_BINS = 4 * EXPONENT_LIMIT + 1
_ZERO_BIN = 2 * EXPONENT_LIMIT
#: A bin's noisy count counts as mass only above this many noise deviations
#: (for 257 bins x 1,000 features, a false bin has probability ~1e-4).
NOISE_THRESHOLD = 4.0
#: A bin counts for the reach of a feature above this many deviations.
REACH_THRESHOLD = 7.0
#: The median is read from the bins within this many binades of the mode.
WINDOW = 8
#: Scale given to a feature whose magnitude could not be told from noise: it
#: then enters the model as about 0 (dropped), never as a huge value.
DROPPED_SCALE = math.ldexp(1.0, EXPONENT_LIMIT)
#: Cells read at a time by the histogram: its temporaries stay a few MB
#: whatever the number of features (a public rule of ``d``).
_CELLS_PER_CHUNK = 2**18


def cells_stored_once(X, feature_names=None):
    """``X`` with every cell of a sparse matrix stored once; checked finite.

    A CSR matrix may store one cell as several entries (duplicates), whose
    value is their sum (scipy's and scikit-learn's reading). The statistics
    that read stored entries (the exponent histogram) would count each
    entry as one value: a row of ``k`` duplicates moved the histogram by
    ``k`` counts, far beyond its sensitivity ``sqrt(d)``; and finite entries
    may sum to infinity, which the validation of the stored entries did not
    see. So the duplicates are summed here, on a copy, whatever the matrix's
    format flags say (they are the caller's claims, not checked by scipy),
    and the summed cells are checked finite: before the charge, like any
    non-finite input. Dense input is returned as it is.
    """
    if not sp.issparse(X):
        return X
    X = sp.csr_matrix(X, copy=True)
    X.has_sorted_indices = False
    X.has_canonical_format = False
    X.sum_duplicates()
    check_finite_columns(X, feature_names)
    return X


def exponent_bins(values):
    """Bin index in ``[0, N_BINS)`` of each value: sign and binary exponent.

    ``0`` maps to ``_ZERO_BIN``; ``x > 0`` with ``|x|`` in ``[2**e, 2**(e+1))``
    to ``_ZERO_BIN + 1 + e + EXPONENT_LIMIT`` (``e`` clamped), ``x < 0`` to the
    mirror image. Exact: ``frexp`` reads the exponent of the double.
    """
    values = np.asarray(values, dtype=float)
    exponent = np.frexp(values)[1].astype(np.int64) - 1
    exponent = np.clip(exponent, -EXPONENT_LIMIT, EXPONENT_LIMIT - 1)
    offset = 1 + exponent + EXPONENT_LIMIT
    bins = _ZERO_BIN + np.sign(values).astype(np.int64) * offset
    return np.where(values == 0, _ZERO_BIN, bins)


def _dense_histogram(X):
    d = X.shape[1]
    counts = np.zeros(d * N_BINS, dtype=np.int64)
    shift = np.arange(d) * N_BINS
    rows = max(1, _CELLS_PER_CHUNK // max(d, 1))
    for start in range(0, X.shape[0], rows):
        bins = exponent_bins(X[start : start + rows]) + shift
        counts += np.bincount(bins.ravel(), minlength=d * N_BINS)
    return counts.reshape(d, N_BINS)


def _sparse_histogram(X):
    n, d = X.shape
    X = X.tocsc()
    counts = np.zeros((d, N_BINS), dtype=np.int64)
    for j in range(d):
        column = X.data[X.indptr[j] : X.indptr[j + 1]]
        counts[j] = np.bincount(exponent_bins(column), minlength=N_BINS)
        counts[j, _ZERO_BIN] += n - column.size
    return counts


def exponent_histogram(X):
    """Exact ``(n_features, N_BINS)`` counts of the rows' exponent bins."""
    if sp.issparse(X):
        return _sparse_histogram(X)
    return _dense_histogram(X)


def xy_exponent_histogram(X, y):
    """:func:`exponent_histogram` as a statistic of rows and targets (additive
    over blocks of rows, for :func:`~skdp.utils._dask_xy.xy_statistic`)."""
    return exponent_histogram(X)


def histogram_sensitivity(n_features):
    """L2 sensitivity of :func:`exponent_histogram`: ``sqrt(d)``, rounded up."""
    return float(np.nextafter(math.sqrt(n_features), math.inf))


def release_exponent_histogram(counts, noise, source):
    """Release of the counts of :func:`exponent_histogram`; ``(noisy, deviation)``.

    ``noise`` is the fit's plan for this release: a Gaussian multiplier, or
    a :class:`~skdp.linear_model._noise_plan.LaplaceNoise` (L1 sensitivity
    ``d``). ``deviation`` is the noise deviation the threshold rules read
    (:func:`~skdp.linear_model._noise_plan.rule_deviation`), in counts.

    Notes
    -----
    **Sensitivity (add/remove one row).** A row adds exactly one count to one
    bin of each of the ``d`` features, so the ``d x N_BINS`` integer counts
    move by 1 in ``d`` entries: L2 sensitivity ``sqrt(d)`` (rounded up here)
    and L1 sensitivity ``d``. The counts are exact integers below ``2**53``,
    so the release is the rounded image of an exact Gaussian mechanism,
    ``1/r``-GDP, composed with the model's releases in one Gaussian
    composition, or of an exact Laplace mechanism in a Laplace plan.
    """
    counts = np.asarray(counts).astype(float)
    sensitivity = histogram_sensitivity(counts.shape[0])
    if is_laplace(noise):
        noisy = release(counts, sensitivity, noise, source)
    else:
        noisy = gaussian_release(counts, sensitivity, noise, random_state=source)
    return np.asarray(noisy, dtype=float), rule_deviation(noise) * sensitivity


def _bin_values(exponents):
    """Representative magnitude of each exponent bin: ``1.5 * 2**e``."""
    return 1.5 * np.ldexp(1.0, exponents)


def scales_from_histogram(noisy, noise_sd, sparse=False):
    """``(location, scale, dropped)`` per feature from the released histogram.

    Public rules on released values only:

    - ``e*``: the binary exponent (both signs together) with the largest noisy
      count; if that count is below ``NOISE_THRESHOLD`` noise deviations the
      feature's non-zero mass cannot be told from noise: ``dropped``, with
      location 0 and scale ``DROPPED_SCALE``. Zeros are not counted, so a
      column that is 90 % zeros or a one-hot column with 5 % ones gets the
      magnitude of its non-zero values, never a scale of 0.
    - ``scale = 2**(e* + 1)``, at least the magnitude of the typical value.
    - ``location``: the median of the bins within ``WINDOW`` binades below
      ``e*`` (and one above), both signs and the zero bin, each bin at its
      representative value ``± 1.5 * 2**e``; 0 when ``sparse`` (sparse
      input, which it keeps sparse, or a model without intercept, whose
      origin it keeps).
    """
    d = noisy.shape[0]
    half = EXPONENT_LIMIT * 2
    negative = noisy[:, :half][:, ::-1]  # exponent order, as the positive side
    positive = noisy[:, half + 1 :]
    magnitude = negative + positive
    mode = np.argmax(magnitude, axis=1)
    dropped = magnitude[np.arange(d), mode] < NOISE_THRESHOLD * noise_sd * math.sqrt(2)
    exponents = mode - EXPONENT_LIMIT
    scale = np.where(dropped, DROPPED_SCALE, np.ldexp(2.0, exponents))
    location = np.zeros(d)
    if not sparse:
        location = _window_medians(negative, positive, noisy[:, half], mode)
    location = np.where(dropped, 0.0, location)
    return location, scale, dropped


def _bin_intervals():
    """Closed hull ``[low, high]`` of the values of each bin (public)."""
    offset = np.arange(N_BINS) - _ZERO_BIN
    inner = np.ldexp(1.0, np.abs(offset) - 1 - EXPONENT_LIMIT)
    outer = 2.0 * inner
    low = np.where(offset > 0, inner, np.where(offset < 0, -outer, 0.0))
    high = np.where(offset > 0, outer, np.where(offset < 0, -inner, 0.0))
    # the clamped end bins hold everything beyond them (below 2**-63 in
    # magnitude, subnormals included, and above 2**64)
    big = np.finfo(float).max
    low[0], high[-1] = -big, big
    low[_ZERO_BIN + 1], high[_ZERO_BIN - 1] = 0.0, 0.0
    return low, high


def released_reach(noisy, noise_sd, location, scale):
    """Public bound on ``|z|`` per feature of the rows in bins above the noise.

    ``max(top - location, location - bottom) / scale`` with ``[bottom,
    top]`` the hull of the value intervals of the bins whose noisy count
    exceeds ``REACH_THRESHOLD`` deviations and half a row (1 where none
    does; a false bin here would inflate the bound, so the threshold is
    higher than the mode's), and the
    released row count (the median over features of the histogram's noisy
    totals). As the noise vanishes every occupied bin counts, so the bound
    covers every row. Post-processing.
    """
    low, high = _bin_intervals()
    kept = noisy >= max(REACH_THRESHOLD * noise_sd, 0.5)
    top = np.max(np.where(kept, high[None, :], -np.inf), axis=1)
    bottom = np.min(np.where(kept, low[None, :], np.inf), axis=1)
    with np.errstate(all="ignore"):
        spread = np.maximum(top - location, location - bottom) / scale
    reach = np.where(kept.any(axis=1), spread, 1.0)
    count = float(np.median(noisy.sum(axis=1)))
    return reach, max(count, 1.0)


def _window_medians(negative, positive, zeros, mode):
    """Median of the bins near the mode (noisy counts below 0 count as 0)."""
    n_exp = positive.shape[1]
    index = np.arange(n_exp)
    keep = (index >= mode[:, None] - WINDOW) & (index <= mode[:, None] + 1)
    values = _bin_values(index - EXPONENT_LIMIT)
    # ascending order: negatives from large to small magnitude, 0, positives
    counts = np.concatenate(
        [
            np.where(keep, negative, 0.0)[:, ::-1],
            zeros[:, None],
            np.where(keep, positive, 0.0),
        ],
        axis=1,
    )
    points = np.concatenate([-values[::-1], [0.0], values])
    counts = np.maximum(counts, 0.0)
    cumulative = np.cumsum(counts, axis=1)
    half = cumulative[:, -1:] / 2.0
    first = np.argmax(cumulative >= half, axis=1)
    return points[first]


class FeatureScaling:
    """How a linear model maps the features: ``"private"``, ``"public"`` or ``"none"``.

    Parameters
    ----------
    feature_bounds : None, "scaled" or tuple of (float or array, float or array)
        The estimator's parameter (see its docstring).
    n_features : int
    name : str
        The estimator's name, for error messages.
    """

    def __init__(self, feature_bounds, n_features, name):
        self.name = name
        if feature_bounds is None:
            self.kind = "private"
        elif isinstance(feature_bounds, str):
            if feature_bounds != "scaled":
                raise ValueError(
                    f"{name}: feature_bounds={feature_bounds!r} is not valid; "
                    "pass None (private scales), 'scaled' (use X as it is) or "
                    "(lower, upper)."
                )
            self.kind = "none"
        else:
            self.kind = "public"
            lower, upper = check_bounds(
                feature_bounds, n_features, name="feature_bounds"
            )
            check_finite_width(lower, upper, f"{name} (feature_bounds)")
            self.lower, self.upper = lower, upper

    @property
    def private(self):
        return self.kind == "private"

    def public_map(self, sparse):
        """``(location, scale)`` of stated bounds: centre and half width, or
        0 and the largest magnitude when ``sparse`` (uncentred: sparse input,
        or a model without intercept)."""
        if self.kind == "none":
            return None
        lower, upper = self.lower, self.upper
        if sparse:
            return np.zeros_like(lower), np.maximum(np.abs(lower), np.abs(upper))
        half = 0.5 * upper - 0.5 * lower
        return 0.5 * lower + 0.5 * upper, np.where(half > 0, half, 1.0)

    def release(self, data, noise, source, sparse, feature_names=None):
        """``(location, scale)`` from the private histogram; warns on dropped.

        ``data`` is ``(X, y)`` in memory or the rows of a Dask input; the
        histogram is summed over blocks exactly, so both give the same release.
        """
        counts = xy_statistic(data, xy_exponent_histogram)
        noisy, noise_sd = release_exponent_histogram(counts, noise, source)
        location, scale, dropped = scales_from_histogram(noisy, noise_sd, sparse)
        self.dropped_ = dropped
        self.reach_, self.count_ = released_reach(noisy, noise_sd, location, scale)
        if dropped.any():
            warn_collapsed_scales(self.name, dropped, feature_names)
        return location, scale


def warn_collapsed_scales(name, dropped, feature_names=None):
    """NoiseDominatedWarning naming the features whose scale was noise."""
    index = np.flatnonzero(dropped)
    labels = index if feature_names is None else np.asarray(feature_names)[index]
    shown = ", ".join(str(v) for v in labels[:10])
    more = "" if index.size <= 10 else f" and {index.size - 10} more"
    warn_at_caller(
        f"{name}: the private scale of {index.size} feature(s) ({shown}{more}) "
        "could not be told from noise (the released histogram of their "
        "magnitudes has no bin above the noise threshold); they enter the "
        "model as about 0. Raise epsilon, or state feature_bounds=(lower, "
        "upper) for them.",
        NoiseDominatedWarning,
    )


def scale_rows(X, location, scale):
    """``(X - location) / scale`` (a copy; CSR stays CSR with location 0).

    A value that overflows (finite data, a subnormal stated width) becomes
    the largest double of its sign, a fixed per-value rule, so the sums of
    the models see finite rows only (their clipping handles huge rows).
    """
    with np.errstate(all="ignore"):
        if sp.issparse(X):
            Z = sp.csr_matrix(X.multiply(1.0 / scale[None, :]))
            Z.data = _finite(Z.data)
            return Z
        # in place on the one copy: finite X, location and scale > 0 give
        # no NaN, only an overflow to inf, which the clip maps to the
        # largest double
        Z = np.subtract(X, location, dtype=float)
        np.divide(Z, scale, out=Z)
        big = np.finfo(float).max
        return np.clip(Z, -big, big, out=Z)


def _finite(values):
    big = np.finfo(float).max
    return np.nan_to_num(values, nan=0.0, posinf=big, neginf=-big)


def to_user_units(weights, location, scale, d):
    """Coefficients and intercepts in the user's units from scaled weights.

    ``w·z + b`` with ``z = (x - l) / s`` is ``(w/s)·x + (b - Σ w l / s)``.
    """
    with np.errstate(all="ignore"):
        coef = _finite(weights[:d] / scale[:, None])
        shift = _finite((location[:, None] * coef).sum(axis=0))
    return coef, shift
