"""Audits of the linear models' releases, each against mutation twins.

A fit of :class:`PrivateLogisticRegression` is a public sequence of Gaussian
releases (count, curvature, ``max_iter`` gradient sums). For a fixed public
weight vector the sequence is not adaptive, which is a valid instance of the
composition the estimator claims. The audited output is the log-likelihood
ratio statistic of the releases (post-processing, so a lower bound on its ε
is one on the fit's), computed from the estimator's own sums, multipliers and
release function. Worst-case neighbours: a row at the clipping norm, plus
(in ``d1``) a row a thousand times outside it.

Twins the audit must catch: the gradient sum without per-row clipping; the
noise calibrated for the sum in units of ``max_norm`` but added to the sum
in raw units; the steps each calibrated to the whole budget (iteration count
not composed). For the regression: targets not clipped to their bounds.
"""

import numpy as np
import pytest
from _gaussian_audit import likelihood_ratio, tiled

from skdp.audit import assert_dp, audit_mechanism
from skdp.linear_model import _base, _logistic, _logistic_sums
from skdp.linear_model._release import release_sum
from skdp.mechanisms import check_random_source, gaussian_noise_multipliers
from skdp.mechanisms._grid import FixedPoint
from skdp.sensitivity import exact_clipped_gradient_sum, exact_clipped_gram
from skdp.sensitivity._mean import exact_count

EPS, DELTA = 1.0, 1e-6
MARGIN = 0.25
FAST = {"n_samples": 50_000, "n_pilot": 10_000, "random_state": 0}
NORM = 8.0  # a power of two: the raw-units twin is an exact shift of the grid


def neighbours():
    d0 = (np.array([[NORM, 0.0]]), np.array([1]))
    d1 = (np.array([[NORM, 0.0], [1e3 * NORM, 0.0]]), np.array([1, 0]))
    return d0, d1


def unclipped_gradient(X, residuals):
    """Twin: the sum of x ⊗ r with no clipping, on the same grid."""
    terms = np.hstack([X, np.ones((X.shape[0], 1))]) * residuals(0, X.shape[0])
    nums = np.rint(terms.sum(axis=0) / NORM * 2.0**20).astype(np.int64)
    return FixedPoint(tuple(int(v) for v in nums), -20, (X.shape[1] + 1, 1))


def fit_sums(data, variant):
    """The exact sums of one fit at weights 0 (count, Gram, gradient)."""
    X, y = data
    gram, _ = exact_clipped_gram(
        X, _logistic_sums.CURVATURE_NORM * NORM, intercept=True
    )
    weights = np.zeros((X.shape[1] + 1, 1))
    residuals = _logistic_sums._residual_function(X, y, weights, True)
    if variant == "no clip":
        gradient = unclipped_gradient(X, residuals)
    else:
        gradient = exact_clipped_gradient_sum(X, residuals, NORM, intercept=True)
    if variant == "raw units":  # the sum times max_norm, noise for units
        gradient = FixedPoint(
            gradient.numerators, gradient.exponent + 3, gradient.shape
        )
    return [exact_count(X), gram, gradient]


def logistic_fit(max_iter, variant="correct"):
    """Vectorised releases of a fit, reduced to their likelihood-ratio statistic."""
    shares = _logistic._shares(max_iter)
    if variant == "not composed":
        shares = [1.0] * len(shares)  # every release gets the whole budget
        ratios = np.full(len(shares), gaussian_noise_multipliers(EPS, DELTA, [1])[0])
    else:
        ratios = gaussian_noise_multipliers(EPS, DELTA, shares)
    d0, d1 = neighbours()
    sums = {id(d): fit_sums(d, variant) for d in (d0, d1)}
    plan = [(0, ratios[0]), (1, ratios[1])] + [(2, r) for r in ratios[2:]]
    return likelihood_ratio(sums, plan, d0, d1), d0, d1


def test_logistic_fit_passes_and_missing_clip_twin_is_caught():
    mech, d0, d1 = logistic_fit(10)
    assert_dp(mech, d0, d1, EPS, DELTA, **FAST)
    twin, d0, d1 = logistic_fit(10, "no clip")
    bad = audit_mechanism(twin, d0, d1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + MARGIN, str(bad)


def test_noise_for_normalised_sum_on_raw_sum_twin_is_caught():
    twin, d0, d1 = logistic_fit(10, "raw units")
    bad = audit_mechanism(twin, d0, d1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + MARGIN, str(bad)


@pytest.mark.slow
def test_iteration_count_not_composed_twin_is_caught():
    mech, d0, d1 = logistic_fit(20)
    assert_dp(mech, d0, d1, EPS, DELTA, **FAST)
    twin, d0, d1 = logistic_fit(20, "not composed")
    bad = audit_mechanism(twin, d0, d1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + MARGIN, str(bad)


def test_released_gradient_floats_pass_the_default_event_search():
    """Raw released coordinates: value, low-bit and lattice events."""
    ratio = gaussian_noise_multipliers(EPS, DELTA, [1.0])[0]
    d0, d1 = neighbours()
    sums = {id(d): fit_sums(d, "correct")[2] for d in (d0, d1)}

    def mech(data, random_state, n_runs):
        source = check_random_source(random_state)
        noisy = release_sum(tiled(sums[id(data)], n_runs), ratio, source)
        return noisy.reshape(n_runs, -1)[:, 0]

    assert_dp(mech, d0, d1, EPS, DELTA, **FAST)


def regression_sums(data, clip_targets):
    X, y = data
    t = np.clip(y, -1, 1) if clip_targets else y / 1.0
    return exact_clipped_gram(X, 1.0, t, intercept=True)


def regression_fit(clip_targets):
    ratios = gaussian_noise_multipliers(
        EPS, DELTA, [_base.GRAM_SHARE, 1 - _base.GRAM_SHARE]
    )
    d0 = (np.array([[1.0, 0.0]]), np.array([1.0]))
    d1 = (np.array([[1.0, 0.0], [1e3, 0.0]]), np.array([1.0, -1e3]))
    sums = {}
    for d in (d0, d1):
        gram, cross = regression_sums(d, clip_targets)
        if not clip_targets:  # twin: the unclipped target on the same grid
            X, y = d
            q = np.hstack([X / np.maximum(1, np.abs(X[:, :1])), np.ones((len(y), 1))])
            nums = np.rint((y @ q) / np.sqrt(2) * 2.0**32).astype(np.int64)
            cross = FixedPoint(tuple(int(v) for v in nums), -32, (3,))
        sums[id(d)] = [gram, cross]
    plan = list(enumerate(ratios))
    return likelihood_ratio(sums, plan, d0, d1), d0, d1


def test_regression_fit_passes_and_unclipped_target_twin_is_caught():
    mech, d0, d1 = regression_fit(True)
    assert_dp(mech, d0, d1, EPS, DELTA, **FAST)
    twin, d0, d1 = regression_fit(False)
    bad = audit_mechanism(twin, d0, d1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + MARGIN, str(bad)
