"""PTRMedian: brute force, constants, audits with mutation twins, behaviour."""

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdp import BudgetAccountant
from skdp.audit import assert_dp, audit_mechanism
from skdp.sensitivity import median_local_sensitivity
from skdp.stats import _ptr as ptr_module
from skdp.stats._ptr import (
    PTRMedian,
    PTRRefusedError,
    PTRRefusedWarning,
    lower_medians,
    median_distances,
    ptr_parameters,
    ptr_release,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sensitivity import bruteforce as bf

# -- brute force at the estimator level --------------------------------------


@pytest.mark.parametrize("domain", bf.DOMAINS)
def test_stable_datasets_have_all_neighbour_medians_within_b(domain):
    # every multiset of <= 7 values and every add/remove neighbour: where the
    # estimator's capped distance (caps 1 and 40) is >= 1, each neighbour's
    # median (from the multiset's counts, not from skdp) is within b; the
    # distance moves by at most 1 along every edge.
    g = bf.graph(domain, 8)
    small = np.flatnonzero(g.sizes <= 7)
    medians = g.median()
    nbrs = [g.neighbours[v][g.neighbours[v] >= 0] for v in small]
    nbrs = [u[g.sizes[u] <= 7] for u in nbrs]
    violations = lipschitz = checked = 0
    for b in bf.sensitivity_thresholds(domain)[::2]:
        for cap in (1, 40):
            dist = np.full(len(g), np.nan)
            for node in small:
                column = g.sorted_values(node)[:, None]
                dist[node] = median_distances(column, [b], [g.lower], [g.upper], cap)[0]
            for node, u in zip(small, nbrs, strict=True):
                if dist[node] >= 1:
                    checked += 1
                    violations += np.abs(medians[u] - medians[node]).max() > b
                lipschitz += np.any(np.abs(dist[u] - dist[node]) > 1)
    assert checked > 100
    assert violations == 0
    assert lipschitz == 0


def test_distance_is_zero_exactly_when_local_sensitivity_exceeds_b():
    # the k = 0 term: D = 0 iff LS > b (checked against the exact LS)
    rng = np.random.default_rng(0)
    for _ in range(300):
        x = rng.choice([0.0, 1.0, 1.5, 4.0, 4.2, 10.0], size=rng.integers(1, 12))
        b = float(rng.choice([0.2, 1.0, 2.6, 5.0]))
        d = median_distances(x[:, None], [b], [0.0], [10.0], 50)[0]
        assert (d == 0) == (median_local_sensitivity(x, (0.0, 10.0)) > b)


def test_lower_median_matches_the_definition():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(101, 3))
    X[:, 2] = np.round(X[:, 2])  # ties
    expected = np.sort(np.clip(X, -1, 1), axis=0)[50]
    np.testing.assert_array_equal(lower_medians(X, [-1] * 3, [1] * 3), expected)
    even = np.array([[1.0], [2.0], [3.0], [4.0]])
    assert lower_medians(even, [0.0], [5.0])[0] == 2.0  # rank ceil(n/2)


# -- public constants ----------------------------------------------------------


@pytest.mark.parametrize("epsilon, delta, d", [(1.0, 1e-6, 1), (0.1, 1e-9, 5)])
def test_constants_give_the_claimed_failure_probabilities(epsilon, delta, d):
    eps_f, threshold, cap = ptr_parameters(epsilon, delta, d)
    assert eps_f * 2 * d == pytest.approx(epsilon)
    lap = np.random.default_rng  # unused; the tail is closed form below
    del lap
    # P[Lap(1/eps_f) > T] at D = 0 is at most delta/(2d) per feature, so the d
    # features fail together with probability at most delta/2 <= delta
    assert 0.5 * math.exp(-eps_f * threshold) <= delta / (2 * d) * (1 + 1e-12)
    # a dataset with D >= K passes except with probability 1e-9 / 2
    assert 0.5 * math.exp(-eps_f * (cap - threshold)) <= 0.5e-9 * (1 + 1e-12)


@pytest.mark.filterwarnings("ignore::skdp.stats._ptr.PTRRefusedWarning")
def test_cap_is_public_and_windows_are_small(monkeypatch):
    seen = []
    original = ptr_module.median_distance_to_instability

    def spy(x, b, bounds, *, cap=None):
        seen.append((np.asarray(x).size, cap))
        return original(x, b, bounds, cap=cap)

    monkeypatch.setattr(ptr_module, "median_distance_to_instability", spy)
    rng = np.random.default_rng(2)
    for n in (50, 200_000):
        PTRMedian(bounds=(-5, 5), proposed_sensitivity=0.1, random_state=0).fit(
            rng.normal(size=(n, 1))
        )
    assert seen[0][1] == seen[1][1] is not None  # same cap for both sizes
    assert seen[1][1] < 200  # a window of about K + 1 ranks, not a sort


# -- audits --------------------------------------------------------------------
# A vectorised twin of PTRMedian.fit: the same module functions compute D and
# the median once, and ptr_release draws n_runs independent releases (each
# coordinate is one PTR). test_wrapper_is_the_estimator ties it to fit.

BOUNDS = (0.0, 10.0)
B = 1.0
EDGE = (np.array([[0.0], [5.0], [5.0], [10.0]]), np.array([[0.0], [5.0], [10.0]]))
JUMP = (np.array([[0.0], [10.0]]), np.array([[0.0], [10.0], [10.0]]))
AUDIT = {"n_samples": 40_000, "n_pilot": 8_000, "random_state": 0}


def ptr_runs(data, seed, epsilon, delta, n_runs, threshold=None, distance=None):
    eps_f, default_threshold, cap = ptr_module.ptr_parameters(epsilon, delta, 1)
    threshold = default_threshold if threshold is None else threshold(eps_f, delta)
    if distance is None:
        d = ptr_module.median_distances(data, [B], [BOUNDS[0]], [BOUNDS[1]], cap)
    else:
        d = np.array([distance(data, threshold)])
    med = ptr_module.lower_medians(data, [BOUNDS[0]], [BOUNDS[1]])
    out, refused = ptr_release(
        np.repeat(d, n_runs),
        np.repeat(med, n_runs),
        np.full(n_runs, B),
        eps_f,
        eps_f,
        threshold,
        random_state=seed,
    )
    out = np.clip(out, *BOUNDS)
    return [None if r else float(v) for v, r in zip(out, refused, strict=True)]


def test_edge_pair_distances():
    # D = 1 against D = 0: right at the edge of stability
    d = [median_distances(x, [B], [0.0], [10.0], 50)[0] for x in EDGE]
    assert d == [1.0, 0.0]
    d = [median_distances(x, [B], [0.0], [10.0], 50)[0] for x in JUMP]
    assert d == [0.0, 0.0]


def test_wrapper_is_the_estimator():
    for seed in range(20):
        for data in (*EDGE, *JUMP):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PTRRefusedWarning)
                est = PTRMedian(
                    1.0, 0.2, bounds=BOUNDS, proposed_sensitivity=B, random_state=seed
                ).fit(data)
            wrapped = ptr_runs(data, seed, 1.0, 0.2, 1)[0]
            assert (wrapped is None) == bool(est.refused_[0])
            if wrapped is not None:
                assert wrapped == est.median_[0]


@pytest.mark.parametrize(
    "pair, epsilon, delta",
    [(EDGE, 1.0, 0.2), (JUMP, 1.0, 0.2), (JUMP, 1.0, 0.01), (JUMP, 3.0, 0.1)],
)
def test_audit_ptr_median_passes(pair, epsilon, delta):
    def mech(data, seed, n_runs):
        return ptr_runs(data, seed, epsilon, delta, n_runs)

    assert_dp(mech, *pair, epsilon, delta, **AUDIT)


def test_audit_sees_the_release_noise_on_stable_data():
    # both datasets pass surely; only Lap(b/eps_r) separates medians 5 and 6,
    # so the audit must find most of eps_r = 0.5 (a sanity check of its power)
    data = np.repeat([[5.0], [6.0]], 300, axis=0)
    pair = (data, np.vstack([data, [[6.0]]]))

    def mech(data, seed, n_runs):
        return ptr_runs(data, seed, 1.0, 0.2, n_runs)

    result = audit_mechanism(mech, *pair, **AUDIT)
    assert 0.3 < result.epsilon_lower_bound <= 1.0


def test_audit_catches_a_noisy_local_sensitivity_test():
    # the seed's bug: pass when LS(x) + Lap(1/eps_t) < b (the tested quantity
    # is LS, which has no useful global sensitivity)
    def seed_test(data, threshold):
        return threshold + B - median_local_sensitivity(data[:, 0], BOUNDS)

    def mech(data, seed, n_runs):
        return ptr_runs(data, seed, 1.0, 0.2, n_runs, distance=seed_test)

    # LS = 0 on {0, 10, 10, 10} (D = 1), LS = 10 on {0, 10, 10} (D = 0)
    pair = (np.array([[0.0], [10.0], [10.0], [10.0]]), JUMP[1])
    result = audit_mechanism(mech, *pair, delta=0.2, **AUDIT)
    assert result.epsilon_lower_bound > 2.0


def test_audit_catches_the_programming_dp_threshold():
    # log(2/delta)/(2 eps) passes at D = 0 with probability sqrt(delta/2)/2
    def mech(data, seed, n_runs):
        return ptr_runs(
            data,
            seed,
            1.0,
            0.01,
            n_runs,
            threshold=lambda eps, delta: math.log(2 / delta) / (2 * eps),
        )

    result = audit_mechanism(mech, *JUMP, delta=0.01, **AUDIT)
    assert result.epsilon_lower_bound > 1.5


def test_audit_catches_a_distance_without_the_k0_term():
    # min{k >= 1 : A(x, k) > b} is 1 on both JUMP datasets (true D = 0)
    def no_k0(data, threshold):
        return max(1.0, median_distances(data, [B], [0.0], [10.0], 50)[0])

    def mech(data, seed, n_runs):
        return ptr_runs(data, seed, 3.0, 0.1, n_runs, distance=no_k0)

    result = audit_mechanism(mech, *JUMP, delta=0.1, **AUDIT)
    assert result.epsilon_lower_bound > 4.5


# -- behaviour ---------------------------------------------------------------


def stable_data(n=20_000, d=2, seed=3):
    return np.random.default_rng(seed).normal(50, 10, size=(n, d))


def test_accuracy_and_budget_on_stable_data():
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    X = stable_data()
    est = PTRMedian(
        1.0, 1e-6, bounds=(0, 100), proposed_sensitivity=0.5, accountant=acc
    ).fit(X)
    assert not est.refused_.any()
    # Lap(b/eps_r) = Lap(2) noise: |noise| > 2 * ln(1e7) has probability 1e-7
    truth = np.sort(X, axis=0)[len(X) // 2 - 1]
    assert np.all(np.abs(est.median_ - truth) < 2 * math.log(1e7))
    assert [e.label for e in acc.entries] == [
        "PTRMedian: stability tests",
        "PTRMedian: median releases",
    ]
    assert acc.total() == pytest.approx((1.0, 1e-6))
    assert (est.epsilon_spent_, est.delta_spent_) == pytest.approx(acc.total())


def test_refusal_warns_spends_and_gives_nan():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    X = np.array([[0.0], [10.0]])  # D = 0: refused except w.p. delta/2
    with pytest.warns(PTRRefusedWarning, match=r"feature\(s\) \[0\]"):
        est = PTRMedian(
            bounds=BOUNDS, proposed_sensitivity=B, accountant=acc, random_state=0
        ).fit(X)
    assert est.refused_.tolist() == [True]
    assert np.isnan(est.median_[0])
    assert acc.total() == pytest.approx((1.0, 1e-6))
    with pytest.warns(PTRRefusedWarning, match="refused at fit"):
        assert np.isnan(est.transform(X)).all()


def test_refusal_raises_after_spending():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    X = pd.DataFrame({"age": [0.0, 10.0]})
    with pytest.raises(PTRRefusedError, match="'age'"):
        PTRMedian(
            bounds=BOUNDS,
            proposed_sensitivity=B,
            on_refuse="raise",
            accountant=acc,
            random_state=0,
        ).fit(X)
    assert acc.total() == pytest.approx((1.0, 1e-6))


def test_large_proposal_always_passes():
    # U - L <= b: D is the cap, the test passes except w.p. 1e-9
    est = PTRMedian(bounds=(0, 1), proposed_sensitivity=1.0, random_state=0)
    assert not est.fit(np.array([[0.3]])).refused_[0]


@pytest.mark.parametrize(
    "X, expected",
    [
        (np.full((5000, 1), 7.0), 7.0),  # constant
        (np.full((5000, 1), 1e6), 10.0),  # out of bounds: clipped
        (np.full((5000, 1), 3, dtype=int), 3.0),
        (np.ones((5000, 1), dtype=bool), 1.0),
    ],
)
def test_degenerate_but_valid_inputs(X, expected):
    est = PTRMedian(bounds=BOUNDS, proposed_sensitivity=0.01, random_state=0).fit(X)
    assert not est.refused_[0]
    assert abs(est.median_[0] - expected) < 0.01 * 2 * math.log(1e7) * 2


def test_huge_values_within_bounds():
    X = np.full((2000, 1), 1e308)
    est = PTRMedian(bounds=(0, 1e308), proposed_sensitivity=1e300, random_state=0)
    assert np.isfinite(est.fit(X).median_).all()


def test_one_row_is_refused_not_an_error():
    with pytest.warns(PTRRefusedWarning):
        est = PTRMedian(bounds=BOUNDS, proposed_sensitivity=B, random_state=0)
        est.fit(np.array([[4.0]]))
    assert est.refused_[0]


@pytest.mark.parametrize(
    "kwargs, X, match",
    [
        ({}, np.array([[np.nan]]), "NaN or inf"),
        ({}, np.array([[np.inf]]), "NaN or inf"),
        ({}, np.empty((0, 1)), "0 sample"),
        ({}, np.array([["a"]], dtype=object), "could not convert|numeric"),
        ({"bounds": None}, np.ones((3, 1)), "needs public bounds"),
        ({"proposed_sensitivity": None}, np.ones((3, 1)), "proposed_sensitivity"),
        ({"proposed_sensitivity": -1.0}, np.ones((3, 1)), "proposed_sensitivity"),
        ({"proposed_sensitivity": [1, 2]}, np.ones((3, 1)), "shape"),
        ({"bounds": (-1e308, 1e308)}, np.ones((3, 1)), "finite float"),
        (
            {"proposed_sensitivity": 1e-300, "bounds": (0, 1e10)},
            np.ones((3, 1)),
            "overflow",
        ),
        ({"delta": 0.0}, np.ones((3, 1)), "delta"),
        ({"epsilon": 5.0}, np.ones((3, 1)), "exceed"),
        ({"on_refuse": "ignore"}, np.ones((3, 1)), "on_refuse"),
    ],
)
def test_bad_input_charges_nothing(kwargs, X, match):
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    params = {"bounds": BOUNDS, "proposed_sensitivity": B, **kwargs}
    with pytest.raises(Exception, match=match):
        PTRMedian(accountant=acc, **params).fit(X)
    assert acc.entries == ()


def test_pandas_output_and_inverse():
    X = pd.DataFrame(stable_data(5000), columns=["a", "b"])
    est = PTRMedian(bounds=(0, 100), proposed_sensitivity=0.5, random_state=0)
    out = est.set_output(transform="pandas").fit_transform(X)
    assert list(out.columns) == ["a", "b"]
    np.testing.assert_allclose(out.to_numpy(), X.to_numpy() - est.median_)
    np.testing.assert_allclose(est.inverse_transform(out), X.to_numpy())


def test_refusal_warnings_point_at_the_users_line():
    X = np.array([[10.0], [90.0], [90.0]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = PTRMedian(bounds=(0, 100), proposed_sensitivity=1.0, random_state=0)
        est.fit(X)
        make_pipeline(FunctionTransformer(), clone(est)).fit(X)
        est.transform(X)
    refusals = [w for w in caught if issubclass(w.category, PTRRefusedWarning)]
    assert len(refusals) == 3
    assert {w.filename for w in refusals} == {__file__}
