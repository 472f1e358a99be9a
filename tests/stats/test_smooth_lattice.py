"""Regression (issue 13 item 1): smooth-sensitivity medians on a public lattice.

The old release multiplied grid noise by the data-dependent ``s = 2 S(x)/ε``,
so the outputs of each dataset lay on its own lattice ``fl(j 2**-20 s)``;
adding one row at the median moved the lattice and one output identified the
dataset (review: 3000/3000 outputs of D' off D's lattice, 0/3000 of D). The
audit's lattice events find this on the estimators themselves. Only public
estimators are imported here, so that this file runs, and fails, on the old
code.
"""

import warnings
from fractions import Fraction

import numpy as np

from skdp.audit import assert_dp
from skdp.preprocessing._robust import PrivateRobustScaler
from skdp.stats._smooth import SmoothSensitivityMedian

BOUNDS = (0.0, 10.0)
# the lattice is found on 1000 pilot outputs; 500 fresh ones then bound the
# old release's epsilon above 3 (0/500 against 500/500)
AUDIT = {"n_pilot": 1000, "n_samples": 500, "random_state": 0}


def review_pair(n=101):
    """The review's worst case: one row added at the median."""
    d0 = np.sort(np.random.default_rng(0).normal(5.0, 1.0, n))[:, None]
    return d0, np.vstack([d0, [[np.median(d0)]]])


def two_adic_valuation(values):
    """Exponent of the lowest set bit of each nonzero float (exact)."""
    out = []
    for v in values:
        frac = Fraction(float(v))
        num, den = frac.numerator, frac.denominator
        out.append((num & -num).bit_length() - den.bit_length())
    return np.array(out)


def released_median(estimator):
    """``mechanism(data, seed)``: the first median of one fit."""

    def mechanism(data, seed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PTR refusals of the IQR part
            return estimator.set_params(random_state=seed).fit(data).median_[0]

    return mechanism


def test_smooth_median_passes_the_lattice_audit():
    # main: epsilon >= 3.3 (LatticeEvent) against the claimed 1
    est = SmoothSensitivityMedian(1.0, 1e-6, bounds=BOUNDS)
    assert_dp(released_median(est), *review_pair(), 1.0, 1e-6, **AUDIT)


def test_robust_scaler_median_passes_the_lattice_audit():
    # without a proposal the medians use the same release, with the median
    # share (0.5, 5e-7) of the budget; main: epsilon >= 3.3 against 0.5
    est = PrivateRobustScaler(1.0, 1e-6, bounds=BOUNDS, scale_method="dwork_lei")
    assert_dp(released_median(est), *review_pair(1001), 0.5, 5e-7, **AUDIT)


def test_cauchy_releases_lie_on_the_public_grid():
    # main added s * tan(pi (U - 1/2)) to the median in floats: outputs near 0
    # carried bits far below any public grid (finest bit about 2^-62 here).
    # Now every output is a multiple of g = 2^k, where the documented
    # k = floor(log2(e^{-beta K}(U - L))) - 20 is at least
    # floor(log2(1e-12 e^{-1/6} 20)) - 20 = -56 (e^{-beta K} >= 1e-12 e^{-beta})
    d0 = np.sort(np.random.default_rng(0).normal(0.0, 0.01, 1001))
    d0 -= d0[500]  # the lower median is exactly 0
    d0 = d0[:, None]
    d1 = np.vstack([d0, [[0.0]]])
    for data in (d0, d1):
        est = SmoothSensitivityMedian(1.0, 0.0, bounds=(-10.0, 10.0), noise="cauchy")
        out = np.array(
            [est.set_params(random_state=s).fit(data).median_[0] for s in range(100)]
        )
        assert np.all(two_adic_valuation(out[out != 0]) >= -56)
