"""Validation helpers shared by skdp estimators and mechanisms."""

from skdp.utils._validation import (
    check_bounds,
    check_delta,
    check_epsilon,
    check_finite_columns,
    check_finite_width,
    check_per_feature,
    check_public_classes,
    check_required_bounds,
    validate_private_data,
)

__all__ = [
    "check_bounds",
    "check_delta",
    "check_epsilon",
    "check_finite_columns",
    "check_finite_width",
    "check_per_feature",
    "check_public_classes",
    "check_required_bounds",
    "validate_private_data",
]
