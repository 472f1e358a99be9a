"""Group privacy: what a release private for one unit costs for ``c`` units.

If a mechanism is ``(ε, δ)``-DP for datasets that differ in one unit (a row,
or a whole group), then for datasets that differ in ``c`` units it is
``(c ε, δ Σ_{i<c} e^{i ε})``-DP: chain ``c`` neighbours and add up (Dwork and
Roth, *The Algorithmic Foundations of Differential Privacy*, 2014, Thm. 2.2
for δ = 0; the δ term by the same induction, Vadhan, *The Complexity of
Differential Privacy*, 2017, Lemma 2.2). ρ-zCDP becomes ``c² ρ``-zCDP (Bun
and Steinke, 2016, Prop. 27); a Gaussian release with noise multiplier
``σ/Δ`` is one with sensitivity ``c Δ``, i.e. multiplier ``σ/(c Δ)``.

Used two ways: to convert a charge stated in one unit into another (a
row-level release in a person-level budget with a stated bound of ``m`` rows
per person is ``c = m``; a person-level release in a row-level budget is a
replacement of one group, ``c = 2``), and, inverted, to run a row-level
mechanism for a group of at most ``k`` rows (:func:`row_budget_for_groups`).

Every result is rounded towards the safe side (costs up, budgets down)
from the floats' binary values, not their decimal readings.
"""

import math
from fractions import Fraction

from skdp.accounting._rounding import float_down, float_up

__all__ = [
    "group_delta",
    "group_epsilon",
    "group_noise_multiplier",
    "group_rho",
    "row_budget_for_groups",
]

_U = 2.0**-52  # one ulp of 1.0: a bound on libm's relative error per call


def _binary_up(value):
    """The smallest float whose binary value is >= the Fraction ``value``."""
    return float_up(value, reading=Fraction)


def _binary_down(value):
    """The largest float whose binary value is <= the Fraction ``value``."""
    return float_down(value, reading=Fraction)


def _check_units(c):
    if isinstance(c, bool) or not isinstance(c, int) or c < 1:
        raise ValueError(f"the number of units must be an int >= 1; got {c!r}.")


def group_epsilon(epsilon, c):
    """``c ε`` rounded up (``inf`` beyond the floats)."""
    _check_units(c)
    return _binary_up(Fraction(float(epsilon)) * c)


def _delta_factor_up(epsilon, c):
    """A float at least ``Σ_{i<c} e^{i ε}`` (``inf`` when it overflows).

    For ε ≥ 2⁻²⁰ the closed form ``expm1(c ε)/expm1(ε)`` is evaluated in
    floats; each of its four operations errs by a few ulps relative, and the
    product ``c ε`` by one ulp, which ``expm1`` amplifies by at most
    ``c ε`` (its condition number), so a relative margin of
    ``8 u (c ε + 8)`` covers them all. Below, where subnormal or tiny ε
    lose relative precision, the looser bound ``c e^{(c-1) ε}`` (each term
    is at most the last) is used with the same margin.
    """
    epsilon = float(epsilon)
    if c == 1:
        return 1.0
    if epsilon == 0.0:
        return float(c) if c <= 2**53 else _binary_up(c)
    exponent = c * epsilon  # float products and quotients overflow to inf
    if exponent > 709.0:
        return math.inf
    if epsilon >= 2.0**-20:
        value = math.expm1(exponent) / math.expm1(epsilon)
    else:
        value = float(c) * math.exp((c - 1) * epsilon)
    bound = value * (1.0 + 8.0 * _U * (exponent + 8.0))
    return math.nextafter(bound, math.inf) if math.isfinite(bound) else math.inf


def group_delta(epsilon, delta, c):
    """``δ Σ_{i<c} e^{i ε}`` rounded up; ``0`` for δ = 0, else possibly ``inf``."""
    _check_units(c)
    delta = float(delta)
    if delta == 0.0:
        return 0.0
    factor = _delta_factor_up(epsilon, c)
    if math.isinf(factor):
        return math.inf
    product = delta * factor
    if math.isinf(product):
        return math.inf
    return math.nextafter(product, math.inf) if c > 1 else product


def group_rho(rho, c):
    """``c² ρ`` rounded up."""
    _check_units(c)
    return _binary_up(Fraction(float(rho)) * c * c)


def group_noise_multiplier(multiplier, c):
    """``σ/(c Δ)`` from ``σ/Δ``, rounded down (less noise is the safe side)."""
    _check_units(c)
    return _binary_down(Fraction(float(multiplier)) / c)


def row_budget_for_groups(epsilon, delta, k):
    """The largest ``(ε_r, δ_r)`` whose group cost for ``k`` rows fits.

    A mechanism run at ``(ε_r, δ_r)`` for one row, on data where each group
    keeps at most ``k`` rows, is ``(ε, δ)``-DP for one group:
    ``group_epsilon(ε_r, k) <= ε`` and ``group_delta(ε_r, δ_r, k) <= δ``
    hold for the returned floats (checked, and stepped down if rounding
    broke them). ``δ_r`` may underflow to 0, which only adds safety.
    """
    _check_units(k)
    epsilon, delta = float(epsilon), float(delta)
    eps_r = _binary_down(Fraction(epsilon) / k)
    while eps_r > 0.0 and group_epsilon(eps_r, k) > epsilon:
        eps_r = math.nextafter(eps_r, 0.0)
    if delta == 0.0:
        return eps_r, 0.0
    factor = _delta_factor_up(eps_r, k)
    delta_r = 0.0 if math.isinf(factor) else math.nextafter(delta / factor, 0.0)
    while delta_r > 0.0 and group_delta(eps_r, delta_r, k) > delta:
        delta_r = math.nextafter(delta_r, 0.0)
    return eps_r, delta_r
