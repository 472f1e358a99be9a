"""Private transformers: clipping, centring and scaling.

Imported on first use (:mod:`skdp._lazy`): the estimators import
scikit-learn, which the release functions that ``skdp describe`` uses
(``_svt_search``, ``_mean_release``, ``_quantile_release``) do not need.
"""

from skdp._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "skdp.preprocessing._clip": ["DPClipper"],
        "skdp.preprocessing._discretization": ["PrivateKBinsDiscretizer"],
        "skdp.preprocessing._encoders": ["PrivateOneHotEncoder"],
        "skdp.preprocessing._histogram": ["PrivateHistogram"],
        "skdp.preprocessing._iqr": ["IQRScale"],
        "skdp.preprocessing._joint_histogram": ["PrivateJointHistogram"],
        "skdp.preprocessing._mean": ["PrivateMean"],
        "skdp.preprocessing._minmax": ["PrivateMinMaxScaler"],
        "skdp.preprocessing._ptr": ["PTRMedian"],
        "skdp.preprocessing._quantile": ["PrivateQuantile"],
        "skdp.preprocessing._robust": ["PrivateRobustScaler"],
        "skdp.preprocessing._smooth": ["SmoothSensitivityMedian"],
        "skdp.preprocessing._standard": ["PrivateStandardScaler"],
        "skdp.preprocessing._svt_clip": ["SVTClipSelector"],
    },
)
