"""Accountant speed: spends in memory and in SQLite.

Measured in one run:

1. In-memory spends (basic composition, and with ``slack`` for the
   advanced-composition filter; Gaussian costs under zCDP and PLD
   composition): microseconds per ``spend``.
2. A SQLite ledger: sequential spends per second (each one a durable
   ``BEGIN IMMEDIATE`` ... ``COMMIT`` in WAL mode, ``synchronous=FULL``).
3. A SQLite ledger of 100,000 entries: re-open plus ``total()``, one more
   spend, and ``report()`` (which still reads every entry).

Reproduce::

    PYTHONPATH=. python benchmarks/bench_accounting.py
"""

import tempfile
import time
from pathlib import Path

from skdp import BudgetAccountant
from skdp.mechanisms import gaussian_cost


def per_spend(acc, n):
    cost = (gaussian_cost(0.001, 1e-12),) if acc.composition in TIGHT else ()
    start = time.perf_counter()
    for i in range(n):
        if cost:
            acc.spend(cost[0], label=f"fit {i % 10}")
        else:
            acc.spend(0.001, 1e-12, label=f"fit {i % 10}")
    return (time.perf_counter() - start) / n


TIGHT = ("zcdp", "pld")


def main():
    print("| measurement | value | target |")
    print("|---|---|---|")
    for name, kwargs in [("basic", {}), ("advanced (slack)", {"slack": 1e-9})]:
        acc = BudgetAccountant(epsilon=1e9, delta=0.5, **kwargs)
        per_spend(acc, 2_000)  # warm the caches
        best = min(per_spend(acc, 20_000) for _ in range(3))
        print(f"| in-memory spend, {name} | {best * 1e6:.1f} us | <= 10 us |")
    for name in ("zcdp", "pld"):
        acc = BudgetAccountant(epsilon=1e9, delta=0.5, composition=name)
        per_spend(acc, 2_000)
        best = min(per_spend(acc, 5_000) for _ in range(3))
        print(f"| in-memory spend, {name} (Gaussian) | {best * 1e6:.1f} us | - |")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "budget.sqlite"
        acc = BudgetAccountant(epsilon=1e9, delta=0.5, ledger=path)
        rate = 1.0 / per_spend(acc, 3_000)
        print(f"| SQLite sequential spends | {rate:,.0f} /s | >= 5,000 /s |")
        acc.spend_many([(f"fit {i % 10}", 0.001, 0.0) for i in range(97_000)])
        start = time.perf_counter()
        reopened = BudgetAccountant.open(path)
        reopened.total()
        elapsed = time.perf_counter() - start
        print(f"| re-open + total(), 100,000 entries | {elapsed:.4f} s | < 0.3 s |")
        start = time.perf_counter()
        reopened.spend(0.001, label="one more")
        elapsed = time.perf_counter() - start
        print(f"| one spend after re-open | {elapsed * 1e3:.2f} ms | - |")
        start = time.perf_counter()
        reopened.report()
        elapsed = time.perf_counter() - start
        print(f"| report(), 100,000 entries | {elapsed:.3f} s | no full re-read |")


if __name__ == "__main__":
    main()
