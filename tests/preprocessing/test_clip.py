"""DPClipper with public bounds."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp import BudgetAccountant, DPClipper, NoiseDominatedWarning


def test_clips_each_feature_to_its_bounds():
    X = np.array([[-5.0, 0.5, 3.0], [2.0, 30.0, -3.0]])
    out = DPClipper(bounds=([0, 0, -1], [1, 10, 1])).fit_transform(X)
    np.testing.assert_array_equal(out, [[0, 0.5, 1], [1, 10, -1]])


def test_public_bounds_spend_nothing():
    acc = BudgetAccountant(epsilon=0.0)
    clipper = DPClipper(bounds=(0, 1), accountant=acc).fit(np.ones((4, 2)))
    assert acc.entries == ()
    assert (clipper.epsilon_spent_, clipper.delta_spent_) == (0.0, 0.0)


def test_integer_boolean_and_huge_inputs():
    clipper = DPClipper(bounds=(-1e308, 1e308))
    np.testing.assert_array_equal(
        clipper.fit_transform(np.array([[1e308, -1e308]])), [[1e308, -1e308]]
    )
    assert clipper.fit_transform(np.array([[True, False]])).dtype == np.float64
    np.testing.assert_array_equal(
        DPClipper(bounds=(0, 5)).fit_transform(np.array([[7, -2]])), [[5, 0]]
    )


@pytest.mark.parametrize(
    "X, match",
    [
        (np.empty((0, 2)), "0 sample"),
        (np.array([[np.nan, 1.0]]), "NaN or inf in column 0"),
        (np.array([[np.inf, 1.0]]), "NaN or inf in column 0"),
        (np.array([["a", "b"]], dtype=object), "could not convert|numeric"),
    ],
)
def test_bad_input_raises_and_charges_nothing(X, match):
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError, match=match):
        DPClipper(bounds=(0, 1), accountant=acc).fit(X)
    assert acc.entries == ()


def test_without_bounds_they_are_chosen_privately_and_charged():
    acc = BudgetAccountant(epsilon=1.0)
    X = np.random.default_rng(0).normal(10, 2, size=(5_000, 2))
    clipper = DPClipper(epsilon=0.5, upper_limit=1e4, accountant=acc, random_state=0)
    clipper.fit(X)
    assert acc.total()[0] == pytest.approx(0.5)
    assert clipper.epsilon_spent_ == pytest.approx(0.5)
    assert np.all(clipper.upper_ > np.quantile(X, 0.99, axis=0))
    assert np.all(clipper.upper_ < 2 * X.max(axis=0))


def test_method_none_clips_only_rows():
    clipper = DPClipper(method=None, norm="l2", max_norm=5.0)
    X = np.array([[3.0, 4.0], [30.0, 40.0], [0.0, 0.0], [1e308, 1e308]])
    out = clipper.fit_transform(X)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), [5, 5, 0, 5])
    np.testing.assert_allclose(out[1], [3, 4])
    assert clipper.epsilon_spent_ == 0.0


def test_norm_needs_max_norm():
    with pytest.raises(ValueError, match="given together"):
        DPClipper(bounds=(0, 1), norm="l2").fit(np.ones((2, 2)))


def test_pandas_output_and_feature_names():
    X = pd.DataFrame({"age": [15.0, 99.0], "hours": [10.0, 80.0]})
    clipper = DPClipper(bounds=([18, 0], [90, 60])).set_output(transform="pandas")
    out = clipper.fit_transform(X)
    assert list(out.columns) == ["age", "hours"]
    assert out["age"].tolist() == [18.0, 90.0]
    assert list(clipper.get_feature_names_out()) == ["age", "hours"]


def test_in_pipeline_and_column_transformer():
    X = pd.DataFrame({"a": [-3.0, 0.0, 3.0], "b": [1.0, 2.0, 3.0]})
    ct = ColumnTransformer([("clip", DPClipper(bounds=(-1, 1)), ["a"])])
    np.testing.assert_array_equal(ct.fit_transform(X).ravel(), [-1, 0, 1])
    pipe = make_pipeline(DPClipper(bounds=(-1, 1)), StandardScaler())
    assert pipe.fit_transform(X).shape == (3, 2)


def test_quantile_method_chooses_bounds_at_public_levels():
    acc = BudgetAccountant(epsilon=1.0)
    X = np.random.default_rng(4).normal(50, 10, size=(20_000, 1))
    clipper = DPClipper(
        method="quantile", epsilon=1.0, upper_limit=1e3, accountant=acc, random_state=0
    ).fit(X)
    assert acc.total()[0] == pytest.approx(1.0)
    assert clipper.epsilon_spent_ == pytest.approx(1.0)
    low, high = np.quantile(X, [0.01, 0.99])
    assert abs(clipper.lower_[0] - low) < 2 and abs(clipper.upper_[0] - high) < 2
    with pytest.raises(ValueError, match="two increasing levels"):
        DPClipper(method="quantile", quantiles=(0.9, 0.1), accountant=acc).fit(X)
    assert len(acc.entries) == 1


def test_quantile_bounds_near_the_domain_ends_warn_that_noise_dominated():
    ages = np.random.default_rng(0).integers(17, 90, size=(32_000, 1)).astype(float)
    with pytest.warns(NoiseDominatedWarning, match="dominated by noise"):
        DPClipper(epsilon=0.01, method="quantile", random_state=0).fit(ages)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatedWarning)
        clipper = DPClipper(epsilon=1.0, method="quantile", random_state=0).fit(ages)
    assert 10 < clipper.lower_[0] < clipper.upper_[0] < 100
