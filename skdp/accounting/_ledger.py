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

from skdp.accounting._composition import (
    TIGHT_COMPOSITIONS,
    SpendTotals,
    decimal_units,
)
from skdp.accounting._cost import counted_or_stated
from skdp.accounting._ledger_schema import (
    COUNTED_COLUMNS,
    ENTRY_COLUMNS,
    SCHEMA,
    add_missing_columns,
    decode_sums,
    decode_totals,
    encode_sums,
    entry_fields,
    entry_row,
    full_budget,
    same_budget,
)

__all__ = [
    "LedgerEntry",
    "MemoryLedger",
    "SQLiteLedger",
    "add_to_labels",
]


class LedgerEntry(NamedTuple):
    """One spend: its label, cost and wall-clock time (seconds since the epoch).

    ``rho``, ``noise_multiplier`` and ``mechanism`` say what the mechanism was
    (:class:`~skdp.accounting.PrivacyCost`), for the tight compositions;
    ``None`` when the charge stated only ``(epsilon, delta)``. The cost is
    the one stated for the charge's ``unit`` (``"row"``, or ``"group"`` of at
    most ``group_rows`` rows). When the accountant counts its budget in the
    other unit, ``counted`` is the converted cost ``(epsilon, delta, rho,
    noise_multiplier)`` that the budget counted (``None``: counted as
    stated); :attr:`cost` is what the totals add. Entries recorded before
    units were recorded read as ``"row"``.

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
    rho: float | None = None
    noise_multiplier: float | None = None
    mechanism: str | None = None
    unit: str = "row"
    group_rows: int | None = None
    counted: tuple | None = None

    cost = property(
        counted_or_stated,
        doc="``(epsilon, delta, rho, noise_multiplier)``, as totals add them: "
        "the counted cost (in the accountant's unit).",
    )


def add_to_labels(labels, entries):
    """Add entries to per-label exact sums ``{label: (count, eps, delta)}``
    of their counted costs (decimal units,
    :func:`~skdp.accounting._composition.decimal_units`), kept in order of
    first appearance; returns ``labels``."""
    for entry in entries:
        count, eps, delta = labels.get(entry.label, (0, 0, 0))
        counted_eps, counted_delta = entry.cost[:2]
        labels[entry.label] = (
            count + 1,
            eps + decimal_units(counted_eps),
            delta + decimal_units(counted_delta),
        )
    return labels


class MemoryLedger:
    """Entries held in this process, guarded by a lock.

    ``tight``: whether the running totals include the sums of zCDP and PLD
    composition (an accountant with basic or advanced composition skips them).
    """

    path = None

    def __init__(self, entries=(), *, tight=False):
        self._entries = [LedgerEntry(*entry) for entry in entries]
        costs = (e.cost for e in self._entries)
        self._totals = SpendTotals().add_all(costs, tight=tight)
        self._labels = add_to_labels({}, self._entries)
        self._lock = threading.Lock()

    def read(self):
        with self._lock:
            return tuple(self._entries)

    def totals(self):
        with self._lock:
            return self._totals

    def label_totals(self):
        """``(totals, {label: (count, epsilon_units, delta_units)})`` together."""
        with self._lock:
            return self._totals, dict(self._labels)

    def append_if(self, accept, items):
        """Append ``items`` if ``accept(totals, items)`` returns.

        Items are ``(label, epsilon, delta, rho, noise_multiplier,
        mechanism)``. ``accept`` raises to refuse; nothing is appended then.
        It returns the totals after the items (computed once, for the check
        and the record).
        """
        with self._lock:
            after = accept(self._totals, items)
            now = time.time()
            new = [
                LedgerEntry(label, *cost[:2], now, *cost[2:]) for label, *cost in items
            ]
            self._entries.extend(new)
            self._totals = after
            add_to_labels(self._labels, new)
            return tuple(new)


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
        ``(epsilon, delta, slack, composition)`` as strings. Stored when the
        file is created; when it exists, it must match (a ledger's budget
        never changes). ``None`` adopts the stored budget. A ledger written
        before compositions were stored has ``composition == ""``.
    """

    _TIMEOUT = 600.0

    def __init__(self, path, budget):
        self.path = os.path.abspath(os.fspath(path))
        self._local = threading.local()
        self._cached_totals = None
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            add_missing_columns(conn)
            row = conn.execute(
                "SELECT epsilon, delta, slack, composition, unit, "
                "max_rows_per_group FROM budget WHERE id = 0"
            ).fetchone()
            if row is None:
                if budget is None:
                    raise FileNotFoundError(
                        f"No budget is stored in the ledger {self.path!r}; "
                        "create it with BudgetAccountant(epsilon, delta, "
                        "ledger=...)."
                    )
                budget = full_budget(budget)
                conn.execute(
                    "INSERT INTO budget (id, epsilon, delta, slack, composition, "
                    "unit, max_rows_per_group) VALUES (0, ?, ?, ?, ?, ?, ?)",
                    budget,
                )
                self.budget = budget
            else:
                self.budget = tuple(row)
            self._read_totals(conn)  # a ledger of an older layout is folded once
            self._fold_labels_once(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        if budget is not None and not same_budget(full_budget(budget), self.budget):
            eps, delta, slack, composition, unit, rows = self.budget
            given = full_budget(budget)
            raise ValueError(
                f"The ledger {self.path!r} was created with the budget "
                f"epsilon={eps}, delta={delta}, slack={slack}, "
                f"composition={composition or 'basic'!r}, unit={unit!r}, "
                f"max_rows_per_group={rows or None}; got epsilon={given[0]}, "
                f"delta={given[1]}, slack={given[2]}, composition={given[3]!r}, "
                f"unit={given[4]!r}, max_rows_per_group={given[5] or None}. A "
                "ledger's budget cannot change: open it with "
                "BudgetAccountant.open(path), or start a new ledger file."
            )

    def __getstate__(self):
        return {"path": self.path, "budget": self.budget}

    def __setstate__(self, state):
        self.path, self.budget = state["path"], state["budget"]
        self._local = threading.local()
        self._cached_totals = None

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
            .execute(f"SELECT {ENTRY_COLUMNS} FROM entries ORDER BY id")
            .fetchall()
        )
        return tuple(LedgerEntry(*entry_fields(row)) for row in rows)

    def _read_totals(self, conn):
        """The stored running totals; folds any rows they do not cover yet.

        Rows are only ever appended together with the totals that cover them,
        so the fold finds rows only in a ledger written before totals were
        stored (it then stores them, inside the caller's transaction).
        """
        stored_id, newest = conn.execute(
            "SELECT (SELECT last_id FROM totals WHERE id = 0), "
            "(SELECT coalesce(max(id), 0) FROM entries)"
        ).fetchone()
        last_id, totals = 0, SpendTotals()
        if stored_id is not None:
            last_id, totals = self._stored(conn, stored_id)
            if totals is None:  # an older layout: fold every row again
                stored_id, last_id, totals = None, 0, SpendTotals()
        rows = []
        if newest > last_id:  # rows the stored totals do not cover yet
            rows = conn.execute(
                f"SELECT id, {COUNTED_COLUMNS} FROM entries WHERE id > ? ORDER BY id",
                (last_id,),
            ).fetchall()
        if rows or stored_id is None:
            tight = self.budget[3] in TIGHT_COMPOSITIONS
            totals = totals.add_all((row[1:] for row in rows), tight=tight)
            last_id = rows[-1][0] if rows else last_id
            if conn.in_transaction:
                self._write_totals(conn, last_id, totals)
        return totals

    def _stored(self, conn, last_id):
        """The stored totals as of ``last_id``: decoded once per change (the
        file's ids only grow, so a known id means known totals). ``None``
        for totals of an older layout."""
        cached = self._cached_totals
        if cached is not None and cached[0] == last_id:
            return cached
        text = conn.execute("SELECT sums FROM totals WHERE id = 0").fetchone()[0]
        totals = decode_totals(text)
        if totals is not None:
            self._cached_totals = (last_id, totals)
        return last_id, totals

    @staticmethod
    def _write_totals(conn, last_id, totals):
        conn.execute(
            "INSERT OR REPLACE INTO totals (id, last_id, sums) VALUES (0, ?, ?)",
            (last_id, encode_sums(totals)),
        )

    def totals(self):
        return self._read_totals(self._connection())

    def _fold_labels_once(self, conn):
        """Per-label sums for a ledger written before they were stored."""
        if conn.execute("SELECT count(*) FROM labels").fetchone()[0]:
            return
        rows = conn.execute(
            "SELECT id, label, coalesce(counted_epsilon, epsilon), "
            "coalesce(counted_delta, delta) FROM entries ORDER BY id"
        ).fetchall()
        first = {}
        for row_id, label, _, _ in rows:
            first.setdefault(label, row_id)
        entries = [LedgerEntry(label, e, d, 0.0) for _, label, e, d in rows]
        self._write_labels(conn, add_to_labels({}, entries), first)

    @staticmethod
    def _insert_entries(conn, new):
        """Insert the entries; the id of the last (ids are consecutive: the
        write lock is held)."""
        marks = ", ".join("?" * (len(ENTRY_COLUMNS.split(",")) + 1))
        insert = f"INSERT INTO entries ({ENTRY_COLUMNS}, pid) VALUES ({marks})"
        pid = os.getpid()
        if len(new) == 1:
            return conn.execute(insert, (*entry_row(new[0]), pid)).lastrowid
        conn.executemany(insert, [(*entry_row(entry), pid) for entry in new])
        return conn.execute("SELECT last_insert_rowid()").fetchone()[0]

    def _update_labels(self, conn, new, first_new_id):
        """Add the new entries to the stored per-label sums (same transaction)."""
        names = list(dict.fromkeys(entry.label for entry in new))
        stored = []
        for start in range(0, len(names), 500):  # below SQLite's variable limit
            chunk = names[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            stored += conn.execute(
                f"SELECT label, first_id, sums FROM labels WHERE label IN ({marks})",
                chunk,
            ).fetchall()
        labels = {label: decode_sums(sums) for label, _, sums in stored}
        first = {label: first_id for label, first_id, _ in stored}
        for offset, entry in enumerate(new):
            first.setdefault(entry.label, first_new_id + offset)
        self._write_labels(conn, add_to_labels(labels, new), first)

    @staticmethod
    def _write_labels(conn, labels, first_ids):
        conn.executemany(
            "INSERT OR REPLACE INTO labels (label, first_id, sums) VALUES (?, ?, ?)",
            [
                (label, first_ids[label], encode_sums(sums))
                for label, sums in labels.items()
            ],
        )

    def label_totals(self):
        """``(totals, {label: (count, epsilon_units, delta_units)})`` read in
        one transaction, labels in order of first appearance."""
        conn = self._connection()
        conn.execute("BEGIN")
        try:
            totals = self._read_totals(conn)
            rows = conn.execute(
                "SELECT label, sums FROM labels ORDER BY first_id"
            ).fetchall()
        finally:
            conn.execute("COMMIT")
        labels = {label: decode_sums(sums) for label, sums in rows}
        return totals, labels

    def append_if(self, accept, items):
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            after = accept(self._read_totals(conn), items)
            now = time.time()
            new = [
                LedgerEntry(label, *cost[:2], now, *cost[2:]) for label, *cost in items
            ]
            last_id = self._insert_entries(conn, new)
            self._write_totals(conn, last_id, after)
            self._update_labels(conn, new, last_id - len(new) + 1)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        # committed: a pair the file holds (set only now, from this thread's
        # own values; a rolled-back id may be reused, so never before COMMIT)
        self._cached_totals = (last_id, after)
        return tuple(new)
