"""Adversarial review of ``sample_weight`` (issue 28, item 4)."""

import warnings

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.linear_model import PrivateLinearRegression, PrivateLogisticRegression
from skdp.naive_bayes import PrivateGaussianNB
from skdp.preprocessing import PrivateMean, PrivateStandardScaler

ESTIMATORS = {
    "mean": lambda: PrivateMean(bounds=(-3, 3)),
    "scaler": lambda: PrivateStandardScaler(bounds=(-3, 3)),
    "nb": lambda: PrivateGaussianNB(bounds=(-3, 3), classes=[0, 1]),
    "linear": lambda: PrivateLinearRegression(
        data_norm=3, target_bounds=(-10, 10), feature_bounds=(-3, 3)
    ),
    "logistic": lambda: PrivateLogisticRegression(
        max_norm=3, classes=[0, 1], feature_bounds=(-3, 3)
    ),
}


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_complex_weights_are_refused_before_the_charge(name):
    # A complex weight vector was cast to its real part with a ComplexWarning
    # and the fit went on (scikit-learn refuses complex weights); now it is
    # refused like any other malformed weight, before the charge.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    accountant = BudgetAccountant(10.0, delta=1e-3)
    est = ESTIMATORS[name]().set_params(accountant=accountant)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning either
        with pytest.raises(ValueError, match=r"real numbers.*complex"):
            est.fit(X, y, sample_weight=np.full(40, 0.5 + 0.5j))
    assert accountant.total() == (0.0, 0.0)
