"""Exact values rounded to floats, outward: the accountant's last step.

The accountant composes spends exactly (fractions, or integer units of
:mod:`skdp.accounting._composition`) and reports floats: a spent total is
rounded up, a remaining budget down, so a reading never understates what was
spent nor overstates what is left. A leaf module: the accountant, its
composition rules, its reports and :func:`~skdp.accounting.plan_epsilon`
all import it, and it imports none of them.
"""

import math
import sys

from skdp.accounting._composition import exact

__all__ = ["float_down", "float_up"]


def float_up(value, reading=exact):
    """The nearest float whose decimal reading is >= ``value`` (``inf``
    beyond the floats); ``reading=Fraction`` compares its binary value."""
    try:
        f = float(value)
    except OverflowError:
        return math.inf
    if math.isinf(f):
        return f
    return f if reading(f) >= value else math.nextafter(f, math.inf)


def float_down(value, reading=exact):
    """The nearest float whose decimal reading is <= ``value`` (the largest
    float beyond the floats); ``reading=Fraction`` compares its binary value."""
    try:
        f = float(value)
    except OverflowError:
        return sys.float_info.max
    if math.isinf(f):
        return sys.float_info.max
    return f if reading(f) <= value else math.nextafter(f, -math.inf)
