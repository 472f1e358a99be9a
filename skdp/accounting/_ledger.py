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
CREATE TABLE IF NOT EXISTS totals (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    last_id INTEGER NOT NULL,
    sums TEXT NOT NULL
);
"""


def _encode_totals(totals):
    """The exact running sums as text (their integers can exceed 64 bits)."""
    return " ".join(str(int(value)) for value in totals)


def _decode_totals(text):
    return SpendTotals(*(int(value) for value in text.split()))


class SQLiteLedger:
    """Entries in a SQLite file shared by every thread and process that opens it.

    Each thread of each process keeps one connection (connections must not
    cross threads or processes; a forked child opens its own). The file is
    in write-ahead-log mode with ``synchronous=FULL``: a returned spend is
    durable across crashes and power loss, and readers never block the
    writer. A spend runs in a ``BEGIN IMMEDIATE`` transaction that holds the
    write lock from the read of the running totals to the commit, so threads
    and processes sharing the file can never overspend together. The exact
    running totals are stored in the file with the entries (same
    transaction), so opening a long ledger, checking a spend and ``total()``
    never re-read the history.

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
        self._local = threading.local()
        conn = self._connection()
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
            self._read_totals(conn)  # a ledger of an older layout is folded once
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

    def __getstate__(self):
        return {"path": self.path, "budget": self.budget}

    def __setstate__(self, state):
        self.path, self.budget = state["path"], state["budget"]
        self._local = threading.local()

    def _connection(self):
        """This thread's connection in this process (a forked child opens anew)."""
        local, pid = self._local, os.getpid()
        if getattr(local, "pid", None) != pid:
            conn = sqlite3.connect(
                self.path, timeout=self._TIMEOUT, isolation_level=None
            )
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            local.conn, local.pid = conn, pid
        return local.conn

    def read(self):
        rows = (
            self._connection()
            .execute("SELECT label, epsilon, delta, time FROM entries ORDER BY id")
            .fetchall()
        )
        return tuple(LedgerEntry(*row) for row in rows)

    def _read_totals(self, conn):
        """The stored running totals; folds any rows they do not cover yet.

        Rows are only ever appended together with the totals that cover them,
        so the fold finds rows only in a ledger written before totals were
        stored (it then stores them, inside the caller's transaction).
        """
        row = conn.execute("SELECT last_id, sums FROM totals WHERE id = 0").fetchone()
        last_id, totals = (
            (0, SpendTotals())
            if row is None
            else (
                row[0],
                _decode_totals(row[1]),
            )
        )
        rows = conn.execute(
            "SELECT id, epsilon, delta FROM entries WHERE id > ? ORDER BY id",
            (last_id,),
        ).fetchall()
        if rows or row is None:
            totals = totals.add_all((eps, delta) for _, eps, delta in rows)
            last_id = rows[-1][0] if rows else last_id
            if conn.in_transaction:
                self._write_totals(conn, last_id, totals)
        return totals

    @staticmethod
    def _write_totals(conn, last_id, totals):
        conn.execute(
            "INSERT OR REPLACE INTO totals (id, last_id, sums) VALUES (0, ?, ?)",
            (last_id, _encode_totals(totals)),
        )

    def totals(self):
        return self._read_totals(self._connection())

    def append_if(self, accept, items):
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            after = accept(self._read_totals(conn), items)
            now = time.time()
            new = [LedgerEntry(label, e, d, now) for label, e, d in items]
            pid = os.getpid()
            cursor = conn.executemany(
                "INSERT INTO entries (label, epsilon, delta, time, pid) "
                "VALUES (?, ?, ?, ?, ?)",
                [(*entry, pid) for entry in new],
            )
            last_id = conn.execute("SELECT last_insert_rowid()").fetchone()[0]
            del cursor
            self._write_totals(conn, last_id, after)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return tuple(new)
