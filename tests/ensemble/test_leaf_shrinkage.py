"""The regressor's leaf shrinkage: ``G̃ · G̃² / (G̃² + k σ²)`` from released
sums and public parameters, finite at every extreme, none without noise."""

import numpy as np
import pytest

from skdp.ensemble._hist_gradient_boosting.grower import (
    REGRESSOR_LEAF_SHRINKAGE,
    TreePlan,
    leaf_sensitivity,
    shrunk_gradient_sums,
)


def _plan(multiplier, shrinkage=REGRESSOR_LEAF_SHRINKAGE, g_max=2.0, h_max=1.0):
    return TreePlan(2, multiplier, multiplier, g_max, h_max, 0.0, 0.3, None, shrinkage)


def test_the_factor_is_the_stated_one():
    plan = _plan(0.5)
    sd = 0.5 * leaf_sensitivity(2.0, 1.0)
    g = np.array([-3.0, 0.0, 1e-3, 10.0])
    sums = np.stack([g, np.array([4.0, 5.0, 6.0, 7.0])])
    out = shrunk_gradient_sums(sums, plan)
    k = REGRESSOR_LEAF_SHRINKAGE
    np.testing.assert_allclose(out[0], g * g * g / (g * g + k * sd * sd), rtol=1e-15)
    np.testing.assert_array_equal(out[1], sums[1])  # hessian sums as released


def test_no_noise_or_no_shrinkage_leaves_the_sums_as_they_are():
    sums = np.array([[1.0, -2.0], [3.0, 4.0]])
    assert shrunk_gradient_sums(sums, _plan(None)) is sums  # the noise-free limit
    assert shrunk_gradient_sums(sums, _plan(0.5, shrinkage=0.0)) is sums


@pytest.mark.parametrize("multiplier", [5e-324, 1e-300, 1.0, 1e300, 1.7e308])
def test_finite_and_no_larger_at_the_extremes(multiplier):
    g = np.array([0.0, -0.0, 5e-324, -1e-300, 1.0, -1e154, 1e300, -1.7e308])
    sums = np.stack([g, np.ones_like(g)])
    with np.errstate(all="raise"):
        out = shrunk_gradient_sums(sums, _plan(multiplier, g_max=1e10))
    assert np.all(np.isfinite(out))
    assert np.all(np.abs(out[0]) <= np.abs(g))
    assert np.all(np.sign(out[0]) * np.sign(g) >= 0)
