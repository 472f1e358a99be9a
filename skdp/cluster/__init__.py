"""Private clustering."""

from skdp._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {"skdp.cluster._kmeans": ["PrivateKMeans"]},
)
