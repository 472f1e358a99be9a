"""Composition of (epsilon, delta) spends with exact or outward-rounded arithmetic.

Budgets and spends are read as the decimal numbers the user wrote (the shortest
repr of each float), and basic composition sums them exactly with
:class:`fractions.Fraction`: ten spends of 0.1 use exactly 1.0, while 1.0000001
does not fit in 1.0. The advanced bound involves square roots and logarithms;
it is evaluated in floating point and rounded outward (up) before the exact
comparison, so rounding can only make the accountant more conservative.
"""

import functools
import math
from fractions import Fraction
from typing import NamedTuple

__all__ = [
    "DECIMAL_ONE",
    "TIGHT_COMPOSITIONS",
    "SpendTotals",
    "advanced_filter_epsilon",
    "binary_units",
    "budget_left",
    "decimal_units",
    "entry_profile",
    "equal_shares",
    "exact",
    "filter_slope",
    "split_budget",
]

#: The shortest repr of every finite float is a multiple of 10**-DECIMAL_PLACES
#: (its last digit is at most 10**-340), and every finite float is a multiple
#: of 2**-BINARY_PLACES: sums of these integer units are exact and fast.
DECIMAL_PLACES = 400
DECIMAL_ONE = 10**DECIMAL_PLACES
BINARY_PLACES = 1074
BINARY_ONE = 1 << BINARY_PLACES

#: Compositions that read the zCDP and PLD sums of :class:`SpendTotals`.
TIGHT_COMPOSITIONS = ("zcdp", "pld")

# Relative outward rounding applied to float evaluations of the advanced bound.
# Each term is computed with a few ulps of error; 1e-12 covers that with room.
_ROUND_UP = 1e-12


def exact(value):
    """The decimal value of a float as an exact fraction (``exact(0.1) == 1/10``)."""
    return Fraction(repr(float(value)))


@functools.lru_cache(maxsize=1 << 14)
def decimal_units(value):
    """``exact(value) * 10**DECIMAL_PLACES`` as an int (``value`` finite).

    Examples
    --------
    >>> from skdp.accounting._composition import DECIMAL_ONE, decimal_units
    >>> decimal_units(0.1) * 10 == DECIMAL_ONE
    True
    """
    mantissa, _, power = repr(float(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    shift = DECIMAL_PLACES + int(power or 0) - len(fraction)
    return int(whole + fraction) * 10**shift


@functools.lru_cache(maxsize=1 << 14)
def binary_units(value):
    """The float ``value`` times ``2**BINARY_PLACES``, exactly, as an int."""
    numerator, denominator = float(value).as_integer_ratio()
    return numerator << (BINARY_PLACES - denominator.bit_length() + 1)


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
    if not weights or weights[-1] <= 0:
        raise ValueError(
            f"split_budget needs a positive last weight (it takes what the "
            f"others leave, rounded down); got weights={weights}."
        )
    scale = sum(weights)
    parts = [total * w / scale for w in weights[:-1]]
    return [*parts, _remainder(parts, total)]


def equal_shares(total, n):
    """The largest float ``s <= total / n`` whose ``n`` copies sum to at most
    ``total``: the share of each of ``n`` releases run on one budget.

    ``total / n`` may round up (``1.0 / 10`` is ``0.1``, above ``1/10``), and
    ``n`` releases at it would cost more than the ``total`` charged. The share
    steps down (a float or two) until its ``n`` copies fit both as the
    mechanisms use them (binary values) and as the accountant adds floats
    (shortest decimals, :func:`exact`). A share that underflows is 0; the
    caller refuses it before the charge.

    Examples
    --------
    >>> from skdp.accounting._composition import equal_shares, exact
    >>> 1.0 / 10, equal_shares(1.0, 10)
    (0.1, 0.09999999999999999)
    >>> 10 * exact(equal_shares(1.0, 10)) <= 1
    True
    """
    share = total / n
    while share > 0 and not (
        n * exact(share) <= exact(total) and n * Fraction(share) <= Fraction(total)
    ):
        share = math.nextafter(share, 0.0)
    return share


def budget_left(total, used):
    """``total - used``, rounded down so that ``used + left <= total`` exactly.

    A float subtraction is not the remainder: ``0.9 - 0.3`` comes out as
    ``0.6000000000000001``, and ``1.0 - 0.9999999999`` is
    ``1.000000082740371e-10``, so an estimator that charged both parts would
    not fit a budget of exactly the total. The result fits both as the
    accountant reads floats (shortest decimals, :func:`exact`) and as the
    mechanisms use them (binary values): it starts at the float nearest the
    smaller of the two exact remainders and steps down a float or two.

    Examples
    --------
    >>> from skdp.accounting._composition import budget_left, exact
    >>> 0.9 - 0.3, budget_left(0.9, 0.3)
    (0.6000000000000001, 0.6)
    >>> left = budget_left(1.0, 0.9999999999)
    >>> exact(0.9999999999) + exact(left) <= exact(1.0), left < 1.0 - 0.9999999999
    (True, True)
    """
    return _remainder([used], total)


def _remainder(parts, total):
    """The largest float that ``total`` leaves after ``parts``: it starts at
    the float nearest the smaller of the decimal and binary remainders and
    steps down until :func:`_fits` holds (a float or two)."""
    decimal = exact(total) - sum(exact(p) for p in parts)
    binary = Fraction(total) - sum(Fraction(p) for p in parts)
    left = max(float(min(decimal, binary)), 0.0)
    while left > 0 and not _fits([*parts, left], total):
        left = math.nextafter(left, 0.0)
    return left


def _fits(parts, total):
    """Whether ``parts`` sum to at most ``total`` both as the accountant reads
    floats (their shortest decimals) and as the mechanisms use them (their
    binary values): the noise of each part is calibrated to its binary value."""
    decimal = sum(exact(p) for p in parts) <= exact(total)
    binary = sum(Fraction(p) for p in parts) <= Fraction(total)
    return decimal and binary


def round_up(value):
    """A float ``>= value`` that absorbs the rounding error of its evaluation."""
    return math.nextafter(value * (1.0 + _ROUND_UP), math.inf)


def entry_profile(epsilon, delta, rho=None, noise_multiplier=None):
    """How one entry enters the tight compositions (zCDP and PLD), exactly.

    Returns ``(rho_units, reveal, mu2_units)``: its zCDP parameter in units
    of ``2**-1074`` (rounded up), the part of its ``δ`` that is a "reveal"
    probability (the canonical ``(ε, δ)`` pair of Kairouz, Oh and Viswanath
    2015 with loss ``+∞`` on an event of probability ``δ`` and pure ``ε``-DP
    otherwise) and, for a Gaussian release with multiplier ``r``, ``μ² =
    1/r²`` in the same units (its privacy curve is that of ``1/r``-GDP and it
    is ``1/(2r²)``-zCDP, with no reveal part). A release with ``δ = 0`` is
    pure ``ε``-DP: ``ρ = ε²/2`` (Bun and Steinke 2016, Prop. 1.4), computed
    from the exact square (no underflow to 0, no overflow), unless the
    mechanism states a smaller positive one. A stated ``ρ = 0`` with
    ``ε > 0`` is not used: 0-zCDP would mean the output does not depend on
    the data at all, which the stated ``ε > 0`` contradicts (or a ``ρ`` that
    underflowed), so the entry is charged ``ε²/2``, which holds for every
    ``ε``-DP release.
    """
    if noise_multiplier is not None:
        mu_squared = _up(1.0 / (noise_multiplier * noise_multiplier))
        return binary_units(_up(0.5 * mu_squared)), 0.0, binary_units(mu_squared)
    generic = half_square_units(epsilon)
    if delta == 0 and rho is not None and 0 < rho < math.inf:
        return min(binary_units(_up(rho)), generic), 0.0, 0
    return generic, delta, 0


def _up(value):
    """Above ``value`` by more than the error of two float operations."""
    return math.nextafter(value * (1.0 + 2.0**-50), math.inf) if value else 0.0


def square_units(value):
    """``value**2`` in units of ``2**-1074``, exactly, rounded up (an int).

    Examples
    --------
    >>> from skdp.accounting._composition import BINARY_ONE, square_units
    >>> square_units(3.0) == 9 * BINARY_ONE
    True
    """
    units = binary_units(value)
    return -((-units * units) >> BINARY_PLACES)


def half_square_units(value):
    """``value**2 / 2`` in units of ``2**-1074``, exactly, rounded up."""
    units = binary_units(value)
    return -((-units * units) >> (BINARY_PLACES + 1))


class SpendTotals(NamedTuple):
    """Running sums over a ledger's entries, enough for every composition rule.

    Exact integers: ``epsilon_units`` and ``delta_units`` are the decimal
    sums of the spends in units of ``10**-400`` (:func:`decimal_units`);
    ``tanh_units`` the sum of upper bounds on ``epsilon_i * tanh(epsilon_i /
    2)`` and ``square_units`` the sum of the exact ``epsilon_i ** 2`` (rounded
    up), used by advanced composition, in units of ``2**-1074``; ``rho_units``,
    ``reveal_units`` (decimal) and ``mu2_units`` the sums of the terms of
    :func:`entry_profile` used by zCDP and PLD composition. Adding one spend
    is a few integer additions, so checking a budget never re-reads the
    history (and costs microseconds, where the same sums as fractions cost
    tens).
    """

    count: int = 0
    epsilon_units: int = 0
    delta_units: int = 0
    tanh_units: int = 0
    square_units: int = 0
    rho_units: int = 0
    reveal_units: int = 0
    mu2_units: int = 0

    @property
    def epsilon(self):
        """The exact sum of the ε spent, as a fraction."""
        return Fraction(self.epsilon_units, DECIMAL_ONE)

    @property
    def delta(self):
        """The exact sum of the δ spent, as a fraction."""
        return Fraction(self.delta_units, DECIMAL_ONE)

    @property
    def tanh_sum(self):
        """``Σ ε_i tanh(ε_i / 2)`` of the float terms, exactly."""
        return Fraction(self.tanh_units, BINARY_ONE)

    @property
    def square_sum(self):
        """``Σ ε_i²`` of the float terms, exactly."""
        return Fraction(self.square_units, BINARY_ONE)

    @property
    def rho(self):
        """``Σ ρ_i``, rounded up to a float (``inf`` beyond the floats)."""
        return _ratio_up(self.rho_units, BINARY_ONE)

    @property
    def reveal(self):
        """``Σ`` of the reveal ``δ_i``, rounded up to a float."""
        return _ratio_up(self.reveal_units, DECIMAL_ONE)

    @property
    def mu_squared(self):
        """``Σ 1/r_i²`` over the Gaussian entries, rounded up to a float."""
        return _ratio_up(self.mu2_units, BINARY_ONE)

    def add(self, epsilon, delta, rho=None, noise_multiplier=None, *, tight=True):
        """The totals after one more spend of ``(epsilon, delta)``.

        With ``tight=False`` the sums of zCDP and PLD composition are carried
        over unchanged (an accountant with basic or advanced composition never
        reads them, and skips their cost).
        """
        eps, delta = float(epsilon), float(delta)
        e, d, t, q = _basic_units(eps, delta)
        rho_units, reveal_units, mu2_units = self[5:]
        if tight:
            r, v, m = _tight_units(eps, delta, rho, noise_multiplier)
            rho_units, reveal_units, mu2_units = (
                rho_units + r,
                reveal_units + v,
                (mu2_units + m),
            )
        return SpendTotals(
            self.count + 1,
            self.epsilon_units + e,
            self.delta_units + d,
            self.tanh_units + t,
            self.square_units + q,
            rho_units,
            reveal_units,
            mu2_units,
        )

    def add_all(self, spends, *, tight=True):
        """The totals after ``(epsilon, delta[, rho, noise_multiplier])`` spends."""
        totals = self
        for spend in spends:
            totals = totals.add(*spend, tight=tight)
        return totals


@functools.lru_cache(maxsize=1 << 14)
def _basic_units(eps, delta):
    """What one spend adds to the sums of basic and advanced composition."""
    return (
        decimal_units(eps),
        decimal_units(delta),
        _tanh_term_units(eps),
        square_units(eps),
    )


def _tanh_term_units(eps):
    """An upper bound on ``ε tanh(ε/2)`` in units of ``2**-1074``: the float
    evaluation rounded up, and never above the exact bounds ``ε²/2`` (as
    ``tanh x <= x``; it holds where the float product underflows) and ``ε``
    (as ``tanh <= 1``)."""
    exact_bound = min(half_square_units(eps), binary_units(eps))
    term = _up(eps * math.tanh(eps / 2.0))
    return min(exact_bound, binary_units(term)) if math.isfinite(term) else exact_bound


@functools.lru_cache(maxsize=1 << 14)
def _tight_units(eps, delta, rho, noise_multiplier):
    """What one spend adds to the sums of zCDP and PLD composition."""
    rho_units, reveal, mu2_units = entry_profile(eps, delta, rho, noise_multiplier)
    return rho_units, decimal_units(reveal) if reveal else 0, mu2_units


def _ratio_up(numerator, denominator):
    """The smallest float ``>= numerator / denominator`` (non-negative ints),
    ``inf`` when the ratio exceeds the largest float."""
    try:
        value = numerator / denominator  # correctly rounded
    except OverflowError:
        return math.inf
    if Fraction(value) < Fraction(numerator, denominator):
        value = math.nextafter(value, math.inf)
    return value


def filter_slope(budget_epsilon, slack):
    """The fixed slope ``λ`` of the advanced-composition filter for a budget.

    ``λ = sqrt(2 L) / u`` with ``L = ln(1/slack)`` and ``u`` the positive root of
    ``u²/2 + sqrt(2L) u = ε_g``: the filter's line is then tangent to the
    advanced-composition curve ``s/2 + sqrt(2 s L)`` exactly where that curve
    reaches the budget, so for many small spends the filter admits as much as
    advanced composition with fixed parameters would.

    Parameters
    ----------
    budget_epsilon : float
        The accountant's finite ε budget ``ε_g > 0``.
    slack : float
        The δ' of the filter, in (0, 1).

    Returns
    -------
    slope : float

    Examples
    --------
    >>> from skdp.accounting._composition import filter_slope
    >>> round(filter_slope(6.0, 1e-6), 3)
    5.06
    """
    root = math.sqrt(-2.0 * math.log(slack))
    # u = sqrt(root² + 2ε) - root, without cancellation; 0 past the floats
    u = 2.0 * budget_epsilon / (math.sqrt(root * root + 2.0 * budget_epsilon) + root)
    return root / u if math.isfinite(u) else 0.0


def advanced_filter_epsilon(totals, slack, slope):
    """The ε the advanced-composition privacy filter has used: ``t + L/λ + λ s/2``.

    With ``t = Σ ε_i tanh(ε_i/2)``, ``s = Σ ε_i²``, ``L = ln(1/slack)`` and a
    slope ``λ > 0`` fixed before the first spend (:func:`filter_slope`), a
    sequence of adaptively chosen ``(ε_i, δ_i)``-DP releases that is only
    continued while this value stays ``<= ε_g`` (or, alternatively, while
    ``Σ ε_i <= ε_g``), and while ``Σ δ_i + slack <= δ_g``, is
    ``(ε_g, δ_g)``-DP as a whole, whatever the analyst chose after seeing
    earlier releases. Proof (a privacy filter in the sense of Rogers, Roth,
    Ullman and Vadhan 2016; the line-crossing form of Whitehouse, Ramdas,
    Rogers and Wu 2023): couple each release with a pure ``ε_i``-DP one at
    total-variation cost ``δ_i`` (Dwork–Roth Lemma 3.17; ``Σ δ_i`` over any
    path). For the pure releases the privacy loss ``L_i`` given the past has
    ``|L_i| <= ε_i`` and mean ``<= ε_i tanh(ε_i/2)`` (Kairouz, Oh and
    Viswanath 2015), so by Hoeffding's lemma ``M_n = exp(λ(ΣL_i - t_n) -
    λ² s_n / 2)`` is a non-negative supermartingale, and by Ville's
    inequality ``P(sup M_n >= 1/slack) <= slack`` at every stopping time. On
    a path stopped with ``t + L/λ + λ s/2 <= ε_g``, ``ΣL_i > ε_g`` implies
    ``M >= 1/slack``; on a path stopped with ``Σ ε_i <= ε_g``, ``ΣL_i <=
    ε_g`` surely. Hence ``P(ΣL_i > ε_g) <= slack`` whichever rule kept the
    path going, and the whole interaction is ``(ε_g, slack + max Σ δ_i)``-DP.

    Parameters
    ----------
    totals : SpendTotals
        Sums over the spends.
    slack : float
        The δ' reserved for the filter.
    slope : float
        ``λ``, fixed by the budget (:func:`filter_slope`).

    Returns
    -------
    epsilon : float
        Rounded outward (up).

    Examples
    --------
    >>> from skdp.accounting._composition import (
    ...     SpendTotals, advanced_filter_epsilon, filter_slope)
    >>> totals = SpendTotals().add_all([(0.1, 0.0)] * 100)
    >>> eps = advanced_filter_epsilon(totals, 1e-6, filter_slope(6.0, 1e-6))
    >>> 5.75 < eps < 5.76  # basic composition: 10.0
    True
    """
    if not slope > 0:  # a budget beyond the floats: no line to follow
        return math.inf
    t = _ratio_up(totals.tanh_units, BINARY_ONE)
    s = _ratio_up(totals.square_units, BINARY_ONE)
    return round_up(t + -math.log(slack) / slope + slope * s / 2.0)


def largest_float_where(holds, limit=1e300):
    """The largest float ``x >= 0`` with ``holds(x)``, for ``holds`` true on
    ``[0, x*]`` and false above; ``inf`` past ``limit``."""
    lo, hi = 0.0, 1.0
    while holds(hi):
        lo, hi = hi, 2.0 * hi
        if hi > limit:
            return math.inf
    while True:
        mid = (lo + hi) / 2.0
        if mid in (lo, hi):
            return lo
        lo, hi = (mid, hi) if holds(mid) else (lo, mid)


def smallest_float_where(holds, limit=1e300):
    """The smallest float ``x >= 0`` with ``holds(x)``, for ``holds`` false on
    ``[0, x*)`` and true from ``x*``; ``inf`` past ``limit``."""
    if holds(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    while not holds(hi):
        lo, hi = hi, 2.0 * hi
        if hi > limit:
            return math.inf
    while True:
        mid = (lo + hi) / 2.0
        if mid in (lo, hi):
            return hi
        lo, hi = (lo, mid) if holds(mid) else (mid, hi)
