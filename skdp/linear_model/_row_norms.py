"""The released largest norm of a linear model's scaled rows.

With private feature scales, the rows ``z = (x - location) / scale`` are
bounded feature by feature by the released reach (binary-exponent bins, up
to twice a feature's extent), and the box of those bounds has a diagonal of
``sqrt(Σ reach_j²)`` that no row need come near: on the diabetes set
(442 x 10) it is 3.6 where the largest row norm is 1.35. The Gram matrix's
signal shrinks like ``1 / B²`` under a fixed noise, so clipping at the
diagonal cost R² 0.015 at eps = 1e6 (0.344 against least squares' 0.359).
A histogram of the scaled rows' norms, in bins of ``2**(1/4)``, released
with a small share of the budget, tells the largest norm instead: the
bins and the rule are PCA's (:func:`~skdp.decomposition._pca_scales.
norm_histogram`, :func:`~skdp.decomposition._pca_scales.norm_rule`),
imported where used: ``skdp.decomposition`` imports the linear models'
helpers, so a module-level import would close a circle of packages.
"""

import math

import numpy as np
from scipy import sparse

from skdp.linear_model._noise_plan import is_laplace, release, rule_deviation
from skdp.linear_model._scaling import scale_rows
from skdp.mechanisms import gaussian_release
from skdp.utils._dask_xy import xy_statistic

__all__ = [
    "MIN_ROW_NORM",
    "N_NORM_BINS",
    "ROW_NORM_SHARE",
    "release_norm_counts",
    "release_row_norm",
    "row_norm_cap",
    "xy_row_norm_histogram",
]

#: Bins of the row norm histogram: those of
#: :data:`skdp.decomposition._pca_scales.N_NORM_BINS` (checked in the tests).
N_NORM_BINS = 4096

#: Share of the fit's squared GDP parameter spent on the row norms (taken
#: from the feature scales' share, so the model's releases keep theirs).
#: Public.
ROW_NORM_SHARE = 0.05

#: The released largest norm caps the clipping norm down to this many scaled
#: units, no further. Rows within it of their location sit there to within
#: the float resolution of the scaling (``(x - l) / s`` is rounded to
#: ``2**-52`` of ``|x| / s``): a clipping norm ``B`` that small grows the
#: coefficients like ``1 / B``, and their intercept in the user's units,
#: ``b - Σ coef_j l_j``, cancels to rounding noise (two constant features at
#: 3.0 predicted 1e133 or 0 for a mean of 0.96, where the box's diagonal
#: gave 1.18 and 0.963). ``2**-26`` keeps half of the significand. Public.
MIN_ROW_NORM = 2.0**-26


def xy_row_norm_histogram(X, y, affine):
    """Exact counts of the norm bins of the scaled rows (one count a row).

    Additive over blocks of rows (for :func:`~skdp.utils._dask_xy.
    xy_statistic`). Sparse rows: the norm is ``sqrt(Σ z²)`` of the stored
    cells (an overflow to infinity goes to the last bin).
    """
    from skdp.decomposition._pca_scales import norm_histogram  # see module doc

    Z = scale_rows(X, *affine)
    if sparse.issparse(Z):
        with np.errstate(over="ignore"):
            norms = np.sqrt(np.asarray(Z.multiply(Z).sum(axis=1), dtype=float))
        return norm_histogram(norms.reshape(-1, 1), 0.0)
    return norm_histogram(Z, 0.0)


def release_norm_counts(counts, noise, source):
    """Release of the norm histogram's counts (L2 and L1 sensitivity 1) with
    the fit's planned noise (:func:`~skdp.linear_model._noise_plan.release`)."""
    if is_laplace(noise):
        return release(counts.astype(float), 1.0, noise, source)
    noisy = gaussian_release(counts.astype(float), 1.0, noise, random_state=source)
    return np.asarray(noisy, dtype=float)


def release_row_norm(data, affine, noise, source):
    """``(norm, told)``: the largest scaled row norm, released.

    Notes
    -----
    **Sensitivity (add/remove one row).** A row adds one count to one bin
    (the bin of its norm, a function of the row and of the public scales):
    L2 and L1 sensitivity 1. The counts are exact integers; the Gaussian
    release with noise multiplier ``noise`` is ``1/noise``-GDP and composes
    with the fit's other releases (class Notes); in a Laplace plan it is
    ``noise.epsilon``-DP (:mod:`~skdp.linear_model._noise_plan`).
    ``norm_rule`` reads the released counts only (post-processing): the
    upper edge of the highest bin (or group of bins) above the noise,
    ``told=False`` when none is.
    """
    from skdp.decomposition._pca_scales import norm_rule  # see module doc

    counts = xy_statistic(data, xy_row_norm_histogram, affine)
    noisy = release_norm_counts(counts, noise, source)
    return norm_rule(noisy, rule_deviation(noise))


def row_norm_cap(rows):
    """Cap on the clipping norm from :func:`release_row_norm`'s ``(norm,
    told)``: the released norm, at least ``MIN_ROW_NORM``; ``inf`` when no
    bin rose above the noise (post-processing)."""
    largest, told = rows
    return max(largest, MIN_ROW_NORM) if told else math.inf
