"""Private transformers: clipping, centring and scaling."""

from skdp.preprocessing._clip import DPClipper
from skdp.preprocessing._discretization import PrivateKBinsDiscretizer
from skdp.preprocessing._encoders import PrivateOneHotEncoder
from skdp.preprocessing._histogram import PrivateHistogram
from skdp.preprocessing._iqr import IQRScale
from skdp.preprocessing._mean import PrivateMean
from skdp.preprocessing._minmax import PrivateMinMaxScaler
from skdp.preprocessing._ptr import PTRMedian
from skdp.preprocessing._quantile import PrivateQuantile
from skdp.preprocessing._robust import PrivateRobustScaler
from skdp.preprocessing._smooth import SmoothSensitivityMedian
from skdp.preprocessing._standard import PrivateStandardScaler
from skdp.preprocessing._svt_clip import SVTClipSelector

__all__ = [
    "DPClipper",
    "IQRScale",
    "PTRMedian",
    "PrivateHistogram",
    "PrivateKBinsDiscretizer",
    "PrivateMean",
    "PrivateMinMaxScaler",
    "PrivateOneHotEncoder",
    "PrivateQuantile",
    "PrivateRobustScaler",
    "PrivateStandardScaler",
    "SVTClipSelector",
    "SmoothSensitivityMedian",
]
