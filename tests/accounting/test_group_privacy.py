"""Group privacy conversions against high-precision decimal arithmetic."""

import math
import sys
from decimal import Decimal, localcontext

import pytest

from skdp.accounting._group_privacy import (
    group_delta,
    group_epsilon,
    group_noise_multiplier,
    group_rho,
    row_budget_for_groups,
)

TINY = 5e-324
EPSILONS = [0.0, TINY, 1e-300, 2.0**-21, 2.0**-20, 1e-3, 0.1, 1.0, 7.5, 70.0]
UNITS = [1, 2, 3, 10, 1000, 2**20, 2**53]


def _exact_factor(epsilon, c):
    """Σ_{i<c} e^{iε} to 800 digits (closed form; c ε small enough)."""
    with localcontext() as ctx:
        ctx.prec = 800
        e = Decimal(epsilon)
        if e == 0:
            return Decimal(c)
        return ((e * c).exp() - 1) / (e.exp() - 1)


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("c", UNITS)
def test_delta_factor_is_an_upper_bound_and_close(epsilon, c):
    got = group_delta(epsilon, 1.0, c)
    if c * epsilon > 700:
        assert got == math.inf
        return
    exact = _exact_factor(epsilon, c)
    assert Decimal(got) >= exact
    # the closed form is tight; below 2**-20 the bound c e^{(c-1) ε} is
    # loose by at most a factor e^{c ε}... relative c ε
    slack = 1e-9 if epsilon >= 2.0**-20 else 1e-9 + 2 * c * epsilon
    assert Decimal(got) <= exact * (1 + Decimal(slack))


@pytest.mark.parametrize("epsilon", [*EPSILONS, sys.float_info.max])
@pytest.mark.parametrize("c", UNITS)
def test_epsilon_and_rho_round_up_exactly(epsilon, c):
    got, rho = group_epsilon(epsilon, c), group_rho(epsilon, c)
    with localcontext() as ctx:
        ctx.prec = 800
        exact = Decimal(epsilon) * c
        if math.isfinite(got):
            assert Decimal(got) >= exact
        else:
            assert exact > Decimal(sys.float_info.max)
        if math.isfinite(got) and got > 0:
            assert Decimal(math.nextafter(got, 0)) < exact
        assert math.isinf(rho) or Decimal(rho) >= exact * c


def test_zero_delta_stays_zero_and_one_unit_is_identity():
    assert group_delta(70.0, 0.0, 2**53) == 0.0
    assert group_delta(0.3, 1e-6, 1) == 1e-6
    assert group_epsilon(0.3, 1) == 0.3
    assert group_noise_multiplier(3.0, 1) == 3.0
    assert group_noise_multiplier(3.0, 3) == 1.0
    assert Decimal(group_noise_multiplier(1.0, 3)) <= Decimal(1) / 3


@pytest.mark.parametrize("epsilon", [TINY, 1e-300, 1e-6, 0.5, 1.0, 10.0, 700.0])
@pytest.mark.parametrize("delta", [0.0, TINY, 1e-12, 1e-6, 0.5])
@pytest.mark.parametrize("k", [1, 2, 5, 64, 2**40])
def test_row_budget_fits_the_group_budget_and_is_nearly_all_of_it(epsilon, delta, k):
    eps_r, delta_r = row_budget_for_groups(epsilon, delta, k)
    assert group_epsilon(eps_r, k) <= epsilon
    assert group_delta(eps_r, delta_r, k) <= delta
    if epsilon / k > 1e-290:  # normal range: the whole ε is used up to rounding
        assert eps_r * k >= epsilon * (1 - 1e-15)
    if delta > 0 and delta_r > 1e-290:
        assert group_delta(eps_r, delta_r, k) >= delta * (1 - 1e-9)


@pytest.mark.parametrize("c", [0, -1, 1.0, True])
def test_units_must_be_a_positive_int(c):
    with pytest.raises(ValueError, match="int >= 1"):
        group_epsilon(1.0, c)
