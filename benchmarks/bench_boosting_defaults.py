"""Defaults and design of the private histogram gradient boosting, measured.

For each candidate setting of ``PrivateHistGradientBoostingClassifier``
(``max_bins``, ``max_depth``, ``max_iter``, ``learning_rate``,
``max_features``), the median accuracy and ROC AUC over seeds at ε = 1 (δ =
1e-6, public label set, private bins) on four real tables: UCI Adult (14
columns, categoricals as their sorted category codes, a public schema),
scikit-learn's breast cancer, statsmodels' ``fair`` and ISLP's ``Default``
(``benchmarks/_real_tables.py``); one split each (``test_size=0.25,
random_state=0``). Reference rows: ``PrivateLogisticRegression`` at the same
ε and non-private ``HistGradientBoostingClassifier``.

Reproduce::

    PYTHONPATH=. python benchmarks/bench_boosting_defaults.py [--seeds 5] \
        [--epsilon 1.0] [--tables adult,breast_cancer,fair,Default] \
        [--defaults-only]
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).parent))

from skdp import BudgetAccountant
from skdp.ensemble import PrivateHistGradientBoostingClassifier
from skdp.linear_model import PrivateLogisticRegression

ADULT = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "adult.csv.gz"
DELTA = 1e-6
CANDIDATES = {
    "bins 8, depth 3, 30 x 0.3, features 0.3 (the defaults)": dict(
        max_bins=8, max_depth=3, max_iter=30, learning_rate=0.3, max_features=0.3
    ),
    "bins 8, depth 3, 30 x 0.3, every feature (the old defaults)": dict(
        max_bins=8, max_depth=3, max_iter=30, learning_rate=0.3, max_features=1.0
    ),
    "bins 8, depth 3, 30 x 0.3, features 0.5": dict(
        max_bins=8, max_depth=3, max_iter=30, learning_rate=0.3, max_features=0.5
    ),
    "bins 8, depth 3, 50 x 0.3, features 0.15": dict(
        max_bins=8, max_depth=3, max_iter=50, learning_rate=0.3, max_features=0.15
    ),
    "bins 8, depth 2, 30 x 0.5, features 0.3": dict(
        max_bins=8, max_depth=2, max_iter=30, learning_rate=0.5, max_features=0.3
    ),
    "bins 8, depth 2, 50 x 0.5, features 0.3": dict(
        max_bins=8, max_depth=2, max_iter=50, learning_rate=0.5, max_features=0.3
    ),
    "bins 16, depth 3, 30 x 0.3, features 0.3": dict(
        max_bins=16, max_depth=3, max_iter=30, learning_rate=0.3, max_features=0.3
    ),
}


def adult():
    df = pd.read_csv(ADULT, skipinitialspace=True)
    y = df.pop("Salary").str.startswith(">50K").to_numpy(int)
    columns = []
    for name in df.columns:
        column = df[name]
        if pd.api.types.is_numeric_dtype(column):
            columns.append(column.to_numpy(float))
        else:  # the public schema's categories, in sorted order
            cats = sorted(column.unique())
            columns.append(pd.Categorical(column, categories=cats).codes.astype(float))
    return np.column_stack(columns), y


def tables(names):
    import _real_tables

    out = {}
    for name in names:
        if name == "adult":
            out[name] = adult()
        else:
            loaded, skipped = _real_tables.load_tables([name])
            if skipped:
                print(f"skipped: {skipped[0]}")
                continue
            out[name] = (loaded[0].X, loaded[0].y)
    return out


def scores(model, X_te, y_te):
    proba = model.predict_proba(X_te)[:, 1]
    return np.mean((proba > 0.5) == y_te), roc_auc_score(y_te, proba)


def private_scores(make, split, seeds):
    X_tr, X_te, y_tr, y_te = split
    results = []
    for seed in range(seeds):
        budget = BudgetAccountant(delta=0.5)
        model = make(seed, budget).fit(X_tr, y_tr)
        results.append(scores(model, X_te, y_te))
    return np.median(np.array(results), axis=0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--tables", default="adult,breast_cancer,fair,Default")
    parser.add_argument(
        "--defaults-only",
        action="store_true",
        help='only the trees\' defaults (boosting="trees")',
    )
    args = parser.parse_args()
    eps = args.epsilon
    print(
        f"\n## ε = {eps}, δ = {DELTA}: median accuracy / ROC AUC over "
        f"{args.seeds} seeds\n"
    )
    names = args.tables.split(",")
    data = tables(names)
    names = [n for n in names if n in data]
    print("| setting | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    splits = {
        n: train_test_split(*data[n], test_size=0.25, random_state=0) for n in names
    }
    candidates = {"defaults": {}} if args.defaults_only else CANDIDATES
    for label, params in candidates.items():
        row = []
        for name in names:
            acc, auc = private_scores(
                lambda s, b, p=params: PrivateHistGradientBoostingClassifier(
                    eps,
                    DELTA,
                    classes=[0, 1],
                    accountant=b,
                    random_state=s,
                    **{"boosting": "trees", **p},  # the trees' design, stated
                ),
                splits[name],
                args.seeds,
            )
            row.append(f"{acc:.3f} / {auc:.3f}")
        print(f"| {label} | " + " | ".join(row) + " |", flush=True)
    row = []
    for name in names:
        acc, auc = private_scores(
            lambda s, b: PrivateLogisticRegression(
                eps, DELTA, classes=[0, 1], accountant=b, random_state=s
            ),
            splits[name],
            args.seeds,
        )
        row.append(f"{acc:.3f} / {auc:.3f}")
    print("| PrivateLogisticRegression | " + " | ".join(row) + " |")
    row = []
    for name in names:
        X_tr, X_te, y_tr, y_te = splits[name]
        model = HistGradientBoostingClassifier(random_state=0).fit(X_tr, y_tr)
        row.append("{:.3f} / {:.3f}".format(*scores(model, X_te, y_te)))
    print("| HistGradientBoostingClassifier (non-private) | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
