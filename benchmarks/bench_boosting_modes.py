"""Cyclic boosting against trees by ε: where the classifier's
``boosting="auto"`` switches from the one to the other.

``PrivateHistGradientBoostingClassifier`` with ``boosting="cyclic"`` (its
``"auto"`` settings by ε) and with the trees ``boosting="auto"`` grows from
``TREES_FROM_EPSILON`` on (``max_iter=100, max_bins=255,
learning_rate=0.1``, stated here at every ε), on the six tables of
``bench_tree_models.py`` (its split 0, unscaled, public label set, private
bins, δ = 1e-6). Median held-out accuracy / ROC AUC over the seeds. The
switch is right where the trees are at or above the cyclic model; the
default is the better row left of ``TREES_FROM_EPSILON`` and the trees'
row from it.

Reproduce (about 5 minutes on 2 cores)::

    PYTHONPATH=. python benchmarks/bench_boosting_modes.py --seeds 3
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from bench_tree_models import TABLES, load, scores, split

from skdp import BudgetAccountant
from skdp.ensemble import PrivateHistGradientBoostingClassifier
from skdp.ensemble._hist_gradient_boosting._settings import (
    AUTO_SETTINGS,
    TREES_FROM_EPSILON,
)

LARGE = {k: v for k, v in AUTO_SETTINGS["trees, epsilon >= 1000"].items()}
MODES = {
    "cyclic (its auto settings)": {"boosting": "cyclic"},
    "trees, 100 x 255 bins, rate 0.1": {"boosting": "trees", **LARGE},
}


def row(table, params, epsilons, seeds):
    X_train, X_test, y_train, y_test = split(table)
    classes = np.unique(table.y)
    cells = []
    for epsilon in epsilons:
        results = [
            scores(
                PrivateHistGradientBoostingClassifier(
                    epsilon,
                    classes=classes,
                    random_state=seed,
                    accountant=BudgetAccountant(np.inf, 1.0),
                    **params,
                ).fit(X_train, y_train),
                X_test,
                y_test,
            )
            for seed in seeds
        ]
        accuracy = np.median([r["accuracy"] for r in results])
        auc = np.median([r["auc"] for r in results])
        cells.append(f"{accuracy:.4f} / {auc:.4f}")
    return cells


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--tables", nargs="+", default=list(TABLES))
    parser.add_argument(
        "--epsilons", type=float, nargs="+", default=[3.0, 100.0, 1000.0, 1e6]
    )
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # noise-dominated notes on some seeds
    tables, skipped = load(args.tables)
    for note in skipped:
        print(note)
    print(f"boosting='auto' grows trees from ε = {TREES_FROM_EPSILON:g}.\n")
    header = " | ".join(f"ε = {e:g}" for e in args.epsilons)
    print(f"| table | model | {header} |")
    print("|---|---|" + "---|" * len(args.epsilons))
    for table in tables:
        for label, params in MODES.items():
            cells = row(table, params, args.epsilons, range(args.seeds))
            print(f"| {table.name} | {label} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
