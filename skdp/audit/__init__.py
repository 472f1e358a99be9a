"""Empirical privacy auditing.

Run a mechanism many times on two neighbouring datasets and compute a
statistical lower bound on its ε; use it to test your own mechanisms.
"""

from skdp.audit._audit import (
    AuditResult,
    OutcomeSetEvent,
    ThresholdEvent,
    assert_dp,
    audit_mechanism,
    clopper_pearson_interval,
)
from skdp.audit._float_events import FloatBitsEvent, LatticeEvent, SupportEvent

__all__ = [
    "AuditResult",
    "FloatBitsEvent",
    "LatticeEvent",
    "OutcomeSetEvent",
    "SupportEvent",
    "ThresholdEvent",
    "assert_dp",
    "audit_mechanism",
    "clopper_pearson_interval",
]
