"""The Gaussian calibration's refusal at an epsilon floats cannot evaluate."""

import warnings

import numpy as np
import pytest

import skdp
from skdp.mechanisms._gaussian import analytic_gaussian_sigma


@pytest.mark.parametrize("epsilon", [1e160, 1e308])
def test_a_huge_epsilon_is_refused_for_itself_not_for_delta(epsilon):
    # before: "no noise multiplier up to 1e300 ...; pass a larger delta" (a
    # larger delta changes nothing there) and an overflow warning from exp
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="too large to calibrate"):
            analytic_gaussian_sigma(1.0, epsilon, 1e-6)


def test_a_fit_at_a_huge_epsilon_is_refused_before_the_charge():
    X = np.random.default_rng(0).normal(size=(50, 2))
    y = (X[:, 0] > 0).astype(int)
    accountant = skdp.BudgetAccountant(delta=1.0)
    model = skdp.PrivateHistGradientBoostingClassifier(
        epsilon=1e300, classes=[0, 1], accountant=accountant
    )
    with pytest.raises(ValueError, match="state epsilon at most 1e150"):
        model.fit(X, y)
    assert accountant.entries == ()


def test_the_largest_calibrated_epsilon_still_calibrates():
    assert 0 < analytic_gaussian_sigma(1.0, 1e150, 1e-6) < 1e-74
