"""zCDP and PLD composition: conversions checked against independent
computations, exact compositions in closed form, and a mutation twin.

The references here do not share code with :mod:`skdp.accounting._zcdp` and
:mod:`skdp.accounting._pld`: the Gaussian curve is solved with ``brentq`` on
``scipy.stats.norm``, the zCDP conversion is minimised with
``minimize_scalar``, and the composition of randomised-response pairs (the
exact optimal composition of ε-DP mechanisms, Kairouz, Oh and Viswanath 2015)
is enumerated with exact loss values, no grid. That enumeration is also the
exact composition of discrete Laplace mechanisms of unit sensitivity (one
lattice step): their privacy loss is ``+ε`` on ``k <= 0`` and ``-ε`` on ``k >=
1``, with probabilities ``e^ε/(1+e^ε)`` and ``1/(1+e^ε)``, exactly the
randomised-response pair.
"""

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar
from scipy.stats import binom, norm

from skdp import BudgetAccountant
from skdp.accounting import PrivacyCost, _pld, plan_epsilon
from skdp.accounting._pld import pld_delta, pld_epsilon
from skdp.accounting._zcdp import zcdp_epsilon
from skdp.exceptions import BudgetExceededError
from skdp.mechanisms import gaussian_cost, laplace_cost


def gaussian_epsilon(mu, delta):
    """The exact ε of a μ-GDP release at δ (Balle and Wang 2018, Thm 8)."""

    def excess(eps):
        return (
            norm.cdf(-eps / mu + mu / 2)
            - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
            - delta
        )

    if excess(0.0) <= 0:
        return 0.0
    return brentq(excess, 0.0, 100.0, xtol=1e-15, rtol=1e-15)


def cks_epsilon(rho, delta):
    """The CKS conversion of ρ-zCDP, minimised over the order by scipy."""

    def at(alpha):
        return (
            alpha * rho
            + math.log1p(-1 / alpha)
            - (math.log(delta) + math.log(alpha)) / (alpha - 1)
        )

    return minimize_scalar(
        at, bounds=(1 + 1e-9, 1e6), method="bounded", options={"xatol": 1e-10}
    ).fun


def randomised_response_delta(eps_target, groups):
    """Exact δ(ε) of the composition of ``count`` ε-RR pairs per group,
    enumerating every combination of outcomes per group (exact losses)."""
    per_group = []
    for eps, count in groups:
        b = np.arange(count + 1)
        p = binom.pmf(b, count, 1 / (1 + math.exp(-eps)))
        per_group.append(list(zip(eps * (2 * b - count), p, strict=True)))
    total = 0.0
    for combo in itertools.product(*per_group):
        loss = sum(v for v, _ in combo)
        prob = math.prod(p for _, p in combo)
        total += prob * max(0.0, 1 - math.exp(eps_target - loss))
    return total


@pytest.mark.parametrize("mu", [0.05, 0.3, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-5, 1e-2])
def test_pld_of_gaussians_is_the_exact_curve_rounded_up(mu, delta):
    exact = gaussian_epsilon(mu, delta)
    got = pld_epsilon(delta, mu * mu, [], 0.0)
    assert exact <= got <= exact * (1 + 1e-6) + 1e-12


@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.5, 5.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-5, 1e-2])
def test_zcdp_conversion_matches_minimised_cks_and_covers_the_gaussian(rho, delta):
    got = zcdp_epsilon(rho, delta)
    assert got == pytest.approx(max(cks_epsilon(rho, delta), 0.0), rel=1e-6)
    # A Gaussian with mu = sqrt(2 rho) is rho-zCDP: the conversion covers it.
    assert got >= gaussian_epsilon(math.sqrt(2 * rho), delta)


@pytest.mark.parametrize(
    "groups", [[(0.1, 30)], [(0.1, 12), (0.37, 5)], [(0.05, 9), (0.2, 4), (1.0, 2)]]
)
def test_pld_of_pure_releases_covers_the_exact_optimal_composition(groups):
    for eps in (0.1, 0.5, 1.0, 2.0):
        exact = randomised_response_delta(eps, groups)
        bound = pld_delta(eps, 0.0, groups, 0.0)
        assert exact <= bound <= exact + 1e-3 * max(exact, 1e-6) + 2e-4


def test_optimistic_rounding_twin_is_caught(monkeypatch):
    """The twin rounds each loss down to the grid: it reports less than the
    exact composition, which the honest rounding never does."""
    groups = [(0.1, 12), (0.37, 5)]
    step = _pld._grid_step(groups)
    eps = 0.73
    exact = randomised_response_delta(eps, groups)
    assert pld_delta(eps, 0.0, groups, 0.0) >= exact
    monkeypatch.setattr(_pld, "_round_to_grid", lambda v, s: np.floor(v / s))
    twin = pld_delta(eps, 0.0, groups, 0.0)
    assert twin < exact, (twin, exact, step)


def test_reveal_mass_adds_to_delta_and_can_exhaust_it():
    base = pld_delta(1.0, 0.0, [(0.1, 10)], 0.0)
    assert pld_delta(1.0, 0.0, [(0.1, 10)], 1e-6) == pytest.approx(base + 1e-6)
    assert pld_epsilon(1e-6, 0.0, [(0.1, 10)], 1e-6) == math.inf


def test_hundred_gaussian_fits_total_and_budget_in_every_composition():
    cost = gaussian_cost(0.1, 1e-7)
    mu = math.sqrt(100) / cost.noise_multiplier
    exact = gaussian_epsilon(mu, 1e-5)
    totals = {}
    for composition in ("basic", "zcdp", "pld"):
        acc = BudgetAccountant(10.0, 1e-5, composition=composition)
        for _ in range(100):
            acc.spend(cost, label="fit")
        totals[composition] = acc.total()
    assert totals["basic"] == (10.0, 1e-05)
    assert exact <= totals["pld"][0] <= exact * (1 + 1e-7)
    assert totals["zcdp"][0] == pytest.approx(
        cks_epsilon(50 / cost.noise_multiplier**2, 1e-5), rel=1e-6
    )
    assert totals["pld"][0] < totals["zcdp"][0] < 1.25 * totals["pld"][0]


def test_pld_budget_admits_exactly_the_fits_whose_curve_fits():
    cost = gaussian_cost(0.1, 1e-7)
    # the number of fits whose composed mu reaches epsilon=0.5 at delta=1e-5
    k = 0
    while gaussian_epsilon(math.sqrt(k + 1) / cost.noise_multiplier, 1e-5) <= 0.5:
        k += 1
    acc = BudgetAccountant(0.5, 1e-5, composition="pld")
    for _ in range(k):
        acc.spend(cost, label="fit")
    with pytest.raises(BudgetExceededError, match=r"\(pld\)"):
        acc.spend(cost, label="fit")
    assert len(acc.entries) == k


def test_zcdp_reserves_slack_and_names_it_when_delta_is_short():
    acc = BudgetAccountant(5.0, 1e-5, composition="zcdp")
    assert acc.slack == 1e-5
    with pytest.raises(BudgetExceededError, match="reserved for the conversion"):
        acc.spend(0.5, 1e-7, label="PTR")
    acc = BudgetAccountant(5.0, 1e-5, slack=5e-6, composition="zcdp")
    acc.spend(0.5, 1e-7, label="PTR")
    eps, delta = acc.total()
    assert delta == pytest.approx(5e-6 + 1e-7)
    assert eps == pytest.approx(cks_epsilon(0.125, 5e-6), rel=1e-6)


def test_tight_compositions_refuse_what_they_cannot_state():
    with pytest.raises(ValueError, match="delta in \\(0, 1\\)"):
        BudgetAccountant(1.0, 0.0, composition="pld")
    with pytest.raises(ValueError, match="needs no slack"):
        BudgetAccountant(1.0, 1e-5, slack=1e-6, composition="pld")
    with pytest.raises(ValueError, match="needs slack > 0"):
        BudgetAccountant(1.0, 1e-5, composition="advanced")
    with pytest.raises(ValueError, match="one of"):
        BudgetAccountant(1.0, 1e-5, composition="rdp!")


def test_a_sum_of_costs_is_checked_part_by_part():
    cost = gaussian_cost(0.1, 1e-7)
    plan = sum([cost] * 99, cost)
    assert len(plan.parts) == 100 and plan.epsilon == pytest.approx(10.0)
    BudgetAccountant(1.0, 1e-5, composition="pld").check(plan)
    with pytest.raises(BudgetExceededError):
        BudgetAccountant(1.0, 1e-5).check(plan)
    acc = BudgetAccountant(1.0, 1e-5, composition="pld")
    acc.spend(plan, label="grid")
    assert len(acc.entries) == 100
    assert {e.mechanism for e in acc.entries} == {"gaussian"}


def test_mixed_plan_pld_below_zcdp_below_basic_and_zcdp_ledger_agrees():
    laplace, gauss = laplace_cost(0.1), gaussian_cost(0.1, 1e-7)
    ptr = PrivacyCost(0.1, 1e-7, mechanism="ptr")
    plan = [laplace] * 50 + [gauss] * 50 + [ptr] * 10
    spent = {c: plan_epsilon(plan, 1e-5, c) for c in ("basic", "zcdp", "pld")}
    assert spent["pld"] < spent["zcdp"] < spent["basic"] == pytest.approx(11.0)
    acc = BudgetAccountant(20.0, 1e-5, slack=1e-5 - 1e-6, composition="zcdp")
    acc.spend_many([("release", cost) for cost in plan])
    assert acc.total()[0] == pytest.approx(spent["zcdp"], rel=1e-9)


def test_pld_accountant_takes_gaussian_releases_only_and_charges_nothing_else():
    acc = BudgetAccountant(5.0, 1e-5, composition="pld")
    acc.spend(gaussian_cost(0.5, 1e-6), label="g")
    for cost in (laplace_cost(0.1), PrivacyCost(0.1, 1e-7, mechanism="ptr")):
        with pytest.raises(ValueError, match=r"Gaussian releases only.*zcdp"):
            acc.spend_many([("g", gaussian_cost(0.1, 1e-7)), ("x", cost)])
    assert len(acc.entries) == 1


def test_pld_filter_is_a_fixed_gaussian_dp_budget():
    """The admitted Gaussian releases are exactly those whose composed mu
    stays within the largest mu whose curve fits the budget (Smith and
    Thakurta's filter), whatever order and multipliers they come in."""

    def excess(mu):
        return norm.cdf(-1 / mu + mu / 2) - math.e * norm.cdf(-1 / mu - mu / 2) - 1e-5

    mu_budget = brentq(excess, 0.01, 10.0, xtol=1e-14)
    rng = np.random.default_rng(0)
    for _ in range(5):
        acc = BudgetAccountant(1.0, 1e-5, composition="pld")
        mu2 = 0.0
        while True:
            cost = gaussian_cost(rng.uniform(0.05, 0.4), 1e-6)
            try:
                acc.spend(cost, label="g")
            except BudgetExceededError:
                break
            mu2 += 1 / cost.noise_multiplier**2
        assert mu2 <= mu_budget**2 < mu2 + 1 / cost.noise_multiplier**2
        assert acc.total()[0] <= 1.0
        left = acc.remaining()[0]
        assert gaussian_epsilon(math.sqrt(mu_budget**2 - mu2), 1e-5) == (
            pytest.approx(left, rel=1e-6)
        )


def test_total_stays_a_pair_of_floats_at_the_extremes():
    acc = BudgetAccountant(math.inf, 1e-5, composition="pld")
    acc.spend(PrivacyCost(1e14, 1e-6, noise_multiplier=1e-7), label="huge")
    eps, delta = acc.total()
    assert eps == math.inf and delta == 1e-5
    assert "spent" in acc.report()


def test_sqlite_ledger_keeps_mechanisms_and_composition(tmp_path):
    path = tmp_path / "ledger.sqlite"
    acc = BudgetAccountant(1.0, 1e-5, slack=5e-6, composition="zcdp", ledger=path)
    acc.spend(gaussian_cost(0.1, 1e-7), label="g")
    acc.spend(laplace_cost(0.05), label="l")
    again = BudgetAccountant.open(path)
    assert again.composition == "zcdp"
    assert again.total() == acc.total()
    assert [e.mechanism for e in again.entries] == ["gaussian", "laplace"]
    with pytest.raises(ValueError, match="composition='zcdp'"):
        BudgetAccountant(1.0, 1e-5, slack=5e-6, ledger=path)


def test_a_planned_grid_of_gaussian_fits_is_checked_at_its_pld_total():
    from sklearn.model_selection import GridSearchCV

    from skdp import PrivateMean
    from skdp.model_selection import check_budget, fit_cost

    search = GridSearchCV(
        PrivateMean(bounds=(0, 1), delta=1e-7), {"epsilon": [0.1] * 10}, cv=3
    )
    cost = fit_cost(search, n_features=1)
    assert len(cost.parts) == 31 and cost.epsilon == pytest.approx(3.1)
    assert {part.mechanism for part in cost.parts} == {"gaussian"}
    pld = BudgetAccountant(1.0, 1e-5, composition="pld")
    assert check_budget(search, pld, n_features=1) is not None
    with pytest.raises(BudgetExceededError):
        check_budget(search, BudgetAccountant(1.0, 1e-5), n_features=1)


def test_a_noise_multiplier_must_match_the_stated_privacy():
    with pytest.raises(ValueError, match="is not"):
        PrivacyCost(0.1, 0.0, noise_multiplier=5.0)
    with pytest.raises(ValueError, match="is not"):
        PrivacyCost(
            0.1, 1e-9, noise_multiplier=gaussian_cost(0.1, 1e-7).noise_multiplier
        )
    with pytest.raises(ValueError, match="not 'laplace'"):
        PrivacyCost(1.0, 1e-5, noise_multiplier=4.0, mechanism="laplace")
    with pytest.raises(ValueError, match=r"\[1e-100, 1e100\]"):
        PrivacyCost(1.0, 1e-5, noise_multiplier=1e-170)
    assert PrivacyCost(1.0, 1e-5, noise_multiplier=4.0).rho == 1 / 32
