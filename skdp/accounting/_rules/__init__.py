"""The composition rules of :class:`~skdp.BudgetAccountant`, one module each.

Every rule implements :class:`~skdp.accounting._rules.base.CompositionRule`:
basic composition (:mod:`.basic`), the advanced-composition filter
(:mod:`.advanced`), the zCDP filter (:mod:`.zcdp`) and the PLD filter for
Gaussian releases (:mod:`.pld`). The accountant checks its budget with
:func:`check_composition` and builds its rule with :func:`make_rule`.
"""

from skdp.accounting._composition import TIGHT_COMPOSITIONS
from skdp.accounting._rules.advanced import AdvancedFilter
from skdp.accounting._rules.base import CompositionRule
from skdp.accounting._rules.basic import BasicComposition
from skdp.accounting._rules.pld import PLDFilter
from skdp.accounting._rules.zcdp import ZCDPFilter

__all__ = ["COMPOSITIONS", "CompositionRule", "check_composition", "make_rule"]

RULES = {
    rule.name: rule
    for rule in (BasicComposition, AdvancedFilter, ZCDPFilter, PLDFilter)
}
COMPOSITIONS = tuple(RULES)


def make_rule(composition, epsilon, delta, slack):
    """The rule named ``composition`` for the budget ``(epsilon, delta, slack)``."""
    return RULES[composition](epsilon, delta, slack)


def check_composition(composition, epsilon, delta, slack):
    """The composition rule, checked against the budget (see
    :class:`~skdp.BudgetAccountant`'s Notes)."""
    if composition is not None and composition not in COMPOSITIONS:
        raise ValueError(
            f"composition must be one of {COMPOSITIONS} or None; got {composition!r}."
        )
    if slack > delta:
        raise ValueError(
            f"slack must not exceed the delta budget: slack={slack} is the part "
            f"of delta={delta} spent on {composition or 'advanced'} composition."
        )
    if composition is None:
        return "advanced" if slack > 0 else "basic"
    if composition == "advanced" and slack == 0:
        raise ValueError(
            "composition='advanced' needs slack > 0: the part of delta reserved "
            "for the advanced-composition filter, e.g. slack=1e-6."
        )
    if composition in TIGHT_COMPOSITIONS and not 0 < delta < 1:
        raise ValueError(
            f"composition={composition!r} states its total as (epsilon, delta) "
            f"with delta in (0, 1); got delta={delta}. With delta=0 use "
            "composition='basic' (pure epsilon-DP)."
        )
    if composition == "basic" and slack > 0:
        raise ValueError(
            "slack is the part of delta reserved for advanced composition or the "
            "zCDP conversion; composition='basic' uses none: pass slack=0."
        )
    if composition == "pld" and slack > 0:
        raise ValueError(
            "composition='pld' needs no slack: the PLD accounts the whole delta "
            "budget at once; pass slack=0."
        )
    return composition
