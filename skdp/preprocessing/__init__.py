"""Private transformers: clipping, centring and scaling."""

from skdp.preprocessing._clip import DPClipper
from skdp.preprocessing._mean import PrivateMean

__all__ = ["DPClipper", "PrivateMean"]
