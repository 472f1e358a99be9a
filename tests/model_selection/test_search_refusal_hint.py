"""scikit-learn's searches over private estimators refuse before their first
fit when their whole plan exceeds the budget, and say why (issue 28, item 2).

The first charge inside a ``GridSearchCV``, ``RandomizedSearchCV`` or
``cross_validate`` checks the cost of every fit the search will make (every
candidate on every split, plus the refit at the largest candidate cost)
against what the accountant has left; the search's parameters and the budget
are public, so the decision reads nothing of the data.
"""

import multiprocessing
import warnings

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.base import BaseEstimator
from sklearn.model_selection import GridSearchCV, RandomizedSearchCV, cross_validate
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant, BudgetExceededError, PrivateMean
from skdp.utils._search_hint import running_searches


def _data():
    return np.random.default_rng(0).uniform(0, 1, size=(300, 1))


def _score(est, X, y=None):
    return -float(np.abs(est[-1].mean_ if hasattr(est, "steps") else est.mean_).sum())


def _search(acc, **kwargs):
    # 2 candidates x 3 splits at 0.3 + 0.5, and the refit at most 0.5:
    # the plan costs 3 x 0.8 + 0.5 = 2.9
    return GridSearchCV(
        PrivateMean(bounds=(0, 1), accountant=acc),
        {"epsilon": [0.3, 0.5]},
        cv=3,
        scoring=_score,
        **kwargs,
    )


def _assert_names_the_plan_and_the_fixes(message, name="GridSearchCV"):
    assert f"{name} refused before its first fit" in message
    assert "Nothing was charged" in message
    assert "smaller epsilon" in message and "larger budget" in message
    assert "check_budget" in message and "NoisyMaxSearchCV" in message


def test_a_plan_over_the_budget_is_refused_before_any_fit():
    acc = BudgetAccountant(1.0)
    with pytest.raises(BudgetExceededError) as refused:
        _search(acc, error_score="raise").fit(_data())
    message = str(refused.value)
    _assert_names_the_plan_and_the_fixes(message)
    assert "2 candidates × 3 splits + 1 refit = 7 fits" in message
    assert "costs epsilon=2.9, delta=0" in message
    assert "has epsilon=1, delta=0 left" in message
    assert acc.entries == ()


def test_with_the_default_error_score_the_refusal_reaches_the_user():
    # scikit-learn catches each fit's error (error_score=nan); every fit is
    # refused, so its "All the 6 fits failed" error carries the refusal once
    acc = BudgetAccountant(1.0)
    with pytest.raises(ValueError, match="All the 6 fits failed") as failed:
        _search(acc).fit(_data())
    message = str(failed.value)
    assert "6 fits failed with the following error" in message
    _assert_names_the_plan_and_the_fixes(message)
    assert acc.entries == ()


def test_a_plan_that_fits_runs_and_records_every_spend():
    acc = BudgetAccountant(2.9)  # exactly the plan
    search = _search(acc).fit(_data())
    assert len(acc.entries) == 7
    best = search.best_params_["epsilon"]
    assert acc.total() == ({0.3: 2.7, 0.5: 2.9}[best], 0.0)


def test_the_plan_is_checked_against_what_is_left():
    acc = BudgetAccountant(3.0)
    acc.spend(0.2, label="earlier")  # 2.8 left < 2.9
    with pytest.raises(BudgetExceededError, match=r"has epsilon=2\.8, delta=0 left"):
        _search(acc, error_score="raise").fit(_data())
    assert len(acc.entries) == 1


def test_each_call_of_fit_checks_its_own_plan():
    acc = BudgetAccountant(5.0)
    search = _search(acc, error_score="raise").fit(_data())
    spent = acc.entries
    assert len(spent) == 7
    with pytest.raises(BudgetExceededError, match="refused before its first fit"):
        search.fit(_data())  # at most 2.3 left
    assert acc.entries == spent


def test_cross_validate_is_refused_before_any_fit():
    acc = BudgetAccountant(1.0)
    with pytest.raises(BudgetExceededError) as refused:
        cross_validate(
            PrivateMean(0.4, bounds=(0, 1), accountant=acc),
            _data(),
            cv=3,
            scoring=_score,
            error_score="raise",
        )
    message = str(refused.value)
    _assert_names_the_plan_and_the_fixes(message, "cross_validate")
    assert "3 splits = 3 fits, costs epsilon=1.2" in message
    assert acc.entries == ()
    cross_validate(
        PrivateMean(0.25, bounds=(0, 1), accountant=acc), _data(), cv=4, scoring=_score
    )
    assert acc.total() == (1.0, 0.0) and len(acc.entries) == 4


def test_a_randomized_search_with_a_seed_is_refused_before_any_fit():
    acc = BudgetAccountant(1.0)
    search = RandomizedSearchCV(
        PrivateMean(bounds=(0, 1), accountant=acc),
        {"epsilon": [0.3, 0.4]},
        n_iter=2,
        cv=2,
        random_state=0,
        error_score="raise",
        scoring=_score,
    )
    with pytest.raises(BudgetExceededError) as refused:
        search.fit(_data())
    _assert_names_the_plan_and_the_fixes(str(refused.value), "RandomizedSearchCV")
    assert "costs epsilon=1.8" in str(refused.value)  # 2 x 0.7 + 0.4
    assert acc.entries == ()


def test_threads_of_a_search_are_refused_before_any_fit():
    # the fits run in joblib's worker threads; the search runs in this one
    acc = BudgetAccountant(1.0)
    with parallel_config(backend="threading"):
        with pytest.raises(BudgetExceededError, match="refused before its first"):
            _search(acc, error_score="raise", n_jobs=2).fit(_data())
    assert acc.entries == ()


def test_the_default_accountant_in_effect_is_planned_too():
    acc = BudgetAccountant(1.0)
    with acc, pytest.raises(BudgetExceededError, match="refused before its first"):
        _search(None, error_score="raise").fit(_data())
    assert acc.entries == ()


def test_a_search_of_unknown_cost_still_names_the_fixes_at_its_first_refusal():
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


def test_steps_charging_two_accountants_are_not_planned_against_one():
    # the plan's cost splits between the accountants: no early refusal, and
    # the refusal still names the search when it comes
    small, large = BudgetAccountant(0.5), BudgetAccountant(100.0)
    pipe = make_pipeline(
        PrivateMean(0.1, bounds=(0, 1), accountant=large),
        PrivateMean(0.2, bounds=(-1, 1), accountant=small),
    )
    search = GridSearchCV(
        pipe, {"privatemean-1__epsilon": [0.1]}, cv=3, error_score="raise"
    )
    search.set_params(scoring=_score)
    with pytest.raises(BudgetExceededError, match="This fit is one of GridSearchCV"):
        search.fit(_data())
    assert len(small.entries) == 2  # 0.2 + 0.2, then 0.2 more is refused


def test_a_fit_outside_a_search_says_nothing_of_searches():
    acc = BudgetAccountant(0.5)
    with pytest.raises(BudgetExceededError) as refused:
        PrivateMean(bounds=(0, 1), accountant=acc).fit(_data())
    assert "search" not in str(refused.value).lower()


def test_a_refused_plan_warns_nothing_of_its_own():
    acc = BudgetAccountant(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(BudgetExceededError):
            _search(acc, error_score="raise").fit(_data())


def _count_searches(conn):
    conn.send(len(running_searches()))


class _ForksInFit(BaseEstimator):
    """Counts the searches it sees, here and in a child forked in its fit."""

    def fit(self, X, y=None):
        parent, child = multiprocessing.Pipe()
        process = multiprocessing.get_context("fork").Process(
            target=_count_searches, args=(child,)
        )
        process.start()
        self.in_child_ = parent.recv()
        process.join()
        self.in_parent_ = len(running_searches())
        return self

    def score(self, X, y=None):
        return 0.0


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="POSIX only"
)
def test_a_child_forked_inside_a_search_leaves_its_plan_to_the_parent():
    # the child's stack holds copies of the parent's frames: planning the
    # search there again, after other fits were charged, would refuse fits
    # that the plan covers
    fitted = cross_validate(_ForksInFit(), _data(), cv=2, return_estimator=True)
    assert [(e.in_parent_, e.in_child_) for e in fitted["estimator"]] == [(1, 0)] * 2


def test_a_refit_after_folds_charged_elsewhere_is_not_planned_again(tmp_path):
    # the folds' fits charge a file ledger from worker processes, so the
    # parent's first charge is the refit: 0.5 left then, against a plan of
    # 2.9 already covered
    acc = BudgetAccountant(2.9, ledger=tmp_path / "budget.sqlite")
    with parallel_config(backend="loky"):
        search = _search(acc, error_score="raise", n_jobs=2).fit(_data())
    best = search.best_params_["epsilon"]
    assert acc.total() == ({0.3: 2.7, 0.5: 2.9}[best], 0.0)
    assert len(acc.entries) == 7
