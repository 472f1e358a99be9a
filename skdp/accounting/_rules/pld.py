"""The PLD filter, for Gaussian releases (Smith and Thakurta 2022).

Gaussian releases with multipliers ``m_i`` compose exactly to one with
``μ² = Σ 1/m_i²`` (Dong, Roth and Su 2022); a spend is accepted while
``Σ 1/m_i² <= μ_B²``, the largest ``μ²`` whose curve
(:mod:`skdp.accounting._pld`) gives ``δ(ε) <= δ``. Other mechanisms are
refused before anything is charged: no PLD filter is known for mechanisms
mixed adaptively.
"""

import math
from fractions import Fraction

from skdp.accounting._composition import BINARY_ONE, binary_units, exact
from skdp.accounting._cost import counted_cost, ledger_parts
from skdp.accounting._pld import gaussian_mu_budget, pld_epsilon
from skdp.accounting._rules.base import CompositionRule

__all__ = ["PLDFilter", "pld_refusal"]


class PLDFilter(CompositionRule):
    """``Σ 1/m_i² <= μ_B²`` over Gaussian releases (exact integer sums)."""

    name = "pld"
    tight = True

    def __init__(self, epsilon, delta, slack):
        super().__init__(epsilon, delta, slack)
        mu2 = gaussian_mu_budget(self.epsilon_down, delta)
        self.mu2_budget_units = binary_units(mu2) if math.isfinite(mu2) else math.inf

    def compose(self, totals):
        basic = (totals.epsilon, totals.delta)
        if not totals.count:
            return [basic, (Fraction(0), Fraction(0))]
        eps = pld_epsilon(self.delta, totals.mu_squared, [], 0.0)
        return [
            basic,
            (Fraction(eps) if math.isfinite(eps) else eps, exact(self.delta)),
        ]

    def fits(self, totals):
        return totals.mu2_units <= self.mu2_budget_units

    def delta_used_units(self, totals):
        return totals.reveal_units

    def check_parts(self, parts):
        for part in parts:
            eps, delta, _, multiplier = counted_cost(part)
            if multiplier is None and (eps > 0 or delta > 0):
                raise ValueError(pld_refusal(part[0], eps, delta, part[5]))

    def remaining_epsilon(self, totals):
        """The ε (at the δ budget) of the largest further Gaussian release
        that fits as ``gaussian_cost(ε, delta)``."""
        left = self.mu2_budget_units - totals.mu2_units
        if left <= 0:
            return 0.0
        eps = pld_epsilon(self.delta, left / BINARY_ONE * (1.0 - 1e-12), [], 0.0)
        if not (math.isfinite(eps) and 0.0 < self.delta < 1.0):
            return eps
        step = 1e-12
        while eps > 0:  # gaussian_cost's own calibration may differ slightly
            if self.gaussian_would_fit(totals, eps):
                return eps
            eps, step = eps * (1.0 - step), min(2.0 * step, 0.5)
        return 0.0

    def gaussian_would_fit(self, totals, epsilon):
        """Whether ``gaussian_cost(epsilon, delta)`` fits after ``totals``."""
        from skdp.mechanisms import gaussian_cost  # mechanisms import accounting

        try:
            cost = gaussian_cost(epsilon, self.delta)
        except ValueError:  # no multiplier calibrates to it
            return False
        return self.would_fit(totals, ledger_parts("", cost))


def pld_refusal(label, epsilon, delta, mechanism):
    """Why ``composition='pld'`` refuses a release that is not Gaussian."""
    what = f"a {mechanism} release" if mechanism else "a release without a noise"
    what += "" if mechanism else " multiplier"
    return (
        f"{label!r}: composition='pld' composes Gaussian releases only (it is "
        "valid for fully adaptive use by the Gaussian-DP filter of Smith and "
        f"Thakurta 2022); this is {what} (epsilon={epsilon}, delta={delta}). "
        "No PLD filter is known for mixed mechanisms chosen adaptively: use "
        "composition='zcdp' for this ledger, or compute the PLD of a plan "
        "fixed in advance with skdp.accounting.plan_epsilon. Nothing was charged."
    )
