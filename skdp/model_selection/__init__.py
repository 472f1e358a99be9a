"""Private model selection and honest experiments."""

from skdp.model_selection._cost import check_budget, fit_cost
from skdp.model_selection._curve import PrivacyUtilityCurve, privacy_utility_curve
from skdp.model_selection._plot import PrivacyUtilityDisplay
from skdp.model_selection._search import NoisyMaxSearchCV

__all__ = [
    "NoisyMaxSearchCV",
    "PrivacyUtilityCurve",
    "PrivacyUtilityDisplay",
    "check_budget",
    "fit_cost",
    "privacy_utility_curve",
]
