"""Review of PrivateGaussianNB(mechanism="auto") and of the planners that plan
each fit on X's columns: the bound without the number of features must cover
what the fit records in every composition (zCDP counts a Gaussian's rho, which
a generic (epsilon, delta) does not cover when delta is large for its
epsilon); a pipeline that changes the number of columns is planned at the
bound, never at X's columns; an X whose shape cannot be read is planned at the
bound, not refused."""

import numpy as np
import pytest
from sklearn.model_selection import cross_validate as sk_cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures

from skdp import BudgetAccountant, PrivateGaussianNB
from skdp.exceptions import BudgetExceededError
from skdp.model_selection import fit_cost
from skdp.model_selection._curve_plan import _n_features

pytestmark = pytest.mark.filterwarnings("ignore::skdp.exceptions.NoiseDominatedWarning")


def data(n_features, n=600, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return rng.normal(y[:, None], 1.0, size=(n, n_features)), y


def _zcdp():
    return BudgetAccountant(10.0, 0.5, slack=1e-6, composition="zcdp")


@pytest.mark.parametrize("bounds", [(-4, 5), None])
def test_the_bound_without_features_covers_the_gaussian_under_zcdp(bounds):
    # epsilon 0.05, delta 0.01: "auto" takes the Gaussian on 4 features (its
    # multiplier 14.3 against Laplace's sqrt(2) 4 / 0.05 = 113), whose
    # rho = 1 / (2 r^2) = 0.0024 exceeds the generic bound's epsilon^2 / 2 =
    # 0.00125: the zCDP totals were 0.294 recorded against 0.206 planned
    X, y = data(4)
    model = PrivateGaussianNB(
        0.05, delta=0.01, bounds=bounds, classes=[0, 1], random_state=0
    )
    recorded = _zcdp()
    model.set_params(accountant=recorded).fit(X, y)
    assert model.mechanism_ == "gaussian"
    planned = _zcdp()
    planned.spend(fit_cost(model), label="plan without the feature count")
    assert planned.total()[0] >= recorded.total()[0]
    assert planned.total()[1] >= recorded.total()[1]


def test_a_pipeline_that_adds_columns_is_planned_at_the_bound():
    # 2 columns in, 10 into naive Bayes: its fits take the Gaussian (delta);
    # a plan on X's 2 columns (Laplace, no delta) would let a delta-0
    # accountant start the search. Composites plan their steps without the
    # count, and the first fit is refused before its charge.
    X, y = data(2, n=200)
    nb = PrivateGaussianNB(1.0, bounds=(-40, 50), classes=[0, 1], random_state=0)
    pipe = make_pipeline(PolynomialFeatures(3), nb)
    assert fit_cost(pipe, 2).delta == 1e-6
    pure = BudgetAccountant(100.0)
    with pure, pytest.raises(BudgetExceededError, match="Nothing was charged"):
        sk_cross_validate(pipe, X, y, cv=2, error_score="raise")
    assert pure.total() == (0.0, 0.0)
    with BudgetAccountant(100.0, 1e-3) as accountant:
        sk_cross_validate(pipe, X, y, cv=2, error_score="raise")
    assert accountant.total() == (2.0, 2e-6)


class _ShapeRaises:
    @property
    def shape(self):
        raise TypeError("this container computes its shape lazily")


def test_an_unreadable_shape_is_planned_at_the_bound():
    # a planner reads X's columns before any charge: where it cannot, the
    # fit is planned for every number of columns (None), not refused there
    assert _n_features(_ShapeRaises()) is None
    assert _n_features(np.zeros((3, 4))) == 4


def test_a_pld_accountant_refuses_the_laplace_plan_naming_the_gaussian():
    # with stated classes and bounds the sums are the fit's only release:
    # on 2 features "auto" is Laplace, which a PLD accountant cannot record;
    # the refusal named composition='zcdp' only, while PCA and the linear
    # models name their own fix, mechanism='gaussian'
    X, y = data(2, n=200)
    accountant = BudgetAccountant(10.0, 1e-5, composition="pld")
    model = PrivateGaussianNB(
        bounds=(-4, 5), classes=[0, 1], accountant=accountant, random_state=0
    )
    with pytest.raises(ValueError, match="mechanism='gaussian'"):
        model.fit(X, y)
    assert accountant.total() == (0.0, 0.0)
    model.set_params(mechanism="gaussian").fit(X, y)
    assert model.mechanism_ == "gaussian"


def test_a_delta_0_accountant_refuses_the_gaussian_naming_the_fix():
    # the old default (Laplace) fitted a BudgetAccountant(epsilon) of delta
    # 0 on any number of features; on 16 "auto" takes the Gaussian and the
    # accountant's refusal named no parameter of the estimator
    X, y = data(16, n=200)
    accountant = BudgetAccountant(10.0)
    model = PrivateGaussianNB(
        bounds=(-4, 5), classes=[0, 1], accountant=accountant, random_state=0
    )
    with pytest.raises(BudgetExceededError, match=r"Pass delta=0 \(or mechanism"):
        model.fit(X, y)
    assert accountant.total() == (0.0, 0.0)
    model.set_params(delta=0.0).fit(X, y)
    assert (model.mechanism_, accountant.total()) == ("laplace", (1.0, 0.0))


def test_a_list_of_rows_is_planned_on_its_columns():
    # scikit-learn takes a list of rows as X (n_features_in_ is the length
    # of a row): its 2-column Laplace fits fit a delta-0 accountant, which
    # the early check refused, planning them over every number of columns
    X, y = data(2, n=200)
    model = PrivateGaussianNB(0.5, bounds=(-4, 5), classes=[0, 1], random_state=0)
    assert _n_features(X.tolist()) == 2
    with BudgetAccountant(100.0) as accountant:
        sk_cross_validate(model, X.tolist(), y, cv=2, error_score="raise")
    assert accountant.total() == (1.0, 0.0)
