"""The default accountant: what ``accountant=None`` means.

In order: the accountant of the innermost ``with accountant:`` block
(:mod:`skdp.accounting._context`); the one set with
:func:`set_default_accountant`; else an automatic process-wide accountant
with an unlimited budget, created on first use, which only records.
"""

import math
import os

from skdp.accounting import _channel, _context
from skdp.accounting._budget_accountant import BudgetAccountant

__all__ = [
    "check_accountant",
    "default_accountant",
    "set_default_accountant",
]

_process_default = []  # the accountant set as the default, if any
_auto_default = []  # the unlimited default created on first use, if any


def _fresh_default_after_fork():
    """In a forked child, forget an inherited automatic default accountant.

    The automatic default (``epsilon=inf``) only records; its record lives in
    the parent, so a child gets a fresh one of its own (documented in
    :func:`default_accountant`). An accountant the user put in effect is kept:
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
            return _process_default[0]
    return None


def _is_automatic(accountant):
    return bool(_auto_default) and accountant is _auto_default[0]


def default_accountant():
    """The accountant estimators use when their ``accountant`` is ``None``.

    Inside ``with accountant:`` it is that accountant (also in threads started
    inside the block); otherwise the one set with
    :func:`set_default_accountant`; otherwise a process-wide accountant with an
    unlimited budget (``epsilon=inf, delta=1.0``), which only records (a
    process started by ``fork`` records in a fresh one of its own; an
    accountant you put in effect is inherited, and a child spends it through
    the parent, see :class:`BudgetAccountant`).
    Estimators look it up when ``fit`` is called, never when they are
    constructed.

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
    return previous
