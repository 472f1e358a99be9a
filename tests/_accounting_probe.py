"""A test double that charges a fixed cost per fit (accounting tests only).

It releases nothing private and adds no noise: it only exercises the charging
path of :class:`skdp.base.PrivateEstimatorMixin` inside scikit-learn's
machinery. Lives in its own module so worker processes can import it.
"""

from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from skdp.base import PrivateEstimatorMixin
from skdp.utils import validate_private_data


class ChargeProbe(PrivateEstimatorMixin, TransformerMixin, BaseEstimator):
    def __init__(self, epsilon=0.1, delta=0.0, *, accountant=None):
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant

    def fit(self, X, y=None):
        X = validate_private_data(self, X)
        self._charge([("probe", self.epsilon, self.delta)])
        return self

    def transform(self, X):
        check_is_fitted(self)
        return validate_private_data(self, X, reset=False)
