"""Worker processes spend an in-memory budget through its owner (issue 28, item 3).

Before issue 28 a copy of an in-memory accountant in another process refused
every spend (AccountantCopyError). Now loky, multiprocessing spawn and fork
workers spend through a channel to the owner, with the exactness and the
refusals of threads; a copy whose owner is gone refuses.
"""

import copy
import gc
import multiprocessing
import os
import pickle
import stat
import time
from fractions import Fraction

import numpy as np
import pytest
from joblib import Parallel, delayed
from sklearn.base import clone

from skdp import BudgetAccountant, PrivateMean
from skdp.accounting import _channel
from skdp.accounting._accountant import _memory_copy
from skdp.exceptions import AccountantCopyError, BudgetExceededError

HAS_FORK = "fork" in multiprocessing.get_all_start_methods()
needs_fork = pytest.mark.skipif(not HAS_FORK, reason="fork exists on POSIX only")


def _spend(accountant, epsilon=0.1, label="worker"):
    """Spend in a worker; report the outcome as plain values."""
    try:
        entry = accountant.spend(epsilon, label=label)
    except BudgetExceededError as exc:
        return "refused", str(exc)
    return "spent", (entry.label, entry.epsilon, os.getpid())


def _spend_many(accountant, items):
    try:
        return "spent", len(accountant.spend_many(items))
    except BudgetExceededError as exc:
        return "refused", str(exc)


def _recorded_sum(accountant):
    return sum(Fraction(repr(e.epsilon)) for e in accountant.entries)


@pytest.fixture(scope="module")
def spawn_pool():
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        yield pool


@pytest.fixture(scope="module")
def fork_pool():
    if not HAS_FORK:
        pytest.skip("fork exists on POSIX only")
    with multiprocessing.get_context("fork").Pool(2) as pool:
        yield pool


def test_loky_workers_spend_the_budget_exactly():
    acc = BudgetAccountant(1.0)
    outcomes = Parallel(n_jobs=2, backend="loky")(
        delayed(_spend)(acc) for _ in range(14)
    )
    spent = [value for kind, value in outcomes if kind == "spent"]
    assert len(spent) == 10  # ten spends of 0.1 fill a budget of 1.0 exactly
    assert {pid for *_, pid in spent} != {os.getpid()}  # in the workers
    assert acc.total() == (1.0, 0.0) and len(acc.entries) == 10
    assert {e.label for e in acc.entries} == {"worker"}


@pytest.mark.parametrize("pool_name", ["spawn_pool", "fork_pool"])
def test_concurrent_spends_at_the_edge_never_overspend(request, pool_name):
    pool = request.getfixturevalue(pool_name)
    acc = BudgetAccountant(0.7)
    acc.spend(0.05, label="owner")
    # 0.05 + 0.25 x 2 + 0.1 x 1 = 0.65 and 0.05 more of ε fit; sizes mixed
    sizes = [0.25, 0.1, 0.25, 0.05, 0.25, 0.1, 0.05, 0.25] * 2
    outcomes = pool.starmap(_spend, [(acc, eps) for eps in sizes], chunksize=1)
    refused = [
        eps for eps, (kind, _) in zip(sizes, outcomes, strict=True) if kind == "refused"
    ]
    assert refused and all(
        "would exceed the privacy budget" in value
        for kind, value in outcomes
        if kind == "refused"
    )
    left = Fraction("0.7") - _recorded_sum(acc)
    assert left >= 0  # never over
    assert len(acc.entries) == 1 + len(sizes) - len(refused)
    # and never refused without need: what is left only shrinks, so it is
    # below every refused size
    assert left < Fraction(repr(min(refused)))


@pytest.mark.parametrize("pool_name", ["spawn_pool", "fork_pool"])
def test_a_refusal_in_a_worker_is_the_owners_own(request, pool_name):
    pool = request.getfixturevalue(pool_name)
    acc, twin = BudgetAccountant(1.0, 1e-6), BudgetAccountant(1.0, 1e-6)
    for accountant in (acc, twin):
        accountant.spend(0.95, 1e-7, label="earlier")
    kind, message = pool.apply(_spend, (acc, 0.1))
    with pytest.raises(BudgetExceededError) as local:
        twin.spend(0.1, label="worker")
    assert kind == "refused" and message == str(local.value)
    assert len(acc.entries) == 1


@pytest.mark.parametrize("pool_name", ["spawn_pool", "fork_pool"])
def test_spend_many_in_a_worker_is_atomic(request, pool_name):
    pool = request.getfixturevalue(pool_name)
    acc = BudgetAccountant(1.0)
    acc.spend(0.5, label="owner")
    items = [("a", 0.3), ("b", 0.3)]
    assert pool.apply(_spend_many, (acc, items))[0] == "refused"
    assert len(acc.entries) == 1  # neither part
    assert pool.apply(_spend_many, (acc, [("a", 0.25), ("b", 0.25)])) == ("spent", 2)
    assert acc.total() == (1.0, 0.0)


#: Accountants a forked child inherits through memory, not as arguments.
_INHERITED = []


def _read_inherited():
    acc = _INHERITED[0]
    return acc.total(), acc.remaining(), len(acc.entries), acc.report()


def _fit_inherited():
    X = [[0.2], [0.4], [0.9]]
    PrivateMean(0.25, bounds=(0, 1), accountant=_INHERITED[0]).fit(X)
    return os.getpid()


@needs_fork
def test_a_forked_child_uses_the_owner_not_its_stale_copy():
    acc = BudgetAccountant(1.0)
    acc.spend(0.2, label="before the fork")
    _INHERITED[:] = [acc]
    try:
        with multiprocessing.get_context("fork").Pool(1) as pool:
            acc.spend(0.3, label="after the fork")  # the child's copy has 0.2
            total, remaining, n_entries, report = pool.apply(_read_inherited)
            child = pool.apply(_fit_inherited)
    finally:
        _INHERITED.clear()
    assert (total, remaining, n_entries) == ((0.5, 0.0), (0.5, 0.0), 2)
    assert "2 spends" in report
    assert child != os.getpid()
    assert acc.total() == (0.75, 0.0) and len(acc.entries) == 3


def test_in_process_copies_are_the_accountant_itself():
    acc = BudgetAccountant(1.0)
    estimator = PrivateMean(0.5, bounds=(0, 1), accountant=acc)
    assert copy.copy(acc) is acc and copy.deepcopy(acc) is acc
    assert clone(estimator).accountant is acc
    assert copy.deepcopy(estimator).accountant is acc
    assert pickle.loads(pickle.dumps(estimator)).accountant is acc


def test_a_copy_whose_accountant_was_collected_refuses():
    acc = BudgetAccountant(1.0)
    data = pickle.dumps(acc)
    del acc
    gc.collect()
    orphan = pickle.loads(data)  # no original left: a copy
    with pytest.raises(AccountantCopyError, match="garbage-collected"):
        orphan.spend(0.1, label="lost")
    with pytest.raises(AccountantCopyError, match="garbage-collected"):
        orphan.total()


def _own_and_lend(conn):
    acc = BudgetAccountant(1.0)
    conn.send_bytes(pickle.dumps(acc))
    conn.recv()  # stay alive (and keep serving) until told to exit
    conn.send(acc.total())


@needs_fork
def test_a_copy_whose_owner_has_exited_refuses():
    parent, child = multiprocessing.Pipe()
    owner = multiprocessing.get_context("fork").Process(
        target=_own_and_lend, args=(child,)
    )
    owner.start()
    lent = pickle.loads(parent.recv_bytes())
    lent.spend(0.25, label="while the owner runs")  # recorded in the owner
    parent.send("exit")
    assert parent.recv() == (0.25, 0.0)
    owner.join(timeout=30)
    assert owner.exitcode == 0
    with pytest.raises(AccountantCopyError, match=f"process {owner.pid}.*cannot be"):
        lent.spend(0.25, label="after the owner exited")


def test_a_peer_without_the_key_is_refused_and_nothing_recorded():
    acc = BudgetAccountant(1.0)
    address, _, token, pid = _channel.reference(acc)
    assert _channel.connection.address_type(address) in ("AF_UNIX", "AF_PIPE")
    if _channel.connection.address_type(address) == "AF_UNIX":
        mode = os.stat(os.path.dirname(address)).st_mode
        assert stat.S_IMODE(mode) == 0o700  # only this user reaches the socket
    # a copy that claims another owner pid, so it cannot be the original
    forged = _memory_copy(
        BudgetAccountant, acc._budget_strings(), (address, b"0" * 32, token, pid + 1)
    )
    with pytest.raises(AccountantCopyError, match="AuthenticationError"):
        forged.spend(0.1, label="forged")
    assert acc.entries == ()


def test_the_listener_closes_when_its_last_accountant_is_collected():
    service = _channel._Service()  # this process's own may serve others
    first, second = BudgetAccountant(1.0), BudgetAccountant(1.0)
    address = service.serve(first)[0]
    assert service.serve(second)[0] == address
    thread = service.thread
    if _channel.connection.address_type(address) == "AF_UNIX":
        assert os.path.exists(address)
    del first
    gc.collect()
    assert thread.is_alive()  # still serving the second
    del second
    gc.collect()
    thread.join(timeout=10)
    assert not thread.is_alive() and service.listener is None
    assert not os.path.exists(address)


@needs_fork
def test_a_worker_gives_up_after_the_reply_timeout(monkeypatch):
    # the owner is stuck (here: its ledger's lock is held); the worker gives
    # up, refuses and releases nothing; the owner records the spend once it
    # can, so the ledger errs on the safe side (a spend not released)
    monkeypatch.setattr(_channel, "REPLY_TIMEOUT", 0.5)
    acc = BudgetAccountant(1.0)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        with acc._ledger._lock:
            waiting = pool.apply_async(_spend_or_report, (acc,))
            outcome = waiting.get(timeout=30)
        assert outcome.startswith("AccountantCopyError")
        assert "no reply within 0.5 s" in outcome
        for _ in range(100):  # the owner's service thread finishes the spend
            if acc.entries:
                break
            time.sleep(0.05)
    assert len(acc.entries) == 1


def _spend_or_report(acc):
    try:
        acc.spend(0.1, label="late")
    except AccountantCopyError as exc:
        return f"AccountantCopyError: {exc}"
    return "spent"


def test_a_model_saved_in_an_exited_process_prints_and_refuses_to_refit(tmp_path):
    # joblib.dump of a fitted model in one session, load in the next: the
    # model and its accountant print (the repr read the owner's totals and
    # raised), and only a spend refuses
    import subprocess
    import sys

    path = tmp_path / "model.pkl"
    script = (
        "import pickle, numpy as np, skdp\n"
        "acc = skdp.BudgetAccountant(5.0)\n"
        "m = skdp.PrivateMean(bounds=(0, 1), accountant=acc, random_state=0)\n"
        "m.fit(np.full((10, 2), 0.5))\n"
        f"pickle.dump(m, open({str(path)!r}, 'wb'))\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
    with open(path, "rb") as handle:
        model = pickle.load(handle)
    assert "not reachable" in repr(model)
    assert model.transform([[0.5, 0.5]]).shape == (1, 2)
    with pytest.raises(AccountantCopyError):
        model.fit(np.full((10, 2), 0.5))
