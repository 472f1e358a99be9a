"""Audits of the linear models' private feature scales and target range.

Both are Gaussian histograms of signed binary exponents
(:func:`~skdp.linear_model._scaling.release_exponent_histogram`): the
features' ``d x N_BINS`` counts with L2 sensitivity ``sqrt(d)``, the
target's ``1 x N_BINS`` counts with sensitivity 1 (PrivatePCA's centre is
the same release of the same counts). Each release is audited alone at the
whole (ε, δ) = (1, 1e-6), as the estimators' own functions on the exact
counts of two neighbouring datasets, and each twin must be caught.

Worst-case neighbours: one added row, every value in a different bin
(subnormal, huge, clamped, zero, negative), so the counts move by one in
``d`` entries (the most a row can move them); the other entries are equal in
both neighbours and their noise is independent of the data, so they are
left out (no likelihood ratio changes). The audited output is the
log-likelihood-ratio statistic of the moved entries, post-processing of the
release, so a lower bound on its ε is one on the release's.

Twins (each a 4x error, about 0.95-GDP against the honest 0.24-GDP, so
that 50,000 runs catch it): the feature histogram of 16 features calibrated
for one count (sensitivity 1 instead of ``sqrt(16)``); a row counted in its
bin and the fifteen above (sensitivity ``4 sqrt(d)``, noise for
``sqrt(d)``); the target histogram with a quarter of the noise; the target
counted in sixteen bins.
"""

import numpy as np

from skdp.audit import assert_dp, audit_mechanism
from skdp.linear_model._scaling import (
    exponent_histogram,
    release_exponent_histogram,
)
from skdp.linear_model._target_range import xy_target_histogram
from skdp.mechanisms import (
    check_random_source,
    gaussian_noise_multipliers,
    gaussian_release,
)

EPS, DELTA = 1.0, 1e-6
MARGIN = 0.25
FAST = {"n_samples": 50_000, "n_pilot": 10_000, "random_state": 0}
RATIO = gaussian_noise_multipliers(EPS, DELTA, [1.0])[0]

D = 16
X0 = np.arange(2 * D, dtype=float).reshape(2, D) - 7.5
# every kind of bin: positive, negative, zero, huge and subnormal (the
# clamped end bins), tiny, ±largest double, exact powers of two
NEW_ROW = np.array(
    [
        *(3.0, -0.25, 0.0, 1e300, 5e-324, 2.0**-70, -1.7e308, 1024.0),
        *(-5.0, 0.1, 3e-300, -2e-310, 65536.0, -1.0, 0.3, 1.7e308),
    ]
)
X1 = np.vstack([X0, NEW_ROW])
Y0 = np.array([10.0, -3.0])
Y1 = np.array([10.0, -3.0, 5e200])


def spread(histogram):
    """Twin: every value counted in its bin and the fifteen above."""

    def counts(*data):
        exact = histogram(*data)
        return sum(np.roll(exact, shift, axis=1) for shift in range(16))

    return counts


def honest_release(counts, multiplier, source):
    return release_exponent_histogram(counts, multiplier, source)[0]


def release_for_one_count(counts, multiplier, source):
    """Twin: the noise of a histogram whose row moves one count."""
    return gaussian_release(counts, 1.0, multiplier, random_state=source)


def moved_entries(c0, c1):
    """Per feature, the entries that differ, as ``(d, k)`` arrays."""
    moved = c0 != c1
    k = moved.sum(axis=1)
    assert np.all(k == k[0]) and k[0] > 0
    return c0[moved].reshape(-1, k[0]), c1[moved].reshape(-1, k[0])


def histogram_mechanism(histogram, d0, d1, release, multiplier=RATIO):
    """Vectorised release of the moved counts, reduced to the likelihood
    ratio statistic of ``d1`` against ``d0``."""
    c0, c1 = moved_entries(histogram(*d0), histogram(*d1))
    counts = {id(d0): c0.astype(float), id(d1): c1.astype(float)}
    centre, diff = 0.5 * (c0 + c1), (c1 - c0).astype(float)

    def mech(data, random_state, n_runs):
        source = check_random_source(random_state)
        tiled = np.repeat(counts[id(data)][:, None, :], n_runs, axis=1)
        noisy = release(tiled, multiplier, source)  # shape (d, n_runs, k)
        return np.einsum("drk,dk->r", noisy - centre[:, None, :], diff)

    return mech


def features(X):
    return exponent_histogram(X)


def target(y):
    return xy_target_histogram(None, y)


FEATURES = ((X0,), (X1,))
TARGETS = ((Y0,), (Y1,))


def test_neighbours_move_every_feature_by_one_count():
    c0, c1 = (exponent_histogram(X) for X in (X0, X1))
    diff = c1 - c0
    assert diff.min() == 0 and np.array_equal(diff.sum(axis=1), np.ones(D))
    c0, c1 = (xy_target_histogram(None, y) for y in (Y0, Y1))
    assert (c1 - c0).sum() == 1 and (c1 - c0).min() == 0


def test_feature_scales_pass_and_sensitivity_one_twin_is_caught():
    d0, d1 = FEATURES
    honest = histogram_mechanism(features, d0, d1, honest_release)
    assert_dp(honest, d0, d1, EPS, DELTA, **FAST)
    twin = histogram_mechanism(features, d0, d1, release_for_one_count)
    bad = audit_mechanism(twin, d0, d1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + MARGIN, str(bad)


def test_feature_scales_row_in_several_bins_twin_is_caught():
    # the factor 4 does not depend on d: two features keep the audit small
    d0, d1 = ((X[:, :2],) for (X,) in FEATURES)
    twin = histogram_mechanism(spread(features), d0, d1, honest_release)
    bad = audit_mechanism(twin, d0, d1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + MARGIN, str(bad)


def test_target_range_passes_and_quartered_noise_twin_is_caught():
    d0, d1 = TARGETS
    honest = histogram_mechanism(target, d0, d1, honest_release)
    assert_dp(honest, d0, d1, EPS, DELTA, **FAST)
    twin = histogram_mechanism(target, d0, d1, honest_release, RATIO / 4)
    bad = audit_mechanism(twin, d0, d1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + MARGIN, str(bad)


def test_target_range_row_in_several_bins_twin_is_caught():
    d0, d1 = TARGETS
    twin = histogram_mechanism(spread(target), d0, d1, honest_release)
    bad = audit_mechanism(twin, d0, d1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + MARGIN, str(bad)


def test_feature_scales_pass_the_default_event_search_on_raw_counts():
    """The first moved count as it is released: value, low-bit and lattice
    events of the released float."""
    d0, d1 = FEATURES
    c0, c1 = moved_entries(features(*d0), features(*d1))
    counts = {id(d0): c0.astype(float), id(d1): c1.astype(float)}

    def mech(data, random_state, n_runs):
        source = check_random_source(random_state)
        tiled = np.repeat(counts[id(data)][:, None, :], n_runs, axis=1)
        return honest_release(tiled, RATIO, source)[0, :, 0]

    assert_dp(mech, d0, d1, EPS, DELTA, **FAST)
