"""check_budget: one call that checks a planned fit against the budget."""

import pytest
from sklearn.model_selection import GridSearchCV

import skdp
from skdp import BudgetAccountant, BudgetExceededError, PrivateMean
from skdp.model_selection import check_budget, fit_cost


def test_check_budget_refuses_a_search_before_any_fit(tmp_path):
    path = tmp_path / "budget.sqlite"
    search = GridSearchCV(PrivateMean(bounds=(0, 1)), {"epsilon": [0.1, 0.2]}, cv=3)
    acc = BudgetAccountant(epsilon=2.0, ledger=path)
    assert check_budget(search, acc).epsilon == pytest.approx(1.1)
    acc.spend(1.0, label="an earlier run")
    with pytest.raises(
        BudgetExceededError,
        match=r"GridSearchCV: one fit costs "
        r"epsilon=1\.1.* left\. Nothing was run.*keeps every spend",
    ):
        check_budget(search, acc)
    with acc:  # the default accountant
        with pytest.raises(BudgetExceededError):
            check_budget(search)
    assert acc.total() == (1.0, 0.0)


@pytest.mark.parametrize(
    "estimator",
    [
        skdp.PrivateHistGradientBoostingClassifier(bin_share=float("nan")),
        skdp.PrivateHistGradientBoostingClassifier(max_iter=0),
        skdp.PrivateMean(bounds=(0, 1), max_rows_per_group=0),
    ],
    ids=["bin_share_nan", "max_iter_0", "k_0"],
)
def test_a_plan_of_parameters_fit_refuses_is_refused(estimator):
    # before: fit_cost planned a cost for parameters that fit refuses (a NaN
    # budget share, zero rounds), so a budget check passed for a fit that
    # could never run
    with pytest.raises(ValueError, match="parameter of Private"):
        fit_cost(estimator)
