"""Fixed cost of a fit with secure noise (issue 18, item 3).

``PrivateMean(bounds=(0, 100)).fit`` and ``PrivateStandardScaler`` with
``random_state=None`` (the operating system's CSPRNG) on 1,000 rows, beside
scikit-learn's ``StandardScaler().fit``, alternated, best of 5 rounds of 300
fits each.

Reproduce::

    PYTHONPATH=. python benchmarks/bench_fixed_cost.py
"""

import time

import numpy as np
from sklearn.preprocessing import StandardScaler

from skdp import BudgetAccountant, PrivateMean, PrivateStandardScaler

LAB = BudgetAccountant(epsilon=np.inf)


def per_fit(fit, n=300):
    start = time.perf_counter()
    for _ in range(n):
        fit()
    return (time.perf_counter() - start) / n


def main():
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
    for name, seconds in best.items():
        print(f"| {name} | {seconds * 1e3:.3f} | {seconds / reference:.2f} |")


if __name__ == "__main__":
    main()
