"""Joint quantiles at any bound width, and what they cost.

Measured side by side in one run:

1. Adult's hours-per-week (``../shared/data/adult.csv.gz``), median at
   ε = 1, 30 fits, bounds (0, 100) and (0, 10^5): how often it is exactly
   40 (the true median), ``method="joint"`` (default) and the per-level
   ``"exponential"``.
2. Smooth benchmark: mean rank error of 9 deciles at ε = 1 on N(0, 5) with
   n = 1000, 200 fresh data sets (the data of ``bench_statistics.py``),
   bounds (-50, 50) and (-5·10^5, 5·10^5) (10^4 times wider), against the
   reference JointExp (``_jointexp.py``, continuous outputs).
3. Cost: wall time (best of ``--repeat``) and peak memory traced by
   ``tracemalloc`` (in copies of X) of ``PrivateQuantile.fit`` against
   ``np.percentile`` / ``np.median`` on normal(0, 5) data, bounds
   (-50, 50): quartiles of 1,000 rows, 9 deciles of 10^7 x 1 and of
   10^6 x 100, a median of 10^7 rows; the per-level ``"exponential"``
   method (the default before the joint release) timed once beside them.
4. Convergence (issue 27, item 1): the largest rank error of 9 deciles over
   5 fits, and the time of one fit, as ε grows (the grid is refined by one
   bit per doubling of ε above 2), on a lognormal column and on an 85 %
   zero-inflated one of 3,000 rows, bounds (0, 10^6).
5. Small ties: mean rank error of 9 deciles at ε = 1 (25 fits) where most
   distinct values hold a few rows (Adult's fnlwgt, 1 to 13 rows per value;
   N(0, 5) of 1,000 rows rounded to 0.1), and the time and peak memory of 5
   levels of fnlwgt at ε = 1, 167 (one fit of ε = 1,000 over 6 columns) and
   10^6, with the largest rank error: ties of ``a`` rows cost ``min(a, 2**b)
   + 1`` rank blocks, no longer ``2**b + 1`` (``b`` up to 12 split bits).
6. Ties between grid points: real columns whose tied values are not points
   of the public grid (statsmodels' randhie, ISLP's Bikeshare ``atemp``),
   9 deciles of each column at ε ∈ {0.3, 1, 3, 10^6}, bounds the column's
   range: rank error, mean relative error against ``np.quantile`` (where it
   is not 0) and the share of releases within the issue's target (0.1 % or
   one rank). The rank error of a release at a grid point next to a tied
   value is the distance to the tie's edge, whatever the point: it does not
   shrink at a tie that is not a grid point.

Reproduce::

    PYTHONPATH=. python benchmarks/bench_joint_quantile_width.py [--quick] \
        [--tables hours smooth cost convergence small_ties off_grid_ties]
"""

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

from skdp import BudgetAccountant, PrivateQuantile

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _jointexp import jointexp_reference
from bench_statistics import mean_rank_error

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult.csv.gz"
LAB = BudgetAccountant(epsilon=np.inf, delta=1.0)  # experiments: all charged
DECILES = np.arange(1, 10) / 10
TABLES = ["hours", "smooth", "cost", "convergence", "small_ties", "off_grid_ties"]


def hours_table(runs):
    hours = pd.read_csv(ADULT, skipinitialspace=True)[["hours-per-week"]]
    hours = hours.to_numpy(dtype=float)
    print(f"\n### Adult hours-per-week median (true: 40), ε = 1, {runs} fits\n")
    print("| bounds | joint: = 40 | joint: values | exponential: = 40 |")
    print("|---|---|---|---|")
    for upper in (100, 100_000):
        shown = []
        for method in ("joint", "exponential"):
            values = [
                PrivateQuantile(
                    0.5,
                    bounds=(0, upper),
                    method=method,
                    accountant=LAB,
                    random_state=seed,
                )
                .fit(hours)
                .quantiles_[0, 0]
                for seed in range(runs)
            ]
            shown.append((sum(v == 40.0 for v in values), sorted(set(values))))
        distinct = ", ".join(f"{v:g}" for v in shown[0][1])
        print(
            f"| (0, {upper:g}) | {shown[0][0]}/{runs} | {distinct} "
            f"| {shown[1][0]}/{runs} |"
        )


def smooth_table(runs):
    print(f"\n### 9 deciles of N(0, 5), n = 1000, ε = 1, {runs} data sets\n")
    print("| bounds | joint (± s.e.) | JointExp reference (± s.e.) |")
    print("|---|---|---|")
    for half in (50.0, 5e5):
        rng = np.random.default_rng(0)
        reference_rng = np.random.default_rng(1)
        joint, reference = [], []
        for seed in range(runs):
            x = rng.normal(0, 5, size=1000)
            est = PrivateQuantile(
                DECILES, bounds=(-half, half), accountant=LAB, random_state=seed
            ).fit(x[:, None])
            joint.append(mean_rank_error(x, est.quantiles_[:, 0], DECILES))
            ref = jointexp_reference(x, -half, half, DECILES, 1.0, reference_rng)
            reference.append(mean_rank_error(x, ref, DECILES))
        shown = [
            f"{np.mean(e):.2f} ± {np.std(e) / np.sqrt(runs):.2f}"
            for e in (joint, reference)
        ]
        print(f"| (-{half:g}, {half:g}) | {shown[0]} | {shown[1]} |")


def best_time(func, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def peak_copies(func, nbytes):
    tracemalloc.start()
    func()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / nbytes


def cost_table(quick, repeat):
    print(f"\n### Cost, normal(0, 5), bounds (-50, 50), best of {repeat}\n")
    print(
        "| task | skdp joint | numpy | ratio | skdp exponential | "
        "peak memory joint / numpy (copies of X) |"
    )
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    quartiles = np.array([0.25, 0.5, 0.75])
    big = (10**6, 1) if quick else (10**7, 1)
    wide = (10**5, 100) if quick else (10**6, 100)
    tasks = [
        ("quartiles, 1,000 x 1", (1000, 1), quartiles, "percentile"),
        (f"9 deciles, {big[0]:,} x 1", big, DECILES, "percentile"),
        (f"9 deciles, {wide[0]:,} x {wide[1]}", wide, DECILES, "percentile"),
        (f"median, {big[0]:,} x 1", big, np.array([0.5]), "median"),
    ]
    for name, shape, levels, reference in tasks:
        X = rng.normal(0, 5, size=shape)

        def fit(method, X=X, levels=levels):
            PrivateQuantile(
                levels, bounds=(-50, 50), method=method, accountant=LAB
            ).fit(X)

        def numpy(X=X, levels=levels, reference=reference):
            if reference == "median":
                np.median(X, axis=0)
            else:
                np.percentile(X, levels * 100, axis=0)

        times = {}
        for _ in range(repeat):  # alternated, best of each
            for key, func in (("joint", lambda: fit("joint")), ("numpy", numpy)):
                times[key] = min(times.get(key, np.inf), best_time(func, 1))
        times["exponential"] = best_time(lambda: fit("exponential"), 1)  # once
        memory = [peak_copies(f, X.nbytes) for f in (lambda: fit("joint"), numpy)]
        ratio = times["joint"] / times["numpy"]
        print(
            f"| {name} | {show(times['joint'])} | {show(times['numpy'])} "
            f"| {ratio:.2f} | {show(times['exponential'])} "
            f"| {memory[0]:.2f} / {memory[1]:.2f} |"
        )


def rank_errors(column, released, levels):
    n = column.size
    below = (column[:, None] < released).sum(axis=0)
    upto = (column[:, None] <= released).sum(axis=0)
    return np.maximum(0.0, np.maximum(below - levels * n, levels * n - upto))


def convergence_table(fits):
    print(
        f"\n### Convergence: largest rank error of 9 deciles, {fits} fits, "
        "n = 3,000, bounds (0, 10^6)\n"
    )
    print("| column | ε = 1 | ε = 100 | ε = 10^4 | ε = 10^6 | time of a fit at 10^6 |")
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    lognormal = rng.lognormal(7, 1, 3000)
    zeros = np.where(rng.random(3000) < 0.85, 0.0, lognormal)
    for name, column in (("lognormal(7, 1)", lognormal), ("85 % zeros", zeros)):
        cells, seconds = [], 0.0
        for epsilon in (1.0, 1e2, 1e4, 1e6):
            worst = 0.0
            for seed in range(fits):
                start = time.perf_counter()
                released = (
                    PrivateQuantile(
                        DECILES,
                        epsilon=epsilon,
                        bounds=(0, 1e6),
                        accountant=LAB,
                        random_state=seed,
                    )
                    .fit(column[:, None])
                    .quantiles_[:, 0]
                )
                seconds = time.perf_counter() - start
                worst = max(worst, rank_errors(column, released, DECILES).max())
            cells.append(f"{worst:.0f}")
        print(f"| {name} | {' | '.join(cells)} | {show(seconds)} |")


def small_ties_table(fits):
    print(f"\n### Small ties: 9 deciles at ε = 1, mean rank error, {fits} fits\n")
    print("| column | bounds | mean rank error (± s.e.) |")
    print("|---|---|---|")
    fnlwgt = pd.read_csv(ADULT, skipinitialspace=True)["fnlwgt"].to_numpy(float)
    rounded = np.round(np.random.default_rng(0).normal(0, 5, 1000), 1)
    for name, column, bounds in (
        ("Adult fnlwgt", fnlwgt, (0, 2e6)),
        ("N(0, 5) rounded to 0.1, n = 1000", rounded, (-50, 50)),
    ):
        errors = [
            mean_rank_error(
                column,
                PrivateQuantile(DECILES, bounds=bounds, accountant=LAB, random_state=s)
                .fit(column[:, None])
                .quantiles_[:, 0],
                DECILES,
            )
            for s in range(fits)
        ]
        shown = f"{np.mean(errors):.2f} ± {np.std(errors) / np.sqrt(fits):.2f}"
        print(f"| {name} | {bounds} | {shown} |")
    print(
        "\n| Adult fnlwgt, 5 levels | time | peak traced memory (X is "
        f"{fnlwgt.nbytes / 1e6:.2f} MB) | largest rank error |"
    )
    print("|---|---|---|---|")
    levels = np.array([0.1, 0.25, 0.5, 0.75, 0.9])
    for epsilon in (1.0, 167.0, 1e6):

        def fit(epsilon=epsilon):
            return PrivateQuantile(
                levels,
                epsilon=epsilon,
                bounds=(0, 2e6),
                accountant=LAB,
                random_state=0,
            ).fit(fnlwgt[:, None])

        seconds = best_time(fit, 1)
        megabytes = peak_copies(fit, 1e6)
        worst = rank_errors(fnlwgt, fit().quantiles_[:, 0], levels).max()
        print(
            f"| ε = {epsilon:g} | {show(seconds)} | {megabytes:.1f} MB | {worst:.2f} |"
        )


def off_grid_tie_columns():
    """Real columns with ties off the grid, and the bounds a user states."""
    from _real_tables import MissingPackage, bikeshare, randhie, stated_ranges

    columns = []
    for loader, names in ((randhie, None), (bikeshare, ["atemp"])):
        try:
            table = loader()
        except MissingPackage as exc:
            print(f"skipped: {exc}")
            continue
        lower, upper = stated_ranges(table)
        for j, name in enumerate(table.feature_names):
            if names is None or name in names:
                bounds = (float(lower[j]), float(upper[j]))
                columns.append((f"{table.name} {name}", table.X[:, j], bounds))
    return columns


def off_grid_ties_table(fits):
    print(
        f"\n### Ties between grid points: 9 deciles per column, {fits} fits, "
        "against np.quantile\n"
    )
    print(
        "| columns | ε | mean rank error | largest rank error | "
        "mean relative error (true ≠ 0) | within 0.1 % or one rank |"
    )
    print("|---|---|---|---|---|---|")
    columns = off_grid_tie_columns()
    groups = {}
    for name, column, bounds in columns:
        groups.setdefault(name.split()[0], []).append((name, column, bounds))
    for group, members in groups.items():
        for epsilon in (0.3, 1.0, 3.0, 1e6):
            ranks, relative, nonzero = [], [], []
            for _, column, bounds in members:
                reference = np.quantile(column, DECILES)
                scale = np.maximum(np.abs(reference), np.finfo(float).tiny)
                nonzero += [reference != 0] * fits
                for seed in range(fits):
                    released = (
                        PrivateQuantile(
                            DECILES,
                            epsilon=epsilon,
                            bounds=bounds,
                            accountant=LAB,
                            random_state=seed,
                        )
                        .fit(column[:, None])
                        .quantiles_[:, 0]
                    )
                    ranks.append(rank_errors(column, released, DECILES))
                    relative.append(np.abs(released - reference) / scale)
            ranks, relative = np.concatenate(ranks), np.concatenate(relative)
            within = np.mean((ranks <= 1.0) | (relative <= 1e-3))
            shown = relative[np.concatenate(nonzero)].mean()
            print(
                f"| {group} ({len(members)}) | {epsilon:g} | {ranks.mean():.2f} "
                f"| {ranks.max():.0f} | {shown:.2e} | {within:.1%} |"
            )


def show(seconds):
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tables", nargs="+", choices=TABLES, default=TABLES)
    args = parser.parse_args()
    runs = {
        "hours": lambda: hours_table(10 if args.quick else 30),
        "smooth": lambda: smooth_table(30 if args.quick else 200),
        "cost": lambda: cost_table(args.quick, 2 if args.quick else 3),
        "convergence": lambda: convergence_table(5),
        "small_ties": lambda: small_ties_table(25),
        "off_grid_ties": lambda: off_grid_ties_table(3 if args.quick else 10),
    }
    for name in args.tables:
        runs[name]()


if __name__ == "__main__":
    main()
