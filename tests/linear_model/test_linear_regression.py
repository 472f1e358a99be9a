"""PrivateLinearRegression: accounting, accuracy, errors, sklearn use."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdp import BudgetAccountant
from skdp.exceptions import NoiseDominatedWarning
from skdp.linear_model import PrivateLinearRegression
from skdp.mechanisms import analytic_gaussian_sigma
from skdp.model_selection import fit_cost


def linear_data(n=50_000, d=4, seed=0, noise=0.2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    w = np.linspace(-1.5, 2.0, d)
    y = X @ w + 0.7 + rng.normal(scale=noise, size=n)
    return X, y, w


def model(**kwargs):
    kwargs.setdefault("data_norm", 2.0)
    kwargs.setdefault("target_bounds", (-6.0, 6.0))
    kwargs.setdefault("random_state", 0)
    return PrivateLinearRegression(**kwargs)


def test_recovers_the_coefficients():
    X, y, w = linear_data()
    reg = model().fit(X, y)
    assert np.abs(reg.coef_ - w).max() < 0.05
    assert abs(reg.intercept_ - 0.7) < 0.05
    assert reg.score(X, y) > LinearRegression().fit(X, y).score(X, y) - 0.01


def test_without_intercept():
    X, y, w = linear_data()
    y = y - 0.7
    reg = model(fit_intercept=False).fit(X, y)
    assert reg.intercept_ == 0.0
    assert np.abs(reg.coef_ - w).max() < 0.05


def test_ridge_penalty_matches_sklearns_convention():
    # with a huge budget the noise is negligible: the estimate is Ridge's
    X, y, _ = linear_data(n=5_000, d=3, noise=0.5)
    alpha = 2_000.0
    reg = model(epsilon=1e6, alpha=alpha).fit(X, y)
    ref = Ridge(alpha=alpha).fit(X, y)
    assert np.allclose(reg.coef_, ref.coef_, atol=2e-3)
    assert reg.intercept_ == pytest.approx(ref.intercept_, abs=2e-3)


def test_charges_once_and_reports_the_cost():
    X, y, _ = linear_data(n=1_000)
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    reg = model(epsilon=0.5, delta=1e-6, accountant=acc).fit(X, y)
    assert [(e.epsilon, e.delta) for e in acc.entries] == [(0.5, 1e-6)]
    assert (reg.epsilon_spent_, reg.delta_spent_) == (0.5, 1e-6)
    cost = fit_cost(reg, n_features=X.shape[1])
    assert cost.rho == pytest.approx(0.5 / analytic_gaussian_sigma(1, 0.5, 1e-6) ** 2)
    # one feature would get the Laplace plan at this epsilon: the plan for an
    # unknown number of features is the (epsilon, delta) bound of both
    unknown = fit_cost(reg)
    assert (unknown.epsilon, unknown.delta, unknown.noise_multiplier) == (
        0.5,
        1e-6,
        None,
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"data_norm": None, "feature_bounds": "scaled"}, "needs data_norm"),
        ({"target_bounds": (1.0, 1.0)}, "target_bounds"),
    ],
)
def test_missing_public_bounds_are_errors_that_cost_nothing(kwargs, message):
    X, y, _ = linear_data(n=100)
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match=message):
        model(accountant=acc, **kwargs).fit(X, y)
    assert acc.entries == ()


def test_non_finite_targets_cost_nothing():
    X, y, _ = linear_data(n=100)
    y[3] = np.inf
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError):
        model(accountant=acc).fit(X, y)
    assert acc.entries == ()


def test_extreme_rows_neither_raise_nor_warn():
    # only NoiseDominatedWarning, from the released statistics (4 rows)
    X = np.array([[1e300, -1e300], [5e-324, 0.0], [0.0, 0.0], [1.0, -1.0]])
    y = np.array([1e300, -1e300, 0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        reg = model().fit(X, y)
    assert np.all(np.isfinite(reg.coef_)) and np.isfinite(reg.intercept_)


def test_pandas_and_pipeline():
    X, y, _ = linear_data(n=2_000)
    frame = pd.DataFrame(X, columns=list("abcd"))
    reg = model().fit(frame, y)
    assert list(reg.feature_names_in_) == list("abcd")
    pipe = make_pipeline(FunctionTransformer(lambda Z: Z / 2), model(data_norm=1.0))
    assert pipe.fit(X, y).score(X, y) > 0.8


def test_sparse_input_gives_the_same_model_as_dense():
    X, y, _ = linear_data(n=5_000)
    X[np.abs(X) < 0.3] = 0.0
    dense = model().fit(X, y)
    csr = model().fit(sparse.csr_matrix(X), y)
    assert np.array_equal(dense.coef_, csr.coef_)
    assert dense.intercept_ == csr.intercept_
