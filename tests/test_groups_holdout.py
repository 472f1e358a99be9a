"""The holdout searches with ``groups``: NoisyMaxSearchCV(method="holdout")
and RandomStoppingSearchCV.

A group lands whole in the training or the held-out part by the keyed hash
of its label (brute force: every group removed in turn moves no other
group); the held-out totals weight a group to at most ``k`` rows (exactly
the expected sum of ``k`` rows drawn uniformly, brute-forced over every
``k``-subset); the candidates and the private score get their part's groups
and ``k``; the plan is what fit records, in the group unit; the refusals
come before the charge; routing through ``cross_validate``. The audits and
their twins are in tests/audit/test_group_holdout_audit.py.
"""

import itertools
from fractions import Fraction

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GroupKFold, cross_validate
from sklearn.pipeline import make_pipeline
from test_groups_estimators import _people

from skdp import BudgetAccountant, PrivateLogisticRegression
from skdp.metrics import make_private_scorer
from skdp.model_selection import (
    NoisyMaxSearchCV,
    RandomStoppingSearchCV,
    _search_selection,
    fit_cost,
)
from skdp.model_selection import _random_stopping as rs
from skdp.model_selection._holdout import group_scores, holdout_total
from skdp.model_selection._holdout_parts import held_out_groups

K = 3
GRID = {"C": [0.1, 10.0]}

pytestmark = pytest.mark.filterwarnings("ignore::skdp.exceptions.NoiseDominatedWarning")


def _model(**params):
    return PrivateLogisticRegression(
        epsilon=1.0, classes=[0, 1], feature_bounds=(0, 10), **params
    )


def _noisy_max(**params):
    defaults = {"method": "holdout", "refit": False, "max_rows_per_group": K}
    return NoisyMaxSearchCV(_model(), GRID, **{**defaults, **params})


def _random_stopping(**params):
    defaults = {
        "scoring": make_private_scorer("accuracy", epsilon=0.5),
        "n_iter": 2.0,
        "max_rows_per_group": K,
    }
    return RandomStoppingSearchCV(_model(), GRID, **{**defaults, **params})


SEARCHES = [_noisy_max, _random_stopping]
IDS = ["noisy_max_holdout", "random_stopping"]


# -- the split ------------------------------------------------------------------
@pytest.mark.parametrize("key", [0, 2**64 - 1, 12345])
def test_a_group_lands_whole_and_removing_it_moves_no_other_group(key):
    values = [1, 1, "p", 2.0, "p", 7, 7, 7, (3, 4), 2, 1.0]
    labels = np.empty(len(values), dtype=object)
    labels[:] = values
    held = held_out_groups(labels, 0.5, key)
    for label in set(values):  # 2 == 2.0 and 1 == 1.0: one group each
        rows = np.array([v == label for v in values])
        assert np.unique(held[rows]).size == 1
        np.testing.assert_array_equal(
            held_out_groups(labels[~rows], 0.5, key), held[~rows]
        )
    order = np.random.default_rng(key % 7).permutation(labels.size)
    np.testing.assert_array_equal(held_out_groups(labels[order], 0.5, key), held[order])


def test_each_group_is_held_out_with_the_stated_probability():
    groups = np.repeat(np.arange(20_000), 2)
    for size in (0.05, 0.3, 0.9):
        # 20,000 groups: the standard error of the fraction is below 0.0035
        fraction = held_out_groups(groups, size, key=5)[::2].mean()
        assert abs(fraction - size) < 0.015


# -- the held-out totals, per group ---------------------------------------------
def _expected_kept_sum(scores, k):
    """E[sum of min(m, k) of the group's scores drawn uniformly] / k."""
    m = len(scores)
    subsets = list(itertools.combinations(scores, min(m, k)))
    return sum(Fraction(sum(s)) for s in subsets) / (len(subsets) * k)


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_a_groups_value_is_its_expected_sum_of_k_uniform_rows(k):
    rng = np.random.default_rng(k)
    groups = np.repeat(np.arange(6), [1, 2, 3, 4, 5, 7])
    for sign in (1.0, -1.0):
        scores = sign * rng.integers(0, 2**24 + 1, groups.size) / 2**24
        values = group_scores(scores, groups, k)
        for g in range(6):
            exact = _expected_kept_sum([Fraction(s) for s in scores[groups == g]], k)
            assert abs(Fraction(values[g]) - exact) <= Fraction(1, 2**24)
            assert values[g] * 2**24 == np.rint(values[g] * 2**24)  # on the grid


class _Constant:
    def __init__(self, label):
        self.label = label

    def predict(self, X):
        return np.full(len(X), self.label)


def _total(model, X, y, groups, k):
    return holdout_total(
        model, X, y, "accuracy", 1.0, groups=groups, max_rows_per_group=k
    )


def test_a_held_out_group_moves_every_total_by_at_most_one_in_one_direction():
    # brute force: every group of 1 to 7 rows removed in turn; in units of
    # k * Delta every candidate's total moves by [0, 1] (the row sum would
    # move by up to 7 rows, the twin of tests/audit)
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(8), [1, 7, 2, 5, 3, 1, 6, 4])
    X = np.zeros((groups.size, 1))
    y = rng.integers(0, 2, groups.size)
    models = [_Constant(0), _Constant(1)]
    for k in (1, K, 10):
        full = [_total(m, X, y, groups, k) for m in models]
        for g in range(8):
            keep = groups != g
            less = [_total(m, X[keep], y[keep], groups[keep], k) for m in models]
            moves = np.subtract(full, less)
            assert np.all((moves >= 0) & (moves <= 1))
            correct = [np.sum(y[groups == g] == m.label) for m in models]
            m_g = np.sum(groups == g)
            np.testing.assert_allclose(
                moves, np.array(correct) / m_g * min(m_g, k) / k, atol=2**-24
            )


# -- the searches -----------------------------------------------------------------
def _spy_noisy_max(monkeypatch, seen):
    fit, total = _search_selection._timed_fit_on_part, _search_selection.holdout_total

    def spy_fit(progress, label, candidate, cost, X, y, **fit_params):
        seen["train"] = fit_params["groups"]
        seen["k"] = candidate.max_rows_per_group
        return fit(progress, label, candidate, cost, X, y, **fit_params)

    def spy_total(*args):
        seen["held"], seen["held_k"] = args[6], args[7]
        return total(*args)

    monkeypatch.setattr(_search_selection, "_timed_fit_on_part", spy_fit)
    monkeypatch.setattr(_search_selection, "holdout_total", spy_total)


def _spy_random_stopping(monkeypatch, seen):
    fit, evaluate = rs.fit_on_part, rs._evaluate

    def spy_fit(candidate, cost, X, y, **fit_params):
        seen.setdefault("train", fit_params["groups"])
        seen["k"] = candidate.max_rows_per_group
        return fit(candidate, cost, X, y, **fit_params)

    def spy_evaluate(scorer, predictions, y, seed):
        seen["held"] = scorer.kwargs["groups"]
        seen["held_k"] = scorer.kwargs["max_rows_per_group"]
        assert (scorer.cost.unit, scorer.cost.group_rows) == ("group", K)
        return evaluate(scorer, predictions, y, seed)

    monkeypatch.setattr(rs, "fit_on_part", spy_fit)
    monkeypatch.setattr(rs, "_evaluate", spy_evaluate)


@pytest.mark.parametrize(
    "search, spy",
    [(_noisy_max, _spy_noisy_max), (_random_stopping, _spy_random_stopping)],
    ids=IDS,
)
def test_candidates_and_scores_get_their_parts_whole_groups(search, spy, monkeypatch):
    X, y, groups = _people(200)
    seen = {}
    spy(monkeypatch, seen)
    accountant = BudgetAccountant(delta=1.0)
    search(accountant=accountant, random_state=0).fit(X, y, groups=groups)
    train = set(np.asarray(seen["train"]).tolist())
    held = set(np.asarray(seen["held"]).tolist())
    assert not train & held and train | held == set(groups.tolist())
    assert seen["k"] == seen["held_k"] == K
    labels = [e.label for e in accountant.entries]
    assert labels and all(
        lab.endswith(f"(unit: group of <= {K} rows)") for lab in labels
    )


@pytest.mark.parametrize("search", SEARCHES, ids=IDS)
@pytest.mark.parametrize("refit", [False, True])
def test_fit_cost_is_what_fit_records_in_the_group_unit(search, refit):
    X, y, groups = _people(100)
    accountant = BudgetAccountant(delta=1.0)
    model = search(refit=refit, accountant=accountant, random_state=0)
    planned = fit_cost(model)
    model.fit(X, y, groups=groups)
    assert (planned.unit, planned.group_rows) == ("group", K)
    assert all((e.unit, e.group_rows) == ("group", K) for e in accountant.entries)
    assert len(accountant.entries) == 1 + refit
    assert sum(e.epsilon for e in accountant.entries) == pytest.approx(planned.epsilon)
    assert sum(e.delta for e in accountant.entries) == pytest.approx(planned.delta)


@pytest.mark.parametrize("search", SEARCHES, ids=IDS)
def test_what_groups_cannot_cover_is_refused_before_the_charge(search):
    X, y, groups = _people(60)
    accountant = BudgetAccountant(delta=1.0)
    no_groups = search().set_params(
        estimator=make_pipeline(_model()),
        param_grid={"privatelogisticregression__C": [1.0]},
    )
    cases = [
        (search(max_rows_per_group=None), groups, r"max_rows_per_group=5\)"),
        (search(), None, "fit got no groups"),
        (search(), groups[:-1], "one label per row"),
        (no_groups, groups, "fits .* with groups, but Pipeline takes no groups"),
    ]
    for model, passed, message in cases:
        with pytest.raises(ValueError, match=message):
            model.set_params(accountant=accountant).fit(X, y, groups=passed)
    assert len(accountant.entries) == 0


@pytest.mark.parametrize("search", SEARCHES, ids=IDS)
@pytest.mark.parametrize("k", [1, 2**40])
def test_a_bound_at_either_end_fits_or_is_refused_before_the_charge(search, k):
    X, y, groups = _people(60)
    accountant = BudgetAccountant(delta=1.0)
    model = search(max_rows_per_group=k, accountant=accountant, random_state=0)
    try:
        model.fit(X, y, groups=groups)
    except ValueError as exc:
        assert "Nothing was charged" in str(exc)
        assert len(accountant.entries) == 0
    else:
        assert model.best_index_ in (0, 1) and len(accountant.entries) == 1


@pytest.mark.parametrize("search", SEARCHES, ids=IDS)
def test_cross_validate_routes_groups_to_the_search(search):
    X, y, groups = _people(150)
    accountant = BudgetAccountant(delta=1.0)
    model = make_pipeline(search(refit=True, accountant=accountant, random_state=0))
    with sklearn.config_context(enable_metadata_routing=True):
        scores = cross_validate(
            model,
            X,
            y,
            params={"groups": groups},
            cv=GroupKFold(2),
            error_score="raise",
        )
    assert scores["test_score"].shape == (2,)
    labels = [e.label for e in accountant.entries]
    assert len(labels) == 4 and all(f"group of <= {K} rows" in lab for lab in labels)


@pytest.mark.parametrize(
    "search",
    [*SEARCHES, lambda **p: _noisy_max(method="subsample", n_blocks=5, **p)],
    ids=[*IDS, "noisy_max_subsample"],
)
def test_a_person_level_accountant_takes_the_search(search):
    # the budget check before the charge states the costs for the group,
    # as the charge does (it checked them for one row, which a person-level
    # accountant refuses: every grouped search was refused by one)
    X, y, groups = _people(60)
    accountant = BudgetAccountant(epsilon=100.0, delta=1e-3, unit="group")
    search(accountant=accountant, random_state=0).fit(X, y, groups=groups)
    assert [(e.unit, e.group_rows) for e in accountant.entries] == [("group", K)]
