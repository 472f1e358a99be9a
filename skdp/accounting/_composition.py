"""Composition of (epsilon, delta) spends with exact or outward-rounded arithmetic.

Budgets and spends are read as the decimal numbers the user wrote (the shortest
repr of each float), and basic composition sums them exactly with
:class:`fractions.Fraction`: ten spends of 0.1 use exactly 1.0, while 1.0000001
does not fit in 1.0. The advanced bound involves square roots and logarithms;
it is evaluated in floating point and rounded outward (up) before the exact
comparison, so rounding can only make the accountant more conservative.
"""

import math
from fractions import Fraction
from typing import NamedTuple

__all__ = ["SpendTotals", "advanced_composition", "exact", "split_budget"]

# Relative outward rounding applied to float evaluations of the advanced bound.
# Each term is computed with a few ulps of error; 1e-12 covers that with room.
_ROUND_UP = 1e-12


def exact(value):
    """The decimal value of a float as an exact fraction (``exact(0.1) == 1/10``)."""
    return Fraction(repr(float(value)))


def split_budget(total, weights):
    """Split ``total`` in proportion to ``weights``, never exceeding it exactly.

    The accountant sums the decimal values of the floats it is given, so
    ``0.3 * 1/3`` three times may come to more than ``0.3``. The last share
    takes what the others leave, rounded down, so that the parts sum to at
    most ``total`` in the accountant's arithmetic (and fall short of it by
    at most a few units in the last place).

    Parameters
    ----------
    total : float
        The budget to split, ``>= 0``.
    weights : sequence of float
        Non-negative weights, at least one positive.

    Returns
    -------
    parts : list of float

    Examples
    --------
    >>> from skdp.accounting._composition import exact, split_budget
    >>> parts = split_budget(1.0, [1, 1, 1])
    >>> sum(exact(p) for p in parts) <= 1
    True
    """
    weights = [float(w) for w in weights]
    scale = sum(weights)
    parts = [total * w / scale for w in weights[:-1]]
    left = exact(total) - sum(exact(p) for p in parts)
    last = max(float(left), 0.0)
    while exact(last) > left:
        last = math.nextafter(last, 0.0)
    return [*parts, last]


def round_up(value):
    """A float ``>= value`` that absorbs the rounding error of its evaluation."""
    return math.nextafter(value * (1.0 + _ROUND_UP), math.inf)


class SpendTotals(NamedTuple):
    """Running sums over a ledger's entries, enough for every composition rule.

    ``epsilon`` and ``delta`` are the exact (decimal) sums; ``tanh_sum`` and
    ``square_sum`` are the exact sums of the float terms
    ``epsilon_i * tanh(epsilon_i / 2)`` and ``epsilon_i ** 2`` used by advanced
    composition. Adding one spend is O(1), so checking a budget never re-reads
    the history.
    """

    count: int = 0
    epsilon: Fraction = Fraction(0)
    delta: Fraction = Fraction(0)
    tanh_sum: Fraction = Fraction(0)
    square_sum: Fraction = Fraction(0)

    def add(self, epsilon, delta):
        """The totals after one more spend of ``(epsilon, delta)``."""
        eps = float(epsilon)
        return SpendTotals(
            self.count + 1,
            self.epsilon + exact(eps),
            self.delta + exact(delta),
            self.tanh_sum + Fraction(eps * math.tanh(eps / 2.0)),
            self.square_sum + Fraction(eps * eps),
        )

    def add_all(self, spends):
        totals = self
        for epsilon, delta in spends:
            totals = totals.add(epsilon, delta)
        return totals


def advanced_composition(totals, slack):
    """Heterogeneous advanced composition (Kairouz, Oh and Viswanath 2015, Thm 3.5).

    For adaptive composition of ``(epsilon_i, delta_i)``-DP mechanisms and any
    ``slack`` in (0, 1), the composition is ``(epsilon, delta)``-DP with::

        t       = sum epsilon_i * tanh(epsilon_i / 2)
        s       = sum epsilon_i ** 2
        epsilon = min(t + sqrt(2 s ln(e + sqrt(s) / slack)),
                      t + sqrt(2 s ln(1 / slack)))
        delta   = 1 - (1 - slack) prod(1 - delta_i)  <=  slack + sum delta_i

    (``epsilon_i (e^epsilon_i - 1) / (e^epsilon_i + 1) = epsilon_i
    tanh(epsilon_i/2)``.) Theorem 3.5 also allows ``sum epsilon_i`` (basic
    composition, which needs no slack); the accountant takes whichever
    statement is smaller. The homogeneous case is the Dwork–Rothblum–Vadhan
    bound with the tighter first term ``k epsilon tanh(epsilon/2)`` in place of
    ``k epsilon (e^epsilon - 1)``. We report the upper bound
    ``slack + sum delta_i`` for delta so that it stays exact.

    Parameters
    ----------
    totals : SpendTotals
        Sums over the spends.
    slack : float
        The extra delta (often written delta') spent to tighten epsilon.

    Returns
    -------
    epsilon : float
        Rounded outward (up).
    delta : Fraction
        Exact.
    """
    if totals.count == 0:
        return 0.0, Fraction(0)
    t = float(totals.tanh_sum)
    s = float(totals.square_sum)
    kov = t + math.sqrt(2.0 * s * math.log(math.e + math.sqrt(s) / slack))
    drv = t + math.sqrt(2.0 * s * math.log(1.0 / slack))
    return round_up(min(kov, drv)), exact(slack) + totals.delta
