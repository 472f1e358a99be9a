"""scikit-learn's searches over private estimators: the plan checked at the
first charge, and what a refused fit says.

A ``GridSearchCV``, ``RandomizedSearchCV`` or ``cross_validate`` does not
know about privacy budgets: left alone it spends until the budget runs out
and leaves the user with no model. The first fit that charges an accountant
inside one of them therefore checks the *whole plan* first (every candidate
on every split, plus the refit: :func:`~skdp.model_selection.fit_cost`; and
the releases of private scorers that charge the same accountant,
:mod:`skdp.model_selection._scoring_cost`) against what the accountant has
left, and refuses when it does not fit, so a search that cannot finish is
refused before any fit is charged. A private scorer that charges another
accountant than the fits (or scores a non-private model) checks its own
part of the plan against its accountant at its first release. The
decision reads public quantities only: the search's parameters and the
budget.

The running search is found on the stack of the thread that charges, or, for
a fit in a worker thread, or in a worker process whose spend is applied by
the owner's accountant service (:mod:`skdp.accounting._channel`), on the
stacks of the process's other threads; it must charge this accountant
(through its estimator's ``accountant`` parameters). The plan is checked
once per ``fit`` of the search, and only before its fits have returned: a
refit whose folds were charged elsewhere (worker processes writing a file
ledger) is not planned again. A process forked inside a search's ``fit``
(joblib's multiprocessing backend) has the parent's frames on its stack;
they are the parent's to plan, and are ignored there.
"""

import functools
import gc
import inspect
import os
import sys
import threading
import weakref
from typing import NamedTuple

from skdp.exceptions import BudgetExceededError

__all__ = ["check_search_plan", "search_refusal_hint", "spend_checked"]

#: How many frames up a stack the search running a fit is looked for.
_MAX_FRAMES = 150

#: Runs (scikit-learn's per-call ``Parallel`` object) and the accountants
#: (their ids) against which their plan was checked.
_PLANNED = weakref.WeakKeyDictionary()


class _Run(NamedTuple):
    """One running search or ``cross_validate``, as read from its frame."""

    name: str  # "GridSearchCV", "cross_validate", ...
    search: object  # the BaseSearchCV, or None for cross_validate
    estimator: object  # what every fit clones
    cv: object
    marker: object  # identifies this call: a new object per call
    started: bool  # some of its fits have returned already
    scoring: object = None  # scikit-learn's scoring= (private scorers charge)
    train_scores: bool = False  # return_train_score: each split scored twice
    n_features: object = None  # columns of the X every fit sees (public shape)


@functools.cache
def _recognised_code():
    from sklearn.model_selection._search import BaseSearchCV
    from sklearn.model_selection._validation import cross_validate

    return {
        inspect.unwrap(BaseSearchCV.fit).__code__: "search",
        inspect.unwrap(cross_validate).__code__: "cross_validate",
    }


#: The frames on the stack when this process was forked: its parent's.
_INHERITED_FRAMES = frozenset()


def _note_the_parents_frames():
    global _INHERITED_FRAMES
    frame, ids = sys._getframe(), set()
    while frame is not None:
        ids.add(id(frame))  # alive (never returning) for the child's life
        frame = frame.f_back
    _INHERITED_FRAMES = frozenset(ids)


os.register_at_fork(after_in_child=_note_the_parents_frames)


def _runs_on(frame):
    """The runs on the stack that ends at ``frame``, innermost first."""
    from skdp.model_selection._curve_plan import _n_features

    codes = _recognised_code()
    runs = []
    for _ in range(_MAX_FRAMES):
        if frame is None:
            break
        kind = codes.get(frame.f_code)
        if kind and id(frame) in _INHERITED_FRAMES:
            kind = None
        if kind == "search":
            search = frame.f_locals.get("self")
            runs.append(
                _Run(
                    type(search).__name__,
                    search,
                    search.estimator,
                    search.cv,
                    frame.f_locals.get("parallel"),
                    bool(frame.f_locals.get("all_out", True)),
                    search.scoring,
                    bool(search.return_train_score),
                    _n_features(frame.f_locals.get("X")),
                )
            )
        elif kind == "cross_validate":
            local = frame.f_locals
            runs.append(
                _Run(
                    "cross_validate",
                    None,
                    local.get("estimator"),
                    local.get("cv"),
                    local.get("parallel"),
                    False,  # returns once, when all its fits are done
                    local.get("scoring"),
                    bool(local.get("return_train_score", False)),
                    _n_features(local.get("X")),
                )
            )
        frame = frame.f_back
    return runs


def _frames_of_all_threads():
    """``sys._current_frames()`` with the cyclic collector paused.

    CPython 3.11 holds the runtime's thread-list lock while it creates the
    frame objects; a collection triggered there that frees a
    ``threading.local`` (each :class:`~skdp.BudgetAccountant` holds one)
    takes the same lock again, and the process hangs (seen in the test
    suite: a refused fit, an accountant in a reference cycle).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return sys._current_frames()
    finally:
        if enabled:
            gc.enable()


def running_searches():
    """The searches running this thread's fit, innermost first.

    When this thread's stack holds none (a worker thread, or the owner's
    service thread applying a worker process's spend), those running in the
    process's other threads.
    """
    runs = _runs_on(sys._getframe(1))
    if runs:
        return runs
    me = threading.get_ident()
    for ident, frame in _frames_of_all_threads().items():
        if ident != me:
            runs.extend(_runs_on(frame))
    return runs


def _charges(estimator, accountant):
    """Whether every fit of ``estimator`` charges ``accountant`` and no other.

    Read from its ``accountant`` parameters (``None``: the default in effect).
    A composite whose steps charge different accountants is not planned
    here: its plan's cost splits between them.
    """
    from skdp.accounting._default import _explicit_default, default_accountant

    try:
        params = estimator.get_params(deep=True)
    except Exception:
        return False
    found = [
        value
        for key, value in params.items()
        if key == "accountant" or key.endswith("__accountant")
    ]
    if not found:
        return False
    default = None
    if any(value is None for value in found):
        default = _explicit_default() or default_accountant()
    return all((default if value is None else value) is accountant for value in found)


def _scorers_charge(run, accountant):
    """Whether a private scorer of the run charges ``accountant``."""
    from skdp.model_selection._scoring_cost import (
        private_scorers,
        scored_by,
        scorer_accountant,
    )

    scoring = scored_by(run.scoring, run.estimator)
    return any(
        scorer_accountant(scorer) is accountant for scorer in private_scorers(scoring)
    )


def _run_charges(run, accountant):
    """Whether the run's fits or its private scorers charge ``accountant``."""
    return _charges(run.estimator, accountant) or _scorers_charge(run, accountant)


def _plan(run, accountant=None):
    """``(cost, "n candidates × k splits + 1 refit = m fits + s private
    scores")`` of a run, from its public parameters; ``None`` when they do
    not tell. With ``accountant``, the cost is what the run charges there:
    its fits if they charge it, and the releases of its private scorers that
    charge it (:func:`~skdp.model_selection._scoring_cost.scoring_costs`)."""
    from sklearn.model_selection import GridSearchCV, RandomizedSearchCV, check_cv

    from skdp.model_selection._cost import SearchFits, fit_cost, search_plan, sum_costs
    from skdp.model_selection._scoring_cost import ANY, scored_by, scoring_costs

    fits = accountant is None or _charges(run.estimator, accountant)
    accountant = ANY if accountant is None else accountant
    try:
        if run.search is None:  # cross_validate: the estimator on every split
            n_splits = check_cv(run.cv).get_n_splits()
            one = fit_cost(run.estimator, run.n_features)
            plan = SearchFits([one] * n_splits, None, n_splits, 0)
            scores = scoring_costs(
                scored_by(run.scoring, run.estimator),
                n_splits,
                train_scores=run.train_scores,
                accountant=accountant,
            )
            cost = sum_costs((plan.costs if fits else []) + scores)
            return cost, plan.words(len(scores), fits)
        if not isinstance(run.search, GridSearchCV | RandomizedSearchCV):
            return None
        # refuses a RandomizedSearchCV without a seed
        return search_plan(run.search, run.n_features, accountant=accountant, fits=fits)
    except Exception:  # the plan is not known before the data: no early check
        return None


def check_search_plan(accountant):
    """Refuse the first charge of a search whose whole plan does not fit.

    Called before each charge (``PrivateEstimatorMixin._charge``, a private
    scorer's release, and the owner's service for a worker's spend). For
    each search on the stack whose fits or private scorers charge
    ``accountant`` and whose plan there was not checked yet in this call of
    its ``fit``: what the plan charges ``accountant`` is checked against it;
    refused, it raises :class:`~skdp.exceptions.BudgetExceededError` naming
    the plan, its cost and the fixes, and nothing is charged. A copy that
    spends through its owner is checked there.
    """
    from skdp.accounting._channel import is_remote

    if is_remote(accountant):
        return
    for run in reversed(running_searches()):  # the outermost first
        if run.marker is None:
            continue
        planned = _PLANNED.setdefault(run.marker, set())
        if id(accountant) in planned:
            continue
        if run.started:  # e.g. the refit, after folds charged in processes
            planned.add(id(accountant))
            continue
        if not _run_charges(run, accountant):
            continue
        plan = _plan(run, accountant)
        if plan is not None:
            cost, what = plan
            try:
                accountant.check(cost)
            except BudgetExceededError:
                raise BudgetExceededError(
                    _plan_refusal(run, what, cost, accountant)
                ) from None
            except (ValueError, TypeError):  # e.g. a mechanism "pld" refuses
                pass  # the fit's own charge says so
        planned.add(id(accountant))


def _plan_refusal(run, what, cost, accountant):
    left_eps, left_delta = accountant.remaining()
    if _charges(run.estimator, accountant):
        first, nothing = "fit", "Nothing was charged and no data was read."
    else:  # its fits charge no budget here: its private scores do
        first, nothing = "private score", "Nothing was charged to it."
    return (
        f"{run.name} refused before its first {first}: its whole plan, "
        f"{what}, costs epsilon={cost.epsilon:g}, delta={cost.delta:g}, and "
        f"the accountant has epsilon={left_eps:g}, delta={left_delta:g} left "
        f"of its budget (epsilon={accountant.epsilon:g}, "
        f"delta={accountant.delta:g}). {nothing} To run it, give each fit "
        "(and each private scorer) a smaller epsilon (every fit and score of "
        "the plan pays it), search fewer candidates or splits, or use a "
        "larger budget; skdp.model_selection.check_budget(search) checks a "
        "search before it starts." + _SELECTION_NOTE
    )


_SELECTION_NOTE = (
    " Note that best_params_ chosen by scores that are not private (a "
    "scikit-learn scorer, or the estimator's own score) is a release no "
    "accountant records: skdp.NoisyMaxSearchCV selects privately and "
    "charges the whole plan (or score with skdp.metrics.make_private_scorer, "
    "whose releases the plan counts)."
)


def search_refusal_hint(accountant=None):
    """A sentence for a refused fit that runs inside a scikit-learn search.

    Names the search, the cost of its whole plan when
    :func:`~skdp.model_selection.fit_cost` knows it (public parameters only:
    nothing of the data), :func:`~skdp.model_selection.check_budget` and
    :class:`~skdp.NoisyMaxSearchCV`. Empty outside a search, and for a copy
    that spends through its owner (the owner adds it).
    """
    from skdp.accounting._channel import is_remote

    if accountant is not None and is_remote(accountant):
        return ""
    runs = running_searches()
    if accountant is not None:
        runs = [run for run in runs if _run_charges(run, accountant)] or runs
    if not runs:
        return ""
    run = runs[0]
    plan = _plan(run, accountant)
    if plan is None and run.search is None:
        whole = "cross_validate fits the estimator once on every split"
    elif plan is None:
        whole = f"the whole {run.name} fits every candidate on every fold, then refits"
    else:
        cost, what = plan
        whole = (
            f"the whole {run.name}, {what}, costs epsilon={cost.epsilon:g}, "
            f"delta={cost.delta:g}"
        )
    return (
        f" This fit is one of {run.name}'s: {whole}. Check a search before it "
        "starts with skdp.model_selection.check_budget(search), which refuses "
        "before any fit." + _SELECTION_NOTE
    )


def spend_checked(accountant, items):
    """Record a worker process's validated spend ``items`` in ``accountant``
    (its owner's), exactly as a fit in this process would be charged: the
    running search's plan checked first, the hint added to a refusal."""
    check_search_plan(accountant)
    try:
        return accountant._ledger.append_if(accountant._check_spend, items)
    except BudgetExceededError as exc:
        hint = search_refusal_hint(accountant)
        if not hint:
            raise
        raise BudgetExceededError(f"{exc}{hint}") from None
