"""Private ensembles: meta-estimators built from non-private ones, and
private gradient-boosted trees."""

from skdp.ensemble._hist_gradient_boosting import (
    PrivateHistGradientBoostingClassifier,
    PrivateHistGradientBoostingRegressor,
)
from skdp.ensemble._sample_aggregate import SampleAggregateEstimator

__all__ = [
    "PrivateHistGradientBoostingClassifier",
    "PrivateHistGradientBoostingRegressor",
    "SampleAggregateEstimator",
]
