"""The privacy cost of one mechanism call."""

import math
from dataclasses import dataclass

from skdp.utils._validation import check_delta, check_epsilon

__all__ = ["PrivacyCost"]


@dataclass(frozen=True)
class PrivacyCost:
    """What one release costs: (epsilon, delta)-DP, and rho-zCDP where it has one.

    Every mechanism in :mod:`skdp.mechanisms` reports its cost as a
    ``PrivacyCost`` so that estimators charge exactly what they use.
    ``rho`` is informational (``None`` when the mechanism has no zCDP
    guarantee tighter than its (epsilon, delta) one); accountants compose the
    ``(epsilon, delta)`` pair.

    Parameters
    ----------
    epsilon : float
        Privacy loss, ``>= 0``.
    delta : float, default=0.0
        Failure probability in ``[0, 1)``.
    rho : float or None, default=None
        zCDP parameter, if the mechanism satisfies ``rho``-zCDP.

    Examples
    --------
    >>> from skdp.accounting import PrivacyCost
    >>> PrivacyCost(0.5) + PrivacyCost(0.25, 1e-6)
    PrivacyCost(epsilon=0.75, delta=1e-06, rho=None)
    """

    epsilon: float
    delta: float = 0.0
    rho: float | None = None

    def __post_init__(self):
        object.__setattr__(
            self, "epsilon", check_epsilon(self.epsilon, allow_zero=True)
        )
        object.__setattr__(self, "delta", check_delta(self.delta))
        if self.rho is not None:
            rho = float(self.rho)
            if not (rho >= 0 and math.isfinite(rho)):
                raise ValueError(f"rho must be finite and >= 0; got {self.rho}.")
            object.__setattr__(self, "rho", rho)

    def __add__(self, other):
        """Basic (sequential) composition."""
        if not isinstance(other, PrivacyCost):
            return NotImplemented
        rho = None if self.rho is None or other.rho is None else self.rho + other.rho
        return PrivacyCost(self.epsilon + other.epsilon, self.delta + other.delta, rho)
