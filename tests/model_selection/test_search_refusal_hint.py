"""A fit refused inside a scikit-learn search names the whole plan's cost,
check_budget and NoisyMaxSearchCV (the search's parameters are public)."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, RandomizedSearchCV

from skdp import BudgetAccountant, BudgetExceededError, PrivateMean


def _data():
    return np.random.default_rng(0).uniform(0, 1, size=(300, 1))


def _score(est, X, y=None):
    return -float(np.abs(est.mean_).sum())


def test_the_first_refusal_names_the_plan_and_the_fixes():
    acc = BudgetAccountant(1.0)
    search = GridSearchCV(
        PrivateMean(bounds=(0, 1), accountant=acc),
        {"epsilon": [0.3, 0.5]},
        cv=3,
        error_score="raise",
        scoring=_score,
    )
    with pytest.raises(BudgetExceededError) as refused:
        search.fit(_data())
    message = str(refused.value)
    assert "GridSearchCV costs epsilon=2.9" in message  # 3 x 0.8 + 0.5
    assert "check_budget" in message and "NoisyMaxSearchCV" in message
    assert acc.total() == (pytest.approx(0.9), 0.0)  # three folds, then refused


def test_the_refit_refusal_after_failed_folds_says_it_too():
    acc = BudgetAccountant(1.0)
    search = GridSearchCV(
        PrivateMean(bounds=(0, 1), accountant=acc),
        {"epsilon": [0.3, 0.5]},
        cv=3,
        scoring=_score,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's FitFailedWarning
        with pytest.raises(BudgetExceededError, match="check_budget"):
            search.fit(_data())


def test_a_search_of_unknown_cost_still_names_the_fixes():
    acc = BudgetAccountant(0.5)
    search = RandomizedSearchCV(  # no random_state: candidates unknown ahead
        PrivateMean(bounds=(0, 1), accountant=acc),
        {"epsilon": [0.3, 0.4]},
        n_iter=2,
        cv=2,
        error_score="raise",
        scoring=_score,
    )
    with pytest.raises(BudgetExceededError) as refused:
        search.fit(_data())
    message = str(refused.value)
    assert "fits every candidate on every fold" in message
    assert "NoisyMaxSearchCV" in message


def test_a_fit_outside_a_search_says_nothing_of_searches():
    acc = BudgetAccountant(0.5)
    with pytest.raises(BudgetExceededError) as refused:
        PrivateMean(bounds=(0, 1), accountant=acc).fit(_data())
    assert "search" not in str(refused.value).lower()
