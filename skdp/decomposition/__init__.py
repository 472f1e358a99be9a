"""Private matrix decompositions."""

from skdp.decomposition._pca import PrivatePCA

__all__ = ["PrivatePCA"]
