"""Private naive Bayes classifiers."""

from skdp.naive_bayes._gaussian import PrivateGaussianNB

__all__ = ["PrivateGaussianNB"]
