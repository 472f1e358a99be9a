"""The advanced-composition filter (Rogers, Roth, Ullman and Vadhan 2016).

A spend is accepted when, after it, ``Σ δ_i + slack <= δ`` and either the
exact sum ``Σ ε_i <= ε`` or the filter's bound
(:func:`~skdp.accounting._composition.advanced_filter_epsilon`, rounded up)
is at most ``ε``; the proof, valid for fully adaptive spends, is there.
"""

import math
from fractions import Fraction

from skdp.accounting._composition import (
    advanced_filter_epsilon,
    exact,
    filter_slope,
)
from skdp.accounting._rounding import float_down
from skdp.accounting._rules.basic import BasicComposition

__all__ = ["AdvancedFilter"]


class AdvancedFilter(BasicComposition):
    """Basic composition, or the advanced filter where it admits more.

    With an unlimited ε budget a filter has nothing to fix its slope: the
    rule is then basic composition (no slack reserved).
    """

    name = "advanced"

    def reserves_slack(self):
        return not math.isinf(self.epsilon)

    def compose(self, totals):
        if self.slack_units is None:
            return super().compose(totals)
        delta = totals.delta + exact(self.slack)
        statements = [(totals.epsilon, delta)]
        if totals.count:
            adv = self.filter_epsilon(totals)
            statements.append((Fraction(adv) if math.isfinite(adv) else adv, delta))
        return statements

    def fits(self, totals):
        """``a <= B`` for the float bound ``a`` and the exact budget ``B``
        exactly when ``a`` is at most the largest float below ``B``."""
        if not self.delta_fits(totals):
            return False
        if self.sum_fits(totals):
            return True
        if self.slack_units is None or not totals.count:
            return False
        return self.filter_epsilon(totals) <= self.epsilon_down

    def filter_epsilon(self, totals):
        """The filter's ε for these totals (a float, rounded up)."""
        slope = filter_slope(self.epsilon, self.slack)
        return advanced_filter_epsilon(totals, self.slack, slope)

    def remaining_epsilon(self, totals):
        """The largest pure ε-DP spend either rule admits: from what the exact
        sum admits, up by bisection on the filter."""
        return self._bisect_epsilon(totals, float_down(self.epsilon_left(totals)))
