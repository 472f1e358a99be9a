"""A stated ``data_norm`` on features of different scales says which it loses.

With a stated ``data_norm`` (and no feature ranges) the rows are used in
their own units: a feature far smaller than ``data_norm`` sits below the
noise floor, and below the exact sums' grid, whatever epsilon. The fit says
so from the released Gram matrix (post-processing) and names the fix.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _consistency_data import SYNTHETIC_NORM, synthetic_regression
from _floor_warnings import floor_warnings

from skdp import BudgetAccountant, PrivateLinearRegression
from skdp.linear_model._release import features_under_noise


def _floor_warnings(X, y, epsilon, **params):
    model = PrivateLinearRegression(
        epsilon,
        target_bounds=(-100, 1000),
        accountant=BudgetAccountant(1e12, 0.5),
        random_state=0,
        **params,
    )
    return floor_warnings(model, X, y)


def test_features_under_noise_reads_the_released_diagonal():
    matrix = np.array([[5.0, 4.0, 0.0], [4.0, 0.5, 0.0], [0.0, 0.0, np.nan]])
    # the third feature's NaN energy is not above the floor either
    assert features_under_noise(matrix, 3, 1.0).tolist() == [1, 2]
    # an intercept's last row and column are not a feature
    assert features_under_noise(matrix, 2, 1.0).tolist() == [1]


def test_stated_norm_names_the_small_features_and_the_fix():
    X, y = synthetic_regression()
    # columns 0 (about 5e-3), 3 (0/1) and 4 (about 40) against a norm of 1e6
    (message,) = _floor_warnings(X, y, 1e6, data_norm=SYNTHETIC_NORM)
    assert "feature(s) 0, 3, 4 is below" in message
    assert "data_norm=None" in message
    # at a small epsilon every feature is lost, and epsilon is named too
    (message,) = _floor_warnings(X, y, 1.0, data_norm=SYNTHETIC_NORM)
    assert "every feature" in message and "Raise epsilon" in message
    assert "data_norm=None" in message


def test_features_on_one_scale_or_private_scales_are_not_flagged():
    X, y = synthetic_regression()
    standardized = (X - X.mean(0)) / X.std(0)
    assert _floor_warnings(standardized, y, 1e6, data_norm=40.0) == []
    # the default scales each feature privately: nothing to say about units
    assert _floor_warnings(X, y, 1e6) == []
