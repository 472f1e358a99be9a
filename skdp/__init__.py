"""skdp: differentially private estimators for scikit-learn.

Every estimator is (ε, δ)-differentially private under add/remove-one-row
neighbours and charges a shared :class:`BudgetAccountant` before it reads data.

The public names are imported on first use (module ``__getattr__``, as SciPy
and scikit-learn do for their submodules): ``import skdp`` alone does not
import scikit-learn, so ``skdp describe`` can start reading its file while
the estimators load.
"""

from skdp._lazy import attach

__version__ = "0.1.0.dev0"

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "skdp.accounting": [
            "BudgetAccountant",
            "PrivacyCost",
            "default_accountant",
            "set_default_accountant",
        ],
        "skdp.cluster": ["PrivateKMeans"],
        "skdp.decomposition": ["PrivatePCA"],
        "skdp.ensemble": [
            "PrivateHistGradientBoostingClassifier",
            "PrivateHistGradientBoostingRegressor",
            "PrivateRandomForestClassifier",
            "SampleAggregateEstimator",
        ],
        "skdp.exceptions": [
            "AccountantCopyError",
            "BudgetExceededError",
            "NoiseDominatedWarning",
            "PTRRefusedError",
            "PTRRefusedWarning",
        ],
        "skdp.linear_model": ["PrivateLinearRegression", "PrivateLogisticRegression"],
        "skdp.model_selection": [
            "NoisyMaxSearchCV",
            "PrivacyUtilityDisplay",
            "privacy_utility_curve",
        ],
        "skdp.naive_bayes": ["PrivateGaussianNB"],
        "skdp.preprocessing": [
            "DPClipper",
            "PrivateKBinsDiscretizer",
            "PrivateMinMaxScaler",
            "PrivateOneHotEncoder",
            "PrivateRobustScaler",
            "PrivateStandardScaler",
        ],
        "skdp.stats": [
            "IQRScale",
            "PrivateHistogram",
            "PrivateJointHistogram",
            "PrivateMean",
            "PrivateQuantile",
            "PTRMedian",
            "SmoothSensitivityMedian",
            "SVTClipSelector",
        ],
        "skdp.tree": ["PrivateDecisionTreeClassifier"],
    },
    subpackages=[
        "accounting",
        "audit",
        "base",
        "cluster",
        "decomposition",
        "ensemble",
        "exceptions",
        "linear_model",
        "mechanisms",
        "metrics",
        "model_selection",
        "naive_bayes",
        "preprocessing",
        "sensitivity",
        "stats",
        "tools",
        "tree",
        "utils",
    ],
)
