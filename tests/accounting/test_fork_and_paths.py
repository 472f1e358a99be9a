"""Spends never get lost through fork or a relative ledger path (issues 13, 28)."""

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from skdp import BudgetAccountant, PrivateMean, default_accountant
from skdp.exceptions import AccountantCopyError, BudgetExceededError

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(),
    reason="the fork start method exists on POSIX only",
)

X = np.random.default_rng(0).uniform(0, 1, (50, 1))


def _fit_with(accountant):
    """Fit in the child; report what happened as a plain string."""
    try:
        PrivateMean(1.0, bounds=(0, 1), accountant=accountant).fit(X)
    except AccountantCopyError:
        return "refused"
    except BudgetExceededError:
        return "over budget"
    return "spent"


def _fit_with_default():
    try:
        PrivateMean(1.0, bounds=(0, 1)).fit(X)
    except AccountantCopyError:
        return "refused"
    return "spent"


def _fork_pool(n):
    return multiprocessing.get_context("fork").Pool(n)


#: Accountants the forked children inherit through memory (not as pickled
#: arguments, which main already refused).
_INHERITED = []


def _fit_with_inherited(index):
    return _fit_with(_INHERITED[index])


def test_forked_children_spend_an_in_memory_budget_through_the_parent():
    # before issue 28 they were refused (AccountantCopyError); main before
    # issue 13: 4 + 4 children each spent 1.0 from their inherited copies of
    # two budgets of 1.0, and the parent's ledgers stayed empty
    first, second = BudgetAccountant(2.0), BudgetAccountant(2.0)
    _INHERITED[:] = [first, second]
    try:
        with _fork_pool(2) as pool:
            outcomes = pool.map(_fit_with_inherited, [0] * 4 + [1] * 4, chunksize=1)
        fork = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(2, mp_context=fork) as pool:
            outcomes += list(pool.map(_fit_with_inherited, [0, 1]))
    finally:
        _INHERITED.clear()
    # five tries on each budget of 2.0: exactly two fits each, every one
    # recorded in the parent
    assert sorted(outcomes) == ["over budget"] * 6 + ["spent"] * 4
    assert first.total() == second.total() == (2.0, 0.0)
    assert len(first.entries) == len(second.entries) == 2


def test_a_forked_child_spends_the_default_put_in_effect_by_the_parent():
    acc = BudgetAccountant(5.0)
    with acc, _fork_pool(1) as pool:
        assert pool.apply(_fit_with_default) == "spent"
    assert acc.total() == (1.0, 0.0)


def test_the_automatic_default_does_not_reach_a_forked_child():
    parent_default = default_accountant()
    before = len(parent_default.entries)
    with _fork_pool(1) as pool:
        # the unlimited recording default is not inherited; the child used
        # to record in a fresh one of its own, which nobody saw: it now
        # refuses before charging (tests/accounting/test_worker_defaults.py)
        assert pool.apply(_fit_with_default) == "refused"
    assert len(parent_default.entries) == before


def test_a_file_ledger_is_shared_with_forked_children(tmp_path):
    acc = BudgetAccountant(3.0, ledger=tmp_path / "budget.sqlite")
    acc.spend(0.5, label="parent, before the fork")
    with _fork_pool(2) as pool:
        outcomes = pool.map(_fit_with, [acc] * 4, chunksize=1)
    # 0.5 + 4 x 1.0 > 3.0: exactly two children fit, the others are refused
    # by the budget (BudgetExceededError), not by a copy error
    assert outcomes.count("spent") == 2
    assert acc.total() == (2.5, 0.0)
    assert len(acc.entries) == 3


def _fit_elsewhere(args):
    accountant, directory = args
    os.chdir(directory)
    return _fit_with(accountant)


def test_a_relative_ledger_path_is_resolved_at_construction(tmp_path, monkeypatch):
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(home)
    acc = BudgetAccountant(2.0, ledger="budget.sqlite")
    assert acc.ledger == str(home / "budget.sqlite")
    # main: the worker, in another directory, created and charged a second
    # ledger elsewhere/budget.sqlite; the original stayed empty
    with ProcessPoolExecutor(
        1, mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        assert list(pool.map(_fit_elsewhere, [(acc, elsewhere)])) == ["spent"]
    assert not (elsewhere / "budget.sqlite").exists()
    assert acc.total() == (1.0, 0.0)
    assert BudgetAccountant.open("budget.sqlite").ledger == acc.ledger
