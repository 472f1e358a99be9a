"""Validation helpers shared by skdp estimators and mechanisms."""

from skdp.utils._validation import (
    check_bounds,
    check_delta,
    check_epsilon,
    check_finite_columns,
    validate_private_data,
)

__all__ = [
    "check_bounds",
    "check_delta",
    "check_epsilon",
    "check_finite_columns",
    "validate_private_data",
]
