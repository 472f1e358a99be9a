"""scikit-learn's estimator checks on every public skdp estimator."""

import inspect

import pytest
from sklearn.base import BaseEstimator
from sklearn.utils.estimator_checks import parametrize_with_checks

import skdp

# One instance of every public estimator, with the default (unlimited)
# accountant: a small budget would make most checks fail by design.
ESTIMATORS = [
    skdp.DPClipper(bounds=(-1e3, 1e3)),
    skdp.DPClipper(random_state=0),
    skdp.DPClipper(method=None, norm="l2", max_norm=10.0),
    skdp.SVTClipSelector(random_state=0),
    skdp.PrivateMean(bounds=(-1e3, 1e3), random_state=0),
    skdp.PrivateMean(
        bounds=(-1e3, 1e3), mechanism="gaussian", delta=1e-6, random_state=0
    ),
    skdp.PrivateMean(random_state=0),
]

# Checks each estimator is expected to fail, with the reason.
EXPECTED_FAILED_CHECKS = {}


def expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def public_estimator_classes():
    return {
        name
        for name in skdp.__all__
        if inspect.isclass(getattr(skdp, name))
        and issubclass(getattr(skdp, name), BaseEstimator)
    }


def test_every_public_estimator_is_checked():
    checked = {type(est).__name__ for est in ESTIMATORS}
    assert public_estimator_classes() <= checked


@pytest.mark.parametrize("name", sorted(public_estimator_classes()))
def test_public_estimators_take_an_accountant(name):
    params = inspect.signature(getattr(skdp, name)).parameters
    assert "accountant" in params
    assert params["accountant"].default is None
