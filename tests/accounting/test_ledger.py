"""The SQLite ledger: shared by processes, durable, and its budget is fixed."""

import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from skdp import BudgetAccountant, BudgetExceededError
from skdp.accounting._composition import SpendTotals


def run_python(code, *args):
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


SPENDER = """
import sys
from skdp import BudgetAccountant, BudgetExceededError
acc = BudgetAccountant(epsilon=2.0, ledger=sys.argv[1])
ok = 0
for _ in range(100):
    try:
        acc.spend(0.01, label="proc")
        ok += 1
    except BudgetExceededError:
        pass
print(ok)
"""


def test_processes_spending_at_once_never_exceed_the_total(tmp_path):
    path = tmp_path / "ledger.sqlite"
    BudgetAccountant(epsilon=2.0, ledger=path)
    procs = [run_python(SPENDER, path) for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    successes = sum(int(out) for out, _ in outs)
    acc = BudgetAccountant.open(path)
    assert successes == len(acc.entries) == 200  # 4 x 100 tries of 0.01 in 2.0
    assert acc.total() == (2.0, 0.0)


KILLED = """
import os, signal, sys
from skdp import BudgetAccountant
acc = BudgetAccountant(epsilon=1.0, delta=1e-5, ledger=sys.argv[1])
for i in range(5):
    acc.spend(0.1, 1e-6, label=f"spend {i}")
    print("returned", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")
def test_spends_that_returned_survive_a_killed_process(tmp_path):
    path = tmp_path / "ledger.sqlite"
    proc = run_python(KILLED, path)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err
    assert out.count("returned") == 5
    # a restart of Python: the same file shows the same spent budget
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5, ledger=path)
    assert [e.label for e in acc.entries] == [f"spend {i}" for i in range(5)]
    assert acc.total() == (0.5, 5e-6)
    with pytest.raises(BudgetExceededError):
        acc.spend(0.6, label="overspend")
    acc.spend(0.5, label="the rest")
    assert acc.remaining() == (0.0, 5e-6)


def test_reopening_with_another_budget_is_refused(tmp_path):
    path = tmp_path / "ledger.sqlite"
    BudgetAccountant(epsilon=1.0, ledger=path).spend(1.0, label="all")
    with pytest.raises(ValueError, match="cannot change"):
        BudgetAccountant(epsilon=100.0, ledger=path)
    acc = BudgetAccountant.open(path)
    assert (acc.epsilon, acc.delta, acc.slack) == (1.0, 0.0, 0.0)
    with pytest.raises(BudgetExceededError):
        acc.spend(0.1, label="more")


def test_open_needs_an_existing_ledger(tmp_path):
    with pytest.raises(FileNotFoundError):
        BudgetAccountant.open(tmp_path / "missing.sqlite")


def test_ledger_path_is_reported(tmp_path):
    path = tmp_path / "ledger.sqlite"
    assert BudgetAccountant(ledger=path).ledger == os.fspath(path)
    assert BudgetAccountant().ledger is None


def test_the_file_keeps_exact_running_totals_and_is_in_wal_mode(tmp_path):
    path = tmp_path / "budget.sqlite"
    acc = BudgetAccountant(epsilon=10.0, delta=1e-5, ledger=path)
    for i in range(30):
        acc.spend(0.1, 1e-8, label=f"query {i % 3}")
    acc.spend_many([("a", 0.3, 0.0), ("b", 1e-300, 5e-324)])
    conn = sqlite3.connect(path)
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    last_id, sums = conn.execute("SELECT last_id, sums FROM totals").fetchone()
    rows = conn.execute("SELECT epsilon, delta FROM entries ORDER BY id").fetchall()
    conn.close()
    assert mode == "wal"
    assert last_id == len(rows) == 32
    stored = SpendTotals(*(int(v, 16) for v in sums.split()))
    assert stored == SpendTotals().add_all(rows, tight=False)
    # exact sums 3.3 + 1e-300 and 3e-7 + 5e-324, rounded up
    expected = (math.nextafter(3.3, math.inf), math.nextafter(3e-7, math.inf))
    assert BudgetAccountant.open(path).total() == acc.total() == expected


def test_a_ledger_without_stored_totals_is_folded_once_on_open(tmp_path):
    # the layout of earlier versions: budget and entries only
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE budget (id INTEGER PRIMARY KEY CHECK (id = 0), "
        "epsilon TEXT NOT NULL, delta TEXT NOT NULL, slack TEXT NOT NULL);"
        "CREATE TABLE entries (id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT "
        "NOT NULL, epsilon REAL NOT NULL, delta REAL NOT NULL, time REAL NOT "
        "NULL, pid INTEGER NOT NULL);"
        "INSERT INTO budget VALUES (0, '1.0', '0.0', '0.0');"
    )
    conn.executemany(
        "INSERT INTO entries (label, epsilon, delta, time, pid) VALUES (?, ?, ?, 0, 0)",
        [("old", 0.1, 0.0)] * 7,
    )
    conn.commit()
    conn.close()
    acc = BudgetAccountant.open(path)
    assert acc.total() == (0.7, 0.0)
    acc.spend(0.3, label="new")
    with pytest.raises(BudgetExceededError):
        acc.spend(1e-9, label="one too many")
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT last_id FROM totals").fetchone()[0] == 8
    conn.close()


def test_grouped_reports_use_the_stored_label_sums_not_the_entries(tmp_path):
    path = tmp_path / "budget.sqlite"
    first = BudgetAccountant(epsilon=10.0, delta=1e-5, ledger=path)
    second = BudgetAccountant.open(path)  # another writer of the same file
    memory = BudgetAccountant(epsilon=10.0, delta=1e-5)
    for i in range(12):
        for acc in ((first, second)[i % 2], memory):
            acc.spend(0.1, 1e-8, label=f"PrivateMean: part {i % 3}")
    for acc in (first, memory):
        acc.spend_many([("PCA: a", 0.3, 0.0), ("PCA: a", 0.2, 0.0)])
    refuse = lambda: (_ for _ in ()).throw(AssertionError("read every entry"))  # noqa: E731
    reports = []
    for acc in (BudgetAccountant.open(path), memory):
        acc._ledger.read = refuse
        reports.append([acc.report(), acc.report(by="estimator"), acc._repr_html_()])
    assert reports[0][0].split("\n")[1:] == reports[1][0].split("\n")[1:]
    assert reports[0][1].split("\n")[1:] == reports[1][1].split("\n")[1:]
    assert "PrivateMean: part 0" in reports[0][0] and "     4      0.4" in reports[0][0]
    assert "PCA               2      0.5" in reports[0][1]
