"""Private model selection and honest experiments.

Imported on first use (:mod:`skdp._lazy`): ``skdp describe`` needs only the
accounting helpers of ``_cost``, not the search and its plots.
"""

from skdp._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "skdp.model_selection._cost": ["check_budget", "fit_cost"],
        "skdp.model_selection._curve": [
            "PrivacyUtilityCurve",
            "privacy_utility_curve",
        ],
        "skdp.model_selection._plot": ["PrivacyUtilityDisplay"],
        "skdp.model_selection._random_stopping": ["RandomStoppingSearchCV"],
        "skdp.model_selection._search": ["NoisyMaxSearchCV"],
        "skdp.model_selection._validation": ["cross_validate"],
    },
)
