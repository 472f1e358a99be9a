"""Private bounds without a sort: ``PrivateMean(bounds=None)`` on 10^7 rows.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_bounds_pass.py [--n 10000000]
        [--repeat 5] [--before-repeat 2] [--columns 1 4]

For each data set (one column: normal(0, 1) with bounds [-10, 10], and
lognormal(0, 1) with bounds [0, 100]; four columns: normal(0, 1)), prints side
by side in one run

* ``np.clip(X, l, u).mean(axis=0)``, the non-private reference;
* ``PrivateMean(bounds=None).fit`` and ``PrivateMean(bounds=(l, None)).fit``
  as they are ("after": one pass of per-bin tallies);
* the same fits with the sort-based search of skdp up to ac0d316 patched in
  ("before": ``tests/_sorted_soft_counts.py``, which the tests check
  releases the same values for the same seed);
* the data pass of each search alone ("its data pass alone":
  ``svt_bounds_statistic``, the per-bin tallies, no noise), the part of
  "after" that this item is about;

as the best wall time of interleaved rounds (one call of each per round, so
that a load spike hits all of them), and the peak of memory allocated during
one fit (``tracemalloc``, which traces numpy's buffers) in copies of ``X``.
Targets: time within 3x of the clipped mean and at most 1.2 copies of ``X``.
The fits use secure randomness (``random_state=None``), as a user would.
"""

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
from _summary import record, verdict, write

from skdp import BudgetAccountant
from skdp.preprocessing import PrivateMean
from skdp.stats import _mean as mean_module
from skdp.stats import _svt_clip as search_module
from skdp.stats._svt_search import svt_bounds_statistic

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _sorted_soft_counts import sorted_run_svt_bounds

TIME_TARGET = 3.0
MEMORY_TARGET = 1.2


def data_sets(n, column_counts):
    rng = np.random.default_rng(0)
    sets = {}
    if 1 in column_counts:
        sets["normal(0, 1), 1 column"] = (rng.normal(0, 1, (n, 1)), (-10.0, 10.0))
        sets["lognormal(0, 1), 1 column"] = (rng.lognormal(0, 1, (n, 1)), (0.0, 100.0))
    for d in sorted(set(column_counts) - {1}):
        sets[f"normal(0, 1), {d} columns"] = (rng.normal(0, 1, (n, d)), (-10.0, 10.0))
    return sets


def fit_call(X, bounds, sorted_search):
    """A function fitting PrivateMean; the sort-based search if asked."""
    original = search_module.run_svt_bounds  # where PrivateMean's search runs

    def fit():
        estimator = PrivateMean(1.0, bounds=bounds, accountant=BudgetAccountant())
        if sorted_search:
            search_module.run_svt_bounds = sorted_run_svt_bounds
        try:
            estimator.fit(X)
        finally:
            search_module.run_svt_bounds = original

    return fit


def computations(X, bounds):
    """``{label: (function, fit, before)}``, the reference first."""
    lower, upper = bounds
    reference = "`np.clip(X, l, u).mean(axis=0)`"
    calls = {reference: (lambda: np.clip(X, lower, upper).mean(axis=0), None, False)}
    for name, given in (("None", None), ("(l, None)", (lower, None))):
        fit = f"`PrivateMean(bounds={name})`"
        calls[f"{fit}, after"] = (fit_call(X, given, False), fit, False)
        calls[f"{fit}, before (sort)"] = (fit_call(X, given, True), fit, True)
        calls[f"{fit}: its data pass alone"] = (
            statistic_call(X, given),
            None,
            False,
        )
    return calls


def statistic_call(X, bounds):
    """A function computing the bound search's statistic of ``X`` alone."""
    estimator = PrivateMean(1.0, bounds=bounds)
    plan = mean_module.BoundsPlan.from_estimator(estimator, X.shape[1]).svt
    return lambda: svt_bounds_statistic(X, plan)


def best_times(calls, repeat, before_repeat):
    """Best wall time of each call over interleaved rounds."""
    best = dict.fromkeys(calls, float("inf"))
    for round_ in range(repeat):
        for label, (call, _, before) in calls.items():
            if before and round_ >= before_repeat:
                continue
            start = time.perf_counter()
            call()
            best[label] = min(best[label], time.perf_counter() - start)
    return best


def peak_copies(call, X):
    """Peak memory allocated during one call, in copies of X."""
    tracemalloc.start()
    try:
        call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak / X.nbytes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before-repeat", type=int, default=2)
    parser.add_argument("--columns", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--summary-json", help="write the key figures as JSON")
    args = parser.parse_args()
    records = []
    print(f"load average before: {os.getloadavg()}")
    print(
        f"n = {args.n:,} rows; best of {args.repeat} interleaved rounds "
        f"({args.before_repeat} for the sort-based fits)\n"
    )
    print("| data | computation | time (s) | × clipped mean | peak (copies of X) |")
    print("|---|---|---:|---:|---:|")
    for name, (X, bounds) in data_sets(args.n, args.columns).items():
        calls = computations(X, bounds)
        times = best_times(calls, args.repeat, args.before_repeat)
        reference = next(iter(times.values()))
        for label, (call, fit, before) in calls.items():
            ratio = times[label] / reference
            copies = peak_copies(call, X)
            print(
                f"| {name} | {label} | {times[label]:.3f} | {ratio:.2f} "
                f"| {copies:.3f} |",
                flush=True,
            )
            if fit is None or before:
                continue
            detail = f"{label}, {name}, n = {args.n:,}"
            sort_time = times[f"{fit}, before (sort)"]
            records.append(
                record(
                    "private bounds",
                    f"{fit} within {TIME_TARGET:g}x of `np.clip(X, l, u).mean(axis=0)`",
                    ratio,
                    "x clipped mean",
                    verdict(ratio <= TIME_TARGET),
                    f"{detail}; {times[label]:.3f} s vs {reference:.3f} s; "
                    f"before (sort) {sort_time:.3f} s",
                    f"best of {args.repeat}",
                )
            )
            records.append(
                record(
                    "private bounds",
                    f"{fit}: peak memory at most {MEMORY_TARGET:g} copies of X",
                    copies,
                    "copies of X",
                    verdict(copies <= MEMORY_TARGET),
                    detail,
                    "one fit (tracemalloc)",
                )
            )
    print(f"\nload average after: {os.getloadavg()}")
    write(args.summary_json, records)


if __name__ == "__main__":
    main()
