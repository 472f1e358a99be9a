"""How a pickled :class:`~skdp.BudgetAccountant` is rebuilt.

``BudgetAccountant.__reduce__`` names one of these two functions: an
accountant with a file ledger opens the same file; one with an in-memory
ledger is the original in its owner's process and, elsewhere, a copy that
spends through the owner (:mod:`skdp.accounting._channel`). Pickles made
before the accountant's modules were split name them (and the class) in
:mod:`skdp.accounting._accountant`, which still exports them.
"""

import threading

from skdp.accounting import _channel
from skdp.accounting._ledger import SQLiteLedger

__all__ = ["_file_copy", "_memory_copy"]


def _file_copy(cls, budget, path):
    """A copy of an accountant with a file ledger: the same file."""
    self = cls.__new__(cls)
    self._set_budget(budget)
    self._ledger = SQLiteLedger(path, budget)
    self._context = threading.local()
    return self


def _memory_copy(cls, budget, ref):
    """An unpickled accountant with an in-memory ledger: in its owner's
    process the original itself; elsewhere a copy that spends through the
    owner (:mod:`skdp.accounting._channel`)."""
    original = _channel.original_in_this_process(ref)
    if original is not None:
        return original
    self = cls.__new__(cls)
    self._set_budget(budget)
    self._ledger = _channel.RemoteLedger(ref)
    self._context = threading.local()
    return self
