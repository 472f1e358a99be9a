"""accountant=None in a worker process: the accountant in effect there, the
one an estimator carried from its owner, or a refusal before any charge.

A function called in a worker (joblib's loky, multiprocessing spawn or
fork) receives only its arguments, so the owner's default cannot reach it
unless ``fork`` copied a block in effect; the worker's own automatic default
would record spends that nobody sees. Each test here is one pool and a few
releases (about 1-3 s each, most of it starting the pool).
"""

import multiprocessing

import numpy as np
import pytest
from joblib import Parallel, delayed

import skdp
from skdp import BudgetAccountant, PrivateMean
from skdp.accounting import _default
from skdp.exceptions import AccountantCopyError, BudgetExceededError
from skdp.metrics import private_accuracy_score

X = np.full(20, 0.5)
Y = np.array([0, 1] * 10)
NOT_REACHED = "accountant=None in a worker process"

# a constant column at ε = 0.25: the releases are noise, which is not the point
pytestmark = pytest.mark.filterwarnings("ignore::skdp.exceptions.NoiseDominatedWarning")


def _releases(accountant=None):
    """In a worker: a tool built on an estimator, a tool that charges itself,
    a metric and an estimator made here, each at ε = 0.25; the outcomes, and
    what the worker's own automatic default recorded."""
    releases = (
        lambda: skdp.tools.mean(X, 0.25, bounds=(0, 1), accountant=accountant),
        lambda: skdp.tools.count_nonzero(X, 0.25, accountant=accountant),
        lambda: private_accuracy_score(
            Y, Y, labels=[0, 1], epsilon=0.25, accountant=accountant
        ),
        lambda: PrivateMean(0.25, bounds=(0, 1), accountant=accountant).fit(
            X.reshape(-1, 1)
        ),
    )
    outcomes = []
    for release in releases:
        try:
            release()
        except AccountantCopyError as exc:
            named = NOT_REACHED in str(exc) and "accountant=acc" in str(exc)
            outcomes.append("refused" if named else repr(exc))
        except BudgetExceededError:
            outcomes.append("over budget")
        else:
            outcomes.append("released")
    hidden = sum(len(acc.entries) for acc in _default._auto_default)
    return outcomes, hidden


REFUSED = (["refused"] * 4, 0)


def test_in_process_nothing_changes():
    acc = BudgetAccountant(1.0)
    with acc:
        assert _releases()[0] == ["released"] * 4
    assert acc.total() == (1.0, 0.0)
    automatic = skdp.default_accountant()  # outside a block: it records
    before = len(automatic.entries)
    assert _releases()[0] == ["released"] * 4
    assert len(automatic.entries) > before


def _as_a_worker(monkeypatch):
    """This process, seen as a pool's worker with nothing put in effect."""
    monkeypatch.setattr(multiprocessing, "parent_process", lambda: object())
    monkeypatch.setattr(_default, "_auto_default", [])
    monkeypatch.setattr(_default, "_process_default", [])


def test_a_worker_with_nothing_in_effect_refuses_before_charging(monkeypatch):
    # the rule itself, without a pool: what a worker sees
    _as_a_worker(monkeypatch)
    assert _releases() == REFUSED
    acc = BudgetAccountant(0.5)
    with acc:  # a block entered in the worker is in effect there
        outcomes, hidden = _releases()
    assert outcomes == ["released"] * 2 + ["over budget"] * 2
    assert hidden == 0 and acc.total() == (0.5, 0.0)


def test_loky_workers_refuse_and_spend_an_accountant_given_through_the_owner():
    acc = BudgetAccountant(1.0)
    with acc:
        refused = Parallel(n_jobs=2)(delayed(_releases)() for _ in range(2))
        assert refused == [REFUSED] * 2
        assert acc.entries == ()
        given = Parallel(n_jobs=2)(delayed(_releases)(acc) for _ in range(2))
    outcomes = [o for worker, _ in given for o in worker]
    # 8 releases of 0.25 on a budget of 1.0: exactly 4 recorded, in the owner
    assert sorted(outcomes) == ["over budget"] * 4 + ["released"] * 4
    assert acc.total() == (1.0, 0.0)


def test_a_spawn_worker_refuses_and_spends_an_accountant_given():
    acc = BudgetAccountant(0.5)
    with acc, multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.apply(_releases) == REFUSED
        outcomes, hidden = pool.apply(_releases, (acc,))
    assert outcomes == ["released"] * 2 + ["over budget"] * 2
    assert hidden == 0 and acc.total() == (0.5, 0.0)


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(),
    reason="the fork start method exists on POSIX only",
)
def test_a_fork_worker_spends_the_block_it_inherited_and_refuses_without_one():
    acc = BudgetAccountant(1.0)
    fork = multiprocessing.get_context("fork")
    with acc, fork.Pool(1) as pool:  # forked inside the block: inherited
        assert pool.apply(_releases) == (["released"] * 4, 0)
    assert acc.total() == (1.0, 0.0)
    owner_default = skdp.default_accountant()
    before = len(owner_default.entries)
    with fork.Pool(1) as pool:  # forked outside any block
        assert pool.apply(_releases) == REFUSED
    assert len(owner_default.entries) == before


def test_describe_and_the_privacy_utility_curve_refuse_in_a_worker_too(monkeypatch):
    from skdp import PrivateGaussianNB
    from skdp._describe import describe
    from skdp.model_selection import privacy_utility_curve

    _as_a_worker(monkeypatch)
    with pytest.raises(AccountantCopyError, match=r"describe \(skdp describe\) was"):
        describe({"a": np.linspace(0, 1, 50)}, bounds={"a": (0, 1)})
    model = PrivateGaussianNB(classes=[0, 1], bounds=(-4, 4))
    with pytest.raises(AccountantCopyError, match="privacy_utility_curve was"):
        privacy_utility_curve(
            model, np.zeros((40, 1)), Y[:20].repeat(2), epsilons=[0.5], n_repeats=1
        )
    assert _default._auto_default == []  # no default was even created
