"""Fixed cost of a fit with secure noise.

``PrivateMean(bounds=(0, 100)).fit`` and ``PrivateStandardScaler`` with
``random_state=None`` (the operating system's CSPRNG) on 1,000 rows, beside
scikit-learn's ``StandardScaler().fit``, alternated, best of 5 rounds of 300
fits each.

Reproduce::

    PYTHONPATH=. python benchmarks/bench_fixed_cost.py [--summary-json PATH]
"""

import argparse
import os
import time

import numpy as np
from _summary import record, verdict, write
from sklearn.preprocessing import StandardScaler

from skdp import BudgetAccountant, PrivateMean, PrivateStandardScaler

LAB = BudgetAccountant(epsilon=np.inf)
TARGET = 3.0


def per_fit(fit, n=300):
    start = time.perf_counter()
    for _ in range(n):
        fit()
    return (time.perf_counter() - start) / n


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary-json", help="write the key figures as JSON")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    X = np.random.default_rng(0).uniform(0, 100, size=(1_000, 1))
    fits = {
        "StandardScaler().fit": lambda: StandardScaler().fit(X),
        "PrivateMean(bounds=(0, 100)).fit": lambda: PrivateMean(
            bounds=(0, 100), accountant=LAB
        ).fit(X),
        "PrivateStandardScaler(bounds=(0, 100)).fit": lambda: PrivateStandardScaler(
            bounds=(0, 100), accountant=LAB
        ).fit(X),
    }
    best = {name: np.inf for name in fits}
    for _ in range(5):
        for name, fit in fits.items():
            best[name] = min(best[name], per_fit(fit))
    reference = best["StandardScaler().fit"]
    print("| fit, 1,000 rows, random_state=None | ms | ratio (target ≤ 3) |")
    print("|---|---|---|")
    records = []
    for name, seconds in best.items():
        ratio = seconds / reference
        print(f"| {name} | {seconds * 1e3:.3f} | {ratio:.2f} |")
        if name != "StandardScaler().fit":
            records.append(
                record(
                    "fixed cost of a fit",
                    f"`{name}` within {TARGET:g}x of `StandardScaler().fit`",
                    ratio,
                    "ratio",
                    verdict(ratio <= TARGET),
                    f"1,000 rows, random_state=None; {seconds * 1e3:.3f} ms vs "
                    f"{reference * 1e3:.3f} ms",
                    "best of 5 rounds of 300 fits",
                )
            )
    print(f"load average after: {os.getloadavg()}")
    write(args.summary_json, records)


if __name__ == "__main__":
    main()
