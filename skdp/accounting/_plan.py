"""The ε of a plan of releases fixed in advance, under each composition."""

import math
from fractions import Fraction
from typing import NamedTuple

from skdp.accounting._composition import DECIMAL_ONE, SpendTotals, exact
from skdp.accounting._cost import PrivacyCost, ledger_parts
from skdp.accounting._pld import pld_epsilon
from skdp.accounting._rounding import float_down, float_up
from skdp.accounting._units import check_accountant_unit, convert_part, unit_factor
from skdp.accounting._zcdp import zcdp_epsilon
from skdp.utils._validation import check_delta

__all__ = ["plan_epsilon"]


def plan_epsilon(
    costs, delta, composition="pld", *, unit="row", max_rows_per_group=None
):
    """The ε at ``delta`` of releases whose parameters are all fixed in advance.

    A planning tool, not a budget: it states what a whole experiment costs
    when every release and its parameters are chosen before the first one
    (the mechanisms' inputs may depend on earlier outputs). Composition of a
    fixed sequence is then exactly the composition of the releases' privacy
    profiles (Dong, Roth and Su 2022, Thm 3.2), so ``"pld"`` may mix
    Gaussian, pure ε-DP and ``(ε, δ)`` releases here, while the accountant's
    ``composition="pld"`` (which must hold for adaptive choices) takes
    Gaussian releases only.

    Parameters
    ----------
    costs : PrivacyCost or iterable of PrivacyCost
        The releases (a sum of costs counts each of its parts).
    delta : float
        The δ of the statement, in (0, 1).
    composition : {"pld", "zcdp", "basic"}, default="pld"
        ``"pld"``: the Gaussian releases' exact curve composed with the
        canonical pairs of the others, losses rounded up
        (:mod:`skdp.accounting._pld`); ``"zcdp"``: the CKS conversion of
        ``Σ ρ_i`` at ``delta`` minus the others' δ; ``"basic"``: the sum of
        the ε when the δ add up to at most ``delta``.
    unit : {"row", "group"}, default="row"
        The unit of the statement; costs stated for the other unit are
        converted as :class:`~skdp.BudgetAccountant` converts them (a
        group's cost counts two group steps for one row; a row's counts
        ``max_rows_per_group`` rows for one group, refused without it).
    max_rows_per_group : int or None, default=None
        With ``unit="group"``, the public bound on a group's rows.

    Returns
    -------
    epsilon : float
        Rounded up (``"basic"``: the smallest float whose decimal reading is
        at least the exact sum, so an accountant with this budget accepts
        the plan); ``inf`` when the releases' own δ exceed ``delta``.

    Examples
    --------
    >>> from skdp.accounting import plan_epsilon
    >>> from skdp.mechanisms import gaussian_cost, laplace_cost
    >>> plan = [laplace_cost(0.1)] * 50 + [gaussian_cost(0.1, 1e-7)] * 50
    >>> round(plan_epsilon(plan, 1e-5), 3), plan_epsilon(plan, 1e-5, "basic")
    (2.953, 10.0)
    """
    if isinstance(costs, PrivacyCost):
        costs = [costs]
    unit, rows = check_accountant_unit(unit, max_rows_per_group)
    atoms = [_counted(atom, unit, rows) for cost in costs for atom in cost.atoms]
    delta = check_delta(delta, allow_zero=False)
    if composition == "basic":
        if sum((exact(a.delta) for a in atoms), Fraction(0)) > exact(delta):
            return math.inf
        return float_up(sum((exact(a.epsilon) for a in atoms), Fraction(0)))
    totals = SpendTotals().add_all(
        (a.epsilon, a.delta, a.rho, a.noise_multiplier) for a in atoms
    )
    if composition == "zcdp":
        left = exact(delta) - Fraction(totals.reveal_units, DECIMAL_ONE)
        left = float_down(left)  # the conversion's δ may not exceed what is left
        return zcdp_epsilon(totals.rho, left) if left > 0 else math.inf
    if composition != "pld":
        raise ValueError(
            f"composition must be 'pld', 'zcdp' or 'basic'; got {composition!r}."
        )
    groups = {}
    for a in atoms:
        if a.noise_multiplier is None and a.epsilon > 0:
            groups[a.epsilon] = groups.get(a.epsilon, 0) + 1
    return pld_epsilon(delta, totals.mu_squared, list(groups.items()), totals.reveal)


def _counted(atom, unit, max_rows_per_group):
    """A single release as it counts in ``unit`` (converted as the
    accountant converts it; the atom itself when its unit is the same)."""
    (part,) = ledger_parts("plan", atom)
    c = unit_factor(part.label, part.unit, unit, max_rows_per_group)
    counted = convert_part(part, c)
    if counted is None:
        return atom
    eps, delta, rho, multiplier = counted
    return _Counted(eps, delta, rho, multiplier)


class _Counted(NamedTuple):
    epsilon: float
    delta: float
    rho: float | None
    noise_multiplier: float | None
