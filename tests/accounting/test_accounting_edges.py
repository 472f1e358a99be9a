"""Accounting edges (issue 26, item 7): each of these was fail-safe but wrong.

* ``remaining()`` reported spends that ``check()`` refused;
* a declared ``rho=0`` (or one that underflowed) made an ε > 0 spend free
  under zCDP;
* ``spend(ε >= 1.4e154)`` raised ``OverflowError``;
* ``plan_epsilon(..., "basic")`` rounded to nearest instead of up;
* the Gaussian-cost check accepted a δ understated by up to 1e-4 relative.
"""

import math
import sys
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdp import BudgetAccountant, BudgetExceededError
from skdp.accounting import PrivacyCost, plan_epsilon
from skdp.accounting._composition import SpendTotals, exact
from skdp.mechanisms import gaussian_cost

# -- remaining() never reports what check() refuses ----------------------------

ACCOUNTANTS = {
    "basic": dict(epsilon=1.0, delta=1e-5),
    "advanced": dict(epsilon=1.0, delta=1e-5, slack=1e-6),
    "zcdp": dict(epsilon=1.0, delta=1e-5, composition="zcdp", slack=1e-6),
    "pld": dict(epsilon=1.0, delta=1e-5, composition="pld"),
}

spend_eps = st.one_of(
    st.floats(1e-30, 0.3),
    st.sampled_from([0.1, 0.2, 1 / 3, 1e-20, 0.7, 5e-324]),
)
spend_delta = st.sampled_from([0.0, 0.0, 1e-7, 3e-7, 1e-30])


def spend_or_skip(acc, mode, eps, delta):
    cost = gaussian_cost(eps, 1e-7) if mode == "pld" else PrivacyCost(eps, delta)
    try:
        acc.spend(cost, label="q")
    except BudgetExceededError:
        pass


def assert_remaining_is_accepted(acc, mode):
    eps, delta = acc.remaining()
    if mode == "pld":  # the ε at the δ budget of the largest Gaussian release
        if eps > 0:
            assert acc.check(gaussian_cost(eps, acc.delta))
        return
    assert acc.check(eps, 0.0)
    assert acc.check(0.0, delta)
    assert acc.check(eps, delta)


@pytest.mark.parametrize("mode", sorted(ACCOUNTANTS))
@settings(max_examples=25, deadline=None)
@given(history=st.lists(st.tuples(spend_eps, spend_delta), max_size=6))
def test_spending_what_remaining_reports_is_accepted(mode, history):
    acc = BudgetAccountant(**ACCOUNTANTS[mode])
    assert_remaining_is_accepted(acc, mode)
    for eps, delta in history:
        spend_or_skip(acc, mode, eps, delta)
        assert_remaining_is_accepted(acc, mode)


@pytest.mark.parametrize("budget", [1e308, sys.float_info.max])
@pytest.mark.parametrize("mode", ["advanced", "zcdp"])
def test_remaining_under_a_budget_near_the_largest_float(budget, mode):
    params = dict(ACCOUNTANTS[mode], epsilon=budget)
    acc = BudgetAccountant(**params)
    acc.spend(1e300, label="q")
    eps, delta = acc.remaining()  # before: overflowed or reported 0
    assert eps > 1e307 and acc.check(eps, delta)


def test_advanced_remaining_epsilon_is_not_one_ulp_high():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5, slack=1e-6)
    acc.spend(1e-20, label="q")
    eps, _ = acc.remaining()  # before: 1.0, refused by check()
    assert exact(eps) <= 1 - Fraction(1, 10**20)
    assert acc.check(eps)


def test_advanced_remaining_delta_leaves_the_slack_out():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5, slack=1e-6)
    acc.spend(0.1, 1e-6, label="q")
    assert acc.remaining()[1] == 8e-6  # before: 9e-6, refused by check()
    assert acc.check(0.0, 8e-6)


def test_pld_remaining_is_accepted_as_a_gaussian_release():
    acc = BudgetAccountant(**ACCOUNTANTS["pld"])
    acc.spend(gaussian_cost(0.3, 1e-6), label="g")
    eps, _ = acc.remaining()
    assert acc.check(gaussian_cost(eps, acc.delta))  # before: refused


# -- zCDP: rho = 0 is not free --------------------------------------------------


def test_a_declared_rho_of_zero_does_not_make_a_spend_free():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5, composition="zcdp")
    # pure 0.5-DP is charged as at most 0.5**2/2 = 0.125-zCDP, above the
    # budget's rho (about 0.03): refused, where rho=0 was accepted 100 times
    with pytest.raises(BudgetExceededError):
        acc.spend(PrivacyCost(0.5, rho=0.0), label="q")
    acc.spend(PrivacyCost(0.1, rho=0.0), label="q")
    assert acc.total()[0] > 0


def test_a_tiny_epsilon_is_not_free_under_zcdp():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5, composition="zcdp")
    acc.spend(1e-170, label="q")  # 0.5 * eps * eps underflowed to rho = 0
    assert acc._ledger.totals().rho_units > 0  # its conversion is still ε = 0
    assert SpendTotals().add(1e-170, 0.0).rho_units > 0
    acc.spend(PrivacyCost(1e-170, rho=1e-170**2 / 8), label="q")
    assert len(acc.entries) == 2


# -- huge epsilon: refused or accounted, never OverflowError --------------------


HUGE = [1.4e154, 1e200, sys.float_info.max]


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("eps", HUGE)
@pytest.mark.parametrize(
    "params",
    [
        dict(),
        dict(epsilon=10.0),
        dict(epsilon=10.0, delta=1e-5, slack=1e-6),
        dict(epsilon=1e300, delta=1e-5, slack=1e-6),
        dict(epsilon=10.0, delta=1e-5, composition="zcdp"),
        dict(delta=1e-5, composition="zcdp"),
    ],
)
def test_a_huge_epsilon_is_refused_or_accounted(eps, params):
    acc = BudgetAccountant(**params)
    for _ in range(2):
        try:
            acc.spend(eps, label="q")
        except BudgetExceededError:
            assert eps > acc.epsilon or len(acc.entries) == 1
        acc.total(), acc.remaining(), acc.report()
    if math.isinf(acc.epsilon):
        assert len(acc.entries) == 2
        exact_sum = math.inf if eps == HUGE[-1] else 2 * eps
        if acc.composition == "basic":
            assert acc.total()[0] == exact_sum
        else:  # the zCDP conversion of rho = eps**2 (beyond the floats)
            assert acc.total()[0] >= exact_sum


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("eps", HUGE)
def test_the_costs_of_huge_pure_releases_do_not_overflow(eps):
    from skdp.mechanisms import laplace_cost, selection_cost, svt_cost

    for cost in (laplace_cost(eps), selection_cost(eps), svt_cost(eps)):
        assert cost.rho == math.inf  # before: OverflowError from eps**2
        for params in (dict(), dict(delta=1e-5, composition="zcdp")):
            BudgetAccountant(**params).spend(cost, label="q")


# -- plan_epsilon basic rounds up -----------------------------------------------


def test_plan_epsilon_basic_rounds_up():
    plan = [PrivacyCost(0.1), PrivacyCost(0.2), PrivacyCost(1e-20)]
    total = plan_epsilon(plan, 1e-6, "basic")  # before: 0.30000000000000004?
    assert exact(total) >= Fraction(3, 10) + Fraction(1, 10**20)
    acc = BudgetAccountant(epsilon=total)
    acc.spend_many([("q", c) for c in plan])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1e3), min_size=1, max_size=8))
def test_plan_epsilon_basic_is_never_below_the_exact_sum(values):
    plan = [PrivacyCost(v) for v in values]
    total = plan_epsilon(plan, 1e-6, "basic")
    assert exact(total) >= sum((exact(v) for v in values), Fraction(0))
    BudgetAccountant(epsilon=total).spend_many([("q", c) for c in plan])


# -- the Gaussian cost states no understated delta ------------------------------

mpmath.mp.dps = 60


def true_delta(eps, ratio):
    """Balle–Wang's δ(ε) of a Gaussian release with σ/Δ = ratio, 60 digits."""
    eps, r = mpmath.mpf(eps), mpmath.mpf(ratio)
    a, b = 1 / (2 * r), eps * r
    return mpmath.ncdf(a - b) - mpmath.exp(eps) * mpmath.ncdf(-a - b)


@pytest.mark.parametrize("eps", [1e-3, 0.1, 1.0, 10.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 0.1])
def test_an_understated_gaussian_delta_is_refused(eps, delta):
    ratio = gaussian_cost(eps, delta).noise_multiplier
    truth = true_delta(eps, ratio)
    assert truth <= delta  # the calibration itself holds
    below = float(truth * (1 - mpmath.mpf(2) ** -40))  # before: up to 1e-4 passed
    with pytest.raises(ValueError, match="is not"):
        PrivacyCost(eps, below, noise_multiplier=ratio)
    PrivacyCost(eps, delta, noise_multiplier=ratio)


@settings(max_examples=40, deadline=None)
@given(
    st.floats(1e-4, 50.0),
    st.floats(1e-300, 0.5),
    st.floats(0.2, 5.0),
)
def test_accepted_gaussian_costs_state_at_least_the_true_delta(eps, delta, scale):
    ratio = gaussian_cost(eps, delta).noise_multiplier * scale
    try:
        PrivacyCost(eps, delta, noise_multiplier=ratio)
    except ValueError:
        return
    assert true_delta(eps, ratio) <= delta


def test_a_gaussian_release_is_never_pure():
    with pytest.raises(ValueError, match="is not"):
        PrivacyCost(1.0, 0.0, noise_multiplier=1e100)
