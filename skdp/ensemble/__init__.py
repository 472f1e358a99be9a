"""Private meta-estimators built from non-private ones."""

from skdp.ensemble._sample_aggregate import SampleAggregateEstimator

__all__ = ["SampleAggregateEstimator"]
