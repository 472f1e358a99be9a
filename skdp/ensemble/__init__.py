"""Private ensembles: private gradient-boosted trees and random forests,
and meta-estimators built from non-private ones."""

from skdp.ensemble._forest import PrivateRandomForestClassifier
from skdp.ensemble._hist_gradient_boosting import (
    PrivateHistGradientBoostingClassifier,
    PrivateHistGradientBoostingRegressor,
)
from skdp.ensemble._sample_aggregate import SampleAggregateEstimator

__all__ = [
    "PrivateHistGradientBoostingClassifier",
    "PrivateHistGradientBoostingRegressor",
    "PrivateRandomForestClassifier",
    "SampleAggregateEstimator",
]
