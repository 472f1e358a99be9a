"""Private decision trees."""

from skdp.tree._classes import PrivateDecisionTreeClassifier

__all__ = ["PrivateDecisionTreeClassifier"]
