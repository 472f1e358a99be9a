"""Private transformers: clipping, centring and scaling."""

from skdp.preprocessing._clip import DPClipper
from skdp.preprocessing._mean import PrivateMean
from skdp.preprocessing._svt_clip import SVTClipSelector

__all__ = ["DPClipper", "PrivateMean", "SVTClipSelector"]
