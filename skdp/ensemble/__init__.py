"""Private ensembles, and meta-estimators built from non-private ones."""

from skdp.ensemble._forest import PrivateRandomForestClassifier
from skdp.ensemble._sample_aggregate import SampleAggregateEstimator

__all__ = ["PrivateRandomForestClassifier", "SampleAggregateEstimator"]
