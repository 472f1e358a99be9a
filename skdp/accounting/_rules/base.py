"""The interface every composition rule implements for the accountant.

A :class:`CompositionRule` holds one budget ``(epsilon, delta, slack)`` and
answers, for the running sums of a ledger
(:class:`~skdp.accounting._composition.SpendTotals`): what the spends compose
to (:meth:`~CompositionRule.compose`), whether they fit the budget
(:meth:`~CompositionRule.fits`), how much remains
(:meth:`~CompositionRule.remaining_epsilon`,
:meth:`~CompositionRule.remaining_delta`) and, when a spend is refused, which
part of the budget is short (:meth:`~CompositionRule.refusal_message`). The
:class:`~skdp.BudgetAccountant` keeps the ledger, the locking and the public
API, and asks its rule; each rule (basic, the advanced filter, the zCDP
filter, the PLD filter) is one small module of this package.
"""

import math
import sys
from fractions import Fraction

from skdp.accounting._composition import DECIMAL_ONE, decimal_units, exact
from skdp.accounting._cost import LedgerPart, counted_cost
from skdp.accounting._rounding import float_down, float_up

__all__ = ["CompositionRule"]


class CompositionRule:
    """How spends add up under one composition, against one budget.

    Parameters
    ----------
    epsilon, delta, slack : float
        The accountant's budget (``epsilon`` may be ``inf``, ``delta`` 1.0
        for no limit on δ), already checked by
        :func:`~skdp.accounting._rules.check_composition`.

    Attributes
    ----------
    epsilon_units, delta_units, slack_units : int or None
        The budget in decimal units (``None``: no limit, or no slack
        reserved by this rule).
    epsilon_down : float
        The largest float at most the ε budget (``inf`` without one).
    """

    #: The name of the composition (the accountant's ``composition``).
    name = ""
    #: Whether the rule reads the zCDP and Gaussian sums of the totals.
    tight = False

    def __init__(self, epsilon, delta, slack):
        self.epsilon, self.delta, self.slack = epsilon, delta, slack
        finite = not math.isinf(epsilon)
        self.epsilon_units = decimal_units(epsilon) if finite else None
        self.delta_units = None if delta == 1.0 else decimal_units(delta)
        self.slack_units = decimal_units(slack) if self.reserves_slack() else None
        self.epsilon_down = float_down(exact(epsilon)) if finite else math.inf

    def reserves_slack(self):
        """Whether part of the δ budget (the slack) is set aside by the rule."""
        return False

    # -- what the rule decides ---------------------------------------------

    def compose(self, totals):
        """The ``(epsilon, delta)`` statements that hold for these totals:
        a list of exact fractions (or ``inf``), basic composition first."""
        raise NotImplementedError

    def fits(self, totals):
        """Whether spends with these totals respect the budget."""
        raise NotImplementedError

    def check_parts(self, parts):
        """Refuse parts this rule cannot compose (before any charge)."""

    def delta_used_units(self, totals):
        """The δ these totals take from the budget, in decimal units."""
        return totals.delta_units + (self.slack_units or 0)

    # -- derived readings ---------------------------------------------------

    def spent(self, totals):
        """The privacy spent, as floats rounded up: the smaller statement,
        or the composed one for a tight rule."""
        statements = self.compose(totals)
        eps, delta = statements[-1] if self.tight else min(statements)
        eps = math.inf if eps == math.inf else float_up(eps)
        return eps, float_up(delta)

    def would_fit(self, totals, parts):
        """Whether ``parts`` (:class:`~skdp.accounting._cost.LedgerPart`)
        fit after ``totals``."""
        return self.fits(self.after(totals, parts))

    def after(self, totals, parts):
        """The totals once ``parts`` are added (their counted costs)."""
        return totals.add_all(map(counted_cost, parts), tight=self.tight)

    def remaining_delta(self, totals):
        """What remains of the δ budget, the reserved slack set aside."""
        used = totals.delta
        if self.tight:
            used = Fraction(totals.reveal_units, DECIMAL_ONE)
        if self.slack_units is not None:
            used += exact(self.slack)
        return float_down(max(exact(self.delta) - used, Fraction(0)))

    def remaining_epsilon(self, totals):
        """The largest pure ε-DP spend that fits after ``totals`` (finite ε
        budget), by bisection on :meth:`fits` to 1e-9 relative, from below."""
        return self._bisect_epsilon(totals, 0.0)

    def _bisect_epsilon(self, totals, lo):
        hi = min(2.0 * self.epsilon + 1.0, sys.float_info.max)
        for _ in range(200):  # largest ε that fits, to float precision
            mid = lo + (hi - lo) / 2.0  # no overflow near the largest float
            if mid in (lo, hi) or hi - lo <= 1e-9 * hi:
                break
            if self.would_fit(totals, [LedgerPart("", mid)]):
                lo = mid
            else:
                hi = mid
        return lo

    def epsilon_left(self, totals):
        """The ε budget minus the exact sum of the entries (at least 0)."""
        return max(exact(self.epsilon) - totals.epsilon, Fraction(0))

    # -- refusals -----------------------------------------------------------

    def refusal_message(self, totals, after, parts):
        """Who asked, which dimension is short, and what to do about it."""
        spent_eps, spent_delta = self.spent(totals)
        eps = math.fsum(counted_cost(part)[0] for part in parts)
        delta = math.fsum(counted_cost(part)[1] for part in parts)
        labels = [part[0] for part in parts]
        names = {label.split(": ", 1)[0] for label in labels if ": " in label}
        who = f"{', '.join(sorted(names))}: " if len(names) == 1 else ""
        short = self.what_is_short(after, eps, delta, spent_eps, spent_delta)
        verb = "spending" if who else "Spending"
        how = "" if self.name == "basic" else f" ({self.name})"
        converted = [p for p in parts if getattr(p, "counted", None) is not None]
        if converted:
            stated = math.fsum(part.epsilon for part in converted)
            verb += (
                f" (converted from epsilon={stated} stated for one "
                f"{converted[0].unit} to the accountant's unit)"
            )
        return (
            f"{who}{verb} epsilon={eps}, delta={delta} would exceed the privacy "
            f"budget (epsilon={self.epsilon}, delta={self.delta}); already "
            f"spent{how} epsilon={spent_eps}, delta={spent_delta} in "
            f"{totals.count} entries. {short[0].upper() + short[1:]}. Nothing "
            "was charged and no data was read."
        )

    def what_is_short(self, after, eps, delta, spent_eps, spent_delta):
        """The part of the budget a refused spend lacks, and the fix."""
        used = self.delta_used_units(after)
        if self.delta_units is None or used <= self.delta_units:
            return (
                f"epsilon is short: this charge needs epsilon={eps}; the budget "
                f"is epsilon={self.epsilon} with epsilon={spent_eps} already spent"
                + ("" if self.name == "basic" else f" under {self.name} composition")
            )
        if self.delta == 0:
            return (
                f"this charge needs delta={delta}, and the accountant was "
                "created with delta=0.0 (pure epsilon-DP): create it with a "
                "delta budget, e.g. BudgetAccountant(epsilon=..., "
                "delta=1e-5), or use mechanisms that spend no delta"
            )
        return self.delta_short(delta, spent_delta)

    def delta_short(self, delta, spent_delta):
        """Why a spend that is short of δ is refused."""
        return (
            f"delta is short: this charge needs delta={delta}; the budget "
            f"is delta={self.delta} with delta={spent_delta} already spent"
            + (" (the slack included)" if self.slack_units else "")
        )
