"""Private histogram gradient boosting, one module per stage of the data's trip.

``binning`` (features to small ints), ``histogram`` (per-node clipped sums of
gradients and hessians, released with Gaussian noise), ``splitting`` (the best
split of every node, from released histograms), ``grower`` (one tree, level by
level, and its noisy leaves), ``predictor`` (a fitted tree as flat arrays),
``loss`` (bounded gradients and hessians) and ``gradient_boosting`` (the
estimators). The estimators plan and charge the whole cost once; the stages
get noise multipliers and a random source, never the accountant.
"""

from skdp.ensemble._hist_gradient_boosting.gradient_boosting import (
    PrivateHistGradientBoostingClassifier,
    PrivateHistGradientBoostingRegressor,
)

__all__ = [
    "PrivateHistGradientBoostingClassifier",
    "PrivateHistGradientBoostingRegressor",
]
