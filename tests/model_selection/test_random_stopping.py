"""RandomStoppingSearchCV: what it charges and when, what it refuses, what it
releases."""

import math
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import get_scorer
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp import BudgetAccountant, PrivateLogisticRegression, PTRMedian
from skdp.metrics import make_private_scorer
from skdp.model_selection import RandomStoppingSearchCV, fit_cost
from skdp.model_selection import _random_stopping as rs
from skdp.model_selection._random_stopping_cost import (
    random_stopping_epsilon,
    tnb_gamma,
    tnb_mean,
)

GRID = {"C": [0.1, 1.0, 10.0], "max_iter": [3, 6]}
# as for NoisyMaxSearchCV in tests/test_common.py: the private scorer needs a
# public label set, stated before the fit
STATED = (
    "the check trains on labels other than the stated public classes=(0, 1, 2)"
    " (strings, binary subsets whose layout differs): refused before the charge"
)
STATED_LABEL_CHECKS = (
    "check_classifiers_classes",
    "check_classifiers_train",
    "check_classifiers_train(readonly_memmap=True)",
    "check_classifiers_train(readonly_memmap=True,X_dtype=float32)",
    "check_decision_proba_consistency",
    "check_dtype_object",
    "check_estimator_sparse_array",  # its y holds labels 0..3
    "check_estimator_sparse_matrix",
)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(600, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=600) > 0).astype(int)
    return X, y


def model(epsilon=1.0):
    return PrivateLogisticRegression(epsilon, classes=[0, 1], feature_bounds=(-1, 1))


def search(**kwargs):
    params = {
        "scoring": make_private_scorer("accuracy", epsilon=0.2),
        "n_iter": 4.0,
        "random_state": 0,
    }
    params.update(kwargs)
    return RandomStoppingSearchCV(model(), GRID, **params)


def budget():
    return BudgetAccountant(20.0, 1e-5)


def test_charges_the_theorem_2_cost_as_one_labelled_entry(data):
    acc = budget()
    s = search(accountant=acc).fit(*data)
    gamma = tnb_gamma(4.0, 1.0)
    expected = random_stopping_epsilon(
        [fit_cost(model())],
        make_private_scorer("accuracy", epsilon=0.2).cost,
        "truncated_negative_binomial",
        math.nextafter(tnb_mean(gamma, 1.0), math.inf),
        1.0,
        gamma,
        1e-6,
    )
    (entry,) = acc.entries
    assert (entry.epsilon, entry.delta) == (expected, 1e-6)
    assert "random stopping" in entry.label and "Theorem 2" in entry.label
    assert (s.cost_.epsilon, s.cost_.delta) == (expected, 1e-6)
    assert fit_cost(s).epsilon == expected  # planned before any data
    assert s.gamma_ == gamma and s.n_candidates_ == 6


def test_poisson_label_and_refit_is_a_second_entry(data):
    acc = budget()
    # n_iter=8: K = 0 (probability exp(-8)) does not happen with this seed
    s = search(stopping="poisson", n_iter=8.0, refit=True, accountant=acc).fit(*data)
    first, second = acc.entries
    assert "Poisson" in first.label and "Theorem 6" in first.label
    assert (second.epsilon, second.delta) == (1.0, fit_cost(model()).delta)
    assert s.best_estimator_.n_features_in_ == 3
    assert s.gamma_ is None


def test_the_charge_precedes_the_split_and_every_fit(data, monkeypatch):
    acc = budget()
    seen = []
    split, fit = rs.split_parts, rs.fit_on_part

    def spy_split(*args):
        seen.append(("split", acc.total()[0]))
        return split(*args)

    def spy_fit(*args):
        seen.append(("fit", acc.total()[0]))
        return fit(*args)

    monkeypatch.setattr(rs, "split_parts", spy_split)
    monkeypatch.setattr(rs, "fit_on_part", spy_fit)
    s = search(accountant=acc).fit(*data)
    assert seen[0][0] == "split" and len(seen) >= 2
    assert all(total == s.cost_.epsilon for _, total in seen)


@pytest.mark.parametrize(
    "estimator, grid, kwargs, error, match",
    [
        (LogisticRegression(), GRID, {}, ValueError, "not a private estimator"),
        (PTRMedian(), {"epsilon": [0.5, 1.0]}, {}, ValueError, "Renyi DP curve"),
        (model(), GRID, {"scoring": get_scorer("accuracy")}, TypeError, "private"),
        (model(), {}, {}, ValueError, "param_grid is empty"),
        (model(), GRID, {"n_iter": 1.0}, ValueError, "n_iter"),
        (model(), GRID, {"eta": -1.0}, ValueError, "eta"),
    ],
)
def test_refusals_charge_nothing(data, estimator, grid, kwargs, error, match):
    acc = budget()
    params = {
        "scoring": make_private_scorer("accuracy", epsilon=0.2),
        "accountant": acc,
        **kwargs,
    }
    with pytest.raises(error, match=match):
        RandomStoppingSearchCV(estimator, grid, **params).fit(*data)
    assert acc.total() == (0.0, 0.0) and not acc.entries


def test_bad_input_and_short_budget_charge_nothing(data):
    X, y = data
    acc = budget()
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="Nothing was charged"):
        search(accountant=acc).fit(bad, y)
    with pytest.raises(ValueError, match="requires y"):
        search(accountant=acc).fit(X, None)
    with pytest.raises(ValueError, match="classes"):
        search(accountant=acc).fit(X, y + 5)  # labels outside the public set
    short = BudgetAccountant(0.5, 1e-5)
    with pytest.raises(Exception, match="budget"):
        search(accountant=short).fit(X, y)
    assert acc.total() == (0.0, 0.0) and short.total() == (0.0, 0.0)


def test_seeded_searches_are_reproducible(data):
    a = search(accountant=budget()).fit(*data)
    b = search(accountant=budget()).fit(*data)
    assert (a.best_index_, a.best_score_) == (b.best_index_, b.best_score_)
    np.testing.assert_array_equal(a.best_estimator_.coef_, b.best_estimator_.coef_)
    assert a.best_params_ == dict(
        zip(
            ("C", "max_iter"),
            [(c, m) for c in GRID["C"] for m in GRID["max_iter"]][a.best_index_],
            strict=True,
        )
    )


def test_the_choice_depends_on_the_data_only_through_the_private_scores(
    data, monkeypatch
):
    # scores patched to a public function of the candidate: two data sets of
    # the same size, with opposite labels, give the same release
    monkeypatch.setattr(
        rs, "_evaluate", lambda scorer, pred, y, seed: SimpleNamespace(value=0.5)
    )
    X, y = data
    first = search(accountant=budget(), n_iter=6.0).fit(X, y)
    other = search(accountant=budget(), n_iter=6.0).fit(-X, 1 - y)
    assert (first.best_index_, first.best_score_) == (other.best_index_, 0.5)


def test_the_best_released_score_wins(data, monkeypatch):
    scores = iter(np.linspace(0.0, 1.0, 10_000))
    drawn = []
    run = rs.RandomStoppingSearchCV._run

    def spy(self, *args):
        key, index, model_ = run(self, *args)
        drawn.append(index)
        return key, index, model_

    monkeypatch.setattr(rs, "_evaluate", lambda *a: SimpleNamespace(value=next(scores)))
    monkeypatch.setattr(rs.RandomStoppingSearchCV, "_run", spy)
    s = search(accountant=budget(), n_iter=8.0).fit(*data)
    assert len(drawn) >= 1 and s.best_index_ == drawn[-1]  # increasing scores


def test_no_run_releases_nothing_with_a_warning(data, monkeypatch):
    monkeypatch.setattr(rs, "sample_repetitions", lambda *a: 0)
    acc = budget()
    with pytest.warns(UserWarning, match="K = 0"):
        s = search(stopping="poisson", accountant=acc).fit(*data)
    assert s.best_index_ is None and math.isnan(s.best_score_)
    assert not hasattr(s, "best_estimator_") and acc.total()[0] > 0


def test_a_failed_candidate_is_scored_by_the_public_rule(data, monkeypatch):
    monkeypatch.setattr(rs, "fit_on_part", lambda *a: None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = search(accountant=budget()).fit(*data)
    assert s.best_index_ is not None and not hasattr(s, "best_estimator_")


@parametrize_with_checks(
    [
        RandomStoppingSearchCV(
            PrivateLogisticRegression(1e3, classes=(0, 1, 2)),
            {"C": [0.1, 1.0]},
            scoring=make_private_scorer("accuracy", epsilon=1e3),
            n_iter=2.0,
            random_state=0,
        )
    ],
    expected_failed_checks=lambda est: dict.fromkeys(STATED_LABEL_CHECKS, STATED),
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("seed", range(4))
def test_one_row_leaves_a_part_empty_and_nothing_raises_or_warns(seed):
    # with one row, the training or the held-out part is empty: the fits take
    # zero rows and the private score of no rows is still a release
    X, y = np.array([[0.5, -0.2]]), np.array([1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = search(accountant=budget(), random_state=seed, n_iter=2.0).fit(X, y)
    assert s.best_index_ in range(6)


def test_an_extreme_neighbour_row_changes_no_public_attribute(data):
    # D and D plus one row at the largest doubles: the same attributes, types
    # and shapes, no warning (the released values vary like noise)
    X, y = data
    X_plus = np.vstack([X, [[1.7e308, -1.7e308, 5e-324]]])
    y_plus = np.append(y, 1)
    fitted = []
    for X_, y_ in ((X, y), (X_plus, y_plus)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fitted.append(search(accountant=budget()).fit(X_, y_))
    a, b = fitted
    names = sorted(k for k in vars(a) if k.endswith("_") and not k.startswith("_"))
    assert names == sorted(
        k for k in vars(b) if k.endswith("_") and not k.startswith("_")
    )
    for name in names:
        assert type(getattr(a, name)) is type(getattr(b, name))
    assert a.best_estimator_.coef_.shape == b.best_estimator_.coef_.shape
    assert a.cost_ == b.cost_
