"""Where ``with accountant:`` blocks are recorded (a leaf module).

A context variable holds the accountant of the innermost block of the
current context; a process-wide stack holds every accountant entered, for
threads whose context has none (threads do not inherit context variables, so
joblib's threading backend would otherwise miss the block's accountant).
:mod:`skdp.accounting._default` reads both; the accountant writes them on
``__enter__`` and ``__exit__``.
"""

import contextvars
import threading

__all__ = ["enter", "innermost", "leave", "reset_after_fork"]

current = contextvars.ContextVar("skdp_default_accountant", default=None)
process_lock = threading.Lock()
process_stack = []


def enter(accountant):
    """Record that ``accountant``'s block is entered in this context."""
    tokens = accountant._context.__dict__.setdefault("tokens", [])
    tokens.append(current.set(accountant))
    with process_lock:
        process_stack.append(accountant)


def leave(accountant):
    """Record that ``accountant``'s innermost block in this context ended."""
    current.reset(accountant._context.tokens.pop())
    with process_lock:
        for i in range(len(process_stack) - 1, -1, -1):
            if process_stack[i] is accountant:
                del process_stack[i]
                break


def innermost():
    """The accountant of the innermost block in effect here, or ``None``."""
    accountant = current.get()
    if accountant is not None:
        return accountant
    with process_lock:
        return process_stack[-1] if process_stack else None


def reset_after_fork():
    """A fresh lock in a forked child (another thread may hold the old one)."""
    global process_lock
    process_lock = threading.Lock()
