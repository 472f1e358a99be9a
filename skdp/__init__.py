"""skdp: differentially private estimators for scikit-learn.

Every estimator is (ε, δ)-differentially private under add/remove-one-row
neighbours and charges a shared :class:`BudgetAccountant` before it reads data.
"""

from skdp.accounting import (
    BudgetAccountant,
    PrivacyCost,
    default_accountant,
    set_default_accountant,
)
from skdp.decomposition import PrivatePCA
from skdp.ensemble import SampleAggregateEstimator
from skdp.exceptions import (
    AccountantCopyError,
    BudgetExceededError,
    NoiseDominatedWarning,
    PTRRefusedError,
    PTRRefusedWarning,
)
from skdp.linear_model import PrivateLinearRegression, PrivateLogisticRegression
from skdp.model_selection import (
    NoisyMaxSearchCV,
    PrivacyUtilityDisplay,
    privacy_utility_curve,
)
from skdp.naive_bayes import PrivateGaussianNB
from skdp.preprocessing import (
    DPClipper,
    IQRScale,
    PrivateHistogram,
    PrivateKBinsDiscretizer,
    PrivateMean,
    PrivateMinMaxScaler,
    PrivateOneHotEncoder,
    PrivateQuantile,
    PrivateRobustScaler,
    PrivateStandardScaler,
    PTRMedian,
    SmoothSensitivityMedian,
    SVTClipSelector,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "AccountantCopyError",
    "BudgetAccountant",
    "BudgetExceededError",
    "DPClipper",
    "IQRScale",
    "NoiseDominatedWarning",
    "NoisyMaxSearchCV",
    "PTRMedian",
    "PTRRefusedError",
    "PTRRefusedWarning",
    "PrivacyCost",
    "PrivacyUtilityDisplay",
    "PrivateGaussianNB",
    "PrivateHistogram",
    "PrivateKBinsDiscretizer",
    "PrivateLinearRegression",
    "PrivateLogisticRegression",
    "PrivateMean",
    "PrivateMinMaxScaler",
    "PrivateOneHotEncoder",
    "PrivatePCA",
    "PrivateQuantile",
    "PrivateRobustScaler",
    "PrivateStandardScaler",
    "SVTClipSelector",
    "SampleAggregateEstimator",
    "SmoothSensitivityMedian",
    "default_accountant",
    "privacy_utility_curve",
    "set_default_accountant",
]
