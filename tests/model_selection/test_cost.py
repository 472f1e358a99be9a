"""check_budget: one call that checks a planned fit against the budget."""

import pytest
from sklearn.model_selection import GridSearchCV

from skdp import BudgetAccountant, BudgetExceededError, PrivateMean
from skdp.model_selection import check_budget


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
