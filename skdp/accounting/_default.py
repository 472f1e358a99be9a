"""The default accountant: what ``accountant=None`` means.

In order: the accountant of the innermost ``with accountant:`` block
(:mod:`skdp.accounting._context`); the one set with
:func:`set_default_accountant`; else an automatic process-wide accountant
with an unlimited budget, created on first use, which only records.
"""

import math
import multiprocessing
import os

from skdp.accounting import _channel, _context
from skdp.accounting._budget_accountant import BudgetAccountant
from skdp.exceptions import AccountantCopyError

__all__ = [
    "carried_default",
    "charged_default",
    "check_accountant",
    "default_accountant",
    "set_default_accountant",
]

_process_default = []  # the accountant set as the default, if any
_auto_default = []  # the unlimited default created on first use, if any
_reimported = []  # the default set while a spawned worker re-ran the main module


def _fresh_default_after_fork():
    """In a forked child, forget an inherited automatic default accountant.

    The automatic default (``epsilon=inf``) only records; its record lives in
    the parent, and a child, a worker process, charges no automatic default
    (:func:`charged_default`). An accountant the user put in effect is kept:
    if its ledger is in memory the child spends it through the parent.
    """
    _context.reset_after_fork()  # a lock held by another thread at fork
    if _auto_default and _process_default and _process_default[0] is _auto_default[0]:
        _process_default.clear()
    _auto_default.clear()


os.register_at_fork(after_in_child=_fresh_default_after_fork)


def check_accountant(accountant):
    """Return ``accountant`` if it is a :class:`BudgetAccountant`, else raise."""
    if not isinstance(accountant, BudgetAccountant):
        raise TypeError(
            "accountant must be a skdp.BudgetAccountant or None; got "
            f"{type(accountant).__name__}."
        )
    return accountant


def _explicit_default():
    """The accountant a user put in effect, or ``None``.

    Never the automatic default: a worker process that created its own
    (anything called :func:`default_accountant` there) would otherwise
    charge it instead of the accountant an estimator carried from its owner
    (:meth:`~skdp.base.PrivateEstimatorMixin._resolve_accountant`), a spend
    missing from the owner's ledger and unchecked against its budget.
    """
    accountant = _context.innermost()
    if accountant is not None:
        return accountant
    with _context.process_lock:
        if _process_default and not _is_automatic(_process_default[0]):
            if not (_reimported and _process_default[0] is _reimported[0]):
                return _process_default[0]
    return None


def _is_automatic(accountant):
    return bool(_auto_default) and accountant is _auto_default[0]


def _rerunning_the_main_module():
    """Whether this is a worker started by ``spawn`` or ``forkserver`` that is
    re-running the main module of the process that started it (what a script
    does at its top level, outside ``if __name__ == "__main__":``, runs again
    in every such worker)."""
    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


def default_accountant():
    """The accountant estimators use when their ``accountant`` is ``None``.

    Inside ``with accountant:`` it is that accountant (also in threads started
    inside the block); otherwise the one set with
    :func:`set_default_accountant`; otherwise a process-wide accountant with an
    unlimited budget (``epsilon=inf, delta=1.0``), which only records.
    Estimators look it up when ``fit`` is called, never when they are
    constructed.

    **In a worker process** (started by joblib's ``loky``, ``multiprocessing``
    or ``concurrent.futures``) nothing is charged to this process-wide
    recorder, which nobody in the process that started the worker would see
    (this function still returns it there, for reading): a charge with
    ``accountant=None`` in a worker goes to the accountant in effect
    in the worker (a ``with`` block or :func:`set_default_accountant`
    inherited through ``fork``, or set in the worker, but not one a script's
    top level sets again when ``spawn`` re-runs it there: that one has a
    budget of its own that nobody else sees), else to the default an
    estimator or private scorer carried when it was pickled in the process
    that started the worker, else it is refused before anything is charged
    (:class:`~skdp.exceptions.AccountantCopyError`, naming the fix: pass
    ``accountant=`` explicitly). A copy of an in-memory accountant in a
    worker spends through the process that owns it (see
    :class:`BudgetAccountant`).

    Returns
    -------
    accountant : BudgetAccountant

    Examples
    --------
    >>> from skdp import BudgetAccountant, default_accountant
    >>> acc = BudgetAccountant(epsilon=2.0)
    >>> with acc:
    ...     default_accountant() is acc
    True
    >>> default_accountant() is acc
    False
    """
    accountant = _explicit_default()
    if accountant is not None:
        return accountant
    with _context.process_lock:
        if not _process_default:
            _process_default.append(BudgetAccountant(math.inf, 1.0))
            _auto_default[:] = _process_default
            _channel.exempt_from_fork(_process_default[0])
        return _process_default[0]


def in_a_worker():
    """Whether a ``multiprocessing``-style pool started this process (joblib's
    ``loky``, ``multiprocessing`` with any start method, ``concurrent.futures``
    process pools): they all record the parent process."""
    return multiprocessing.parent_process() is not None


def charged_default(caller):
    """The accountant a charge by ``caller`` with ``accountant=None`` goes to.

    One put in effect here (a ``with`` block, :func:`set_default_accountant`);
    else, outside worker processes, :func:`default_accountant`. In a worker
    the automatic default would record a spend that the process that started
    the worker never sees (a function called there receives only its
    arguments: nothing carries that process's default to it), so the charge
    is refused before anything is spent. Estimators and private scorers look
    up the default they carried from their owner first.
    """
    accountant = _explicit_default()
    if accountant is not None:
        return accountant
    if in_a_worker():
        raise AccountantCopyError(_no_default_in_a_worker(caller))
    return default_accountant()


def carried_default(carried):
    """What an estimator or private scorer pickled here with
    ``accountant=None`` carries to a worker, as ``(accountant, pid)``, or
    ``None``.

    The default it would charge here and now: one put in effect here; else
    the default it carried into this process (``carried``, when that still
    applies here, see :func:`~skdp.accounting._channel.carried_here`); else,
    outside worker processes, :func:`default_accountant`; else nothing (a
    worker's automatic default would record where nobody sees, so a worker
    started from here refuses as this one does). Never an earlier carried
    default that no longer applies: a model pickled once (saved, or returned
    by a worker) and sent to workers inside ``with acc:`` must charge ``acc``.
    """
    accountant = _explicit_default()
    if accountant is not None:
        return accountant, os.getpid()
    if carried is not None and _channel.carried_here(carried[1]):
        return carried
    if in_a_worker():
        return None
    return default_accountant(), os.getpid()


def _no_default_in_a_worker(caller):
    return (
        f"{caller} was called with accountant=None in a worker process (pid "
        f"{os.getpid()}, started by process {os.getppid()}), where no "
        "accountant is in effect: the default accountant of the process that "
        "started the worker (its `with accountant:` block, "
        "set_default_accountant, or its automatic default) does not reach a "
        "function called here, and this worker's own default would record the "
        "spend where nobody sees it. Nothing was charged. Pass the accountant "
        "explicitly, accountant=acc: its copy in the worker spends through the "
        "process that owns it. (Estimators and private scorers created in that "
        "process carry its default when they are sent to workers.)"
    )


def set_default_accountant(accountant):
    """Make ``accountant`` the process-wide default, and return the previous one.

    ``with accountant:`` blocks take precedence over it.

    Parameters
    ----------
    accountant : BudgetAccountant

    Returns
    -------
    previous : BudgetAccountant

    Examples
    --------
    >>> from skdp import BudgetAccountant, default_accountant, set_default_accountant
    >>> acc = BudgetAccountant(epsilon=2.0)
    >>> previous = set_default_accountant(acc)
    >>> default_accountant() is acc
    True
    >>> _ = set_default_accountant(previous)  # restore
    """
    if not isinstance(accountant, BudgetAccountant):
        raise TypeError(
            f"accountant must be a BudgetAccountant; got {type(accountant).__name__}."
        )
    previous = default_accountant()
    with _context.process_lock:
        _process_default[:] = [accountant]
        # A script's top-level set_default_accountant(acc), run again in a
        # spawned worker, sets a new accountant of the worker's own with a
        # full budget of its own: it is read there, but charges with
        # accountant=None go where they would without it (the default an
        # estimator carried from the owner, else a refusal).
        _reimported[:] = [accountant] if _rerunning_the_main_module() else []
    return previous
