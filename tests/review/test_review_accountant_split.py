"""Adversarial review of the accountant's split into rules, rounding, default
and context modules, and of the worker-default rule.

The split must change no behaviour: a differential fuzz applies the same
random spends and checks to the accountant as it was before the split (its
module, kept verbatim as ``accountant_before_split.py.txt`` and loaded at
test time) and to the split one, for each composition, and asks for the same
decisions, the same refusal messages, the same entries and the same
``total()`` and ``remaining()``, bit for bit.

The worker-default rule: a charge with ``accountant=None`` in a worker goes
to an accountant the owner sees, or is refused before anything is charged.
What an estimator or scorer carries when pickled must be the default in
effect where it is pickled, never a stale one nor a worker's own recorder.
"""

import importlib.util
import math
import multiprocessing
import pickle
import random
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from joblib import Parallel, delayed, parallel_config
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV

import skdp
import skdp.base
from skdp import BudgetAccountant, PrivateLogisticRegression, PrivateMean
from skdp.accounting import PrivacyCost, _channel, _context, _default
from skdp.exceptions import AccountantCopyError, BudgetExceededError
from skdp.mechanisms import gaussian_cost, laplace_cost, selection_cost, svt_cost
from skdp.mechanisms._additive import additive_cost
from skdp.metrics import _scorer, make_private_scorer

OLD_SOURCE = Path(__file__).with_name("accountant_before_split.py.txt")
TINY = 5e-324  # the smallest subnormal


@pytest.fixture(scope="module")
def before_split():
    """``BudgetAccountant`` as it was before the split (commit 426e7dd)."""
    name = "skdp_review_accountant_before_split"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        exec(compile(OLD_SOURCE.read_text(), str(OLD_SOURCE), "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    return module.BudgetAccountant


def _outcome(call):
    """What a call did: its value (floats by repr, entries without their
    time), or the type and message of what it raised."""
    try:
        value = call()
    except Exception as exc:  # the exception is the outcome
        return type(exc).__name__, str(exc)
    if isinstance(value, tuple) and value and hasattr(value[0], "label"):
        return "entries", [(e.label, repr(e.epsilon), repr(e.delta)) for e in value]
    if hasattr(value, "label"):
        return "entry", (value.label, repr(value.epsilon), repr(value.delta))
    if isinstance(value, tuple):
        return "value", tuple(repr(v) for v in value)
    return "value", repr(value)


def _near(rng, value):
    """``value`` or a float a few ulps either side (never negative)."""
    for _ in range(rng.randrange(4)):
        value = math.nextafter(value, math.inf if rng.random() < 0.5 else 0.0)
    return value


def _epsilon(rng, left):
    kind = rng.randrange(9)
    if kind == 0:
        return 0.0
    if kind == 1:
        return rng.choice([TINY, 1e-310, 2.2250738585072014e-308])
    if kind == 2 and math.isfinite(left):
        return _near(rng, left)  # exactly what remains, or an ulp beside it
    if kind == 3:
        return round(rng.uniform(0.01, 0.5), rng.randrange(1, 4))
    if kind == 4:
        return rng.choice([0.1, 0.2, 0.3, 1 / 3, 0.7])
    if kind == 5:
        return rng.choice([1e300, 2.0, 10.0])
    return rng.uniform(0.0, 0.4)


def _delta(rng, left):
    kind = rng.randrange(7)
    if kind <= 1:
        return 0.0
    if kind == 2:
        return rng.choice([TINY, 1e-310])
    if kind == 3:
        return _near(rng, left)
    if kind == 4:
        return rng.choice([1e-7, 1e-6, 3e-6, 1e-5])
    return rng.uniform(0.0, 2e-6)


def _cost(rng, eps, delta, gaussian=False):
    """A cost from the mechanisms' vocabulary (``None`` if it cannot be made);
    with ``gaussian``, nine times in ten a Gaussian one."""
    if gaussian:  # a Gaussian release needs both parts positive
        eps, delta = eps or 0.1, delta or 1e-7
    gaussians = [
        lambda: gaussian_cost(eps, delta),
        lambda: additive_cost(eps, delta),
        lambda: gaussian_cost(eps, delta) + gaussian_cost(eps / 3, delta / 2),
    ]
    makers = [
        lambda: gaussian_cost(eps, delta),
        lambda: additive_cost(eps, delta),
        lambda: laplace_cost(eps),
        lambda: selection_cost(eps),
        lambda: selection_cost(eps, noise="exponential"),
        lambda: svt_cost(eps),
        lambda: PrivacyCost(eps, delta),
        lambda: PrivacyCost(eps, delta, rho=eps * eps / 8),
        lambda: gaussian_cost(eps, delta) + laplace_cost(eps / 2),
    ]
    if gaussian and rng.random() < 0.9:
        makers = gaussians
    try:
        return rng.choice(makers)()
    except (ValueError, TypeError, OverflowError):
        return None


def _operations(rng, n, gaussian=False):
    """``n`` random operations, each a function of (accountant, left) where
    ``left`` is the remaining() of the accountant before the split."""
    ops = []
    for i in range(n):
        kind = rng.randrange(7)
        if gaussian and kind in (0, 1, 5):
            kind = rng.choice([2, 3, 4])
        seed = rng.randrange(1 << 30)

        def op(acc, left, kind=kind, seed=seed, i=i):
            r = random.Random(seed)
            eps, delta = _epsilon(r, left[0]), _delta(r, left[1])
            if kind in (0, 1):
                return lambda: acc.spend(eps, delta, label=f"Est{i % 3}: step")
            if kind == 2:
                cost = _cost(r, eps, delta, gaussian)
                what = cost if cost is not None else eps
                return lambda: acc.spend(what, label=f"Est{i % 3}: cost")
            if kind == 3:
                items = []
                for j in range(r.randrange(1, 4)):
                    e, d = _epsilon(r, left[0] / 2), _delta(r, left[1] / 2)
                    costly = gaussian or r.random() < 0.5
                    cost = _cost(r, e, d, gaussian) if costly else None
                    item = (f"Many: {j}", cost) if cost else (f"Many: {j}", e, d)
                    items.append(item)
                return lambda: acc.spend_many(items)
            if kind == 4:
                cost = _cost(r, eps, delta, gaussian)
                return lambda: acc.check(cost if cost is not None else eps, delta)
            if kind == 5:
                return lambda: acc.check(eps, delta)
            return lambda: acc.spend(-eps - 1.0, label="bad")  # invalid: refused

        ops.append(op)
    return ops


BUDGETS = [
    # basic
    dict(epsilon=1.0),
    dict(epsilon=1.0, delta=1e-5),
    dict(epsilon=0.3, delta=TINY),
    dict(epsilon=TINY, delta=1e-310),
    dict(epsilon=0.0),
    dict(epsilon=math.inf, delta=1.0),
    dict(epsilon=1e300, delta=1.0),
    # advanced
    dict(epsilon=2.0, delta=1e-5, slack=1e-6),
    dict(epsilon=1.0, delta=1e-5, slack=1e-5),
    dict(epsilon=3.0, delta=1e-3, slack=TINY, composition="advanced"),
    dict(epsilon=math.inf, delta=1e-5, slack=1e-6),
    # zcdp
    dict(epsilon=1.0, delta=1e-5, composition="zcdp"),
    dict(epsilon=2.0, delta=1e-5, slack=4e-6, composition="zcdp"),
    dict(epsilon=math.inf, delta=1e-5, composition="zcdp"),
    # pld
    dict(epsilon=1.0, delta=1e-5, composition="pld"),
    dict(epsilon=0.25, delta=1e-9, composition="pld"),
    dict(epsilon=math.inf, delta=1e-5, composition="pld"),
]


@pytest.mark.parametrize("budget", BUDGETS, ids=repr)
def test_split_accountant_decides_exactly_as_before(before_split, budget):
    rng = random.Random(repr(sorted(budget.items())))
    old, new = before_split(**budget), BudgetAccountant(**budget)
    assert repr(new) == repr(old)
    gaussian = budget.get("composition") == "pld"
    for step, op in enumerate(_operations(rng, 25, gaussian)):
        assert _outcome(new.remaining) == _outcome(old.remaining), step
        left = old.remaining()
        assert _outcome(op(new, left)) == _outcome(op(old, left)), step
        assert _outcome(new.total) == _outcome(old.total), step
        assert [e[:3] for e in new.entries] == [e[:3] for e in old.entries]
    assert _outcome(new.remaining) == _outcome(old.remaining)
    assert repr(new) == repr(old)
    for by in ("label", "estimator"):
        assert new.report(by=by) == old.report(by=by)
    assert new._repr_html_() == old._repr_html_()


def test_file_ledgers_decide_exactly_as_before(before_split, tmp_path):
    budget = dict(epsilon=1.0, delta=1e-5, slack=1e-6)
    old = before_split(**budget, ledger=tmp_path / "old.sqlite")
    new = BudgetAccountant(**budget, ledger=tmp_path / "new.sqlite")
    rng = random.Random(7)
    for step, op in enumerate(_operations(rng, 15)):
        left = old.remaining()
        assert _outcome(op(new, left)) == _outcome(op(old, left)), step
        assert _outcome(new.total) == _outcome(old.total), step
    reopened = BudgetAccountant.open(tmp_path / "new.sqlite")
    assert _outcome(reopened.remaining) == _outcome(old.remaining)


@pytest.mark.parametrize("budget", [BUDGETS[1], BUDGETS[7], BUDGETS[11]], ids=repr)
def test_pickles_state_the_same_budget(before_split, budget, tmp_path):
    old, new = before_split(**budget), BudgetAccountant(**budget)
    assert new.__reduce__()[1][1] == old.__reduce__()[1][1]
    assert pickle.loads(pickle.dumps(new)) is new
    path = tmp_path / "ledger.sqlite"
    copy = pickle.loads(pickle.dumps(BudgetAccountant(**budget, ledger=path)))
    assert copy.ledger == str(path) and copy.remaining() == new.remaining()


def test_threads_racing_to_spend_never_overspend():
    # check-then-spend under one lock: 8 threads x 40 spends of 0.01 on 1.0
    acc = BudgetAccountant(1.0)
    accepted = []

    def spender():
        for _ in range(40):
            try:
                acc.spend(0.01, label="race")
                accepted.append(1)
            except Exception:  # refusals are expected
                pass

    threads = [threading.Thread(target=spender) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(accepted) == 100 and acc.total() == (1.0, 0.0)
    assert acc.remaining() == (0.0, 0.0)


# -- the worker-default rule ------------------------------------------------

X = np.full((20, 1), 0.5)
worker_tests = pytest.mark.filterwarnings(
    "ignore::skdp.exceptions.NoiseDominatedWarning"
)


def _as_a_worker_of_this_process(monkeypatch):
    """This process seen as a pool's worker with nothing put in effect, whose
    owner is this process (so what was pickled here was carried to it)."""
    monkeypatch.setattr(multiprocessing, "parent_process", lambda: object())
    monkeypatch.setattr(_default, "_auto_default", [])
    monkeypatch.setattr(_default, "_process_default", [])
    monkeypatch.setattr(skdp.base, "carried_here", lambda pid: True)
    monkeypatch.setattr(_channel, "carried_here", lambda pid: True)
    monkeypatch.setattr(_scorer, "carried_here", lambda pid: True)


@worker_tests
def test_a_model_pickled_once_charges_the_block_it_is_sent_from(monkeypatch):
    # A model saved and loaded (or returned by a worker) carried the default
    # of the process that pickled it, and kept it: sent to workers inside
    # `with acc:`, its fits charged that automatic default, not acc, whose
    # budget was then not enforced (found with GridSearchCV(n_jobs=2)).
    est = pickle.loads(pickle.dumps(PrivateMean(0.25, bounds=(0, 1))))
    acc = BudgetAccountant(0.5)
    with acc:
        sent = [pickle.dumps(clone(est)) for _ in range(3)]  # as a search does
    _as_a_worker_of_this_process(monkeypatch)
    pickle.loads(sent[0]).fit(X)
    pickle.loads(sent[1]).fit(X)
    with pytest.raises(BudgetExceededError):
        pickle.loads(sent[2]).fit(X)
    assert acc.total() == (0.5, 0.0)


def test_a_scorer_pickled_once_charges_the_block_it_is_sent_from(monkeypatch):
    scorer = pickle.loads(pickle.dumps(make_private_scorer("accuracy", epsilon=0.5)))
    acc = BudgetAccountant(1.0)
    with acc:
        sent = pickle.dumps(scorer)
    _as_a_worker_of_this_process(monkeypatch)
    assert pickle.loads(sent)._accountant(None) is acc


@worker_tests
def test_a_worker_sends_no_automatic_default_to_its_own_workers(monkeypatch):
    # In a worker a fit with nothing in effect is refused; the same model
    # sent on to a worker of the worker carried the worker's own automatic
    # default and was released there, recorded where nobody sees it.
    _as_a_worker_of_this_process(monkeypatch)
    est = PrivateMean(0.25, bounds=(0, 1))
    scorer = make_private_scorer("accuracy", epsilon=0.5)
    with pytest.raises(AccountantCopyError, match="accountant=None in a worker"):
        est.fit(X)
    with pytest.raises(AccountantCopyError, match="accountant=None in a worker"):
        pickle.loads(pickle.dumps(est)).fit(X)
    assert pickle.loads(pickle.dumps(scorer))._accountant(None) is None
    assert all(acc.entries == () for acc in _default._auto_default)


@worker_tests
def test_threads_in_a_block_record_every_fit_once():
    acc = BudgetAccountant(1.0)
    with acc, parallel_config(backend="threading"):
        Parallel(n_jobs=2)(
            delayed(PrivateMean(0.25, bounds=(0, 1)).fit)(X) for _ in range(4)
        )
    assert len(acc.entries) == 4 and acc.total() == (1.0, 0.0)


@pytest.mark.slow  # a pool (6 s); the first test above checks the same in-process
@pytest.mark.filterwarnings("ignore::skdp.NoiseDominatedWarning")
def test_loky_search_of_a_model_pickled_once_records_every_fit_once_in_the_block():
    X, y = make_classification(n_samples=120, n_features=4, random_state=0)
    model = PrivateLogisticRegression(
        0.5, 1e-6, classes=[0, 1], feature_bounds=(-3, 3), random_state=0
    )
    model = pickle.loads(pickle.dumps(model))  # saved and loaded
    acc = BudgetAccountant(10.0, 1e-4)
    automatic = skdp.default_accountant()
    before = len(automatic.entries)
    with acc:
        GridSearchCV(model, {"C": [0.1, 1.0]}, cv=2, n_jobs=2).fit(np.clip(X, -3, 3), y)
    assert len(acc.entries) == 2 * 2 + 1  # every candidate and split, the refit
    assert acc.total() == (2.5, 5e-06)
    assert len(automatic.entries) == before


def _blocks_across_threads(cls, default):
    """Who is the default, in a main thread and a thread started in a block,
    through nested and re-entered blocks on both sides."""
    a, b, c = cls(1.0), cls(2.0), cls(3.0)
    names = {id(a): "a", id(b): "b", id(c): "c"}

    def name(acc):
        return names.get(id(acc), "automatic")

    main, side = [name(default())], []
    entered, checked = threading.Event(), threading.Event()

    def in_a_thread():
        side.append(name(default()))  # the block of the thread that started it
        with b:
            side.append(name(default()))
            entered.set()
            checked.wait()
        side.append(name(default()))

    with a:
        main.append(name(default()))
        thread = threading.Thread(target=in_a_thread)
        thread.start()
        entered.wait()
        main.append(name(default()))  # the thread's block is not this one's
        with c, a:
            main.append(name(default()))
        main.append(name(default()))
        checked.set()
        thread.join()
        main.append(name(default()))
    main.append(name(default()))
    return main, side


def test_blocks_nested_and_across_threads_choose_as_before(before_split):
    new_trace = _blocks_across_threads(BudgetAccountant, _default.default_accountant)
    old_default = before_split.__init__.__globals__["default_accountant"]
    old_trace = _blocks_across_threads(before_split, old_default)
    assert new_trace == old_trace
    assert new_trace == (
        ["automatic", "a", "a", "a", "a", "a", "automatic"],
        ["a", "b", "a"],
    )


def test_a_forked_child_forgets_the_automatic_default_and_the_held_lock(monkeypatch):
    user, automatic = BudgetAccountant(1.0), BudgetAccountant()
    held = threading.Lock()
    held.acquire()  # another thread held it when the process forked
    monkeypatch.setattr(_context, "process_lock", held)
    monkeypatch.setattr(_default, "_process_default", [automatic])
    monkeypatch.setattr(_default, "_auto_default", [automatic])
    _default._fresh_default_after_fork()
    assert _default._process_default == [] and _default._auto_default == []
    assert _context.process_lock is not held
    assert _default._explicit_default() is None  # no deadlock on the old lock
    monkeypatch.setattr(_default, "_process_default", [user])
    monkeypatch.setattr(_default, "_auto_default", [automatic])
    _default._fresh_default_after_fork()
    assert _default._process_default == [user] and _default._explicit_default() is user


@worker_tests
def test_a_default_a_spawned_worker_sets_again_from_the_main_module_is_not_charged(
    monkeypatch,
):
    # A script's top-level set_default_accountant(acc) runs again in every
    # worker that spawn starts (it re-runs the main module): each worker had
    # an acc of its own, with the whole budget, and it took precedence over
    # the owner's acc that estimators carried: 8 fits of 0.25 by 2 spawned
    # workers were released against a budget of 1.0, none recorded by the
    # owner.
    owner = BudgetAccountant(0.5)
    with owner:
        sent = pickle.dumps(PrivateMean(0.25, bounds=(0, 1)))
    _as_a_worker_of_this_process(monkeypatch)
    monkeypatch.setattr(_default, "_reimported", [], raising=False)
    process = multiprocessing.current_process()
    monkeypatch.setattr(process, "_inheriting", True, raising=False)
    local = BudgetAccountant(0.5)  # the top level, run again in the worker
    skdp.set_default_accountant(local)
    monkeypatch.setattr(process, "_inheriting", False)  # the worker runs tasks
    assert skdp.default_accountant() is local  # it is read there
    pickle.loads(sent).fit(X)
    pickle.loads(sent).fit(X)
    with pytest.raises(BudgetExceededError):
        pickle.loads(sent).fit(X)
    with pytest.raises(AccountantCopyError, match="accountant=None in a worker"):
        PrivateMean(0.25, bounds=(0, 1)).fit(X)
    assert owner.total() == (0.5, 0.0) and local.entries == ()
    skdp.set_default_accountant(local)  # set by the worker itself: in effect
    PrivateMean(0.25, bounds=(0, 1)).fit(X)
    assert local.total() == (0.25, 0.0)
