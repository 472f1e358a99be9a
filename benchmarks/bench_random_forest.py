"""Private random forests: skdp against diffprivlib, side by side.

Held-out accuracy and ROC AUC (median of 5 seeds) of
``skdp.ensemble.PrivateRandomForestClassifier`` and diffprivlib 0.6.6's
``RandomForestClassifier`` at the same ε, the same ``n_estimators`` and
``max_depth`` and the same public bounds and classes, on Adult (numerics
scaled by their public ranges, one-hot categories: bounds [0, 1]) and on two
tables of ``_real_tables.py`` (bounds: ``stated_ranges``, a careful user's
schema). skdp runs in several settings (which rows each tree sees, which
noise), which is how its defaults were chosen; scikit-learn's
``RandomForestClassifier`` (same depth and number of trees) is the
non-private reference.

diffprivlib does not import with scikit-learn >= 1.6: it runs under its own
interpreter (``--dpl-python``, default ``/work/dplvenv/bin/python``) through
``dpl_forest_runner.py``; without it its column is skipped.

Usage::

    python benchmarks/bench_random_forest.py [--quick] [--seeds 5] \\
        [--tables breast_cancer fair] [--no-adult] [--n-estimators 10] \\
        [--max-depth 5] [--out FILE.md]
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _real_tables import LOADERS, MissingPackage, stated_ranges
from _venv_task import run_venv_task
from bench_sample_aggregate import adult_features

from skdp import BudgetAccountant
from skdp.ensemble import PrivateRandomForestClassifier
from skdp.tree._random_tree import leaf_indices

DEFAULT_DPL = "/work/dplvenv/bin/python"
DPL_SCRIPT = Path(__file__).resolve().parent / "dpl_forest_runner.py"
EPSILONS = (0.3, 1.0, 3.0)
#: skdp settings measured: name -> constructor parameters
SETTINGS = {
    "skdp (default: all rows, Laplace, trees weighted by impurity decrease)": {},
    "skdp all rows, Laplace, trees weighted alike": {"tree_weighting": "uniform"},
    "skdp disjoint rows, Laplace": {"tree_rows": "disjoint"},
    "skdp all rows, Gaussian δ=1e-6": {
        "tree_rows": "all",
        "mechanism": "gaussian",
        "delta": 1e-6,
    },
}


def tables(names, adult=True):
    if adult:
        X, y = adult_features()
        d = X.shape[1]
        yield "Adult", X, y, (np.zeros(d), np.ones(d))
    for name in names:
        try:
            table = LOADERS[name]()
        except MissingPackage as exc:
            print(f"({name} skipped: {exc})")
            continue
        yield table.name, table.X, table.y, stated_ranges(table)


def skdp_scores(split, bounds, classes, eps, seeds, params, n_estimators, depth):
    X_tr, X_te, y_tr, y_te = split
    acc, auc = [], []
    for seed in seeds:
        model = PrivateRandomForestClassifier(
            n_estimators,
            epsilon=eps,
            max_depth=depth,
            bounds=bounds,
            classes=classes,
            accountant=BudgetAccountant(delta=1.0),
            random_state=seed,
            **params,
        ).fit(X_tr, y_tr)
        acc.append(model.score(X_te, y_te))
        auc.append(roc_auc_score(y_te, model.predict_proba(X_te)[:, 1]))
    return acc, auc


def majority_leaf_scores(split, bounds, classes, eps, seeds, n_estimators, depth):
    """A simulation, not a release of skdp: skdp's trees (disjoint rows) with
    diffprivlib's leaf release, each leaf's majority label by permute-and-flip
    (``argmax(count * eps + Expo(1))``, Ding et al. 2021), the forest voting.
    It separates the leaf release from the rest of the two forests."""
    X_tr, X_te, y_tr, y_te = split
    acc = []
    for seed in seeds:
        exact = PrivateRandomForestClassifier(
            n_estimators,
            epsilon=1e12,  # noise below 1e-11: the exact counts, rounded
            max_depth=depth,
            bounds=bounds,
            classes=classes,
            tree_rows="disjoint",
            accountant=BudgetAccountant(),
            random_state=seed,
        ).fit(X_tr, y_tr)
        counts = np.round(exact.leaf_counts_)
        noise = np.random.default_rng(seed).exponential(1.0, counts.shape)
        labels = np.argmax(counts * eps + noise, axis=2)
        votes = np.eye(len(classes))[labels]
        leaves = leaf_indices(X_te, exact._features, exact._thresholds)
        trees = np.arange(n_estimators)[:, None]
        proba = votes[trees, leaves].mean(axis=0)
        acc.append(np.mean(np.asarray(classes)[proba.argmax(axis=1)] == y_te))
    return acc


def dpl_scores(python, split, bounds, classes, seeds, n_estimators, depth, tmp):
    paths = {}
    for key, array in zip(
        ("X_train", "X_test", "y_train", "y_test"), split, strict=True
    ):
        paths[key] = str(Path(tmp) / f"{key}.npy")
        np.save(paths[key], array)
    stated = {
        "bounds": [np.asarray(b, float).tolist() for b in bounds],
        "classes": classes,
        "n_estimators": n_estimators,
        "max_depth": depth,
    }
    task = {
        "task": "forest",
        "npy": paths,
        "epsilons": list(EPSILONS),
        "seeds": list(seeds),
        "modes": {"stated": stated},
    }
    answer = run_venv_task(python, DPL_SCRIPT, task, "diffprivlib")
    if answer is None:
        return None
    rows = {row["epsilon"]: row for row in answer["rows"]}
    if any(row["errors"] or row["leaks"] for row in rows.values()):
        raise RuntimeError(f"diffprivlib with the stated bounds: {answer['rows']}")
    return {
        "version": answer["versions"]["diffprivlib"],
        **{
            metric: {repr(e): rows[e]["scores"][metric] for e in EPSILONS}
            for metric in ("accuracy", "auc")
        },
    }


def cell(values):
    return f"{statistics.median(values):.3f}"


def run_table(name, X, y, bounds, args, seeds, lines):
    split = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    X_tr, X_te, y_tr, y_te = split
    classes = np.unique(y).tolist()  # the tables' public label sets
    T, D = args.n_estimators, args.max_depth
    ref = RandomForestClassifier(T, max_depth=D, random_state=0).fit(X_tr, y_tr)
    majority = max(np.mean(y_te == c) for c in classes)
    lines.append(
        f"\n### {name} ({X.shape[0]} rows, {X.shape[1]} features; "
        f"{T} trees, depth {D}; majority class {majority:.3f}; scikit-learn "
        f"RandomForestClassifier {ref.score(X_te, y_te):.3f} / AUC "
        f"{roc_auc_score(y_te, ref.predict_proba(X_te)[:, 1]):.3f})\n"
    )
    header = "| model | " + " | ".join(f"ε = {e:g} acc / AUC" for e in EPSILONS)
    lines += [header + " |", "|---" * (len(EPSILONS) + 1) + "|"]
    with tempfile.TemporaryDirectory() as tmp:
        dpl = dpl_scores(args.dpl_python, split, bounds, classes, seeds, T, D, tmp)
    if dpl is not None:
        row = [
            f"{cell(dpl['accuracy'][repr(e)])} / {cell(dpl['auc'][repr(e)])}"
            for e in EPSILONS
        ]
        lines.append(f"| diffprivlib {dpl['version']} | " + " | ".join(row) + " |")
    for label, params in SETTINGS.items():
        row = []
        for eps in EPSILONS:
            acc, auc = skdp_scores(split, bounds, classes, eps, seeds, params, T, D)
            row.append(f"{cell(acc)} / {cell(auc)}")
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    row = [
        cell(majority_leaf_scores(split, bounds, classes, eps, seeds, T, D)) + " / -"
        for eps in EPSILONS
    ]
    label = "simulation: skdp's trees, majority label per leaf (disjoint)"
    lines.append(f"| {label} | " + " | ".join(row) + " |")
    print("\n".join(lines[-(len(SETTINGS) + 5) :]), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n-estimators", type=int, default=10)
    parser.add_argument("--max-depth", type=int, default=5)
    parser.add_argument("--tables", nargs="*", default=["breast_cancer", "fair"])
    parser.add_argument("--no-adult", action="store_true", help="skip Adult")
    parser.add_argument("--dpl-python", default=DEFAULT_DPL)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    seeds = range(2 if args.quick else args.seeds)
    start = time.perf_counter()
    lines = [
        "## Private random forests against diffprivlib",
        f"\nMedian of {len(seeds)} seeds; held-out 25 %.",
    ]
    for name, X, y, bounds in tables(args.tables, not args.no_adult):
        run_table(name, X, y, bounds, args, seeds, lines)
    lines.append(f"\n({time.perf_counter() - start:.0f} s)")
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
