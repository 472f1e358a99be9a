"""Budgets split into equal parts that run as separate mechanisms: the parts
that run must add up to at most what is charged.

``fl(ε/m)`` may round up (``1.0 / 10`` is ``0.1``, above ``1/10``), so ``m``
releases at that share cost more than the ``ε`` charged. Every split goes
through :func:`skdp.accounting._composition.equal_shares`; these tests check
the helper over extreme budgets and part counts, then, per estimator family,
the ε (and δ) the mechanisms actually receive (a spy on the mechanism call,
no big data): ``k`` times their sum, read exactly as binary fractions, is at
most the charge, read both as binary fractions and as the accountant's
decimals. The budgets are chosen where ``fl(1/m) > 1/m`` (``m`` = 10, 20).
"""

import math
import random
import warnings
from fractions import Fraction

import numpy as np
import pytest

import skdp
from skdp.accounting._composition import equal_shares, exact
from skdp.preprocessing import _clip, _discretization, _encoders, _robust
from skdp.stats import _iqr_dwork_lei, _ptr, _quantile

# --- the helper ----------------------------------------------------------


def _random_budgets(seed, count):
    """Doubles spread over the whole positive range, with the ends."""
    rng = random.Random(seed)
    ends = [5e-324, 1e-323, 2.2250738585072014e-308, 1.7976931348623157e308]
    picks = [rng.uniform(1, 10) * 10.0 ** rng.randint(-320, 307) for _ in range(count)]
    return ends + [b for b in picks if 0 < b < math.inf]


def test_equal_shares_fit_exactly_and_are_the_largest_that_do():
    rng = random.Random(1)
    for total in _random_budgets(0, 400):
        for n in (1, 2, 3, 10, 20, rng.randint(2, 10**6), 2**53 + 1):
            share = equal_shares(total, n)
            binary = n * Fraction(share) <= Fraction(total)
            decimal = n * exact(share) <= exact(total)
            assert binary and decimal, (total, n, share)
            assert share <= total / n
            up = math.nextafter(share, math.inf)
            # maximal: the next float up is above fl(total/n) or does not fit
            assert up > total / n or not (
                n * Fraction(up) <= Fraction(total) and n * exact(up) <= exact(total)
            ), (total, n, share)


def test_equal_shares_give_an_accountant_of_exactly_the_total_all_its_parts():
    for total, n in [(1.0, 10), (7.6377461897661405, 20), (5e-324, 1), (1e-300, 7)]:
        share = equal_shares(total, n)
        accountant = skdp.BudgetAccountant(epsilon=total)
        accountant.spend_many([(f"part {i}", share, 0.0) for i in range(n)])
    assert equal_shares(1.0, 10) == math.nextafter(0.1, 0.0)  # 0.1 > 1/10


# --- the estimators: what the mechanisms receive -------------------------


def _spy(monkeypatch, module, name, cost):
    """Record ``cost(*args)`` (the ``(ε, δ)`` of one call) of every call to
    ``module.name``."""
    calls = []
    real = getattr(module, name)

    def recorded(*args, **kwargs):
        calls.append(cost(*args, **kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, recorded)
    return calls


def _laplace(values, sensitivity, epsilon, **_):
    return Fraction(epsilon), Fraction(0)


def _levels_each(column, lower, upper, levels, epsilon, source):
    return len(levels) * Fraction(epsilon), Fraction(0)  # one release per level


def _flip_each(counts, grid, levels, epsilon, source):
    return len(levels) * Fraction(epsilon), Fraction(0)


def _joint(column, lower, upper, levels, epsilon, source):
    return Fraction(epsilon), Fraction(0)  # all the levels in one release


def _partition(counts, epsilon, delta, **_):
    return Fraction(epsilon), Fraction(delta)


def _assert_within_charge(calls, accountant, k, stated=1.0):
    """``k`` times the ε the mechanisms received fits in the charge (binary
    and decimal readings), which is at most the stated ε; so does their δ."""
    assert calls, "the spy saw no release"
    run = (k or 1) * sum(e for e, _ in calls)
    entries = accountant.entries
    charged = sum(exact(e.epsilon) for e in entries)
    assert run <= min(sum(Fraction(e.epsilon) for e in entries), charged)
    assert charged <= exact(stated)
    if k is None:
        assert sum(d for _, d in calls) <= sum(Fraction(e.delta) for e in entries)


def _assert_tests_and_releases_within_their_items(calls, accountant, k):
    """PTR's two vector queries (the tests, then the releases of those that
    pass) each within its own ledger item."""
    tests, releases = [
        e for e in accountant.entries if "median" in e.label or "IQRScale" in e.label
    ][:2]
    assert "test" in tests.label and "release" in releases.label
    assert (k or 1) * calls[0][0] <= Fraction(tests.epsilon)
    assert (k or 1) * sum(e for e, _ in calls[1:]) <= Fraction(releases.epsilon)


def _fit(estimator, X, k, **params):
    accountant = skdp.BudgetAccountant(delta=1.0)
    groups = None if k is None else np.arange(len(X)) // 4
    estimator.set_params(accountant=accountant, random_state=0, **params)
    if k is not None:
        estimator.set_params(max_rows_per_group=k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a refusal is a release too
        estimator.fit(X, groups=groups)
    return accountant


def _data(d, n=40):
    return np.random.default_rng(0).uniform(0, 10, (n, d))


@pytest.mark.parametrize("k", [None, 2])
def test_dwork_lei_tests_and_releases_fit_in_their_items(k, monkeypatch):
    # eps = 0.23, d = 3: the 2d tests' vector query got fl(6 fl(0.23/12)),
    # above the 0.115 of the tests' item
    calls = _spy(monkeypatch, _iqr_dwork_lei, "laplace_mechanism", _laplace)
    model = skdp.IQRScale(method="dwork_lei", bounds=(0, 10), epsilon=0.23)
    accountant = _fit(model, _data(3), k)
    _assert_within_charge(calls, accountant, k, stated=0.23)
    _assert_tests_and_releases_within_their_items(calls, accountant, k)


@pytest.mark.parametrize(
    "method, name, cost",
    [
        ("exponential", "exponential_release", _levels_each),
        ("permute_and_flip", "permute_and_flip_release", _flip_each),
        ("joint", "joint_release", _joint),
    ],
)
@pytest.mark.parametrize("k", [None, 2])
def test_the_quantile_releases_fit_in_the_charge(method, name, cost, k, monkeypatch):
    # two levels over five features (exponential, permute-and-flip: eps/10),
    # or ten features (joint: eps/10 per feature)
    calls = _spy(monkeypatch, _quantile, name, cost)
    d = 10 if method == "joint" else 5
    model = skdp.PrivateQuantile(
        quantiles=(0.25, 0.75), method=method, bounds=(0, 10), epsilon=1.0
    )
    _assert_within_charge(calls, _fit(model, _data(d), k), k)


@pytest.mark.parametrize("k", [None, 2])
def test_the_discretizer_edges_fit_in_the_charge(k, monkeypatch):
    calls = _spy(monkeypatch, _discretization, "joint_release", _joint)
    model = skdp.PrivateKBinsDiscretizer(n_bins=3, bounds=(0, 10), epsilon=1.0)
    _assert_within_charge(calls, _fit(model, _data(10), k), k)


@pytest.mark.parametrize("k", [None, 2])
def test_the_encoder_selections_fit_in_the_charge(k, monkeypatch):
    calls = _spy(monkeypatch, _encoders, "partition_selection", _partition)
    X = np.random.default_rng(0).integers(0, 3, (40, 10))
    model = skdp.PrivateOneHotEncoder(epsilon=1.0, delta=1e-6)
    _assert_within_charge(calls, _fit(model, X, k), k)


@pytest.mark.parametrize("k", [None, 2])
def test_the_robust_scalers_quartiles_fit_in_the_charge(k, monkeypatch):
    # median_share 0.5: the scales' 0.5 over ten features
    calls = _spy(monkeypatch, _robust, "joint_release", _joint)
    medians = _spy(
        monkeypatch,
        _robust,
        "smooth_medians",
        lambda X, plan, *a, **kw: (X.shape[1] * Fraction(plan.eps_feature), 0),
    )
    model = skdp.PrivateRobustScaler(bounds=(0, 10), epsilon=1.0)
    accountant = _fit(model, _data(10), k)
    _assert_within_charge(calls + medians, accountant, k)


@pytest.mark.parametrize("k", [None, 2])
def test_the_robust_scalers_ptr_medians_fit_in_their_items(k, monkeypatch):
    # the medians' 0.23 over d = 3: the tests got fl(3 fl(0.23/6)) > 0.115
    calls = _spy(monkeypatch, _ptr, "laplace_mechanism", _laplace)
    model = skdp.PrivateRobustScaler(
        bounds=(0, 10), proposed_sensitivity=0.5, epsilon=0.46, median_share=0.5
    )
    accountant = _fit(model, _data(3), k)
    _assert_tests_and_releases_within_their_items(calls, accountant, k)


def test_the_clippers_group_quantiles_fit_in_the_charge(monkeypatch):
    calls = _spy(monkeypatch, _clip, "joint_release", _joint)
    model = skdp.DPClipper(method="quantile", epsilon=1.0)
    _assert_within_charge(calls, _fit(model, _data(10), 2), 2)


def test_the_smooth_median_charges_the_stated_epsilon_and_runs_within_it():
    # d = 10: d fl(1/10) = 1 + 2**-54; the charge was rounded up to cover it,
    # to 1 + 2**-52, above the stated epsilon = 1 (an accountant holding 1
    # refused the fit)
    accountant = skdp.BudgetAccountant(epsilon=1.0, delta=1e-6)
    model = skdp.SmoothSensitivityMedian(
        epsilon=1.0, delta=1e-6, bounds=(0, 10), accountant=accountant
    ).fit(_data(10))
    assert accountant.total()[0] == 1.0
    plan = skdp.stats._smooth.smooth_plan(
        1.0, 1e-6, np.zeros(10), np.full(10, 10.0), model.noise
    )
    assert 10 * Fraction(plan.eps_feature) <= 1


def test_the_svt_bound_searches_fit_in_their_part():
    # one side (public lower) over ten features: fl(1/10) per run
    from skdp.stats._svt_search import plan_svt_bounds

    for d, lower, sides in [(10, 0.0, 1), (5, None, 2), (3, None, 2)]:
        plan = plan_svt_bounds(
            d, 1.0, lower=lower, upper_limit=1e6, grid="geometric", n_above=None
        )
        epsilon_run, _ = plan.run_parameters(d, sides)
        assert sides * d * Fraction(epsilon_run) <= Fraction(plan.epsilon_search)


@pytest.mark.parametrize(
    "estimator",
    [
        skdp.PTRMedian(bounds=(0, 10), proposed_sensitivity=0.5),
        skdp.IQRScale(method="dwork_lei", bounds=(0, 10)),
        skdp.PrivateRobustScaler(
            bounds=(0, 10), proposed_sensitivity=0.5, scale_method="dwork_lei"
        ),
    ],
    ids=["ptr", "dwork_lei", "robust"],
)
@pytest.mark.parametrize("epsilon", [7.6377461897661405, 0.9101628161400735])
def test_the_halves_fit_an_accountant_of_exactly_epsilon(estimator, epsilon):
    # fl(eps/2) twice reads 7.6377461897661406 in decimal for the first
    # (the robust scaler's four quarters, for the second): an accountant
    # holding exactly epsilon refused the fit ("needs epsilon=7.63...405;
    # the budget is epsilon=7.63...405")
    accountant = skdp.BudgetAccountant(epsilon=epsilon, delta=1e-5)
    estimator.set_params(
        epsilon=epsilon, delta=1e-6, accountant=accountant, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(_data(2))
    assert sum(exact(e.epsilon) for e in accountant.entries) <= exact(epsilon)


@pytest.mark.parametrize("delta", [7.599999999999999e-07, 3.0712999999999997e-06])
def test_the_means_count_and_sums_split_delta_within_it(delta):
    # delta/2 and delta - delta/2 read above delta in decimal for these
    from skdp.stats._mean_release import mean_budget_split

    (eps_n, delta_n), (eps_s, delta_s) = mean_budget_split(1.0, delta, 40, "gaussian")
    assert exact(delta_n) + exact(delta_s) <= exact(delta)
    assert Fraction(delta_n) + Fraction(delta_s) <= Fraction(delta)
    assert exact(eps_n) + exact(eps_s) <= 1
