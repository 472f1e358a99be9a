"""The zCDP filter: entries add up as zero-concentrated DP.

Each entry enters with its zCDP parameter ``ρ_i`` and its reveal
probability ``r_i`` (:func:`~skdp.accounting._composition.entry_profile`); a
spend is accepted while ``Σ r_i + slack <= δ`` and ``Σ ρ_i <= ρ_B``, the
largest ``ρ`` whose conversion at ``δ = slack`` is at most ``ε``
(:func:`~skdp.accounting._zcdp.zcdp_rho_budget`). The theorem and its proof
for fully adaptive use are in the Notes of :class:`~skdp.BudgetAccountant`.
"""

import math
from fractions import Fraction

from skdp.accounting._composition import DECIMAL_ONE, binary_units, exact
from skdp.accounting._rules.base import CompositionRule
from skdp.accounting._zcdp import zcdp_epsilon, zcdp_rho_budget

__all__ = ["ZCDPFilter"]


class ZCDPFilter(CompositionRule):
    """``Σ ρ_i <= ρ_B`` (exact integer sums) and ``Σ r_i + slack <= δ``."""

    name = "zcdp"
    tight = True

    def __init__(self, epsilon, delta, slack):
        super().__init__(epsilon, delta, slack)
        rho = zcdp_rho_budget(self.epsilon_down, slack)
        self.rho_budget_units = binary_units(rho) if math.isfinite(rho) else None

    def reserves_slack(self):
        return True

    def compose(self, totals):
        basic = (totals.epsilon, totals.delta)
        if not totals.count:
            return [basic, (Fraction(0), Fraction(0))]
        eps = zcdp_epsilon(totals.rho, self.slack)
        delta = Fraction(totals.reveal_units, DECIMAL_ONE) + exact(self.slack)
        return [basic, (Fraction(eps) if math.isfinite(eps) else eps, delta)]

    def fits(self, totals):
        if self.delta_units is not None and (
            self.delta_used_units(totals) > self.delta_units
        ):
            return False
        budget = self.rho_budget_units
        return budget is None or totals.rho_units <= budget

    def delta_used_units(self, totals):
        return totals.reveal_units + self.slack_units

    def delta_short(self, delta, spent_delta):
        return (
            f"delta is short: this charge needs delta={delta} outside the "
            f"zCDP conversion, and slack={self.slack} of delta={self.delta} "
            "is reserved for the conversion: create the accountant with "
            "a smaller slack to leave delta for (epsilon, delta) charges "
            "such as PTR"
        )
