"""Validation helpers shared by skdp estimators and mechanisms.

Imported on first use (:mod:`skdp._lazy`): the validation helpers import
scikit-learn, which ``skdp.utils._progress`` (the command line's reader) does
not need.
"""

from skdp._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "skdp.utils._dask_check": ["check_dask_input"],
        "skdp.utils._validation": [
            "check_bounds",
            "check_delta",
            "check_epsilon",
            "check_finite_columns",
            "check_finite_width",
            "check_per_feature",
            "check_public_classes",
            "check_required_bounds",
            "validate_private_data",
        ],
    },
)
