"""Speed of PrivateMean, SVTClipSelector and PrivateQuantile on 10^7 rows.

Run from the repository root::

    python benchmarks/bench_means_speed.py [--n 10000000] [--repeat 5]
        [--dpl-python /work/dplvenv/bin/python] [--dpl-median-repeat 1]

For one column of ``n`` rows, standard normal (public bounds [-10, 10]) and
lognormal(0, 1) (public bounds [0, 100]), prints side by side in one run the
best wall time of ``--repeat`` runs of

* ``np.sort(x)`` and ``np.clip(x, l, u).mean()`` (the non-private references);
* ``PrivateMean(bounds=(l, u)).fit`` (target: within 5x of the clipped mean);
* ``SVTClipSelector(grid=np.geomspace(1e-3, 1e6, 10_000)).fit``, both bounds
  private (target: within 3x of one sort);
* ``PrivateQuantile(0.5, bounds=(l, u)).fit``, both methods (target: within
  3x of one sort);
* ``PrivateMean(bounds=None)`` and ``PrivateMean(bounds=(0, None))`` (no
  target);
* diffprivlib's ``tools.mean`` and ``tools.median`` with the same bounds, run in
  its own venv by ``dpl_runner.py`` (with that venv's ``np.sort`` for
  reference), when ``--dpl-python`` runs; its median is slow (over a minute
  on 10^7 rows), so it is timed ``--dpl-median-repeat`` times only.

All skdp estimators use secure randomness (``random_state=None``), as a user
would. The load average is printed before and after.
"""

import argparse
import os
import tempfile
import time

import numpy as np
from _dpl import run_dpl_task
from _summary import record, verdict, write

from skdp import BudgetAccountant, SVTClipSelector
from skdp.preprocessing import PrivateMean
from skdp.stats._quantile import PrivateQuantile

GRID = np.geomspace(1e-3, 1e6, 10_000)


def best_time(func, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def columns(n):
    rng = np.random.default_rng(0)
    return {
        "normal(0, 1), bounds [-10, 10]": (rng.normal(0, 1, n), (-10.0, 10.0)),
        "lognormal(0, 1), bounds [0, 100]": (rng.lognormal(0, 1, n), (0.0, 100.0)),
    }


def skdp_rows(x, bounds):
    """(label, function, reference, target) for every timed computation."""
    X = x[:, None]
    lower, upper = bounds

    def fit(estimator):
        return lambda: estimator.set_params(accountant=BudgetAccountant()).fit(X)

    return [
        ("`np.sort(x)`", lambda: np.sort(x), None, None),
        (
            "`np.clip(x, l, u).mean()`",
            lambda: np.clip(x, lower, upper).mean(),
            None,
            None,
        ),
        (
            "`PrivateMean(bounds=(l, u))`",
            fit(PrivateMean(1.0, bounds=bounds)),
            "`np.clip(x, l, u).mean()`",
            5.0,
        ),
        (
            "`SVTClipSelector(grid=geomspace(1e-3, 1e6, 10^4))`",
            fit(SVTClipSelector(1.0, grid=GRID)),
            "`np.sort(x)`",
            3.0,
        ),
        (
            "`PrivateQuantile(0.5, method='exponential')`",
            fit(PrivateQuantile(0.5, epsilon=1.0, bounds=bounds)),
            "`np.sort(x)`",
            3.0,
        ),
        (
            "`PrivateQuantile(0.5, method='permute_and_flip')`",
            fit(
                PrivateQuantile(
                    0.5, epsilon=1.0, bounds=bounds, method="permute_and_flip"
                )
            ),
            "`np.sort(x)`",
            3.0,
        ),
        ("`PrivateMean(bounds=None)`", fit(PrivateMean(1.0)), "`np.sort(x)`", None),
        (
            "`PrivateMean(bounds=(l, None))`",
            fit(PrivateMean(1.0, bounds=(lower, None))),
            "`np.sort(x)`",
            None,
        ),
    ]


def dpl_times(python, x, bounds, repeat, median_repeat, tmpdir):
    path = os.path.join(tmpdir, "column.npy")
    np.save(path, x)
    task = {
        "task": "timing",
        "npy": path,
        "epsilon": 1.0,
        "bounds": list(bounds),
        "repeat": repeat,
        "median_repeat": median_repeat,
    }
    return run_dpl_task(python, task)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dpl-python", default="/work/dplvenv/bin/python")
    parser.add_argument("--dpl-median-repeat", type=int, default=1)
    parser.add_argument("--no-dpl", action="store_true")
    parser.add_argument("--summary-json", help="write the key figures as JSON")
    args = parser.parse_args()
    records = []
    reps = f"best of {args.repeat}, n = {args.n:,}"

    print(f"load average before: {os.getloadavg()}")
    print(f"n = {args.n:,} rows, one column, best of {args.repeat} runs\n")
    print("| column | computation | time (s) | × reference | target | verdict |")
    print("|---|---|---:|---:|---|---|")
    with tempfile.TemporaryDirectory() as tmpdir:
        for name, (x, bounds) in columns(args.n).items():
            times = {}
            for label, func, ref, target in skdp_rows(x, bounds):
                times[label] = best_time(func, args.repeat)
                if ref is None:
                    ratio, goal, mark = "1", "—", "—"
                else:
                    value = times[label] / times[ref]
                    ratio = f"{value:.2f} × {ref}"
                    goal = "—" if target is None else f"≤ {target:g}×"
                    if target is None:
                        mark = "—"
                    else:
                        mark = "met" if value <= target else "**missed**"
                        records.append(
                            record(
                                "private bounds",
                                f"{label.split('(')[0].strip('`')} within "
                                f"{target:g}x of {ref}",
                                value,
                                f"x {ref}",
                                verdict(value <= target),
                                f"{label}, {name}, n = {args.n:,}",
                                reps,
                            )
                        )
                print(
                    f"| {name} | {label} | {times[label]:.3f} | {ratio} | {goal} "
                    f"| {mark} |",
                    flush=True,
                )
            if args.no_dpl:
                records.append(dpl_record(name, "not run (--no-dpl)"))
                continue
            dpl = dpl_times(
                args.dpl_python, x, bounds, args.repeat, args.dpl_median_repeat, tmpdir
            )
            if dpl is None:
                records.append(dpl_record(name, "not run (diffprivlib failed)"))
                continue
            ours = times["`PrivateQuantile(0.5, method='exponential')`"]
            records.append(
                dpl_record(
                    name,
                    dpl["median"] / ours,
                    f"`tools.median` {dpl['median']:.2f} s vs `PrivateQuantile` "
                    f"{ours:.3f} s; `tools.mean` {dpl['mean']:.3f} s vs "
                    f"`PrivateMean` {times['`PrivateMean(bounds=(l, u))`']:.3f} s "
                    f"(diffprivlib venv's numpy sort: {dpl['sort']:.2f} s, ours "
                    f"{times['`np.sort(x)`']:.2f} s)",
                    f"best of {args.dpl_median_repeat} (diffprivlib median), "
                    f"{args.repeat} (rest)",
                )
            )
            sort = dpl["sort"]
            for key in ("sort", "mean", "median"):
                label = (
                    "`np.sort(x)` in the diffprivlib venv"
                    if key == "sort"
                    else f"diffprivlib `tools.{key}`"
                )
                print(
                    f"| {name} | {label} | {dpl[key]:.3f} "
                    f"| {dpl[key] / sort:.2f} × its `np.sort` | — | — |",
                    flush=True,
                )
            versions = dpl["versions"]
    if not args.no_dpl and "versions" in locals():
        print(f"\ndiffprivlib venv: {versions}")
    print(f"\nload average after: {os.getloadavg()}")
    write(args.summary_json, records)


def dpl_record(name, measured, detail="", repeats=""):
    return record(
        "private bounds",
        "diffprivlib `tools.median` time / skdp `PrivateQuantile`",
        measured,
        "x skdp" if isinstance(measured, float) else "",
        "info",
        f"{name}; {detail}" if detail else name,
        repeats,
    )


if __name__ == "__main__":
    main()
