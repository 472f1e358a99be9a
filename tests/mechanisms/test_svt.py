"""Tests for AboveThreshold and Sparse."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, stats

from skdp.accounting import PrivacyCost
from skdp.audit import assert_dp, audit_mechanism
from skdp.mechanisms._svt import (
    _Grid,
    _svt_many,
    above_threshold,
    sparse,
    svt_cost,
)

P_MIN = 1e-6


def fire_probability(gap, query_scale, threshold_scale, power=1):
    """P(ν_i ≥ gap + ρ for `power` queries sharing one ρ), by quadrature."""

    def integrand(r):
        return stats.laplace.pdf(r, scale=threshold_scale) * (
            stats.laplace.sf(gap + r, scale=query_scale) ** power
        )

    value, _ = integrate.quad(integrand, -np.inf, np.inf, limit=200)
    return value


# (cutoff, monotonic) -> (query scale, threshold scale) for epsilon = 1, Δ = 1:
# Lyu–Su–Li Alg. 1 with eps1 = eps2 = 1/2.
SCALES = {
    (1, False): (4.0, 2.0),  # Dwork–Roth Alg. 1
    (1, True): (2.0, 2.0),
    (3, False): (12.0, 2.0),
    (3, True): (6.0, 2.0),
}


@pytest.mark.parametrize("cutoff, monotonic", list(SCALES))
@pytest.mark.parametrize("gap", [0.0, 3.0])
def test_single_query_fire_probability(cutoff, monotonic, gap):
    q_scale, t_scale = SCALES[(cutoff, monotonic)]
    p = fire_probability(gap, q_scale, t_scale)
    n = 200_000
    fired = _svt_many(
        [0.0],
        gap,
        1.0,
        cutoff=cutoff,
        monotonic=monotonic,
        random_state=7,
        n_runs=n,
    )
    assert stats.binomtest(int(fired.sum()), n, p).pvalue > P_MIN


@pytest.mark.parametrize("lazy", [False, True])
def test_public_above_threshold_fire_probability(lazy):
    # the public functions, one call per draw (slow: a few ms per call)
    p = fire_probability(1.0, 4.0, 2.0)
    n = 1_000
    hits = 0
    for seed in range(n):
        queries = iter([0.0]) if lazy else [0.0]
        hits += above_threshold(queries, 1.0, 1.0, random_state=seed) == 0
    assert stats.binomtest(hits, n, p).pvalue > P_MIN


def test_threshold_noise_drawn_once_per_run():
    # two identical queries share the threshold noise: P(both) = E[S(ρ)^2],
    # far from the p^2 of independent thresholds.
    p_both = fire_probability(0.0, 12.0, 2.0, power=2)
    p_one = fire_probability(0.0, 12.0, 2.0)
    n = 200_000
    fired = _svt_many([0.0, 0.0], 0.0, 1.0, cutoff=3, random_state=8, n_runs=n)
    both = int(fired.all(axis=1).sum())
    assert stats.binomtest(both, n, p_both).pvalue > P_MIN
    assert stats.binomtest(both, n, p_one**2).pvalue < P_MIN


def test_sparse_keeps_only_first_cutoff_hits():
    fired = _svt_many([1e4] * 10, 0.0, 1.0, cutoff=3, random_state=0, n_runs=1000)
    assert (fired.sum(axis=1) == 3).all()
    assert fired[:, :3].all()


def test_none_when_nothing_fires_never_minus_one():
    out = above_threshold([0.0, 1.0, 2.0], 1e6, 1.0, random_state=0)
    assert out is None
    out = above_threshold(iter([0.0, 1.0]), 1e6, 1.0, random_state=0)
    assert out is None
    assert sparse([0.0, 1.0], 1e6, 1.0, cutoff=2, random_state=0) == []
    assert above_threshold([], 0.0, 1.0, random_state=0) is None
    assert sparse(iter([]), 0.0, 1.0, cutoff=1, random_state=0) == []


def test_returns_first_hit_index_as_int():
    out = above_threshold([-1e6, -1e6, 1e6, 1e6], 0.0, 1.0, random_state=0)
    assert out == 2 and type(out) is int
    # a stream of answers (not numpy) gives the same
    assert above_threshold(iter([-1e6, -1e6, 1e6]), 0.0, 1.0, random_state=0) == 2


def test_sparse_indices_increasing_and_bounded():
    answers = np.array([1e6, -1e6, 1e6, 1e6, -1e6, 1e6])
    out = sparse(answers, 0.0, 1.0, cutoff=3, random_state=0)
    assert out == [0, 2, 3]
    assert all(type(i) is int for i in out)
    assert sparse(answers, 0.0, 1.0, cutoff=10, random_state=0) == [0, 2, 3, 5]


def test_lazy_stream_consumed_only_until_halt():
    consumed = []

    def answers():
        for i in itertools.count():
            consumed.append(i)
            yield 1e9 if i in (4, 7, 9) else -1e9

    assert above_threshold(answers(), 0.0, 1.0, random_state=0) == 4
    assert consumed == [0, 1, 2, 3, 4]
    consumed.clear()
    assert sparse(answers(), 0.0, 1.0, cutoff=2, random_state=0) == [4, 7]
    assert consumed == list(range(8))


def test_callables_evaluated_lazily():
    calls = []

    def query(i):
        def f():
            calls.append(i)
            return 1e9 if i == 2 else -1e9

        return f

    queries = [query(i) for i in range(6)]
    assert above_threshold(queries, 0.0, 1.0, random_state=0) == 2
    assert calls == [0, 1, 2]


def test_reproducible_with_seed():
    answers = np.linspace(-5, 5, 50)
    a = sparse(answers, 0.0, 1.0, cutoff=4, random_state=11)
    b = sparse(answers, 0.0, 1.0, cutoff=4, random_state=11)
    assert a == b


def test_secure_default_runs():
    assert above_threshold([1e9], 0.0, 1.0) == 0


@pytest.mark.parametrize("epsilon", [0, -1.0, float("nan"), float("inf")])
def test_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        above_threshold([1.0], 0.0, epsilon)
    with pytest.raises(ValueError, match="epsilon"):
        sparse([1.0], 0.0, epsilon, cutoff=1)


@pytest.mark.parametrize("sensitivity", [0, -1.0, float("nan"), float("inf")])
def test_bad_sensitivity(sensitivity):
    with pytest.raises(ValueError, match="sensitivity"):
        above_threshold([1.0], 0.0, 1.0, sensitivity=sensitivity)


@pytest.mark.parametrize("threshold", [float("nan"), float("inf")])
def test_bad_threshold(threshold):
    with pytest.raises(ValueError, match="threshold"):
        above_threshold([1.0], threshold, 1.0)


@pytest.mark.parametrize("cutoff", [0, -1, 1.5, True, None])
def test_bad_cutoff(cutoff):
    with pytest.raises(ValueError, match="cutoff"):
        sparse([1.0], 0.0, 1.0, cutoff=cutoff)


@pytest.mark.parametrize(
    "queries", [[1.0, float("nan")], np.array([float("inf")]), [[1.0, 2.0]]]
)
def test_bad_answers(queries):
    with pytest.raises(ValueError):
        above_threshold(queries, 0.0, 1.0)


def test_bad_lazy_answer():
    with pytest.raises(ValueError, match="query 1"):
        above_threshold(iter([-1e9, "x"]), 0.0, 1.0, random_state=0)
    with pytest.raises(TypeError):
        above_threshold(5, 0.0, 1.0)


def test_svt_cost():
    assert svt_cost(0.5) == PrivacyCost(0.5, 0.0, 0.125, mechanism="svt")
    with pytest.raises(ValueError):
        svt_cost(-1.0)


# -- exact integer comparisons (the rounding is part of the privacy proof) ------------
@pytest.mark.parametrize("monotonic", [False, True])
@pytest.mark.parametrize(
    "epsilon, sensitivity, cutoff",
    [
        (1.0, 1.0, 1),
        (1e-6, 1.0, 1),  # grid slack ~ 2**-20 would be a 100% excess at this ε
        (0.3, 1e-290, 3),
        (7.0, 3e200, 2),
        (0.01, 1.0, 10**6),  # coarsened grid
    ],
)
def test_svt_integer_scales_cover_the_rounded_sensitivity(
    epsilon, sensitivity, cutoff, monotonic
):
    # Both noises live on one grid 2**k, the answers are compared as
    # floor(f / 2**k): the integer queries have sensitivity D = ceil(Δ / 2**k)
    # and Lyu–Su–Li Alg. 1 needs D / t1 <= ε/2 and (2 or 1) c D / t2 <= ε/2.
    grid = _Grid(epsilon, sensitivity, monotonic, cutoff, 0.0)
    d = math.ceil(Fraction(sensitivity) / Fraction(2) ** grid.k)
    factor = (1 if monotonic else 2) * cutoff
    eps_half = Fraction(epsilon) / 2
    assert Fraction(d, grid.t1) <= eps_half
    assert Fraction(factor * d, grid.t2) <= eps_half
    # and the noise is essentially the nominal Lap(Δ/ε1), Lap(cΔ·(2|1)/ε2)
    g = Fraction(2) ** grid.k
    nominal1 = Fraction(sensitivity) / eps_half
    assert nominal1 <= grid.t1 * g <= nominal1 * (1 + Fraction(1, 2**18))
    nominal2 = factor * Fraction(sensitivity) / eps_half
    assert nominal2 <= grid.t2 * g <= nominal2 * (1 + Fraction(1, 2**18))


def test_svt_steps_are_exact_for_all_magnitudes():
    rng = np.random.default_rng(0)
    mags = 10.0 ** rng.uniform(-320, 308, 4000)
    answers = np.concatenate(
        [
            mags * rng.choice([-1.0, 1.0], mags.size),
            [0.0, -0.0, 5e-324, -5e-324, 1.7976931348623157e308, -1.7e308],
        ]
    )
    for sensitivity, threshold in [(1.0, 0.0), (1e7, -3.5), (1e-300, 1e-290)]:
        grid = _Grid(1.0, sensitivity, False, 1, threshold)
        g = Fraction(2) ** grid.k
        t_steps = math.ceil(Fraction(threshold) / g)
        got = grid.steps(answers)
        for f, s in zip(answers, got, strict=True):
            exact = math.floor(Fraction(float(f)) / g) - t_steps
            assert s == max(-(2**53), min(2**53, exact)), (f, sensitivity)


def test_svt_huge_threshold_is_a_parameter_error():
    # T / 2**k must be a finite float: checked on public parameters only
    with pytest.raises(ValueError, match="threshold"):
        above_threshold([0.0], 1e300, 1.0, sensitivity=1e-200, random_state=0)
    assert above_threshold([1.7e308], 1e300, 1.0, random_state=0) == 0


def test_svt_answers_near_the_float_limit_do_not_raise():
    out = _svt_many(
        [1.7e308, -1.7e308, 5e-324], 0.0, 1.0, cutoff=3, random_state=0, n_runs=100
    )
    assert out[:, 0].all() and not out[:, 1].any()
    assert sparse(iter([-1.7e308, 1.7e308]), 1e300, 1.0, cutoff=1) == [1]


# -- unequal split of epsilon (threshold_share) ------------------------------


def test_threshold_share_sets_the_two_noise_scales():
    grid = _Grid(1.0, 1.0, True, 1, 0.0, 0.8)
    steps = 2**-grid.k  # the rounded sensitivity D in grid steps
    assert grid.t1 == math.ceil(steps / Fraction(4, 5))  # Lap(Δ/ε1), ε1 = 0.8
    assert grid.t2 == math.ceil(steps / (1 - Fraction(0.8)))  # Lap(Δ/ε2)
    equal = _Grid(1.0, 1.0, True, 1, 0.0)
    assert equal.t1 == equal.t2 == 2 * steps


@pytest.mark.parametrize("share", [0.0, 1.0, -0.5, 2.0, np.nan])
def test_bad_threshold_share(share):
    with pytest.raises(ValueError, match="threshold_share"):
        above_threshold([0.0], 0.0, 1.0, threshold_share=share)


def test_threshold_share_shortens_the_walk_past_the_data():
    # all-zero answers below a threshold 3 threshold-noise scales down: a
    # run whose threshold noise came out high walks far with the equal split
    # (tail ~ 1/K) and hardly at all with share 0.8 (tail ~ K**-4)
    answers = np.zeros(120)
    walked = {}
    for share in (0.5, 0.8):
        threshold = -3 / (share * 0.15)
        hits = _svt_many(
            answers,
            threshold,
            0.15,
            monotonic=True,
            threshold_share=share,
            random_state=0,
            n_runs=40_000,
        )
        first = np.where(hits.any(axis=1), hits.argmax(axis=1), answers.size)
        walked[share] = np.mean(first >= 13)
    assert walked[0.8] < walked[0.5] / 5


def _first_index_many(epsilon, threshold):
    def mech(answers, random_state, n_runs):
        hits = _svt_many(
            answers,
            threshold,
            epsilon,
            monotonic=True,
            threshold_share=0.8,
            random_state=random_state,
            n_runs=n_runs,
        )
        out = np.argmax(hits, axis=1).astype(object)
        out[~hits.any(axis=1)] = None
        return out

    return mech


def test_audit_unequal_split_and_third_of_the_noise_twin():
    # monotone neighbours: the first 29 answers move up by 1 and the last,
    # far above the threshold, stays: "no hit before the last query" needs a
    # high threshold noise, whose density the shift changes by e^{ε1}
    d0 = np.zeros(30)
    d0[-1] = 12.0
    d1 = np.ones(30)
    d1[-1] = 12.0
    assert_dp(_first_index_many(1.0, 3.0), d0, d1, 1.0, n_samples=200_000)
    mutant = audit_mechanism(
        _first_index_many(3.0, 3.0), d0, d1, n_samples=200_000, random_state=0
    )
    assert mutant.epsilon_lower_bound > 1.25
