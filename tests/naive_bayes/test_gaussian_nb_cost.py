"""PrivateGaussianNB's fit cost: the very items that fit charges, each with
its mechanism, so that an accountant with a tight composition plans what it
records."""

import numpy as np
import pytest

from skdp import BudgetAccountant, PrivateGaussianNB
from skdp.model_selection import fit_cost


def _tight(composition):
    if composition == "zcdp":
        return BudgetAccountant(1000.0, 1e-2, slack=5e-3, composition="zcdp")
    return BudgetAccountant(1000.0, 1e-2, composition="pld")


@pytest.mark.filterwarnings("ignore::skdp.exceptions.NoiseDominatedWarning")
@pytest.mark.parametrize(
    "composition, mechanism, classes, bounds",
    [
        ("zcdp", "gaussian", [0, 1], (-3, 3)),
        ("zcdp", "gaussian", None, None),
        ("zcdp", "laplace", [0, 1], None),
        ("pld", "gaussian", [0, 1], (-3, 3)),
        ("zcdp", "laplace", None, (-3, 3)),
    ],
)
def test_fit_cost_is_what_a_tight_accountant_records(
    composition, mechanism, classes, bounds
):
    # _fit_cost gave one (epsilon, delta) pair without the mechanism: a zCDP
    # accountant planned more than the fit records (a Gaussian fit with
    # stated bounds: 6.8 planned against 1.5 recorded), and a PLD accountant
    # refused to plan a Gaussian fit that it runs
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 2000)  # the label selection releases both labels
    X = rng.normal(y[:, None], 1.0, size=(2000, 3))
    model = PrivateGaussianNB(
        2.0, bounds=bounds, classes=classes, mechanism=mechanism,
        delta=1e-5, random_state=0,
    )  # fmt: skip
    recorded = _tight(composition)
    model.set_params(accountant=recorded).fit(X, y)
    plan = _tight(composition)
    plan.spend(fit_cost(model, X.shape[1]), label="plan")
    assert recorded.total() == plan.total()


def test_fit_cost_without_the_feature_count_is_an_upper_bound():
    # private bounds split their budget per feature: without n_features the
    # cost is the (epsilon, delta) pair, which covers every feature count
    model = PrivateGaussianNB(2.0, classes=[0, 1], mechanism="gaussian", delta=1e-5)
    cost = fit_cost(model)
    assert (cost.epsilon, cost.delta) == (2.0, 1e-5)
