"""Partition selection: the threshold's tail bound, and an audit with a twin."""

import math

import numpy as np
import pytest

from skdp.audit import audit_mechanism
from skdp.mechanisms import (
    _partition,
    discrete_laplace,
    partition_selection,
    partition_threshold,
)


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_threshold_is_the_smallest_with_tail_below_delta(epsilon, delta):
    tau = partition_threshold(epsilon, delta)
    num, den = _partition._scale(epsilon)
    t = num / den
    assert t >= 1 / epsilon

    def tail(m):  # P(Z >= m), m >= 1, for P(z) ∝ exp(-|z|/t)
        return math.exp(-m / t) / (1 + math.exp(-1 / t))

    assert tail(tau - 1) <= delta
    assert tau == 2 or tail(tau - 2) > delta


def test_empirical_release_rate_of_a_single_row_key():
    # at delta = 0.05 the one-row key's release rate is measurable
    epsilon, delta = 1.0, 0.05
    tau = partition_threshold(epsilon, delta)
    num, den = _partition._scale(epsilon)
    draws = discrete_laplace(num, den, 200_000, random_state=0)
    rate = np.mean(1 + draws >= tau)
    assert rate <= delta + 4 * math.sqrt(delta / 200_000)
    assert rate > delta / 3  # the threshold is not needlessly high


def test_absent_keys_are_never_kept_and_common_ones_are():
    keep, noisy = partition_selection([10_000, 1, 40], 1.0, 1e-6, random_state=0)
    assert keep[0] and not keep[1]
    assert noisy.dtype == float and noisy[0] == round(noisy[0])


EPS, DELTA = 1.0, 1e-6
AUDIT = {"n_samples": 8_000, "n_pilot": 2_000, "random_state": 0}


def select(data, seed):
    """The released keys with their noisy counts."""
    keys = sorted(data)
    counts = [data[k] for k in keys]
    keep, noisy = partition_selection(counts, EPS, DELTA, random_state=seed)
    return tuple((k, n) for k, n, kept in zip(keys, noisy, keep, strict=True) if kept)


D0 = {"a": 30}
D1 = {"a": 30, "b": 1}
D2 = {"a": 31}


def test_audit_passes_on_both_kinds_of_neighbours():
    for d1 in (D1, D2):
        result = audit_mechanism(select, D0, d1, delta=DELTA, **AUDIT)
        assert result.epsilon_lower_bound <= EPS, str(result)


def test_audit_catches_a_threshold_that_ignores_delta(monkeypatch):
    # the twin keeps every present key (threshold 1): the one-row key is
    # released at once, which no epsilon explains
    monkeypatch.setattr(_partition, "partition_threshold", lambda e, d, bound=None: 1)
    result = audit_mechanism(select, D0, D1, delta=DELTA, **AUDIT)
    assert result.epsilon_lower_bound > 3 * EPS, str(result)


def test_noise_std_matches_the_draws():
    num, den = _partition._scale(0.5)
    draws = discrete_laplace(num, den, 100_000, random_state=1)
    expected = _partition.partition_noise_std(0.5)
    assert np.std(draws) == pytest.approx(expected, rel=0.02)
    assert expected == pytest.approx(np.sqrt(2) / 0.5, rel=0.05)
