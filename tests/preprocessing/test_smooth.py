"""SmoothSensitivityMedian: smoothness by brute force, noise constants, audits."""

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from skdp import BudgetAccountant
from skdp.audit import assert_dp, audit_mechanism
from skdp.preprocessing import _smooth as smooth_module
from skdp.preprocessing._smooth import (
    SmoothSensitivityMedian,
    smooth_parameters,
    smooth_release,
    smooth_sensitivities,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sensitivity import bruteforce as bf

# -- brute force at the estimator level --------------------------------------


@pytest.mark.parametrize("domain", bf.DOMAINS[:2])
@pytest.mark.parametrize(
    "epsilon, delta, noise",
    [
        (1.0, 1e-6, "laplace"),
        (1.0, 0.2, "laplace"),
        (1.0, 0.0, "cauchy"),
        (3.0, 0.0, "cauchy"),
    ],
)
def test_smooth_bound_is_an_upper_bound_and_beta_smooth(domain, epsilon, delta, noise):
    # on every multiset of <= 7 values, with the estimator's beta and cap (and
    # a small cap that makes the floor e^{-beta K}(U - L) bind): S >= LS (LS
    # from the add/remove graph, not skdp) and S(x) <= e^beta S(x') on edges
    g = bf.graph(domain, 8)
    small = np.flatnonzero(g.sizes <= 7)
    local = g.local_sensitivity(g.median())
    _, beta, _, default_cap = smooth_parameters(epsilon, delta, 1, noise)
    for cap in (2, default_cap):
        s = np.full(len(g), np.nan)
        for node in small:
            column = g.sorted_values(node)[:, None]
            s[node] = smooth_sensitivities(column, beta, [g.lower], [g.upper], cap)[0]
        assert np.all(s[small] >= local[small])
        for node in small:
            u = g.neighbours[node]
            u = u[(u >= 0) & (g.sizes[np.maximum(u, 0)] <= 7)]
            assert np.all(s[node] <= math.exp(beta) * s[u] * (1 + 1e-12))


# -- the noise constants ------------------------------------------------------


def _hockey_stick(p, q, eps, dz):
    return max(
        np.sum(np.maximum(p - math.exp(eps) * q, 0)) * dz,
        np.sum(np.maximum(q - math.exp(eps) * p, 0)) * dz,
    )


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0])
@pytest.mark.parametrize("delta", [1e-6, 1e-3, 0.3])
def test_laplace_constants_by_numerical_hockey_stick(epsilon, delta):
    # the worst one-step situation NRS allow: S(x) = 1, S(x') = e^lam with
    # |lam| <= beta, medians |Δ| <= min(S(x), S(x')) apart; the exact
    # hockey-stick divergence of the two releases must be <= delta
    _, beta, mult, _ = smooth_parameters(epsilon, delta, 1, "laplace")
    z = np.linspace(-1, 1, 200_001) * 40 * mult * math.log(2 / delta)
    dz = z[1] - z[0]
    worst = 0.0
    for lam in (-beta, 0.0, beta):
        for shift in (0.0, min(1.0, math.exp(lam))):
            p = stats.laplace.pdf(z, scale=mult)
            q = stats.laplace.pdf(z, loc=shift, scale=mult * math.exp(lam))
            worst = max(worst, _hockey_stick(p, q, epsilon, dz))
    assert worst <= delta


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
def test_cauchy_constants_by_density_ratio(epsilon):
    # pure DP: the log density ratio of the two releases is <= epsilon for
    # every output (the tails of both are z^-2, so a wide grid suffices)
    _, beta, mult, _ = smooth_parameters(epsilon, 0.0, 1, "cauchy")
    z = np.linspace(-1, 1, 400_001) * 1e4 * mult
    worst = 0.0
    for lam in (-beta, beta):
        for shift in (-min(1.0, math.exp(lam)), min(1.0, math.exp(lam))):
            lp = stats.cauchy.logpdf(z, scale=mult)
            lq = stats.cauchy.logpdf(z, loc=shift, scale=mult * math.exp(lam))
            worst = max(worst, np.abs(lp - lq).max())
    assert worst <= epsilon


def test_laplace_epsilon_is_capped_at_one_per_feature():
    assert smooth_parameters(3.0, 1e-6, 1, "laplace")[0] == 1.0
    assert smooth_parameters(3.0, 1e-6, 5, "laplace")[0] == pytest.approx(0.6)
    assert smooth_parameters(3.0, 0.0, 1, "cauchy")[0] == 3.0


# -- audits --------------------------------------------------------------------

BOUNDS = (0.0, 10.0)
AUDIT = {"n_samples": 40_000, "n_pilot": 8_000, "random_state": 0}


def col(*values):
    return np.array(values, dtype=float)[:, None]


def smooth_runs(data, seed, epsilon, delta, noise, n_runs, beta=None):
    """Vectorised twin of fit: S and the median once, n_runs releases."""
    _, default_beta, mult, cap = smooth_module.smooth_parameters(
        epsilon, delta, 1, noise
    )
    beta = default_beta if beta is None else beta
    s = smooth_module.smooth_sensitivities(data, beta, [0.0], [10.0], cap)
    med = smooth_module.lower_medians(data, [0.0], [10.0])
    out = smooth_release(
        np.repeat(med, n_runs), np.repeat(mult * s, n_runs), noise, random_state=seed
    )
    return np.clip(out, *BOUNDS)


def test_wrapper_is_the_estimator():
    data = col(0, 1.5, 4.2)
    for noise, delta in (("laplace", 0.01), ("cauchy", 0.0)):
        for seed in range(10):
            est = SmoothSensitivityMedian(
                1.0, delta or 1e-6, bounds=BOUNDS, noise=noise, random_state=seed
            ).fit(data)
            twin = smooth_runs(data, seed, 1.0, delta or 1e-6, noise, 1)
            assert twin[0] == est.median_[0]


# Worst pairs on the domain {0, 1, 1.5, 4, 4.2, 10}, n <= 7: found offline by
# computing, for every edge, the exact (clipped) release distributions and the
# best threshold event, for the correct mechanism and for each mutant.
LAPLACE_PAIRS = [
    (col(4, 4.2, 4.2), col(4, 4, 4.2, 4.2)),
    (col(1.5, 4, 4.2, 10, 10, 10), col(1.5, 4, 4.2, 10, 10, 10, 10)),
]
CAUCHY_PAIRS = [
    (col(1.5, 1.5, 1.5), col(1.5, 1.5, 1.5, 1.5)),
    (col(0, 0, 4, 4, 4), col(0, 0, 0, 4, 4, 4)),
]


@pytest.mark.parametrize("pair", LAPLACE_PAIRS)
def test_audit_laplace_passes(pair):
    def mech(data, seed, n_runs):
        return smooth_runs(data, seed, 1.0, 0.01, "laplace", n_runs)

    assert_dp(mech, *pair, 1.0, 0.01, **AUDIT)


@pytest.mark.parametrize("pair", CAUCHY_PAIRS)
def test_audit_cauchy_passes(pair):
    def mech(data, seed, n_runs):
        return smooth_runs(data, seed, 1.0, 0.0, "cauchy", n_runs)

    assert_dp(mech, *pair, 1.0, **AUDIT)


def test_audit_catches_laplace_with_epsilon_as_beta():
    # RelM's bug: the smoothing parameter set to epsilon (10.6x too large
    # for delta = 0.01); exact best-event bound on this pair: 5.4
    def mech(data, seed, n_runs):
        return smooth_runs(data, seed, 1.0, 0.01, "laplace", n_runs, beta=1.0)

    result = audit_mechanism(mech, *LAPLACE_PAIRS[0], delta=0.01, **AUDIT)
    assert result.epsilon_lower_bound > 2.0


def test_audit_catches_cauchy_with_a_mismatched_beta():
    # Cauchy noise 6S/eps with S smoothed at beta = 3 eps instead of eps/6.
    # (beta = eps, 6x too large, is not caught: its exact worst loss on this
    # domain is 1.003 eps.) Exact best-event bound on this pair: 3.0
    def mech(data, seed, n_runs):
        return smooth_runs(data, seed, 1.0, 0.0, "cauchy", n_runs, beta=3.0)

    result = audit_mechanism(mech, *CAUCHY_PAIRS[0], **AUDIT)
    assert result.epsilon_lower_bound > 1.5


# -- behaviour ---------------------------------------------------------------


def test_budget_and_epsilon_cap_in_the_ledger():
    acc = BudgetAccountant(epsilon=10.0, delta=1e-5)
    X = np.random.default_rng(0).normal(5, 1, size=(2000, 2))
    est = SmoothSensitivityMedian(3.0, 1e-6, bounds=BOUNDS, accountant=acc).fit(X)
    # Laplace: min(3/2, 1) per feature, two features
    assert acc.total() == pytest.approx((2.0, 1e-6))
    assert (est.epsilon_spent_, est.delta_spent_) == pytest.approx(acc.total())
    SmoothSensitivityMedian(
        3.0, 1e-6, bounds=BOUNDS, noise="cauchy", accountant=acc
    ).fit(X)
    assert acc.total() == pytest.approx((5.0, 1e-6))  # Cauchy: no delta
    assert [e.label for e in acc.entries] == [
        "SmoothSensitivityMedian: smooth-sensitivity releases"
    ] * 2


def test_accuracy_on_stable_data():
    X = np.random.default_rng(1).normal(5, 1, size=(20_000, 1))
    truth = np.sort(X[:, 0])[9_999]
    _, beta, mult, cap = smooth_parameters(1.0, 1e-6, 1, "laplace")
    s = smooth_sensitivities(X, beta, [0.0], [10.0], cap)[0]
    assert s < 0.01  # dense data: tiny smooth sensitivity
    est = SmoothSensitivityMedian(bounds=BOUNDS, random_state=0).fit(X)
    # |Lap(mult * s)| > mult * s * ln(1e7) has probability 1e-7
    assert abs(est.median_[0] - truth) < mult * s * math.log(1e7)
    errors = [
        abs(
            SmoothSensitivityMedian(bounds=BOUNDS, noise="cauchy", random_state=k)
            .fit(X)
            .median_[0]
            - truth
        )
        for k in range(41)
    ]
    # median |Cauchy(6s/eps)| = 6s/eps; the sample median of 41 exceeds 10x
    # that with probability far below 1e-6
    assert np.median(errors) < 10 * 6 * s


@pytest.mark.parametrize(
    "X", [np.full((5, 1), 7.0), np.array([[3.0]]), np.full((5, 1), 1e9)]
)
def test_degenerate_inputs_release_inside_the_bounds(X):
    for noise in ("laplace", "cauchy"):
        est = SmoothSensitivityMedian(bounds=BOUNDS, noise=noise, random_state=0)
        m = est.fit(X).median_
        assert np.all((m >= 0) & (m <= 10))


def test_huge_bounds():
    X = np.full((100, 1), 1e300)
    X[:50] = 0.0  # S is about U - L
    est = SmoothSensitivityMedian(bounds=(0, 8e307), random_state=0).fit(X)
    assert np.isfinite(est.median_).all()


@pytest.mark.parametrize(
    "kwargs, X, match",
    [
        ({}, np.array([[np.nan]]), "NaN or inf"),
        ({}, np.empty((0, 1)), "0 sample"),
        ({}, np.array([["a"]], dtype=object), "could not convert|numeric"),
        ({"bounds": None}, np.ones((3, 1)), "needs public bounds"),
        ({"bounds": (-1e308, 1e308)}, np.ones((3, 1)), "finite float"),
        ({"bounds": (0, 1e308)}, np.ones((3, 1)), "too wide"),
        ({"delta": 0.0}, np.ones((3, 1)), "delta > 0"),
        ({"noise": "gaussian"}, np.ones((3, 1)), "noise"),
        ({"epsilon": 5.0, "noise": "cauchy"}, np.ones((3, 1)), "exceed"),
    ],
)
def test_bad_input_charges_nothing(kwargs, X, match):
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    params = {"bounds": BOUNDS, **kwargs}
    with pytest.raises(Exception, match=match):
        SmoothSensitivityMedian(accountant=acc, **params).fit(X)
    assert acc.entries == ()


def test_pandas_output_and_inverse():
    X = pd.DataFrame({"a": np.arange(100.0) % 10, "b": np.arange(100.0) % 7})
    est = SmoothSensitivityMedian(bounds=BOUNDS, random_state=0)
    out = est.set_output(transform="pandas").fit_transform(X)
    assert list(out.columns) == ["a", "b"]
    np.testing.assert_allclose(est.inverse_transform(out), X.to_numpy())
