"""Basic composition: the spends' ε and δ add up, exactly."""

from skdp.accounting._rounding import float_down
from skdp.accounting._rules.base import CompositionRule

__all__ = ["BasicComposition"]


class BasicComposition(CompositionRule):
    """``Σ ε_i <= ε`` and ``Σ δ_i <= δ``, decided on exact integer sums.

    Budgets and spends are the decimal numbers written (the shortest repr of
    each float): ten spends of 0.1 fit in a budget of 1.0.
    """

    name = "basic"

    def compose(self, totals):
        return [(totals.epsilon, totals.delta)]

    def fits(self, totals):
        return self.delta_fits(totals) and self.sum_fits(totals)

    def delta_fits(self, totals):
        """Whether the δ spent (and the slack a rule reserves) fits."""
        return self.delta_units is None or (
            self.delta_used_units(totals) <= self.delta_units
        )

    def sum_fits(self, totals):
        """Whether the exact sum of the ε spent fits the ε budget."""
        return self.epsilon_units is None or totals.epsilon_units <= self.epsilon_units

    def remaining_epsilon(self, totals):
        """The ε budget minus the exact sum of the entries, rounded down."""
        return float_down(self.epsilon_left(totals))
