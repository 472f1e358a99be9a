"""IQRScale: brute force (bounded and unbounded), constants, audits, behaviour."""

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skdp import BudgetAccountant
from skdp.audit import assert_dp, audit_mechanism
from skdp.sensitivity import log_grid_bin
from skdp.stats import _iqr as iqr_module
from skdp.stats._iqr import (
    IQRScale,
    iqr_parameters,
    iqr_release,
    iqr_statistics,
)
from skdp.stats._ptr import PTRRefusedError, PTRRefusedWarning

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sensitivity import bruteforce as bf

GRIDS = [(2.0, 1.0), (2.0, 0.5), (2.0, 0.125)]


def _bfs_instability(g, width, grid, nodes, cap):
    """min(BFS distance to {IQR outside x's bin (or 0)}, cap) for each node."""
    iqr = g.iqr()
    out = {}
    bins = {}
    for node in nodes:
        if iqr[node] > 0:
            _, lo, hi = log_grid_bin(iqr[node], width=width, offset=grid * width / 2)
            bins.setdefault((lo, hi), []).append(node)
        else:
            out[node] = 0.0
    for (lo, hi), members in bins.items():
        target = ~((iqr >= lo) & (iqr < hi) & (iqr > 0))
        dist = g.distance_to(target, cap)
        for node in members:
            out[node] = min(dist[node], cap)
    return out


@pytest.mark.parametrize("base, width", GRIDS)
@pytest.mark.parametrize("unbounded", [False, True])
def test_instability_matches_bfs_and_stable_means_same_bin(base, width, unbounded):
    # the estimator's capped A_j for both grids against the BFS distance on the
    # add/remove graph (exact for |x| <= 4 with multisets of <= 8 values).
    # Unbounded: the domain has far points -100 and 100 that can be added, the
    # datasets use only the inner values, and IQRScale runs with bounds=None.
    inner = bf.GAPPY_DOMAIN
    domain = (-100.0, *inner, 100.0) if unbounded else inner
    g = bf.graph(domain, 8)
    far = g.counts[:, 0] + g.counts[:, -1] if unbounded else 0 * g.sizes
    nodes = np.flatnonzero((g.sizes <= 4) & (far == 0))
    bounds = (
        (np.array([-np.inf]), np.array([np.inf]))
        if unbounded
        else (np.array([g.lower]), np.array([g.upper]))
    )
    iqr = g.iqr()
    mismatches = 0
    for cap in (2, 6):
        expected = [_bfs_instability(g, width, grid, nodes, cap) for grid in (0, 1)]
        for node in nodes:
            column = g.sorted_values(node)[:, None]
            iqrs, dist = iqr_statistics(column, bounds, base, width, cap)
            assert iqrs[0] == iqr[node]  # IQR(∅) = 0 too (never fitted)
            for grid in (0, 1):
                mismatches += dist[grid, 0] != expected[grid][node]
    assert mismatches == 0


@pytest.mark.parametrize("domain", [bf.GAPPY_DOMAIN, bf.TENTHS_DOMAIN])
def test_stable_bin_keeps_every_neighbour_in_the_bin(domain):
    # A_j >= 2 => every add/remove neighbour's IQR is in the same bin; A_j
    # moves by at most 1 along each edge (capped at the estimator's K = 6 here)
    g = bf.graph(domain, 8)
    iqr = g.iqr()
    nodes = np.flatnonzero(g.sizes <= 7)
    bounds = (np.array([g.lower]), np.array([g.upper]))
    dist = np.zeros((2, len(g)))
    for node in nodes:
        column = g.sorted_values(node)[:, None]
        dist[:, node] = iqr_statistics(column, bounds, 2.0, 0.125, 6)[1][:, 0]
    checked = 0
    for node in nodes:
        u = g.neighbours[node]
        u = u[(u >= 0) & (g.sizes[np.maximum(u, 0)] <= 7)]
        assert np.all(np.abs(dist[:, u] - dist[:, [node]]) <= 1)
        for grid in (0, 1):
            if dist[grid, node] >= 2:
                checked += 1
                _, lo, hi = log_grid_bin(iqr[node], width=0.125, offset=grid / 16)
                assert np.all((iqr[u] >= lo) & (iqr[u] < hi))
    assert checked > 50


# -- public constants ----------------------------------------------------------


@pytest.mark.parametrize("epsilon, delta, d", [(1.0, 1e-6, 1), (0.3, 1e-9, 4)])
def test_constants_give_the_claimed_failure_probabilities(epsilon, delta, d):
    eps_grid, threshold, cap = iqr_parameters(epsilon, delta, d)
    assert 4 * d * eps_grid == pytest.approx(epsilon)
    # at A_j = 1 a grid passes w.p. <= delta/(4d): 2 grids x d features <= delta/2
    assert 0.5 * math.exp(-eps_grid * (threshold - 1)) <= delta / (4 * d) * (1 + 1e-12)
    assert 0.5 * math.exp(-eps_grid * (cap - threshold)) <= 0.5e-9 * (1 + 1e-12)
    assert cap >= 2  # min(A, K) >= 2 iff A >= 2


# -- audits --------------------------------------------------------------------

BOUNDS = (np.array([0.0]), np.array([10.0]))
# IQR 6 against IQR 0.2: neighbours in far-apart bins, both A_j <= 1
FAR = (np.array([[4.0], [4.2], [10.0]]), np.array([[4.0], [4.2], [4.2], [10.0]]))
AUDIT = {"n_samples": 40_000, "n_pilot": 8_000, "random_state": 0}


def iqr_runs(data, seed, epsilon, delta, n_runs, threshold=None, bounds=BOUNDS):
    """Vectorised twin of IQRScale.fit (default grid, one feature)."""
    base, width = iqr_module.grid_parameters(None, None)
    eps_grid, default_threshold, cap = iqr_module.iqr_parameters(epsilon, delta, 1)
    if threshold is not None:
        default_threshold = threshold(eps_grid, delta / 2)
    iqrs, dist = iqr_module.iqr_statistics(data, bounds, base, width, cap)
    scales, refused = iqr_release(
        np.repeat(iqrs, n_runs),
        np.repeat(dist, n_runs, axis=1),
        eps_grid,
        default_threshold,
        base,
        width,
        random_state=seed,
    )
    scales = np.minimum(scales, bounds[1][0] - bounds[0][0])
    return [None if r else float(v) for v, r in zip(scales, refused, strict=True)]


def test_wrapper_is_the_estimator():
    X = np.random.default_rng(0).normal(5, 1, size=(3000, 1))
    for data in (*FAR, X):
        for seed in range(8):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PTRRefusedWarning)
                est = IQRScale(
                    1.0, 1e-6, method="dwork_lei", bounds=(0, 10), random_state=seed
                ).fit(data)
            twin = iqr_runs(data, seed, 1.0, 1e-6, 1)[0]
            assert (twin is None) == bool(est.refused_[0])
            if twin is not None:
                assert twin == est.scale_[0]


@pytest.mark.parametrize("epsilon, delta", [(2.0, 0.01), (1.0, 0.2), (6.0, 0.1)])
def test_audit_iqr_scale_passes(epsilon, delta):
    def mech(data, seed, n_runs):
        return iqr_runs(data, seed, epsilon, delta, n_runs)

    assert_dp(mech, *FAR, epsilon, delta, **AUDIT)


def test_audit_sees_the_release_noise_on_stable_data():
    # both datasets pass surely; the IQRs 1 and 1.02 share a bin, so the only
    # leak is the release Lap(w/eps') in log2 units: at most eps' = eps/4
    base = np.repeat([[0.0], [1.0], [2.0]], [200, 400, 200], axis=0)
    pair = (base, np.vstack([base, [[2.0]] * 4]))

    def mech(data, seed, n_runs):
        return iqr_runs(data, seed, 4.0, 0.2, n_runs)

    result = audit_mechanism(mech, *pair, **AUDIT)
    assert result.epsilon_lower_bound <= 1.0


def test_audit_catches_the_threshold_without_division_by_epsilon():
    # 1 + ln(1/delta') passes at A = 1 w.p. delta'^eps'/2 >> delta' for eps' < 1
    def mech(data, seed, n_runs):
        return iqr_runs(
            data, seed, 2.0, 0.01, n_runs, threshold=lambda e, d: 1 + math.log(1 / d)
        )

    result = audit_mechanism(mech, *FAR, delta=0.01, **AUDIT)
    assert result.epsilon_lower_bound > 3.0


def test_audit_catches_the_threshold_without_the_one():
    # ln(1/delta')/eps' passes at A = 1 w.p. e^{eps'} delta'/2 per grid
    def mech(data, seed, n_runs):
        return iqr_runs(
            data, seed, 6.0, 0.1, n_runs, threshold=lambda e, d: math.log(1 / d) / e
        )

    # the two releases are disjoint, so the true epsilon at delta = 0.1 is
    # infinite; 200k runs resolve probabilities down to about 1e-4
    audit = {**AUDIT, "n_samples": 200_000}
    result = audit_mechanism(mech, *FAR, delta=0.1, **audit)
    assert result.epsilon_lower_bound > 6.5


# -- behaviour ---------------------------------------------------------------


def test_accuracy_budget_and_transform():
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    X = np.random.default_rng(4).normal(0, 10, size=(50_000, 2))
    est = IQRScale(  # unbounded
        1.0, 1e-6, method="dwork_lei", accountant=acc, random_state=0
    ).fit(X)
    assert not est.refused_.any()
    r1, r3 = (50_000 + 3) // 4, (3 * 50_000 + 3) // 4
    ordered = np.sort(X, axis=0)
    truth = ordered[r3 - 1] - ordered[r1 - 1]
    # release factor 2^(w Lap(1/eps')) = 2^Lap(1) for eps' = 1/8, w = 1/8:
    # |Lap(1)| > ln(1e7) has probability 1e-7
    assert np.all(np.abs(np.log2(est.scale_ / truth)) < math.log(1e7))
    assert [e.label for e in acc.entries] == [
        "IQRScale: stability tests",
        "IQRScale: scale releases",
    ]
    assert acc.total() == pytest.approx((1.0, 1e-6))
    assert (est.epsilon_spent_, est.delta_spent_) == pytest.approx(acc.total())
    np.testing.assert_allclose(est.transform(X), X / est.scale_)
    np.testing.assert_allclose(est.inverse_transform(est.transform(X)), X)


@pytest.mark.parametrize(
    "X",
    [np.array([[3.0]]), np.full((1000, 1), 2.0), np.full((1000, 1), 1, dtype=int)],
)
def test_dwork_lei_refuses_a_zero_iqr_and_spends(X):
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    with pytest.warns(PTRRefusedWarning, match="IQR"):
        est = IQRScale(
            method="dwork_lei", bounds=(0, 10), accountant=acc, random_state=0
        ).fit(X)
    assert est.refused_[0] and np.isnan(est.scale_[0])
    with pytest.warns(PTRRefusedWarning, match="refused at fit"):
        assert np.isnan(est.transform(X)).all()
    assert acc.total() == pytest.approx((1.0, 1e-6))


def test_refusal_raises_after_spending():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    with pytest.raises(PTRRefusedError, match="'w'"):
        IQRScale(
            method="dwork_lei", on_refuse="raise", accountant=acc, random_state=0
        ).fit(pd.DataFrame({"w": [1.0, 2.0, 3.0]}))
    assert acc.total() == pytest.approx((1.0, 1e-6))


def test_bool_and_huge_unbounded_inputs():
    X = np.random.default_rng(5).integers(0, 2, size=(20_000, 1)).astype(bool)
    est = IQRScale(method="dwork_lei", bounds=(0, 1), random_state=0).fit(X)
    assert est.refused_[0] or 0 < est.scale_[0] <= 1
    huge = np.repeat([[-1e308], [0.0], [1e308]], 500, axis=0)
    with pytest.warns(PTRRefusedWarning):  # the IQR overflows: no bin, refused
        est = IQRScale(method="dwork_lei", random_state=0).fit(huge)
    assert est.refused_[0]


@pytest.mark.parametrize(
    "kwargs, X, match",
    [
        ({}, np.array([[np.nan]]), "NaN or inf"),
        ({}, np.empty((0, 1)), "0 sample"),
        ({}, np.array([["a"]], dtype=object), "could not convert|numeric"),
        ({"bounds": (-1e308, 1e308)}, np.ones((3, 1)), "finite float"),
        ({"bounds": (1, 0)}, np.ones((3, 1)), "lower bound must be < upper"),
        ({"base": 1.0}, np.ones((3, 1)), "base"),
        ({"width": 0.0}, np.ones((3, 1)), "width"),
        ({"delta": 0.0}, np.ones((3, 1)), "delta"),
        ({"epsilon": 5.0}, np.ones((3, 1)), "exceed"),
        ({"method": "median"}, np.ones((3, 1)), "method"),
        ({"bounds_share": 1.0}, np.ones((3, 1)), "bounds_share"),
        ({"upper_limit": 0.0}, np.ones((3, 1)), "upper_limit"),
    ],
)
@pytest.mark.parametrize("method", ["joint", "dwork_lei"])
def test_bad_input_charges_nothing(kwargs, X, match, method):
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    kwargs = {"method": method, **kwargs}
    with pytest.raises(Exception, match=match):
        IQRScale(accountant=acc, **kwargs).fit(X)
    assert acc.entries == ()


def test_dwork_lei_refuses_a_private_upper_bound_before_charging():
    # (lower, None) asks the joint method for a private upper bound; the
    # Dwork-Lei test has no such step and must say so, not charge
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="method='joint'"):
        IQRScale(method="dwork_lei", bounds=(0, None), accountant=acc).fit(
            np.ones((3, 1))
        )
    assert acc.entries == ()


def test_pandas_output():
    X = pd.DataFrame(
        np.random.default_rng(6).normal(size=(20_000, 2)), columns=["a", "b"]
    )
    out = IQRScale(random_state=0).set_output(transform="pandas").fit_transform(X)
    assert list(out.columns) == ["a", "b"]


def test_one_selection_agrees_with_the_public_functions():
    # iqr_statistics reads the IQR and both grids from one window selection;
    # it must equal interquartile_range and iqr_instability_distance(cap=K)
    from skdp.sensitivity import interquartile_range, iqr_instability_distance

    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(1, 300))
        x = np.round(rng.standard_t(2, size=n) * rng.choice([0.3, 1, 3]), 1)
        cap, width = int(rng.choice([2, 5, 20, 80])), float(rng.choice([1, 0.125]))
        for lo_b, hi_b in ((-np.inf, np.inf), (-5.0, 5.0)):
            bounds = (np.array([lo_b]), np.array([hi_b]))
            iqrs, dist = iqr_statistics(x[:, None], bounds, 2.0, width, cap)
            with np.errstate(invalid="ignore"):
                expected = interquartile_range(x, (lo_b, hi_b))
            assert iqrs[0] == expected
            if expected > 0:
                for grid in (0, 1):
                    _, lo, hi = log_grid_bin(
                        expected, width=width, offset=grid * width / 2
                    )
                    with np.errstate(invalid="ignore"):  # inf - inf at the pads
                        a = iqr_instability_distance(x, (lo_b, hi_b), lo, hi, cap=cap)
                    assert dist[grid, 0] == a


# -- the default: joint private quartiles ---------------------------------------


def adult_like_ages(n_rows=5_000, seed=0):
    """Integer ages 17-90, right-skewed like Adult's, IQR about 20."""
    rng = np.random.default_rng(seed)
    return np.clip(np.round(17 + rng.gamma(3.0, 9.0, size=n_rows)), 17, 90)[:, None]


def test_default_scale_on_adult_like_ages_is_never_refused():
    # Issue 27: the Dwork-Lei default refused most fits on Adult's age at
    # eps = 1 (20 of 30; ties make the IQR's bin unstable) and was off by x2-3
    # when it answered. The default now is q75 - q25 of the joint private
    # quartiles: no refusal, median |log(scale / IQR)| <= 0.1.
    X = adult_like_ages()
    q25, q75 = np.percentile(X[:, 0], [25, 75])
    assert 18 <= q75 - q25 <= 22  # the data is like Adult's age (IQR 20)
    errors = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a refusal would warn
        for seed in range(10):
            est = IQRScale(1.0, random_state=seed).fit(X)
            assert not est.refused_.any()
            errors.append(abs(math.log(est.scale_[0] / (q75 - q25))))
    assert np.median(errors) <= 0.1


def test_dwork_lei_is_kept_as_an_option():
    X = adult_like_ages()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTRRefusedWarning)
        refused = [
            IQRScale(1.0, method="dwork_lei", random_state=seed).fit(X).refused_[0]
            for seed in range(10)
        ]
    assert sum(refused) >= 5  # ties and 5,000 rows: the stability test refuses


def test_joint_with_public_bounds_spends_epsilon_only_on_the_quartiles():
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    X = np.random.default_rng(4).normal(0, 10, size=(50_000, 2))
    est = IQRScale(1.0, 1e-6, bounds=(-100, 100), accountant=acc, random_state=0)
    est.fit(X)
    assert [(e.label, e.epsilon, e.delta) for e in acc.entries] == [
        ("IQRScale: scale quartiles (0.25, 0.75)", 1.0, 0.0)
    ]
    assert (est.epsilon_spent_, est.delta_spent_) == (1.0, 0.0)
    assert not est.refused_.any()
    np.testing.assert_array_equal(est.lower_, [-100, -100])
    np.testing.assert_array_equal(est.upper_, [100, 100])
    truth = np.subtract(*np.percentile(X, [75, 25], axis=0))  # 13.5 each
    # grid step 200 / 2**11 < 0.1; 25,000 rows between the quartiles
    np.testing.assert_allclose(est.scale_, truth, rtol=0.05)
    np.testing.assert_allclose(est.transform(X), X / est.scale_)
    np.testing.assert_allclose(est.inverse_transform(est.transform(X)), X)


def test_joint_without_bounds_pays_a_share_for_private_bounds():
    acc = BudgetAccountant(epsilon=1.0)
    X = adult_like_ages()
    est = IQRScale(1.0, bounds_share=0.25, accountant=acc, random_state=0).fit(X)
    labels = [e.label for e in acc.entries]
    assert labels == [
        "IQRScale: bounds sign test (Laplace counts)",
        "IQRScale: bounds (SVT)",
        "IQRScale: scale quartiles (0.25, 0.75)",
    ]
    assert sum(e.epsilon for e in acc.entries[:2]) == pytest.approx(0.25)
    assert acc.entries[2].epsilon == pytest.approx(0.75)
    assert acc.total() == pytest.approx((1.0, 0.0))
    assert est.lower_[0] <= 17 and est.upper_[0] >= 48  # released, public now
    # a public lower bound skips the sign test
    acc = BudgetAccountant(epsilon=1.0)
    IQRScale(bounds=(0, None), accountant=acc, random_state=0).fit(X)
    assert [e.label for e in acc.entries] == [
        "IQRScale: upper bounds (SVT)",
        "IQRScale: scale quartiles (0.25, 0.75)",
    ]


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"bounds": (0, 10)},
        {"bounds": (0, None), "bounds_share": 0.1},
        {"bounds": ([0, 0, 0], [100, 100, 200])},
        {"bounds": ([0, 0, 0], None)},
        {"method": "dwork_lei"},
        {"method": "dwork_lei", "bounds": (0, 10)},
    ],
)
def test_fit_cost_is_what_fit_charges(kwargs):
    # also without the number of features (a step after a one-hot encoder),
    # where per-feature bounds state it
    from skdp.model_selection import fit_cost

    X = np.hstack([adult_like_ages(500, seed) for seed in range(3)])
    acc = BudgetAccountant(delta=1.0)
    est = IQRScale(0.7, 1e-7, accountant=acc, random_state=0, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTRRefusedWarning)
        est.fit(X)
    for n_features in (X.shape[1], None):
        cost = fit_cost(est, n_features)
        assert (cost.epsilon, cost.delta) == pytest.approx(acc.total(), rel=1e-15)


@pytest.mark.parametrize(
    "X",
    [
        np.array([[3.0]]),
        np.zeros((1000, 1)),
        np.full((1000, 1), 7, dtype=int),
        np.repeat([[-1e308], [0.0], [1e308]], 500, axis=0),
        np.full((100, 1), 5e-324),
    ],
)
@pytest.mark.parametrize("bounds", [None, (-10.0, 10.0)])
def test_joint_never_refuses_or_warns_and_scales_are_positive(X, bounds):
    # after the charge nothing may warn; a zero range released by the
    # quartiles scales by 1, as scikit-learn's RobustScaler does
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = IQRScale(bounds=bounds, on_refuse="raise", random_state=0).fit(X)
        Xt = est.transform(X)
    assert not est.refused_.any()
    assert np.all(np.isfinite(est.scale_)) and np.all(est.scale_ > 0)
    assert Xt.shape == X.shape


def test_zero_width_release_scales_by_one():
    # every row at 2: the quartiles are released as one grid point with
    # overwhelming probability, and a zero range becomes the scale 1
    X = np.full((10_000, 1), 2.0)
    est = IQRScale(1.0, bounds=(0, 10), random_state=0).fit(X)
    assert est.scale_[0] == 1.0


@pytest.mark.parametrize("bounds_share", [1e-12, 0.5, 1 - 1e-10, 1 - 2**-52])
def test_bounds_share_at_both_ends_charges_exactly_epsilon(bounds_share):
    # the quartiles' share is budget_left(eps, eps * share); near share = 1 it
    # used to step down one float at a time from a start 1e-17 too high
    # (about 6e8 steps at 1 - 1e-10: the fit never returned)
    acc = BudgetAccountant(epsilon=1.0)
    X = adult_like_ages(500)
    est = IQRScale(bounds_share=bounds_share, accountant=acc, random_state=0)
    try:
        est.fit(X)
    except ValueError as error:  # a share too small to search: refused, free
        assert "cannot search bounds" in str(error) and acc.entries == ()
        return
    assert sum(e.epsilon for e in acc.entries) <= 1.0
    assert acc.entries[-1].epsilon > 0
    assert acc.total()[0] == pytest.approx(1.0)


def test_quartiles_of_the_whole_float_range_give_a_finite_scale():
    # private bounds up to upper_limit = 1.79e308: the released quartiles are
    # finite but their difference can overflow; the scale is capped at the
    # largest double (post-processing) so transform keeps the column
    X = np.repeat([[-1.7e308], [0.0], [1.7e308]], 300, axis=0)
    for seed in range(3):
        est = IQRScale(10.0, upper_limit=1.79e308, random_state=seed).fit(X)
        assert 0 < est.scale_[0] <= np.finfo(float).max
        assert np.isfinite(est.transform(X)).all()
