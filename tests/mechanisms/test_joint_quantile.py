"""Joint quantiles: the utility's sensitivity by brute force, the sampler
against enumeration, an audit with a twin, and accuracy on smooth and tied data."""

import itertools

import numpy as np
import pytest
from scipy.stats import chisquare

from skdp.audit import assert_dp, audit_mechanism
from skdp.mechanisms import check_random_source
from skdp.mechanisms._joint_quantile import (
    _window_logsumexp,
    joint_quantile_blocks,
    joint_quantile_states,
)
from skdp.sensitivity._joint_quantile import (
    grid_rank_counts,
    joint_quantile_utility,
    rank_blocks,
    rank_states,
)
from skdp.stats._quantile_joint import joint_release

DOMAIN = [0.0, 1.0, 1.0, 1.5, 2.0, 3.0, -7.0, 9.0]  # ties, between, outside


def utilities(data, levels, split_bits=1):
    _, below, atoms = grid_rank_counts(np.array(data, dtype=float), 0.0, 3.0, 0)
    ranks = rank_states(below, atoms, split_bits)
    sequences = itertools.combinations(range(ranks.size), len(levels))
    return np.array(
        [joint_quantile_utility(ranks[list(s)], len(data), levels) for s in sequences]
    )


@pytest.mark.parametrize("levels", [(0.5,), (0.25, 0.75), (0.1, 0.5, 0.6)])
def test_utility_moves_by_at_most_two(levels):
    worst = 0.0
    for size in range(4):
        for data in itertools.combinations_with_replacement(DOMAIN, size):
            base = utilities(data, levels)
            for row in set(DOMAIN):
                grown = utilities((*data, row), levels)
                worst = max(worst, np.abs(grown - base).max())
    assert worst <= 2.0 + 1e-12
    if len(levels) > 1:
        assert worst > 1.0  # a sensitivity of 1 would be wrong


def exact_distribution(ranks, n, levels, epsilon):
    sequences = list(itertools.combinations(range(ranks.size), len(levels)))
    scores = np.array(
        [joint_quantile_utility(ranks[list(s)], n, levels) for s in sequences]
    )
    weights = np.exp(epsilon * (scores - scores.max()) / 4)
    return sequences, weights / weights.sum()


def test_sampler_draws_the_enumerated_distribution():
    _, below, atoms = grid_rank_counts(np.array([0.0, 1.0, 1.0, 2.5, 3.0]), 0, 3, 0)
    ranks = rank_states(below, atoms, 0)  # 8 states, 28 increasing pairs
    levels = np.array([0.3, 0.7])
    sequences, probs = exact_distribution(ranks, 5, levels, 2.0)
    draws = [
        tuple(joint_quantile_states(ranks, 5, levels, 2.0, random_state=seed))
        for seed in range(6_000)
    ]
    index = {s: i for i, s in enumerate(sequences)}
    observed = np.bincount([index[d] for d in draws], minlength=len(sequences))
    # Pearson's test against the enumerated probabilities (fails w.p. 1e-6)
    assert chisquare(observed, probs * len(draws)).pvalue > 1e-6
    assert all(a < b for d in draws for a, b in itertools.pairwise(d))


# -- audit: worst-case neighbours on a small public grid ---------------------

EPS = 1.0
AUDIT = {"n_samples": 6_000, "n_pilot": 1_500, "random_state": 0}
# the pair whose exact output distributions differ most (searched by
# enumeration over all datasets of up to 3 rows on this grid): a tie atom
# at 1.5 between grid points and a row added at the lower bound
D0 = np.array([1.5, 1.5, 3.0])
D1 = np.array([1.5, 1.5, 3.0, 0.0])


def release(data, seed, epsilon=EPS):
    _, below, atoms = grid_rank_counts(data, 0.0, 3.0, 0)
    ranks = rank_states(below, atoms, 1)
    states = joint_quantile_states(
        ranks, data.size, np.array([0.25, 0.75]), epsilon, random_state=seed
    )
    return tuple(int(s) // 3 for s in states)  # the grid points released


def test_audit_passes():
    assert_dp(release, D0, D1, EPS, **AUDIT)


def test_audit_catches_a_scale_without_the_sensitivity_and_the_factor_two():
    # the twin draws with exp(eps u) instead of exp(eps u / (2 * 2))
    mutant = audit_mechanism(lambda d, s: release(d, s, 4 * EPS), D0, D1, **AUDIT)
    assert mutant.epsilon_lower_bound > EPS, str(mutant)


# -- the blocked sampler: runs of equal ranks as blocks --------------------------


def test_blocked_sampler_draws_the_law_of_the_expanded_states():
    # a gap run of 2 points and an atom, split_bits=0 (2 states per point),
    # the points in 1, 3, 1 and 2 copies: three outputs may share one block
    # (binom(size, k) placements), as the enumeration over all states allows
    below, atoms = np.array([0, 0, 0, 2]), np.array([0, 0, 2, 0])
    multiplicity = np.array([1, 3, 1, 2])
    ranks, sizes, _, _ = rank_blocks(below, atoms, 0, multiplicity)
    expanded = np.repeat(ranks, sizes.astype(int))  # 16 states
    levels = np.array([0.2, 0.5, 0.9])
    sequences, probs = exact_distribution(expanded, 2, levels, 3.0)
    first_state = np.cumsum(sizes) - sizes
    index = {s: i for i, s in enumerate(sequences)}
    observed = np.zeros(len(sequences))
    source = check_random_source(3)
    draws = 20_000
    for _ in range(draws):
        blocks, offsets = joint_quantile_blocks(
            ranks, sizes, 2, levels, 3.0, random_state=source
        )
        states = tuple(int(s) for s in first_state[blocks] + offsets)
        observed[index[states]] += 1
    assert observed.sum() == draws  # strictly increasing states only
    assert probs.min() * draws >= 5  # Pearson's test is valid on every cell
    assert chisquare(observed, probs * draws).pvalue > 1e-6


# about 17 s; runs with pytest -m slow, not in the CI command (the mechanism's
# own audit and its twin run there)
@pytest.mark.slow
def test_release_of_the_estimator_passes_the_audit():
    # fit's own path: relative grid, blocks with copies, the blocked sampler
    def fitted_release(data, seed):
        out = joint_release(
            data, 0.0, 3.0, np.array([0.25, 0.75]), EPS, check_random_source(seed)
        )
        return tuple(float(v) for v in out)

    assert_dp(fitted_release, D0, D1, EPS, **AUDIT)


@pytest.mark.parametrize("size", [1, 2, 63, 64, 65, 129, 700, 64 * 37 + 5])
@pytest.mark.parametrize("longest", [0, 1, 5, 70, 5000])
def test_window_sums_are_the_direct_sums(size, longest):
    # chunk suffix + runs of whole chunks + chunk prefix, or term by term
    # inside one chunk: the direct log-sum of every window, also where the
    # window's terms are 1e300 times smaller than those around it
    rng = np.random.default_rng(size + longest)
    values = rng.normal(0, 300, size)
    values[rng.random(size) < 0.1] = -np.inf
    stop = np.arange(size)
    start = np.maximum(0, stop - rng.integers(0, longest + 1, size))
    got = _window_logsumexp(values, start)
    for b in range(size):
        window = values[start[b] : b]
        expected = np.logaddexp.reduce(window) if window.size else -np.inf
        if np.isfinite(expected):
            assert got[b] == pytest.approx(expected, rel=1e-12, abs=1e-9)
        else:
            assert got[b] == -np.inf


def test_window_sums_take_memory_linear_in_the_blocks():
    # the runs of whole chunks were a table of every (first chunk, length)
    # pair: n**2 / 64**2 floats, 1.97 TiB at the 33 million blocks of
    # Adult's fnlwgt at epsilon = 167 (a MemoryError after the charge); the
    # dyadic runs take O(n): here some 20 copies of the values, not 0.3 GB
    import tracemalloc

    size = 200_000
    values = np.random.default_rng(0).normal(0, 3, size)
    start = np.zeros(size, dtype=np.int64)
    tracemalloc.start()
    try:
        got = _window_logsumexp(values, start)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * values.nbytes  # the table alone was 49 x
    assert got[-1] == pytest.approx(np.logaddexp.reduce(values[:-1]), rel=1e-12)
