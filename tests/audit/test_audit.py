"""Unit tests for skdp.audit."""

import math

import numpy as np
import pytest
from scipy import stats

from skdp.audit import (
    AuditResult,
    OutcomeSetEvent,
    ThresholdEvent,
    assert_dp,
    audit_mechanism,
    clopper_pearson_interval,
)
from skdp.audit._audit import _cp_lower, _cp_upper


@pytest.mark.parametrize("k, n", [(0, 10), (10, 10), (3, 17), (500, 1000), (7, 10**6)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 1 - 1e-6])
def test_clopper_pearson_matches_scipy(k, n, confidence):
    ci = stats.binomtest(k, n).proportion_ci(confidence, method="exact")
    low, high = clopper_pearson_interval(k, n, confidence_level=confidence)
    # scipy finds the bounds by root finding (about 1e-7 relative accuracy for
    # tiny bounds); the beta quantiles used here are more accurate.
    assert low == pytest.approx(ci.low, rel=1e-6, abs=1e-14)
    assert high == pytest.approx(ci.high, rel=1e-6, abs=1e-14)


@pytest.mark.parametrize("n", [1, 10, 10**6])
def test_clopper_pearson_closed_forms(n):
    tail = 5e-7
    # k = 1: lower bound 1 - (1 - tail)**(1/n); k = 0: upper 1 - tail**(1/n)
    low, _ = clopper_pearson_interval(1, n, confidence_level=1 - 2 * tail)
    assert low == pytest.approx(-math.expm1(math.log1p(-tail) / n), rel=1e-9)
    _, high = clopper_pearson_interval(0, n, confidence_level=1 - 2 * tail)
    assert high == pytest.approx(-math.expm1(math.log(tail) / n), rel=1e-9)


@pytest.mark.parametrize("k, n", [(0, 10), (10, 10), (3, 17), (4000, 10**5)])
def test_one_sided_bounds_match_scipy(k, n):
    level = 1e-4
    low = stats.binomtest(k, n, alternative="greater").proportion_ci(1 - level)
    high = stats.binomtest(k, n, alternative="less").proportion_ci(1 - level)
    assert float(_cp_lower(k, n, level)) == pytest.approx(low.low, rel=1e-9, abs=1e-14)
    assert float(_cp_upper(k, n, level)) == pytest.approx(
        high.high, rel=1e-9, abs=1e-14
    )


def test_clopper_pearson_rejects_bad_input():
    with pytest.raises(ValueError):
        clopper_pearson_interval(5, 3)
    with pytest.raises(ValueError):
        clopper_pearson_interval(1, 3, confidence_level=1.0)


def leak(data, random_state, n_runs=None):
    """Releases the dataset size exactly: not DP at all."""
    return np.full(n_runs, float(len(data)))


def constant(data, random_state, n_runs=None):
    return np.zeros(n_runs)


def test_leaky_mechanism_gets_large_bound():
    result = audit_mechanism(leak, [1, 2], [1], n_samples=100_000, random_state=0)
    # p0 = 1, p1 = 0: the bound is only limited by the sample size
    assert result.epsilon_lower_bound > 8
    assert result.counts in ((100_000, 0), (0, 100_000))
    assert isinstance(result, AuditResult)
    with pytest.raises(AssertionError, match="refutes"):
        assert_dp(leak, [1, 2], [1], epsilon=5.0, random_state=0)


def test_constant_mechanism_gets_no_bound():
    result = audit_mechanism(constant, [1, 2], [1], n_samples=50_000, random_state=0)
    assert result.epsilon_lower_bound <= 0.0
    assert_dp(constant, [1, 2], [1], epsilon=0.0, random_state=0)


def test_randomized_response_bound_is_close_and_valid():
    eps = 1.0
    keep = math.exp(eps) / (1 + math.exp(eps))

    def rr(bit, random_state, n_runs):
        rng = np.random.default_rng(random_state)
        flip = rng.random(n_runs) >= keep
        return np.where(flip, 1 - bit, bit)

    result = audit_mechanism(rr, 0, 1, n_samples=200_000, random_state=1)
    assert 0.9 < result.epsilon_lower_bound <= eps
    assert isinstance(result.event, OutcomeSetEvent)


def test_scalar_output_uses_threshold_event():
    def laplace(data, random_state, n_runs):
        rng = np.random.default_rng(random_state)
        return data + rng.laplace(scale=1.0, size=n_runs)

    result = audit_mechanism(laplace, 0.0, 1.0, n_samples=100_000, random_state=2)
    assert isinstance(result.event, ThresholdEvent)
    assert 0.85 < result.epsilon_lower_bound <= 1.0
    assert "output" in str(result)


def test_non_vectorised_mechanism_with_mixed_outputs():
    # outputs None or a tuple; one Python call per run
    def mech(data, random_state):
        rng = np.random.default_rng(random_state)
        if rng.random() < (0.9 if data else 0.1):
            return None
        return ("x", int(rng.integers(2)))

    result = audit_mechanism(
        mech, True, False, n_samples=5_000, n_pilot=2_000, random_state=3
    )
    assert result.epsilon_lower_bound > 1.5  # true value ln 9 = 2.2
    assert result.epsilon_lower_bound <= math.log(9)


def test_user_event_tests_both_directions():
    def mech(bit, random_state, n_runs):
        rng = np.random.default_rng(random_state)
        return rng.random(n_runs) < (0.6 if bit else 0.3)

    result = audit_mechanism(
        mech, 1, 0, n_samples=100_000, event=lambda out: not out, random_state=4
    )
    assert result.n_events_tested == 2
    assert result.direction == (1, 0)  # "False" is likelier under d1
    assert 0.4 < result.epsilon_lower_bound <= math.log(0.7 / 0.4)


def test_delta_is_subtracted():
    delta = 0.05

    def mech(data, random_state, n_runs):
        # (0, delta)-DP: reveals the data with probability delta
        rng = np.random.default_rng(random_state)
        reveal = rng.random(n_runs) < delta
        return np.where(reveal, data, -1)

    pure = audit_mechanism(mech, 0, 1, n_samples=100_000, random_state=5)
    assert pure.epsilon_lower_bound > 5
    approx = audit_mechanism(mech, 0, 1, n_samples=100_000, delta=delta, random_state=5)
    assert approx.epsilon_lower_bound == 0.0
    assert_dp(mech, 0, 1, epsilon=0.0, delta=delta, random_state=5)


def test_vector_outputs_and_sum_feature():
    def mech(data, random_state, n_runs):
        rng = np.random.default_rng(random_state)
        return data + rng.laplace(scale=4.0, size=(n_runs, 4))

    d0 = np.zeros(4)
    d1 = np.ones(4)
    result = audit_mechanism(mech, d0, d1, n_samples=100_000, random_state=6)
    # four coordinates, each 1/4-DP: the sum feature finds a bound above 1/4
    assert 0.3 < result.epsilon_lower_bound <= 1.0


def test_reproducible():
    a = audit_mechanism(leak, [1, 2], [1], n_samples=1000, random_state=7)
    b = audit_mechanism(leak, [1, 2], [1], n_samples=1000, random_state=7)
    assert a.epsilon_lower_bound == b.epsilon_lower_bound


def test_bad_arguments():
    with pytest.raises(ValueError, match="n_samples"):
        audit_mechanism(leak, [1], [], n_samples=0)
    with pytest.raises(ValueError, match="alpha"):
        audit_mechanism(leak, [1], [], alpha=1.5)
    with pytest.raises(ValueError, match="delta"):
        audit_mechanism(leak, [1], [], delta=1.0)

    def wrong_length(data, random_state, n_runs):
        return np.zeros(n_runs + 1)

    with pytest.raises(ValueError, match="n_runs"):
        audit_mechanism(wrong_length, [1], [], n_samples=10)
