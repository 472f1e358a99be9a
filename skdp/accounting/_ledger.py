"""Where spends are recorded: in memory, or in a durable SQLite file.

A ledger stores entries (and, for a file, the budget) and appends a batch of
entries atomically if (and only if) a predicate on the running totals of the
history accepts it. The memory ledger serialises with a lock; the SQLite ledger
with an immediate (write-locking) transaction, so that threads and processes
sharing one file can never overspend together. Both keep the totals up to date
incrementally, so a spend costs O(1) however long the history.
"""

import os
import sqlite3
import threading
import time
from typing import NamedTuple

from skdp.accounting._composition import SpendTotals

__all__ = ["LedgerEntry", "MemoryLedger", "SQLiteLedger"]


class LedgerEntry(NamedTuple):
    """One spend: its label, cost and wall-clock time (seconds since the epoch).

    Examples
    --------
    >>> from skdp import BudgetAccountant
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> entry = acc.spend(0.25, label="a count")
    >>> entry.label, entry.epsilon, entry.delta
    ('a count', 0.25, 0.0)
    """

    label: str
    epsilon: float
    delta: float
    time: float


class MemoryLedger:
    """Entries held in this process, guarded by a lock."""

    path = None

    def __init__(self, entries=()):
        self._entries = [LedgerEntry(*entry) for entry in entries]
        self._totals = SpendTotals().add_all((e.epsilon, e.delta) for e in entries)
        self._lock = threading.Lock()

    def read(self):
        with self._lock:
            return tuple(self._entries)

    def totals(self):
        with self._lock:
            return self._totals

    def append_if(self, accept, items):
        """Append ``items`` (label, epsilon, delta) if ``accept(totals, items)``.

        ``accept`` raises to refuse; nothing is appended then. It returns the
        totals after the items (computed once, for the check and the record).
        """
        with self._lock:
            after = accept(self._totals, items)
            now = time.time()
            new = [LedgerEntry(label, eps, delta, now) for label, eps, delta in items]
            self._entries.extend(new)
            self._totals = after
            return tuple(new)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS budget (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    epsilon TEXT NOT NULL,
    delta TEXT NOT NULL,
    slack TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    label TEXT NOT NULL,
    epsilon REAL NOT NULL,
    delta REAL NOT NULL,
    time REAL NOT NULL,
    pid INTEGER NOT NULL
);
"""


class SQLiteLedger:
    """Entries in a SQLite file shared by every thread and process that opens it.

    Each operation opens its own connection (connections must not cross threads
    or processes), and a spend runs in a ``BEGIN IMMEDIATE`` transaction that
    holds the database's write lock from the read of the history to the commit.
    ``synchronous=FULL`` makes a returned spend durable across crashes.

    Parameters
    ----------
    path : str or os.PathLike
        The ledger file; created if absent.
    budget : tuple of str
        ``(epsilon, delta, slack)`` as decimal strings. Stored when the file is
        created; when it exists, it must match (a ledger's budget never changes).
        ``None`` adopts the stored budget.
    """

    _TIMEOUT = 600.0

    def __init__(self, path, budget):
        self.path = os.path.abspath(os.fspath(path))
        self._cache = (0, SpendTotals())  # (last entry id folded in, totals)
        self._cache_lock = threading.Lock()
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                row = conn.execute(
                    "SELECT epsilon, delta, slack FROM budget WHERE id = 0"
                ).fetchone()
                if row is None:
                    if budget is None:
                        raise FileNotFoundError(
                            f"No budget is stored in the ledger {self.path!r}; "
                            "create it with BudgetAccountant(epsilon, delta, "
                            "ledger=...)."
                        )
                    conn.execute(
                        "INSERT INTO budget (id, epsilon, delta, slack) "
                        "VALUES (0, ?, ?, ?)",
                        budget,
                    )
                    self.budget = tuple(budget)
                else:
                    self.budget = tuple(row)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        if budget is not None and tuple(budget) != self.budget:
            eps, delta, slack = self.budget
            raise ValueError(
                f"The ledger {self.path!r} was created with the budget "
                f"epsilon={eps}, delta={delta}, slack={slack}; got "
                f"epsilon={budget[0]}, delta={budget[1]}, slack={budget[2]}. A "
                "ledger's budget cannot change: open it with "
                "BudgetAccountant.open(path), or start a new ledger file."
            )

    def _connect(self):
        conn = sqlite3.connect(self.path, timeout=self._TIMEOUT, isolation_level=None)
        conn.execute("PRAGMA synchronous = FULL")
        return _Closing(conn)

    def read(self):
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT label, epsilon, delta, time FROM entries ORDER BY id"
            ).fetchall()
        return tuple(LedgerEntry(*row) for row in rows)

    def _fold_new_rows(self, conn):
        """Totals including every row committed so far (entries only grow)."""
        with self._cache_lock:
            last_id, totals = self._cache
        rows = conn.execute(
            "SELECT id, epsilon, delta FROM entries WHERE id > ? ORDER BY id",
            (last_id,),
        ).fetchall()
        if rows:
            totals = totals.add_all((eps, delta) for _, eps, delta in rows)
            self._remember(rows[-1][0], totals)
        return totals

    def _remember(self, last_id, totals):
        with self._cache_lock:
            if last_id > self._cache[0]:
                self._cache = (last_id, totals)

    def totals(self):
        with self._connect() as conn:
            return self._fold_new_rows(conn)

    def append_if(self, accept, items):
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                totals = self._fold_new_rows(conn)
                after = accept(totals, items)
                now = time.time()
                new = [LedgerEntry(label, e, d, now) for label, e, d in items]
                conn.executemany(
                    "INSERT INTO entries (label, epsilon, delta, time, pid) "
                    "VALUES (?, ?, ?, ?, ?)",
                    [(*entry, os.getpid()) for entry in new],
                )
                last_id = conn.execute("SELECT max(id) FROM entries").fetchone()[0]
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        self._remember(last_id, after)
        return tuple(new)


class _Closing:
    """Context manager that closes a connection (sqlite3's own only commits)."""

    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        return self.conn

    def __exit__(self, *exc):
        self.conn.close()
