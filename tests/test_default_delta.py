"""One default δ across the library: 1e-6 wherever a default release uses a
δ, 0 where it is pure ε-DP (docs: accountant, "The default δ")."""

import inspect

import pytest
from sklearn.linear_model import LinearRegression

import skdp
from skdp.base import PrivateEstimatorMixin
from skdp.model_selection import fit_cost
from skdp.pipeline._budget import DEFAULT_DELTA


def _with_delta():
    for name in skdp.__all__:
        obj = getattr(skdp, name)
        if (
            inspect.isclass(obj)
            and issubclass(obj, PrivateEstimatorMixin)
            and "delta" in inspect.signature(obj.__init__).parameters
        ):
            yield obj


def _default(cls):
    if cls is skdp.SampleAggregateEstimator:
        return cls(LinearRegression(), output_bounds=(-1, 1))
    return cls()


@pytest.mark.parametrize("cls", list(_with_delta()), ids=lambda c: c.__name__)
def test_delta_default_is_the_librarys_or_zero_for_pure_releases(cls):
    default = inspect.signature(cls.__init__).parameters["delta"].default
    cost = fit_cost(_default(cls))
    if cost.delta > 0:
        assert default == DEFAULT_DELTA
        assert cost.delta <= DEFAULT_DELTA
    else:
        assert default in (0.0, DEFAULT_DELTA)


def test_the_pure_defaults_are_the_ones_the_docs_name():
    pure = {c.__name__ for c in _with_delta() if fit_cost(_default(c)).delta == 0}
    assert {
        "PrivateMean",
        "PrivateStandardScaler",
        "PrivateHistogram",
        "SampleAggregateEstimator",
    } <= pure
