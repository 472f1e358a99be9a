"""The plan of every search counts the releases of its private scorers: what
it plans is what the accountant records, and a plan that does not fit is
refused before anything is charged, naming its scores."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, RandomizedSearchCV
from sklearn.model_selection import cross_validate as sk_cross_validate

from skdp import BudgetAccountant, PrivateGaussianNB
from skdp.exceptions import BudgetExceededError
from skdp.metrics import make_private_scorer
from skdp.model_selection import (
    NoisyMaxSearchCV,
    RandomStoppingSearchCV,
    check_budget,
    cross_validate,
    fit_cost,
    privacy_utility_curve,
)
from skdp.model_selection._cost import sum_costs

FIT = 0.25  # binary fractions: every sum below is exact
SCORE = 0.125
BIG = 1000.0

# noise warnings of small private fits and scores are not what is tested
pytestmark = pytest.mark.filterwarnings("ignore")


def _data(n=300):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, (X[:, 0] > 0).astype(int)


def _model(**params):
    # a stated mechanism: the plans below are computed without the number
    # of features, where "auto" (the default) can only be bounded
    params = {
        "epsilon": FIT,
        "bounds": (-1, 1),
        "classes": [0, 1],
        "mechanism": "laplace",
        "random_state": 0,
        **params,
    }
    return PrivateGaussianNB(**params)


def _scorer():
    return make_private_scorer("accuracy", epsilon=SCORE)


def _accountant(composition):
    # delta for random stopping's (epsilon, delta) entry, outside the slack
    if composition == "zcdp":
        return BudgetAccountant(BIG, 1e-3, slack=5e-4, composition="zcdp")
    return BudgetAccountant(BIG, 1e-3)


def _as_recorded(cost, composition):
    """``cost`` as an accountant of this composition records it."""
    fresh = _accountant(composition)
    fresh.spend(cost, label="plan")
    return fresh.total()


# -- fit_cost and check_budget of scikit-learn's searches --------------------
@pytest.mark.parametrize("train", [False, True])
def test_fit_cost_of_a_search_counts_every_private_score(train):
    # 3 candidates x 2 splits + 1 refit = 7 fits; 6 scores (12 with train)
    search = GridSearchCV(
        _model(), {"var_smoothing": [1e-9, 1e-8, 1e-7]}, cv=2,
        scoring=_scorer(), return_train_score=train,
    )  # fmt: skip
    expected = 7 * FIT + 6 * (1 + train) * SCORE
    assert fit_cost(search).epsilon == expected


def test_fit_cost_counts_each_scorer_of_a_dict_and_only_private_ones():
    search = RandomizedSearchCV(
        _model(), {"var_smoothing": [1e-9, 1e-8]}, n_iter=2, cv=3, random_state=0,
        scoring={"a": _scorer(), "b": _scorer(), "plain": "accuracy"}, refit="a",
    )  # fmt: skip
    assert fit_cost(search).epsilon == 7 * FIT + 2 * 6 * SCORE


def test_check_budget_refuses_a_search_whose_scores_do_not_fit():
    # the fits alone (7 x 0.25) fit; with their 6 scores (0.75) they do not
    search = GridSearchCV(
        _model(), {"var_smoothing": [1e-9, 1e-8, 1e-7]}, cv=2, scoring=_scorer()
    )
    acc = BudgetAccountant(7 * FIT + 5 * SCORE)
    message = (
        r"epsilon=2\.5, .*3 candidates × 2 splits \+ 1 refit = 7 fits \+ 6 private"
    )
    with pytest.raises(BudgetExceededError, match=message):
        check_budget(search, acc)
    assert acc.entries == ()


# -- planned == recorded, for every search with a private scorer -------------
COMPOSITIONS = ["basic", "zcdp"]


@pytest.mark.parametrize("composition", COMPOSITIONS)
@pytest.mark.parametrize("kind", ["grid", "randomized"])
def test_a_scikit_learn_search_records_what_fit_cost_plans(kind, composition):
    X, y = _data()
    grid = {"var_smoothing": [1e-9, 1e-8]}
    common = {"cv": 2, "scoring": _scorer(), "return_train_score": True}
    if kind == "grid":
        search = GridSearchCV(_model(), grid, **common)
    else:
        search = RandomizedSearchCV(_model(), grid, n_iter=2, random_state=0, **common)
    acc = _accountant(composition)
    planned = fit_cost(search)
    with acc:
        search.set_params(error_score="raise").fit(X, y)
    assert len(acc.entries) == 5 + 8
    assert acc.total() == _as_recorded(planned, composition)


@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_scikit_learn_cross_validate_is_planned_with_its_scores(composition):
    X, y = _data()
    planned = sum_costs([fit_cost(_model())] * 3 + [_scorer().cost] * 6)
    acc = _accountant(composition)
    with acc:
        sk_cross_validate(
            _model(), X, y, cv=3, scoring=_scorer(), return_train_score=True,
            error_score="raise",
        )  # fmt: skip
    assert acc.total() == _as_recorded(planned, composition)


@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_noisy_max_holdout_records_its_plan(composition):
    X, y = _data()
    acc = _accountant(composition)
    search = NoisyMaxSearchCV(
        _model(), {"var_smoothing": [1e-9, 1e-8]}, method="holdout",
        scoring=_scorer(), epsilon=0.5, accountant=acc, random_state=0,
    )  # fmt: skip
    planned = fit_cost(search)
    search.fit(X, y)
    assert acc.total() == _as_recorded(planned, composition)


@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_noisy_max_blocks_do_not_charge_the_scores_of_a_nested_search(composition):
    # each block fits a GridSearchCV whose private scorer charged the default
    # accountant (the user's) for every block's scores: unplanned spends
    X, y = _data(400)
    scorer = make_private_scorer("accuracy", epsilon=SCORE, labels=[0, 1])
    inner = GridSearchCV(
        LogisticRegression(), {"C": [1.0]}, cv=2, scoring=scorer, refit=False
    )
    acc = _accountant(composition)
    search = NoisyMaxSearchCV(
        inner, {"cv": [2, 3]}, n_blocks=4, epsilon=0.5, refit=False, random_state=0
    )
    planned = fit_cost(search)
    with acc:
        search.fit(X, y)
    assert acc.total() == _as_recorded(planned, composition)


@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_random_stopping_records_its_plan(composition):
    X, y = _data()
    acc = _accountant(composition)
    search = RandomStoppingSearchCV(
        _model(), {"var_smoothing": [1e-9, 1e-8]}, scoring=_scorer(), n_iter=2,
        refit=True, accountant=acc, random_state=0,
    )  # fmt: skip
    planned = fit_cost(search)
    search.fit(X, y)
    assert acc.total() == _as_recorded(planned, composition)


@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_private_cross_validate_records_its_plan(composition):
    X, y = _data()
    acc = _accountant(composition)
    planned = sum_costs([fit_cost(_model())] * 2 + [_scorer().cost])
    cross_validate(_model(), X, y, cv=3, scoring=_scorer(), accountant=acc)
    assert acc.total() == _as_recorded(planned, composition)


def _curve_plan(epsilons, n_repeats, nested):
    """Each fit at its epsilon; private test scores, or (nested) a GridSearchCV
    per fit whose 2 private scores (one candidate, 2 splits) charge too."""
    fits = []
    for eps in epsilons:
        model = _model(epsilon=eps)
        inner = [fit_cost(model)] * 3 + [_scorer().cost] * 2 if nested else []
        fits += (inner or [fit_cost(model)]) * n_repeats
    scores = [] if nested else [_scorer().cost] * (len(epsilons) * n_repeats)
    return sum_costs(fits + scores)


@pytest.mark.parametrize("composition", COMPOSITIONS)
@pytest.mark.parametrize("nested", [False, True])
def test_privacy_utility_curve_records_its_plan(composition, nested):
    # nested: each fit is a GridSearchCV whose private scorer charges (the
    # test scores are then plain ones: the search is not a private model)
    X, y = _data()
    estimator, param, scoring = _model(), "epsilon", _scorer()
    if nested:
        grid = {"var_smoothing": [1e-9]}
        estimator = GridSearchCV(estimator, grid, cv=2, scoring=_scorer())
        param, scoring = "estimator__epsilon", "accuracy"
    acc = _accountant(composition)
    privacy_utility_curve(
        estimator, X, y, epsilons=[0.25, 0.5], n_repeats=2, scoring=scoring,
        param_name=param, accountant=acc, random_state=0,
    )  # fmt: skip
    assert acc.total() == _as_recorded(_curve_plan([0.25, 0.5], 2, nested), composition)


@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_a_curve_scored_by_a_searchs_own_private_scorer_records_its_plan(composition):
    # scoring=None: each test score is the search's score, a private release
    X, y = _data()
    estimator = GridSearchCV(
        _model(), {"var_smoothing": [1e-9]}, cv=2, scoring=_scorer()
    )
    acc = _accountant(composition)
    privacy_utility_curve(
        estimator, X, y, epsilons=[0.25, 0.5], n_repeats=2,
        param_name="estimator__epsilon", accountant=acc, random_state=0,
    )  # fmt: skip
    plan = sum_costs([_curve_plan([0.25, 0.5], 2, True)] + [_scorer().cost] * 4)
    assert acc.total() == _as_recorded(plan, composition)


def test_a_curve_short_of_its_searchs_own_scores_is_refused_before_any_fit():
    X, y = _data()
    estimator = GridSearchCV(
        _model(), {"var_smoothing": [1e-9]}, cv=2, scoring=_scorer()
    )
    plan = sum_costs([_curve_plan([0.25, 0.5], 2, True)] + [_scorer().cost] * 3)
    acc = BudgetAccountant(plan.epsilon)  # one of the 4 test scores short
    with pytest.raises(BudgetExceededError, match=r"4 fits \+ 4 private scores"):
        privacy_utility_curve(
            estimator, X, y, epsilons=[0.25, 0.5], n_repeats=2,
            param_name="estimator__epsilon", accountant=acc, random_state=0,
        )  # fmt: skip
    assert acc.entries == ()


def test_privacy_utility_curve_refusal_names_its_private_scores():
    X, y = _data()
    acc = BudgetAccountant(2 * (0.25 + 0.5) + 3 * SCORE)  # one score short
    with pytest.raises(BudgetExceededError, match=r"4 fits \+ 4 private scores"):
        privacy_utility_curve(
            _model(), X, y, epsilons=[0.25, 0.5], n_repeats=2, scoring=_scorer(),
            accountant=acc, random_state=0,
        )  # fmt: skip
    assert acc.entries == ()


# -- scores charged to another accountant than the fits ----------------------
def test_scores_charged_elsewhere_are_planned_against_their_own_accountant():
    # the fits charge one accountant, the scorer the default: the default's
    # part of the plan (4 scores) is checked at the first score, and nothing
    # of it is spent; before, 2 scores were spent and the third refused
    X, y = _data()
    fits, scores = BudgetAccountant(BIG), BudgetAccountant(2.5 * SCORE)
    search = GridSearchCV(
        _model(accountant=fits), {"var_smoothing": [1e-9, 1e-8]}, cv=2,
        scoring=_scorer(), error_score="raise",
    )  # fmt: skip
    with scores, pytest.raises(BudgetExceededError, match=r"\+ 4 private scores"):
        search.fit(X, y)
    assert scores.entries == ()


def test_scores_of_a_non_private_model_are_planned_at_the_first_score():
    X, y = _data()
    acc = BudgetAccountant(3 * SCORE)
    search = GridSearchCV(
        LogisticRegression(), {"C": [1.0, 2.0]}, cv=2,
        scoring=make_private_scorer("accuracy", epsilon=SCORE, labels=[0, 1]),
        error_score="raise",
    )  # fmt: skip
    message = r"refused before its first private score: .*fits charge no budget"
    with acc, pytest.raises(BudgetExceededError, match=message):
        search.fit(X, y)
    assert acc.entries == ()
