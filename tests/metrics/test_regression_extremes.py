"""Regression metrics at target bounds whose squared width overflows."""

import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

from skdp import BudgetAccountant
from skdp import metrics as dpm

RNG = np.random.default_rng(0)
Y = RNG.uniform(0, 1, 2000)
P = np.clip(Y + RNG.normal(0, 0.1, 2000), 0, 1)
RATIOS = {
    "private_r2_score": skm.r2_score,
    "private_explained_variance_score": skm.explained_variance_score,
}


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # after the charge nothing may warn
        return function(*args, **kwargs)


@pytest.mark.parametrize("name", sorted(RATIOS))
@pytest.mark.parametrize("scale", [1.0, 1e100, 1e200, 1e300])
def test_r2_and_explained_variance_do_not_depend_on_the_units(name, scale):
    # both are ratios of spreads: the same data in units 1e200 times larger
    # (bounds included) has the same value. (U - L)**2 overflows beyond
    # 1.3e154, which made these NaN with overflow warnings after the charge.
    acc = BudgetAccountant(epsilon=1e8)
    estimate = _quiet(
        getattr(dpm, name),
        Y * scale,
        P * scale,
        target_bounds=(0, scale),
        epsilon=1e7,
        accountant=acc,
        random_state=0,
    )
    np.testing.assert_allclose(estimate.value, RATIOS[name](Y, P), rtol=1e-5)
    assert np.isfinite(estimate.std_error)


def test_mean_squared_error_is_zero_for_exact_predictions_at_any_scale():
    # was NaN (0 * inf) with two RuntimeWarnings for bounds (0, 1e160)
    acc = BudgetAccountant(epsilon=1e8)
    estimate = _quiet(
        dpm.private_mean_squared_error,
        Y * 1e160,
        Y * 1e160,
        target_bounds=(0, 1e160),
        epsilon=1e7,
        accountant=acc,
        random_state=0,
    )
    assert estimate.value == 0.0


def test_mean_squared_error_overflows_to_inf_only_where_it_exceeds_doubles():
    acc = BudgetAccountant(epsilon=1e8)
    estimate = _quiet(
        dpm.private_mean_squared_error,
        Y * 1e160,
        P * 1e160,
        target_bounds=(0, 1e160),
        epsilon=1e7,
        accountant=acc,
        random_state=0,
    )
    assert estimate.value == np.inf  # about 1e318: beyond the largest double
    estimate = _quiet(
        dpm.private_mean_squared_error,
        Y * 1e150,
        P * 1e150,
        target_bounds=(0, 1e150),
        epsilon=1e7,
        accountant=acc,
        random_state=0,
    )
    np.testing.assert_allclose(
        estimate.value, skm.mean_squared_error(Y, P) * 1e300, rtol=1e-5
    )
