"""Tests for exponential mechanism, report-noisy-max and permute-and-flip."""

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from skdp.accounting import PrivacyCost
from skdp.mechanisms._selection import (
    _select_many,
    exponential_mechanism,
    permute_and_flip,
    report_noisy_max,
    selection_cost,
)

P_MIN = 1e-6  # significance of every distribution test: a flaky test is a bug


def em_probabilities(scores, epsilon, sensitivity, monotonic=False):
    """Exact exponential-mechanism probabilities (computed independently)."""
    u = np.asarray(scores, dtype=float)
    k = 1.0 if monotonic else 2.0
    w = np.exp(epsilon * (u - u.max()) / (k * sensitivity))
    return w / w.sum()


def pf_probabilities(scores, epsilon, sensitivity):
    """Exact permute-and-flip probabilities by enumerating all permutations."""
    u = np.asarray(scores, dtype=float)
    accept = np.exp(epsilon * (u - u.max()) / (2 * sensitivity))
    probs = np.zeros(u.size)
    perms = list(itertools.permutations(range(u.size)))
    for perm in perms:
        survive = 1.0
        for r in perm:
            probs[r] += survive * accept[r]
            survive *= 1.0 - accept[r]
    return probs / len(perms)


def chi2_pvalue(counts, probs):
    counts = np.asarray(counts, dtype=float)
    expected = probs * counts.sum()
    return stats.chisquare(counts, expected).pvalue


def frequencies(scores, epsilon, sensitivity, noise, n, seed, monotonic=False):
    picks = _select_many(
        scores,
        epsilon,
        sensitivity,
        noise=noise,
        monotonic=monotonic,
        random_state=seed,
        n_runs=n,
    )
    return np.bincount(picks, minlength=len(scores))


SCORES = [0.0, 1.0, 2.5, 3.0, -1.0]


@pytest.mark.parametrize("monotonic", [False, True])
@pytest.mark.parametrize("noise", ["gumbel"])
def test_em_and_gumbel_rnm_match_exact_probabilities(noise, monotonic):
    counts = frequencies(SCORES, 0.8, 1.0, noise, 200_000, 1, monotonic)
    probs = em_probabilities(SCORES, 0.8, 1.0, monotonic)
    assert chi2_pvalue(counts, probs) > P_MIN


def test_public_em_matches_exact_probabilities():
    # the public function itself, one call per draw
    picks = [
        exponential_mechanism(SCORES, 1.0, 2.0, random_state=seed)
        for seed in range(20_000)
    ]
    counts = np.bincount(picks, minlength=len(SCORES))
    assert chi2_pvalue(counts, em_probabilities(SCORES, 1.0, 2.0)) > P_MIN


@pytest.mark.parametrize(
    "scores", [[0.0, 1.0, 2.0], [3.0, 3.0, 1.0, 0.0, 2.0], [5.0, -5.0]]
)
def test_permute_and_flip_matches_enumerated_distribution(scores):
    counts = frequencies(scores, 1.0, 1.0, "exponential", 200_000, 2)
    assert chi2_pvalue(counts, pf_probabilities(scores, 1.0, 1.0)) > P_MIN


def test_pf_enumeration_agrees_with_closed_form_for_two_candidates():
    # two candidates, gap g: the runner-up wins only if visited first and
    # accepted: p = exp(-eps g / 2Δ) / 2.
    probs = pf_probabilities([1.0, 0.0], 1.0, 1.0)
    assert probs[1] == pytest.approx(math.exp(-0.5) / 2)


def test_public_pf_matches_enumerated_distribution():
    scores = [0.0, 1.0, 2.0, 2.0]
    picks = [permute_and_flip(scores, 1.0, 1.0, random_state=s) for s in range(20_000)]
    counts = np.bincount(picks, minlength=len(scores))
    assert chi2_pvalue(counts, pf_probabilities(scores, 1.0, 1.0)) > P_MIN


@pytest.mark.parametrize("gap", [0.0, 1.0, 3.0])
def test_laplace_rnm_two_candidates_exact(gap):
    # Difference of two iid Lap(b): P(D > x) = exp(-x/b) (2 + x/b) / 4, x >= 0.
    b = 2.0 / 1.0  # general scores: 2Δ/ε
    p_runner_up = math.exp(-gap / b) * (2 + gap / b) / 4
    n = 100_000
    counts = frequencies([gap, 0.0], 1.0, 1.0, "laplace", n, 3)
    assert stats.binomtest(int(counts[1]), n, p_runner_up).pvalue > P_MIN


def test_laplace_rnm_monotone_uses_half_scale():
    b = 1.0  # monotone: Δ/ε
    gap = 1.0
    p_runner_up = math.exp(-gap / b) * (2 + gap / b) / 4
    n = 100_000
    counts = frequencies([gap, 0.0], 1.0, 1.0, "laplace", n, 4, monotonic=True)
    assert stats.binomtest(int(counts[1]), n, p_runner_up).pvalue > P_MIN


@pytest.mark.parametrize("noise", ["laplace", "gumbel", "exponential"])
def test_all_equal_scores_give_uniform_choice(noise):
    counts = frequencies([7.0] * 6, 1.0, 1.0, noise, 60_000, 5)
    assert chi2_pvalue(counts, np.full(6, 1 / 6)) > P_MIN


@pytest.mark.parametrize("noise", ["laplace", "gumbel", "exponential"])
def test_public_functions_equal_batch_path(noise):
    for seed in range(20):
        one = int(
            _select_many(
                SCORES,
                1.0,
                1.0,
                noise=noise,
                monotonic=False,
                random_state=seed,
                n_runs=1,
            )[0]
        )
        assert report_noisy_max(SCORES, 1.0, 1.0, noise=noise, random_state=seed) == one
    assert exponential_mechanism(SCORES, 1.0, 1.0, random_state=3) == (
        report_noisy_max(SCORES, 1.0, 1.0, noise="gumbel", random_state=3)
    )
    assert permute_and_flip(SCORES, 1.0, 1.0, random_state=3) == (
        report_noisy_max(SCORES, 1.0, 1.0, noise="exponential", random_state=3)
    )


@pytest.mark.parametrize(
    "func",
    [
        exponential_mechanism,
        permute_and_flip,
        lambda *a, **k: report_noisy_max(*a, noise="laplace", **k),
        lambda *a, **k: report_noisy_max(*a, noise="gumbel", **k),
    ],
)
def test_huge_scores_never_nan_or_overflow(func):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        picks = {
            func([1e300, -1e300, 1e300], 1.0, 1.0, random_state=s) for s in range(60)
        }
        assert picks == {0, 2}
        assert {func([1e308, -1e308], 1.0, 1.0, random_state=s) for s in range(20)} == {
            0
        }
        assert func([-1e308, 1e308], 1e-3, 1e-300, random_state=0) == 1


def test_returns_python_int():
    for func in (exponential_mechanism, permute_and_flip, report_noisy_max):
        out = func([1, 2, 3], 1.0, 1.0, random_state=0)
        assert type(out) is int


def test_million_candidates_one_pass():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=1_000_000)
    scores[123_456] = 1e6
    for func in (exponential_mechanism, permute_and_flip, report_noisy_max):
        assert func(scores, 1.0, 1.0, random_state=1) == 123_456


def test_secure_default_source_runs():
    assert permute_and_flip([0.0, 1e9], 1.0, 1.0) == 1


@pytest.mark.parametrize("epsilon", [0, -1.0, float("nan"), float("inf")])
def test_bad_epsilon(epsilon):
    for func in (exponential_mechanism, permute_and_flip, report_noisy_max):
        with pytest.raises(ValueError, match="epsilon"):
            func([1.0, 2.0], epsilon, 1.0)


@pytest.mark.parametrize("sensitivity", [0, -1.0, float("nan"), float("inf")])
def test_bad_sensitivity(sensitivity):
    for func in (exponential_mechanism, permute_and_flip, report_noisy_max):
        with pytest.raises(ValueError, match="sensitivity"):
            func([1.0, 2.0], 1.0, sensitivity)


@pytest.mark.parametrize(
    "scores, match",
    [
        ([], "empty"),
        ([1.0, float("nan")], "finite"),
        ([1.0, float("inf")], "finite"),
        ([[1.0, 2.0]], "1-D"),
        (["a", "b"], "numeric"),
    ],
)
def test_bad_scores(scores, match):
    for func in (exponential_mechanism, permute_and_flip, report_noisy_max):
        with pytest.raises(ValueError, match=match):
            func(scores, 1.0, 1.0)


def test_bad_noise():
    with pytest.raises(ValueError, match="noise"):
        report_noisy_max([1.0], 1.0, 1.0, noise="cauchy")


def test_selection_cost():
    assert selection_cost(1.0) == PrivacyCost(1.0, 0.0, 0.125, mechanism="exponential")
    assert selection_cost(0.5, noise="exponential") == PrivacyCost(
        0.5, 0.0, 0.125, mechanism="permute_and_flip"
    )
    assert selection_cost(2.0, noise="laplace").rho == 2.0
    with pytest.raises(ValueError):
        selection_cost(0.0)
    with pytest.raises(ValueError):
        selection_cost(1.0, noise="x")
