"""Private descriptive statistics: means, quantiles, medians, spread, counts.

Estimators whose ``fit`` releases a statistic of the data (a mean, a
quantile, a median by propose-test-release or smooth sensitivity, an IQR,
a histogram of one or several features, the clipping bounds found by the
sparse vector technique), and the release functions they share
(``_mean_release``, ``_quantile_release``, ``_svt_search``), which the
command line ``skdp describe`` calls without importing scikit-learn.

Imported on first use (:mod:`skdp._lazy`). The estimators are also
importable from :mod:`skdp.preprocessing`, where they were first published.
"""

from skdp._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
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
