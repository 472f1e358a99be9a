"""Adversarial review of the private trees and forest and of the searches'
plans of their private scorers: each test is a reproducer of a finding (it
failed before its fix) or an attack that held."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.model_selection import cross_validate as sk_cross_validate

from skdp import BudgetAccountant, PrivateGaussianNB
from skdp.ensemble import PrivateRandomForestClassifier
from skdp.exceptions import BudgetExceededError
from skdp.metrics import make_private_scorer
from skdp.model_selection import check_budget, fit_cost

FIT = 0.25  # binary fractions: every sum below is exact
SCORE = 0.125

# noise warnings of small private fits and scores are not what is tested
pytestmark = pytest.mark.filterwarnings("ignore")


def _data(n=200, d=2):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(n, d))
    return X, (X[:, 0] > 0).astype(int)


def _nb():
    # a stated mechanism: the plans here are computed without the number of
    # features, where "auto" (the default) can only be bounded
    return PrivateGaussianNB(
        epsilon=FIT, bounds=(-1, 1), classes=[0, 1], mechanism="laplace",
        random_state=0,
    )  # fmt: skip


def _inner_search():
    return GridSearchCV(
        _nb(), {"var_smoothing": [1e-9, 1e-8]}, cv=2,
        scoring=make_private_scorer("accuracy", epsilon=SCORE), error_score="raise",
    )  # fmt: skip


# -- B: a search scored by its estimator's own private scorer ----------------
def test_nested_search_plan_counts_the_inner_searchs_scores():
    # scoring=None: the outer search scores each split with inner.score, a
    # release of the inner search's private scorer; the plan left them out
    # (planned 5.25, recorded 5.5), so check_budget passed a budget that
    # the fit ran out of after spending 3.75
    X, y = _data()
    outer = GridSearchCV(_inner_search(), {"cv": [2]}, cv=2, error_score="raise")
    acc = BudgetAccountant(1000.0)
    planned = fit_cost(outer)
    with acc:
        outer.fit(X, y)
    assert acc.total() == (planned.epsilon, planned.delta) == (5.5, 0.0)


def test_nested_search_short_of_its_outer_scores_is_refused_before_any_fit():
    X, y = _data()
    outer = GridSearchCV(_inner_search(), {"cv": [2]}, cv=2, error_score="raise")
    acc = BudgetAccountant(5.25)  # the fits and the inner scores, not the outer
    with pytest.raises(BudgetExceededError):
        check_budget(outer, acc)
    with pytest.raises(BudgetExceededError), acc:
        outer.fit(X, y)
    assert acc.entries == ()


def test_cross_validate_of_a_search_plans_its_own_scores():
    X, y = _data()
    # 2 fits of the inner search (5 fits and 4 scores each), not the 2 scores
    # of the inner search's own scorer on the held-out splits
    acc = BudgetAccountant(2 * (5 * FIT + 4 * SCORE))
    with pytest.raises(BudgetExceededError), acc:
        sk_cross_validate(_inner_search(), X, y, cv=2, error_score="raise")
    assert acc.entries == ()


# -- A: the trees and the forest ----------------------------------------------
def test_a_forest_too_large_for_memory_is_refused_before_the_charge():
    # 2**16 trees of depth 20 were charged, then failed with a MemoryError
    # (a million trees, before n_estimators was capped): the size is public,
    # so it is refused before the charge
    n_estimators, max_depth, classes = 2**16, 20, [0, 1]
    X, y = _data(20)
    acc = BudgetAccountant(10.0)
    forest = PrivateRandomForestClassifier(
        n_estimators, max_depth=max_depth, bounds=(-1, 1), classes=classes,
        accountant=acc,
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"leaf counts .*Lower max_depth"):
        forest.fit(X, y)
    assert acc.entries == ()


@pytest.mark.parametrize("tree_rows", ["all", "disjoint"])
def test_the_counts_take_memory_of_the_rows_not_of_rows_times_trees(tree_rows):
    # after the charge, the leaf of every row in every tree was one
    # (n_estimators, n_samples) matrix: 1,000 trees x 4,000 rows peaked at
    # some 100 MB, and 2**25 trees of depth 0 (accepted) could not fit
    import tracemalloc

    X, y = _data(4000)
    forest = PrivateRandomForestClassifier(
        1000, max_depth=0, bounds=(-1, 1), classes=[0, 1], tree_rows=tree_rows,
        accountant=BudgetAccountant(), random_state=0,
    )  # fmt: skip
    tracemalloc.start()
    try:
        forest.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16e6  # 1000 x 4000 x 8 bytes = 32 MB for one such matrix


def _tight(composition):
    if composition == "zcdp":
        return BudgetAccountant(1000.0, 1e-2, slack=5e-3, composition="zcdp")
    return BudgetAccountant(1000.0, 1e-2, composition="pld")


@pytest.mark.parametrize(
    "composition, mechanism, classes, bounds",
    [
        ("zcdp", "gaussian", [0, 1], (-1, 1)),  # planned 7.41, recorded 1.27
        ("zcdp", "gaussian", None, None),  # planned 6.49, recorded 1.60
        ("zcdp", "laplace", [0, 1], None),  # planned 7.41, recorded 5.03
        ("pld", "gaussian", [0, 1], (-1, 1)),  # the plan could not be spent
    ],
)
def test_a_forests_fit_cost_is_what_a_tight_accountant_records(
    composition, mechanism, classes, bounds
):
    # fit_cost gave one (epsilon, delta) pair without the mechanism: a zCDP
    # accountant planned up to 6 times what the fit records, and a PLD one
    # refused to plan a Gaussian forest that it fits
    X, y = _data(1000)  # the label selection releases both labels
    forest = PrivateRandomForestClassifier(
        3, epsilon=2.0, max_depth=2, bounds=bounds, classes=classes,
        mechanism=mechanism, delta=1e-5, random_state=0,
    )  # fmt: skip
    acc = _tight(composition)
    forest.set_params(accountant=acc).fit(X, y)
    plan = _tight(composition)
    plan.spend(fit_cost(forest, X.shape[1]), label="plan")
    assert acc.total() == plan.total()


# -- attacks that held (kept as guards) ---------------------------------------
def _ledger(acc):
    return [(e.label, e.epsilon, e.delta) for e in acc.entries]


@pytest.mark.parametrize("bounds", [(0, 1), None])
def test_nanquantile_reads_the_count_of_present_values_only_through_its_release(
    bounds,
):
    # 7 columns at epsilon=0.1 (shares that must sum within an exact budget):
    # no present value, one, all; the ledger, the warnings and the shape are
    # the same, and nothing raises after the charge
    from skdp import tools

    rng = np.random.default_rng(0)
    full = rng.uniform(0, 1, size=(40, 7))
    ledgers = []
    for n_present in (0, 1, 40):
        X = full.copy()
        X[n_present:] = np.nan
        acc = BudgetAccountant(0.1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = tools.nanquantile(
                X, [0.25, 0.5], epsilon=0.1, bounds=bounds, axis=0,
                accountant=acc, random_state=0,
            )  # fmt: skip
        assert out.shape == (2, 7) and np.isfinite(out).all()
        ledgers.append(_ledger(acc))
    assert ledgers[0] == ledgers[1] == ledgers[2]
    assert len(ledgers[0]) == 7


def test_nanquantile_names_a_column_share_that_rounds_to_zero():
    # 3.5e-323 over 10 columns: each share rounded to 0, and the refusal
    # blamed PrivateQuantile's 'epsilon' parameter, which the caller never set
    from skdp import tools

    X = np.random.default_rng(0).uniform(0, 1, size=(20, 10))
    acc = BudgetAccountant(1.0)
    with pytest.raises(ValueError, match=r"nanquantile: epsilon=3\.5e-323 .* 10 col"):
        tools.nanquantile(X, 0.5, epsilon=3.5e-323, bounds=(0, 1), axis=0,
                          accountant=acc)  # fmt: skip
    assert acc.entries == ()


def test_millions_of_small_trees_are_refused_before_the_charge():
    # 2**25 trees of depth 0 hold 2**26 counts (accepted), but a fitted
    # tree object each in estimators_ (gigabytes) and a pass over the rows
    # each, after the charge
    X, y = _data(20)
    acc = BudgetAccountant(10.0)
    forest = PrivateRandomForestClassifier(
        2**16 + 1, max_depth=0, bounds=(-1, 1), classes=[0, 1], accountant=acc
    )
    with pytest.raises(ValueError, match="n_estimators"):
        forest.fit(X, y)
    assert acc.entries == ()
