"""The privacy unit of a charge and of an accountant, and the conversion.

A cost is stated for a *unit*: ``"row"`` (the release is DP for add/remove
of one row) or ``"group"`` (for add/remove of one whole group, e.g. all the
rows of one person, after the estimator kept at most ``group_rows`` of
them). An accountant counts its budget in one unit; a charge stated in the
other unit is converted by group privacy
(:mod:`skdp.accounting._group_privacy`) to a cost that holds for the
accountant's unit, ``c`` units of the charge's:

* a group charge in a row accountant: ``c = 2``. Adding or removing one
  row either adds or removes a whole new group (one group step) or changes
  the rows of an existing group, which is removing that group and adding
  its new version (two group steps).
* a row charge in a group accountant: ``c = m``, the accountant's stated
  ``max_rows_per_group`` (a public bound on the rows any one person has in
  all the data the accountant's releases read); refused when it is not
  stated.
* a charge in the accountant's own unit: ``c = 1`` (a group charge is
  group-level DP whatever its ``group_rows``: contribution bounding makes it
  so).

Every composition rule reads the converted cost the same way: ``(c ε, δ
Σ_{i<c} e^{iε})`` for basic and advanced composition and for the reveal part
of zCDP, ``c² ρ`` for zCDP, ``σ/(cΔ)`` for a Gaussian release (which is
``c μ``-GDP for ``c`` units, Dong, Roth and Su 2022, Thm 2.14, so PLD and
zCDP take it exactly). The ledger keeps the stated cost, its unit and the
converted cost it counted.
"""

import math
from fractions import Fraction

from skdp.accounting._composition import exact
from skdp.accounting._group_privacy import (
    _binary_up,
    group_delta,
    group_noise_multiplier,
    group_rho,
)

__all__ = [
    "UNITS",
    "check_accountant_unit",
    "check_charge_unit",
    "conversion_note",
    "convert_part",
    "unit_factor",
]

UNITS = ("row", "group")

#: The largest public bound on rows per group, an estimator's
#: ``max_rows_per_group`` or an accountant's (a Python int may be any size;
#: 10**400 rows overflowed to an OverflowError in the noise calibration).
MAX_ROWS = 2**53


def _check_rows(value, name):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1 or None; got {value!r}.")
    if value > MAX_ROWS:
        raise ValueError(
            f"{name}={value} is beyond 2**53, more rows than any data set in "
            "memory holds; state the bound you mean, at most 2**53."
        )
    return value


def check_charge_unit(unit, group_rows):
    """``(unit, group_rows)`` of a charge, checked: ``("row", None)`` or
    ``("group", k)`` with ``k`` the public bound on a group's kept rows
    (``None`` if the charge does not state it)."""
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}; got {unit!r}.")
    if unit == "row":
        if group_rows is not None:
            raise ValueError(
                f"group_rows={group_rows!r} bounds the rows of a group: it "
                "goes with unit='group' (a cost stated for one row has none)."
            )
        return unit, None
    if group_rows is not None:
        group_rows = _check_rows(group_rows, "group_rows")
    return unit, group_rows


def check_accountant_unit(unit, max_rows_per_group):
    """The accountant's ``(unit, max_rows_per_group)``, checked."""
    if unit not in UNITS:
        raise ValueError(
            f"unit must be 'row' (a budget for one row) or 'group' (for one "
            f"person, or any group of rows); got {unit!r}."
        )
    if max_rows_per_group is None:
        return unit, None
    if unit == "row":
        raise ValueError(
            f"max_rows_per_group={max_rows_per_group!r} bounds a person's rows "
            "for a person-level budget: pass it with unit='group' (a row-level "
            "accountant needs no bound)."
        )
    return unit, _check_rows(max_rows_per_group, "max_rows_per_group")


def unit_factor(label, unit, accountant_unit, max_rows_per_group):
    """How many of the charge's units one of the accountant's units spans.

    Raises ``ValueError`` (before anything is charged) for a row charge in a
    group accountant that states no ``max_rows_per_group``.
    """
    if unit == accountant_unit:
        return 1
    if unit == "group":  # a group charge in a row accountant
        return 2
    if max_rows_per_group is None:
        raise ValueError(
            f"{label!r} is stated for one row, and this accountant's budget is "
            "for one group (a person), who may have any number of rows: its "
            "cost per person is unknown. State the public bound on any one "
            "person's rows in all the data this accountant's releases read, "
            "BudgetAccountant(..., unit='group', max_rows_per_group=m) (each "
            "row-level charge then counts as m rows), or fit the estimator "
            "with groups=... and max_rows_per_group=k so that its cost is "
            "stated for one group. Nothing was charged."
        )
    return max_rows_per_group


def _up_to(start, decimal, binary):
    """The smallest float from ``start`` up whose decimal reading (which the
    accountant sums) is at least the fraction ``decimal`` and whose binary
    value (which the tight compositions square) is at least ``binary``."""
    value = start
    while math.isfinite(value) and (exact(value) < decimal or Fraction(value) < binary):
        value = math.nextafter(value, math.inf)
    return value


def _above_both(value):
    """The smallest float whose both readings are at least both of
    ``value``'s (where they differ, the larger one rounded up)."""
    larger = max(Fraction(value), exact(value))
    return _up_to(value, larger, larger)


def convert_part(part, c):
    """The cost ``(epsilon, delta, rho, noise_multiplier)`` that a part's
    stated cost amounts to for ``c`` of its units, rounded up (``None`` for
    ``c == 1``: nothing to convert): ``c ε`` is the smallest float whose
    decimal reading is at least ``c`` times ε's and whose binary value is at
    least ``c`` times ε's (so ``0.3`` counts ``0.6`` for ``c = 2``).
    ``ValueError`` where ``c ε`` exceeds the floats; a δ beyond 1 is stated
    as 1 (every mechanism is ``(ε, 1)``-DP)."""
    if c == 1:
        return None
    stated = part.epsilon
    decimal, binary = c * exact(stated), c * Fraction(stated)
    # start at most two ulps below the answer (a float whose decimal reading
    # is >= decimal is less than half an ulp below it): from the binary
    # product alone, a subnormal ε (whose decimal reading is up to 1.2%
    # above its binary value) times a large c was ~1e10 ulps short
    below_decimal = math.nextafter(math.nextafter(_binary_up(decimal), 0.0), 0.0)
    epsilon = _up_to(max(_binary_up(binary), below_decimal), decimal, binary)
    if not math.isfinite(epsilon):
        raise ValueError(
            f"{part.label!r}: epsilon={part.epsilon} for {c} units is beyond "
            "the largest float; nothing was charged."
        )
    # δ Σ e^{iε} from inputs at or above both readings of ε and δ, then
    # rounded up in both readings
    delta = group_delta(_above_both(stated), _above_both(part.delta), c)
    delta = min(_up_to(delta, Fraction(delta), 0) if delta < 1 else 1.0, 1.0)
    rho = part.rho
    if rho is not None and math.isfinite(rho):
        rho = group_rho(rho, c)
    multiplier = part.noise_multiplier
    if multiplier is not None:
        multiplier = group_noise_multiplier(multiplier, c)
    return epsilon, delta, rho, multiplier


def conversion_note(cost, accountant):
    """`` (stated for one group: epsilon=... for one row, ...)`` when
    ``accountant`` counts ``cost`` in another unit than it is stated for
    (a refusal then shows both figures), else empty."""
    unit = getattr(accountant, "unit", "row")
    if cost.unit == unit:
        return ""
    counted = [part.cost[0] for part in accountant._validate_items([("", cost)])]
    return (
        f" (stated for one {cost.unit}: epsilon={math.fsum(counted):g} for one "
        f"{unit}, the accountant's unit)"
    )
