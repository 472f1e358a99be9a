"""Private transformers: clipping, centring, scaling, encoding and binning.

Imported on first use (:mod:`skdp._lazy`): the estimators import
scikit-learn, which the command line does not need.

The descriptive statistics (means, quantiles, medians, IQR, histograms,
the private bound search) live in ``skdp.stats``; their names stay
importable from here, where they were first published.
"""

from skdp._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "skdp.preprocessing._clip": ["DPClipper"],
        "skdp.preprocessing._discretization": ["PrivateKBinsDiscretizer"],
        "skdp.preprocessing._encoders": ["PrivateOneHotEncoder"],
        "skdp.preprocessing._minmax": ["PrivateMinMaxScaler"],
        "skdp.preprocessing._robust": ["PrivateRobustScaler"],
        "skdp.preprocessing._standard": ["PrivateStandardScaler"],
        # Moved to skdp.stats; kept here for compatibility.
        "skdp.stats._histogram": ["PrivateHistogram"],
        "skdp.stats._iqr": ["IQRScale"],
        "skdp.stats._joint_histogram": ["PrivateJointHistogram"],
        "skdp.stats._mean": ["PrivateMean"],
        "skdp.stats._ptr": ["PTRMedian"],
        "skdp.stats._quantile": ["PrivateQuantile"],
        "skdp.stats._smooth": ["SmoothSensitivityMedian"],
        "skdp.stats._svt_clip": ["SVTClipSelector"],
    },
)
