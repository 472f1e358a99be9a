"""The privacy cost of one mechanism call, and what the mechanism is."""

import math
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from skdp.accounting._composition import exact
from skdp.accounting._units import check_charge_unit
from skdp.utils._validation import check_delta, check_epsilon

__all__ = [
    "MECHANISMS",
    "LedgerPart",
    "PrivacyCost",
    "common_unit",
    "counted_cost",
    "ledger_parts",
]

#: Mechanism names a cost may carry (informational, except ``"gaussian"``
#: whose ``noise_multiplier`` the tight compositions use).
MECHANISMS = (
    "laplace",
    "gaussian",
    "exponential",
    "permute_and_flip",
    "svt",
    "ptr",
    "smooth_sensitivity",
    "composite",
)


def _check_gaussian(cost):
    """The noise multiplier, checked against the stated ``(epsilon, delta)``.

    A Gaussian release with multiplier ``m`` is ``(ε, δ_G(ε))``-DP for the
    curve ``δ_G`` of ``1/m``-GDP and for no smaller δ; a cost that states a
    smaller δ (or ``δ = 0``) would be charged less by basic composition than
    the tight compositions charge, so it is refused. Accepted: a ratio whose
    float ``δ_G(ε)`` plus a bound on its rounding error is at most the
    stated δ, or one at least the ratio that the calibration certified that
    way (:func:`skdp.mechanisms._gaussian._certified_ratio`; ``δ_G``
    decreases in the ratio). So no δ below the exact ``δ_G(ε)`` is accepted,
    and every ratio :func:`~skdp.mechanisms.gaussian_cost` returns is; a δ
    above the exact one by less than the error bound (at most about 1e-6
    relative at small ε) may be refused, which errs on the safe side.
    """
    from skdp.mechanisms._gaussian import _delta_exceeds, _gaussian_delta_terms

    ratio = float(cost.noise_multiplier)
    if not (1e-100 <= ratio <= 1e100):
        raise ValueError(
            f"noise_multiplier must be in [1e-100, 1e100]; got {cost.noise_multiplier}."
        )
    if cost.mechanism not in (None, "gaussian"):
        raise ValueError(
            f"a noise_multiplier describes a Gaussian release, not {cost.mechanism!r}."
        )
    eps, delta = float(cost.epsilon), float(cost.delta)
    if delta > 0 and (
        not _delta_exceeds(ratio, eps, delta) or ratio >= _certified(eps, delta)
    ):
        return ratio
    value, error = _gaussian_delta_terms(ratio, eps)
    raise ValueError(
        f"a Gaussian release with noise_multiplier={ratio} is not "
        f"(epsilon={cost.epsilon}, delta={cost.delta})-DP: at this epsilon "
        f"its delta is up to {value + error:.17g}. State the (epsilon, delta) "
        "it was calibrated to (skdp.mechanisms.gaussian_cost does)."
    )


def _certified(epsilon, delta):
    """The calibration's certified ratio at ``(epsilon, delta)``; ``inf``
    where there is none (a δ too small for any ratio up to 1e300)."""
    from skdp.mechanisms._gaussian import _certified_ratio

    try:
        return _certified_ratio(epsilon, delta)
    except ValueError:
        return math.inf


def _sum_up(a, b):
    """``a + b`` rounded up: the smallest float at least the exact sum of the
    decimal values the accountant adds (:func:`exact`), so that a budget of a
    composite cost always admits what its parts charge."""
    total = a + b
    if not math.isfinite(total):
        return total
    while exact(total) < exact(a) + exact(b):
        total = math.nextafter(total, math.inf)
    return total


@dataclass(frozen=True)
class PrivacyCost:
    """What one release costs, and what mechanism made it.

    Every mechanism in :mod:`skdp.mechanisms` reports its cost as a
    ``PrivacyCost`` so that estimators charge exactly what they use. The
    ``(epsilon, delta)`` pair is what basic and advanced composition add up;
    the tight compositions of :class:`~skdp.BudgetAccountant`
    (``composition="zcdp"`` or ``"pld"``) also use what the mechanism is:

    * a Gaussian release (``noise_multiplier`` ``r = σ/Δ₂``, all its
      coordinates together) enters as ``1/(2r²)``-zCDP and as the exact
      Gaussian privacy curve;
    * any other release with ``delta == 0`` enters as pure ``epsilon``-DP
      (``rho``, default ``epsilon²/2``; e.g. ``epsilon²/8`` for the
      exponential mechanism, which has bounded range);
    * a release with ``delta > 0`` and no noise multiplier (PTR, smooth
      sensitivity) enters as the canonical ``(epsilon, delta)`` pair.

    A sum of costs (``a + b``) keeps its parts, so a planned experiment's
    total (:func:`~skdp.model_selection.fit_cost`) is checked by the
    accountant in its own composition.

    Parameters
    ----------
    epsilon : float
        Privacy loss, ``>= 0``.
    delta : float, default=0.0
        Failure probability in ``[0, 1)``.
    rho : float or None, default=None
        zCDP parameter, if the mechanism satisfies ``rho``-zCDP. The tight
        compositions charge ``min(rho, epsilon²/2)`` for a pure release; a
        ``rho`` of 0 with ``epsilon > 0`` is not used (0-zCDP would mean an
        output that does not depend on the data, which ``epsilon > 0``
        contradicts): ``epsilon²/2`` is charged; ``inf`` (a square beyond
        the floats) states nothing better than ``epsilon²/2`` either.
    noise_multiplier : float or None, default=None
        For a Gaussian release, ``σ/Δ₂ > 0`` (its ``rho`` is then
        ``1/(2 r²)``).
    mechanism : str or None, default=None
        One of :data:`MECHANISMS`, for the ledger.
    parts : tuple of PrivacyCost, default=()
        The single releases a sum of costs is made of (set by ``+``; empty
        for a single release).
    unit : {"row", "group", "mixed"}, default="row"
        The privacy unit the cost is stated for: add/remove of one row, or
        of one whole group (a person's rows, at most ``group_rows`` of them
        kept). An accountant in another unit converts it (see
        :class:`~skdp.BudgetAccountant`). ``"mixed"`` only for a sum whose
        parts have different units (each part keeps its own).
    group_rows : int or None, default=None
        With ``unit="group"``, the public bound on a group's rows the
        estimator kept (recorded in the ledger).

    Examples
    --------
    >>> from skdp.accounting import PrivacyCost
    >>> PrivacyCost(0.5) + PrivacyCost(0.25, 1e-6)
    PrivacyCost(epsilon=0.75, delta=1e-06, rho=None)
    >>> len((PrivacyCost(0.5) + PrivacyCost(0.25, 1e-6)).parts)
    2
    """

    epsilon: float
    delta: float = 0.0
    rho: float | None = None
    noise_multiplier: float | None = None
    mechanism: str | None = None
    parts: tuple = field(default=(), repr=False, compare=False)
    unit: str = "row"
    group_rows: int | None = None

    def __post_init__(self):
        set_ = object.__setattr__
        if self.unit != "mixed" or not self.parts:
            check_charge_unit(self.unit, self.group_rows)
        set_(self, "epsilon", check_epsilon(self.epsilon, allow_zero=True))
        set_(self, "delta", check_delta(self.delta))
        if self.noise_multiplier is not None:
            ratio = _check_gaussian(self)
            set_(self, "noise_multiplier", ratio)
            if self.rho is None:
                set_(self, "rho", 0.5 / ratio**2)
            if self.mechanism is None:
                set_(self, "mechanism", "gaussian")
        if self.rho is not None:
            rho = float(self.rho)
            if not rho >= 0:
                raise ValueError(f"rho must be >= 0; got {self.rho}.")
            set_(self, "rho", rho)
        if self.mechanism is not None and self.mechanism not in MECHANISMS:
            raise ValueError(
                f"mechanism must be one of {MECHANISMS} or None; got "
                f"{self.mechanism!r}."
            )

    def __repr__(self):
        text = f"epsilon={self.epsilon!r}, delta={self.delta!r}, rho={self.rho!r}"
        if self.noise_multiplier is not None:
            text += f", noise_multiplier={self.noise_multiplier!r}"
        if self.mechanism not in (None, "gaussian", "composite"):
            text += f", mechanism={self.mechanism!r}"
        if self.unit != "row":
            text += f", unit={self.unit!r}"
        if self.group_rows is not None:
            text += f", group_rows={self.group_rows!r}"
        return f"PrivacyCost({text})"

    def in_unit(self, unit, group_rows=None):
        """This cost stated for ``unit`` (every part of a sum too).

        Parameters
        ----------
        unit : {"row", "group"}
            The privacy unit the cost holds for.
        group_rows : int or None, default=None
            With ``unit="group"``, the public bound on a group's kept rows.

        Returns
        -------
        cost : PrivacyCost

        Examples
        --------
        >>> from skdp.accounting import PrivacyCost
        >>> PrivacyCost(1.0).in_unit("group", 3)
        PrivacyCost(epsilon=1.0, delta=0.0, rho=None, unit='group', group_rows=3)
        """
        unit, group_rows = check_charge_unit(unit, group_rows)
        parts = tuple(
            replace(part, unit=unit, group_rows=group_rows) for part in self.parts
        )
        return replace(self, unit=unit, group_rows=group_rows, parts=parts)

    @property
    def atoms(self):
        """The single releases this cost composes (itself if it is one)."""
        return self.parts or (self,)

    def __add__(self, other):
        """Basic (sequential) composition; the parts are kept."""
        if not isinstance(other, PrivacyCost):
            return NotImplemented
        rho = None if self.rho is None or other.rho is None else self.rho + other.rho
        atoms = self.atoms + other.atoms
        unit, group_rows = common_unit(atoms)
        return PrivacyCost(
            _sum_up(self.epsilon, other.epsilon),
            _sum_up(self.delta, other.delta),
            rho,
            mechanism="composite",
            parts=atoms,
            unit=unit,
            group_rows=group_rows,
        )


def common_unit(costs):
    """``(unit, group_rows)`` shared by ``costs``: ``group_rows`` is ``None``
    when the groups' bounds differ, the unit ``"mixed"`` when the units do
    (each cost keeps its own)."""
    units = {cost.unit for cost in costs} or {"row"}
    if len(units) > 1:
        return "mixed", None
    rows = {cost.group_rows for cost in costs}
    return units.pop(), rows.pop() if len(rows) == 1 else None


def counted_or_stated(record):
    """``(epsilon, delta, rho, noise_multiplier)`` a budget counts for a
    recorded release (:class:`LedgerPart` or a ledger entry): its converted
    ``counted`` cost when the accountant counts another unit, else the cost
    as stated."""
    if record.counted is not None:
        return record.counted
    return record.epsilon, record.delta, record.rho, record.noise_multiplier


class LedgerPart(NamedTuple):
    """One release as an accountant records it: the cost stated for its
    ``unit`` and, when the accountant counts another unit, the converted
    ``counted`` cost ``(epsilon, delta, rho, noise_multiplier)`` (``None``:
    counted as stated)."""

    label: str
    epsilon: float
    delta: float = 0.0
    rho: float | None = None
    noise_multiplier: float | None = None
    mechanism: str | None = None
    unit: str = "row"
    group_rows: int | None = None
    counted: tuple | None = None

    cost = property(
        counted_or_stated,
        doc="``(epsilon, delta, rho, noise_multiplier)`` the budget counts.",
    )


def counted_cost(part):
    """``(epsilon, delta, rho, noise_multiplier)`` the budget counts for a
    :class:`LedgerPart` (or a plain ``(label, epsilon, delta, ...)`` tuple,
    stated for the accountant's unit)."""
    return part.cost if isinstance(part, LedgerPart) else tuple(part[1:5])


def ledger_parts(label, epsilon, delta=0.0):
    """One ledger item as the parts an accountant records, checked: one
    :class:`LedgerPart` per atom of a :class:`PrivacyCost` (``delta`` then
    ignored), else one stated for a row."""
    if not isinstance(label, str):
        raise TypeError(f"label must be a string; got {label!r}.")
    if isinstance(epsilon, PrivacyCost):
        return [
            LedgerPart(
                label,
                c.epsilon,
                c.delta,
                c.rho,
                c.noise_multiplier,
                c.mechanism,
                c.unit,
                c.group_rows,
            )
            for c in epsilon.atoms
        ]
    eps = check_epsilon(epsilon, allow_zero=True)
    return [LedgerPart(label, eps, check_delta(delta))]
