"""Zero-concentrated DP: from a total ``rho`` to an ``(epsilon, delta)`` statement.

A ``rho``-zCDP interaction satisfies ``D_α(P || Q) <= α rho`` for every order
``α > 1`` (Bun and Steinke 2016). The conversion used here is the one of
Canonne, Kamath and Steinke (2020, Prop. 12 and Cor. 13), which is also the
Rényi-DP conversion of Balle et al. (2020) and Asoodeh et al. (2021) applied
to ``D_α = α rho``: for every ``α > 1`` the interaction is ``(ε, δ)``-DP with

``δ = exp((α - 1)(α rho - ε)) (1 - 1/α)^(α - 1) / α``, equivalently
``ε = α rho + log(1 - 1/α) - (log δ + log α) / (α - 1)``.

Any ``α`` gives a valid statement, so minimising over a finite set of
orders is sound; every evaluation is rounded outward (up in ``ε``).
"""

import math

import numpy as np

from skdp.accounting._composition import largest_float_where

__all__ = ["zcdp_epsilon", "zcdp_rho_budget"]

# Orders searched: a geometric grid, then a local refinement around the best.
_ORDERS = np.geomspace(1.0 + 1e-6, 1e12, 8001)
_ROUND_UP = 1e-12


def _epsilon_at(orders, rho, log_delta):
    """``ε(α)`` of the conversion at each order (floats, not yet rounded)."""
    return (
        orders * rho
        + np.log1p(-1.0 / orders)
        - (log_delta + np.log(orders)) / (orders - 1.0)
    )


def zcdp_epsilon(rho, delta):
    """The smallest ``ε`` the conversion gives for ``rho``-zCDP at ``delta``.

    Parameters
    ----------
    rho : float
        Total zCDP parameter, ``>= 0``.
    delta : float
        Target ``δ`` in (0, 1).

    Returns
    -------
    epsilon : float
        An upper bound on the best ``ε`` over the orders searched, rounded
        outward; ``0.0`` when ``rho == 0``.

    Examples
    --------
    >>> from skdp.accounting._zcdp import zcdp_epsilon
    >>> round(zcdp_epsilon(0.5, 1e-5), 3)  # rho + 2 sqrt(rho log(1/δ)) = 5.30
    4.728
    """
    rho = float(rho)
    if rho == 0.0:
        return 0.0
    if math.isinf(rho):  # a sum beyond the floats (an ε > 1.3e154 was spent)
        return math.inf
    log_delta = math.log(delta)
    with np.errstate(over="ignore"):  # a large rho at a large order: inf
        values = _epsilon_at(_ORDERS, rho, log_delta)
    best = int(np.argmin(values))
    lo = _ORDERS[max(best - 1, 0)]
    hi = _ORDERS[min(best + 1, _ORDERS.size - 1)]
    fine = np.linspace(lo, hi, 257)
    with np.errstate(over="ignore"):
        value = min(
            float(values[best]), float(np.min(_epsilon_at(fine, rho, log_delta)))
        )
    if value <= 0.0:  # (ε, δ) with ε < 0 implies (0, δ)
        return 0.0
    return math.nextafter(value * (1.0 + _ROUND_UP), math.inf)


def zcdp_rho_budget(epsilon, delta):
    """The largest float ``ρ`` whose conversion at ``delta`` is ``<= epsilon``.

    The conversion at ``ρ_B`` is attained at some order ``α``; at that same
    order every ``ρ <= ρ_B`` converts to no more (``ε(α)`` increases in
    ``ρ``), so comparing an exact sum ``Σ ρ_i`` with ``ρ_B`` is a sound
    admission rule, with a budget fixed before the first spend.

    Examples
    --------
    >>> from skdp.accounting._zcdp import zcdp_epsilon, zcdp_rho_budget
    >>> rho = zcdp_rho_budget(1.0, 1e-5)
    >>> round(rho, 4), zcdp_epsilon(rho, 1e-5) <= 1.0
    (0.0306, True)
    """
    if math.isinf(epsilon):
        return math.inf
    return largest_float_where(lambda rho: zcdp_epsilon(rho, delta) <= epsilon)
