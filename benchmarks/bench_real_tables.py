"""skdp's defaults on real tables that are not Adult.

Every skdp estimator **at its defaults** (the user states ε and, for the
classifiers, the public label set ``classes``) on nine real tables used
**unscaled, as a user has them** (see ``_real_tables.py``), side by side in
one run with scikit-learn's non-private counterpart and diffprivlib 0.6.6:

* classifiers (held-out accuracy): ``PrivateLogisticRegression``,
  ``PrivateGaussianNB``; diffprivlib's ``LogisticRegression``,
  ``GaussianNB``; scikit-learn's ``LogisticRegression()``, ``GaussianNB()``.
* regression (held-out R²): ``PrivateLinearRegression``; diffprivlib's and
  scikit-learn's ``LinearRegression``.
* statistics a user would publish, on every non-constant feature column of
  every table: ``PrivateMean`` (``diffprivlib.tools.mean``), the scale of
  ``PrivateStandardScaler`` (``tools.std``), ``PrivateQuantile`` at the
  quartiles (``tools.quantile``): relative error against numpy for the mean
  and scale, rank error (percentage points of rows between the released and
  the true quantile; 0 inside a tie) for the median and the quartiles.

Two modes for each private library: **defaults** (skdp chooses bounds
privately and charges for it, or refuses before the charge where an
argument is required; diffprivlib reads the bounds or ``data_norm`` from
the data, which is not private, and warns: the times table counts its
``PrivacyLeakWarning``) and **stated ranges**, the bounds a careful user
states: the true column ranges of the whole table (the schema's (0, 16)
for digits), ``data_norm`` the norm bound that follows from them, target
bounds the target's range. skdp's ``PrivateLogisticRegression`` has no
range argument, so it runs at its defaults only.

ε ∈ {0.3, 1, 3} and 10^6 (the consistency column: there every private
estimator should be its non-private counterpart); 5 noise seeds
(``random_state`` 0-4, a fresh accountant per fit), median over seeds; one
held-out split per table (``train_test_split(test_size=0.25,
random_state=0)``, stratified for classification). Statistics: per column
the median over seeds, then the median over columns.

Benchmark requirements (not skdp dependencies): ``statsmodels`` and
``ISLP`` (``pip install statsmodels; pip install --no-deps ISLP``) for the
larger tables (skipped with a message when missing), and diffprivlib 0.6.6
in its own virtual environment (it needs scikit-learn < 1.6)::

    python -m venv /work/dplvenv
    /work/dplvenv/bin/pip install diffprivlib==0.6.6 "scikit-learn<1.6"

Run from the repository root (whichever ``skdp`` is importable is measured;
its path and commit are printed)::

    python benchmarks/bench_real_tables.py [--quick] [--no-dpl] \\
        [--dpl-python /work/dplvenv/bin/python] [--out FILE.md] [--json FILE] \\
        [--summary-json FILE]

``--quick`` runs 2 seeds instead of 5. diffprivlib's fits run in its own
interpreter at the same time as skdp's (one batch, started first: it is the
slower part), so on a 2-core machine the fit times of both are indicative
only; the accuracy figures do not depend on it. The full run took 8 min at
load average 5 on the 2-core development machine, most of it diffprivlib.
"""

import argparse
import os
import sys
import tempfile
import time
import warnings
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _dpl import run_dpl_task
from _real_report import dump_json, report, summary_records
from _real_tables import load_tables, stated_ranges
from _summary import write

from skdp import (
    BudgetAccountant,
    PrivateGaussianNB,
    PrivateMean,
    PrivateQuantile,
    PrivateStandardScaler,
)
from skdp.linear_model import PrivateLinearRegression, PrivateLogisticRegression

EPSILONS = (0.3, 1.0, 3.0, 1e6)
QUANTILES = (0.25, 0.5, 0.75)
DEFAULT_DPL = "/work/dplvenv/bin/python"


def _first_line(exc):
    text = f"{type(exc).__name__}: {exc}"
    return text.splitlines()[0][:160]


def timed_fit(make, X, y=None):
    """(fitted estimator or the error's first line, seconds, warning names)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        try:
            fitted = make().fit(X) if y is None else make().fit(X, y)
        except Exception as exc:  # a refusal is a result to report
            fitted = _first_line(exc)
        seconds = time.perf_counter() - start
    return fitted, seconds, [w.category.__name__ for w in caught]


def _accountant():
    """A fresh accountant with no limit (one per fit, so no fit is refused
    for the budget the others spent)."""
    return BudgetAccountant(epsilon=np.inf, delta=1.0)


def norm_bound(lower, upper):
    """The L2 bound on a row that follows from per-feature ranges."""
    return float(np.sqrt(np.sum(np.maximum(np.abs(lower), np.abs(upper)) ** 2)))


# --------------------------------------------------------------------- models


def skdp_models(table, ranges):
    """``{(model, mode): factory(epsilon, seed)}`` for the table's task."""
    acc = _accountant
    if table.task == "classification":
        classes = table.classes
        return {
            ("LogisticRegression", "default"): lambda e, s: PrivateLogisticRegression(
                epsilon=e, classes=classes, random_state=s, accountant=acc()
            ),
            ("GaussianNB", "default"): lambda e, s: PrivateGaussianNB(
                epsilon=e, classes=classes, random_state=s, accountant=acc()
            ),
            ("GaussianNB", "stated"): lambda e, s: PrivateGaussianNB(
                epsilon=e,
                bounds=ranges,
                classes=classes,
                random_state=s,
                accountant=acc(),
            ),
        }
    norm = norm_bound(*ranges)
    target = (float(table.y.min()), float(table.y.max()))
    return {
        ("LinearRegression", "default"): lambda e, s: PrivateLinearRegression(
            epsilon=e, random_state=s, accountant=acc()
        ),
        ("LinearRegression", "stated"): lambda e, s: PrivateLinearRegression(
            epsilon=e,
            data_norm=norm,
            target_bounds=target,
            random_state=s,
            accountant=acc(),
        ),
    }


SKLEARN = {
    "LogisticRegression": LogisticRegression,
    "GaussianNB": GaussianNB,
    "LinearRegression": LinearRegression,
}


def run_skdp_models(table, split, ranges, seeds):
    X_tr, X_te, y_tr, y_te = split
    rows = []
    for (model, mode), factory in skdp_models(table, ranges).items():
        for epsilon in EPSILONS:
            row = {"lib": "skdp", "model": model, "mode": mode, "epsilon": epsilon}
            row.update(scores=[], times=[], warnings=Counter(), errors=[])
            for seed in seeds:
                fitted, seconds, caught = timed_fit(
                    lambda f=factory, e=epsilon, s=seed: f(e, s), X_tr, y_tr
                )
                row["times"].append(seconds)
                row["warnings"].update(caught)
                if isinstance(fitted, str):
                    row["errors"].append(fitted)
                    row["scores"].append(np.nan)
                else:
                    row["scores"].append(float(fitted.score(X_te, y_te)))
            rows.append(row)
    return rows


def run_sklearn_models(table, split):
    X_tr, X_te, y_tr, y_te = split
    names = ["LinearRegression"]
    if table.task == "classification":
        names = ["LogisticRegression", "GaussianNB"]
    rows = []
    for name in names:
        fits = [timed_fit(SKLEARN[name], X_tr, y_tr) for _ in range(3)]
        fitted, _, caught = fits[0]
        seconds = float(np.median([fit[1] for fit in fits]))
        rows.append(
            {
                "lib": "sklearn",
                "model": name,
                "mode": "non-private (defaults)",
                "scores": [float(fitted.score(X_te, y_te))],
                "times": [seconds],
                "warnings": Counter(caught),
                "errors": [],
            }
        )
    return rows


def dpl_models_task(table, split, ranges, seeds, tmpdir):
    """The diffprivlib runner's task for the table's models."""
    keys = ("X_train", "X_test", "y_train", "y_test")
    paths = {}
    for key, array in zip(keys, split, strict=True):
        paths[key] = os.path.join(tmpdir, f"{table.name}_{key}.npy")
        np.save(paths[key], array)
    return {
        "task": "real_models",
        "kind": table.task,
        "npy": paths,
        "epsilons": list(EPSILONS),
        "seeds": list(seeds),
        "bounds_X": [ranges[0].tolist(), ranges[1].tolist()],
        "bounds_y": [float(table.y.min()), float(table.y.max())],
        "data_norm": norm_bound(*ranges),
    }


def dpl_model_rows(answer):
    rows = answer["rows"]
    for row in rows:
        row["lib"] = "diffprivlib"
        row["warnings"] = Counter({"PrivacyLeakWarning": row.pop("leaks")})
    return rows


# ----------------------------------------------------------------- statistics


def stats_matrix(table, ranges):
    """The table's non-constant feature columns and their stated ranges."""
    keep = table.X.std(axis=0) > 0
    return table.X[:, keep], (ranges[0][keep], ranges[1][keep])


def skdp_stats(ranges):
    """``{(statistic, mode): (factory(epsilon, seed), released(fitted))}``."""
    acc = _accountant
    common = {}
    for mode, bounds in (("default", None), ("stated", ranges)):
        extra = {} if bounds is None else {"bounds": bounds}
        common[("mean", mode)] = (
            lambda e, s, x=extra: PrivateMean(
                epsilon=e, random_state=s, accountant=acc(), **x
            ),
            lambda m: m.mean_,
        )
        common[("scale", mode)] = (
            lambda e, s, x=extra: PrivateStandardScaler(
                epsilon=e, random_state=s, accountant=acc(), **x
            ),
            lambda m: m.scale_,
        )
        common[("quantiles", mode)] = (
            lambda e, s, x=extra: PrivateQuantile(
                QUANTILES, epsilon=e, random_state=s, accountant=acc(), **x
            ),
            lambda m: m.quantiles_,
        )
    return common


def run_skdp_stats(S, ranges, seeds):
    """Released values per (statistic, mode, ε): a list over seeds."""
    rows = []
    for (stat, mode), (factory, released) in skdp_stats(ranges).items():
        for epsilon in EPSILONS:
            row = {"lib": "skdp", "stat": stat, "mode": mode, "epsilon": epsilon}
            row.update(values=[], times=[], warnings=Counter(), errors=[])
            for seed in seeds:
                fitted, seconds, caught = timed_fit(
                    lambda f=factory, e=epsilon, s=seed: f(e, s), S
                )
                row["times"].append(seconds)
                row["warnings"].update(caught)
                if isinstance(fitted, str):
                    row["errors"].append(fitted)
                else:
                    row["values"].append(np.asarray(released(fitted), dtype=float))
            rows.append(row)
    return rows


STAT_KEYS = (("mean", "mean"), ("scale", "std"), ("quantiles", "quantiles"))


NUMPY_STATS = {
    "mean": lambda S: S.mean(axis=0),
    "scale": lambda S: S.std(axis=0),
    "quantiles": lambda S: np.quantile(S, QUANTILES, axis=0),
}


def run_numpy_stats(S):
    """The non-private statistics' times (median of 3), for the times table."""
    rows = []
    for stat, func in NUMPY_STATS.items():
        times = []
        for _ in range(3):
            start = time.perf_counter()
            func(S)
            times.append(time.perf_counter() - start)
        rows.append(
            {
                "lib": "sklearn",
                "stat": stat,
                "mode": "numpy",
                "epsilon": None,
                "values": [],
                "times": [float(np.median(times))],
                "warnings": Counter(),
                "errors": [],
            }
        )
    return rows


def dpl_stats_task(name, S, ranges, seeds, tmpdir):
    """The diffprivlib runner's task for the statistics of matrix ``S``."""
    path = os.path.join(tmpdir, f"{name}_S.npy")
    np.save(path, S)
    return {
        "task": "real_stats",
        "npy": path,
        "epsilons": list(EPSILONS),
        "seeds": list(seeds),
        "bounds": [ranges[0].tolist(), ranges[1].tolist()],
        "quantiles": list(QUANTILES),
    }


def dpl_stats_rows(answer):
    """The runner's answer as rows like skdp's, one per (statistic, mode, ε)."""
    grouped = {}
    for fit in answer["rows"]:
        for stat, key in STAT_KEYS:
            row = grouped.setdefault(
                (stat, fit["mode"], fit["epsilon"]),
                {
                    "lib": "diffprivlib",
                    "stat": stat,
                    "mode": fit["mode"],
                    "epsilon": fit["epsilon"],
                    "values": [],
                    "times": [],
                    "warnings": Counter(),
                    "errors": [],
                },
            )
            if fit[key] is None:
                row["errors"].append(fit["errors"][key])
            else:
                row["values"].append(np.asarray(fit[key], dtype=float))
            row["times"].append(fit["seconds"][key])
            row["warnings"]["PrivacyLeakWarning"] += fit["leaks"][key]
    return list(grouped.values())


def rank_errors(S, released):
    """|F(q) - p| per level and column, 0 where p falls inside q's tie."""
    n = S.shape[0]
    errors = np.empty_like(released)
    for j in range(S.shape[1]):
        column = np.sort(S[:, j])
        below = np.searchsorted(column, released[:, j], side="left") / n
        upto = np.searchsorted(column, released[:, j], side="right") / n
        p = np.asarray(QUANTILES)
        errors[:, j] = np.maximum(0.0, np.maximum(below - p, p - upto))
    return errors


def stat_errors(S, row):
    """Per-column errors (median over seeds) of one statistics row, by name."""
    if not row["values"]:
        return {}
    values = np.stack(row["values"])
    if row["stat"] == "mean":
        truth = S.mean(axis=0)
        return {"mean": np.median(np.abs(values - truth) / np.abs(truth), axis=0)}
    if row["stat"] == "scale":
        truth = S.std(axis=0)
        return {"scale": np.median(np.abs(values / truth - 1), axis=0)}
    ranks = np.stack([rank_errors(S, v) for v in values])  # seeds x levels x d
    return {
        "median": np.median(ranks[:, 1], axis=0),
        "quartiles": np.median((ranks[:, 0] + ranks[:, 2]) / 2, axis=0),
    }


def quantile_value_errors(S, row):
    """|released / true - 1| per column (median over seeds), true the
    inverted-CDF sample quantile, for the "0.1 % or one rank" flag."""
    if row["stat"] != "quantiles" or not row["values"]:
        return {}
    values = np.stack(row["values"])
    truth = np.quantile(S, QUANTILES, axis=0, method="inverted_cdf")
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.abs(values - truth) / np.abs(truth)
    rel = np.where(values == truth, 0.0, rel)
    return {
        "median": np.median(rel[:, 1], axis=0),
        "quartiles": np.median((rel[:, 0] + rel[:, 2]) / 2, axis=0),
    }


# ----------------------------------------------------------------------- main


def majority_rate(table, split):
    """The test split's majority rate (classification), else None."""
    if table.task != "classification":
        return None
    return float(np.unique(split[3], return_counts=True)[1].max() / len(split[3]))


def prepare(table, seeds, tmpdir):
    """The table's split, stated ranges, statistics matrix and diffprivlib's
    tasks (their arrays saved in ``tmpdir``)."""
    ranges = stated_ranges(table)
    stratify = table.y if table.task == "classification" else None
    split = train_test_split(
        table.X, table.y, test_size=0.25, random_state=0, stratify=stratify
    )
    S, S_ranges = stats_matrix(table, ranges)
    tasks = [
        dpl_models_task(table, split, ranges, seeds, tmpdir),
        dpl_stats_task(table.name, S, S_ranges, seeds, tmpdir),
    ]
    return {"table": table, "split": split, "ranges": ranges, "S": S}, S_ranges, tasks


def run_table(context, S_ranges, seeds):
    """skdp's and scikit-learn's rows for one table."""
    table, split, S = context["table"], context["split"], context["S"]
    start = time.perf_counter()
    models = run_sklearn_models(table, split)
    models += run_skdp_models(table, split, context["ranges"], seeds)
    stats = run_numpy_stats(S) + run_skdp_stats(S, S_ranges, seeds)
    return {
        "table": table,
        "models": models,
        "stats": stats,
        "n_stat_columns": S.shape[1],
        "majority": majority_rate(table, split),
        "seconds": time.perf_counter() - start,
        "dpl_versions": None,
    }


def add_dpl(results, answer):
    """Add the rows of diffprivlib's batch answer (tasks in table order)."""
    answers = iter(answer["answers"])
    for result in results:
        result["models"] += dpl_model_rows(next(answers))
        result["stats"] += dpl_stats_rows(next(answers))
        result["dpl_versions"] = answer["versions"]


def add_stat_errors(result, S):
    for row in result["stats"]:
        row["errors_by_stat"] = stat_errors(S, row)
        row["value_errors"] = quantile_value_errors(S, row)
        row["n_rows"] = S.shape[0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds, not 5")
    parser.add_argument("--no-dpl", action="store_true")
    parser.add_argument("--dpl-python", default=DEFAULT_DPL)
    parser.add_argument("--tables", nargs="*", default=None)
    parser.add_argument("--out", default=None, help="also write the markdown here")
    parser.add_argument("--json", default=None, help="write the raw results here")
    parser.add_argument("--summary-json", default=None, help="for run_all.py")
    args = parser.parse_args(argv)
    if not args.no_dpl and not Path(args.dpl_python).exists():
        print(f"(diffprivlib skipped: no interpreter at {args.dpl_python})")
        args.no_dpl = True
    seeds = list(range(2 if args.quick else 5))
    start = time.perf_counter()
    tables, skipped = load_tables(args.tables)
    results, tasks, prepared = [], [], []
    with tempfile.TemporaryDirectory() as tmpdir:
        for table in tables:
            context, S_ranges, table_tasks = prepare(table, seeds, tmpdir)
            prepared.append((context, S_ranges))
            tasks += table_tasks
        with ThreadPoolExecutor(max_workers=1) as pool:
            # diffprivlib runs in its own interpreter while skdp fits here
            batch = {"task": "batch", "tasks": tasks}
            dpl = (
                None
                if args.no_dpl
                else pool.submit(run_dpl_task, args.dpl_python, batch)
            )
            for context, S_ranges in prepared:
                name, shape = context["table"].name, context["table"].shape
                print(f"... {name} {shape}", file=sys.stderr, flush=True)
                results.append(run_table(context, S_ranges, seeds))
            answer = None if dpl is None else dpl.result()
    if answer is not None:
        add_dpl(results, answer)
    for result, (context, _) in zip(results, prepared, strict=True):
        add_stat_errors(result, context["S"])
    text = report(results, skipped, seeds, EPSILONS, time.perf_counter() - start, argv)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    if args.json:
        dump_json(args.json, results)
    if args.summary_json:
        repeats = f"median of {len(seeds)} seeds, one split"
        write(args.summary_json, summary_records(results, EPSILONS, repeats))


if __name__ == "__main__":
    main()
