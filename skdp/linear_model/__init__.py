"""Private linear models: logistic regression and least squares."""

from skdp.linear_model._base import PrivateLinearRegression
from skdp.linear_model._logistic import PrivateLogisticRegression

__all__ = ["PrivateLinearRegression", "PrivateLogisticRegression"]
