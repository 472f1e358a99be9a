"""Validation helpers: every rejection names the value and happens up front."""

import math

import numpy as np
import pandas as pd
import pytest

from skdp.utils import check_bounds, check_delta, check_epsilon, check_finite_columns


@pytest.mark.parametrize(
    "value, kwargs, match",
    [
        (0.0, {}, "must be > 0 and finite; got 0.0"),
        (-1, {"allow_zero": True}, "must be >= 0 and finite; got -1.0"),
        (math.inf, {}, "must be > 0 and finite; got inf"),
        (math.nan, {}, "must be > 0 and finite; got nan"),
        (math.nan, {"allow_inf": True}, r"must be > 0 \(inf for no limit\); got nan"),
    ],
)
def test_check_epsilon_rejects(value, kwargs, match):
    with pytest.raises(ValueError, match=match):
        check_epsilon(value, **kwargs)


def test_check_epsilon_rejects_non_numbers():
    for bad in ("1", None, True, [1.0]):
        with pytest.raises(TypeError, match="must be a real number"):
            check_epsilon(bad)


def test_check_epsilon_accepts():
    assert check_epsilon(np.float32(0.5)) == 0.5
    assert check_epsilon(0, allow_zero=True) == 0.0
    assert check_epsilon(math.inf, allow_inf=True) == math.inf


def test_check_delta():
    assert check_delta(0) == 0.0
    for bad in (1.0, -1e-9, math.nan, 2):
        with pytest.raises(ValueError, match=r"delta must be in \[0, 1\)"):
            check_delta(bad)
    with pytest.raises(ValueError, match=r"in \(0, 1\)"):
        check_delta(0.0, allow_zero=False)


def test_check_bounds_broadcasts_scalars_and_arrays():
    lower, upper = check_bounds((0, [1, 2, 3]), 3)
    np.testing.assert_array_equal(lower, [0, 0, 0])
    np.testing.assert_array_equal(upper, [1, 2, 3])


@pytest.mark.parametrize(
    "bounds, match",
    [
        (None, "pair"),
        ("ab", "pair"),
        ((0, 1, 2), "pair"),
        ((1, 1), "feature 0 has lower=1.0 and upper=1.0"),
        ((0, [1, -1]), "feature 1 has lower=0.0 and upper=-1.0"),
        ((0, [1, 2, 3]), r"shape \(3,\); expected a scalar or shape \(2,\)"),
        ((-np.inf, 1), "must be finite"),
        ((0, np.nan), "must be finite"),
        ((0, "x"), "must be numeric"),
    ],
)
def test_check_bounds_rejects(bounds, match):
    with pytest.raises(ValueError, match=match):
        check_bounds(bounds, 2)


def test_check_finite_columns_names_the_column():
    X = np.zeros((3, 3))
    X[1, 2] = np.inf
    with pytest.raises(ValueError, match=r"column 2;"):
        check_finite_columns(X)
    with pytest.raises(ValueError, match=r"column 'income' \(index 2\)"):
        check_finite_columns(X, np.array(["a", "b", "income"]))
    check_finite_columns(np.array([[1e308, -1e308]]))


def test_validate_private_data_names_pandas_columns():
    from skdp import DPClipper

    X = pd.DataFrame({"age": [30.0, np.nan], "hours": [40.0, 50.0]})
    with pytest.raises(ValueError, match=r"column 'age' \(index 0\)"):
        DPClipper(bounds=(0, 100)).fit(X)
