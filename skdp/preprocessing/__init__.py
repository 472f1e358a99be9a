"""Private transformers: clipping, centring and scaling."""

from skdp.preprocessing._clip import DPClipper

__all__ = ["DPClipper"]
