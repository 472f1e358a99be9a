"""Naive Bayes's noise: Laplace, the analytic Gaussian and the "auto" rule.

``PrivateGaussianNB`` releases its per-class moment sums with Laplace noise
(scale ``d/ε``, pure ε-DP), the analytic Gaussian (L2 sensitivity
``sqrt(d)``, δ = 1e-6), or ``mechanism="auto"`` (the default), which takes
the one with the smaller standard deviation from ε, δ, the budget shares and
the number of features ``d``. Measured side by side, with scikit-learn's
``GaussianNB()`` and the majority rate:

* tables: breast cancer (30 features), wine (13), digits (64), Caravan (85,
  ISLP; skipped with a message when ISLP is missing) and Adult's six numeric
  columns (``/work/shared/data/adult.csv.gz``, read from
  ``../shared/data`` beside the repository);
* held-out accuracy on one split (``train_test_split(test_size=0.3,
  random_state=0)``), ε ∈ {0.3, 1, 3}, δ = 1e-6, stated ``classes``, the
  bounds chosen privately (the default) or, with ``--bounds stated``, the
  true column ranges of the whole table (``_real_tables.stated_ranges``);
* median over seeds (``random_state`` 0-9) of a fresh fit each.

The table also shows which mechanism "auto" took, and a ``!`` where it is
below Laplace (the default before "auto").

Run from the repository root::

    python benchmarks/bench_naive_bayes_mechanism.py [--seeds 10] \\
        [--bounds private|stated] [--tables breast_cancer,wine,...]
"""

import argparse
import pathlib
import sys
import warnings

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

from skdp import BudgetAccountant
from skdp.naive_bayes import PrivateGaussianNB

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _real_tables import LOADERS, MissingPackage, Table, stated_ranges

ADULT = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "adult.csv.gz"
EPSILONS = (0.3, 1.0, 3.0)
MECHANISMS = ("laplace", "gaussian", "auto")


def adult_numeric():
    frame = pd.read_csv(ADULT)
    frame.columns = [c.strip() for c in frame.columns]
    target = frame.columns[-1]
    label = frame[target].astype(str).str.strip().str.rstrip(".")
    numeric = frame.drop(columns=[target]).select_dtypes("number")
    return Table(
        name="Adult numeric",
        task="classification",
        X=numeric.to_numpy(float),
        y=(label == ">50K").to_numpy().astype(int),
        feature_names=list(numeric.columns),
        source="UCI Adult (../shared/data/adult.csv.gz)",
        licence="CC BY 4.0",
    )


def load(names):
    tables, skipped = [], []
    for name in names:
        try:
            tables.append(adult_numeric() if name == "adult" else LOADERS[name]())
        except (MissingPackage, FileNotFoundError) as exc:
            skipped.append(f"{name}: {exc}")
    return tables, skipped


def median_accuracy(table, split, epsilon, mechanism, seeds, bounds):
    X_train, X_test, y_train, y_test = split
    scores, chosen = [], set()
    for seed in seeds:
        model = PrivateGaussianNB(
            epsilon,
            bounds=bounds,
            classes=table.classes,
            mechanism=mechanism,
            accountant=BudgetAccountant(delta=1.0),
            random_state=seed,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X_train, y_train)
        scores.append(model.score(X_test, y_test))
        chosen.add(model.mechanism_)
    return float(np.median(scores)), "/".join(sorted(chosen))


def rows_of(table, seeds, bounds_mode):
    split = train_test_split(table.X, table.y, test_size=0.3, random_state=0)
    X_train, X_test, y_train, y_test = split
    sklearn = GaussianNB().fit(X_train, y_train).score(X_test, y_test)
    majority = np.mean(y_test == np.bincount(y_train).argmax())
    bounds = stated_ranges(table) if bounds_mode == "stated" else None
    for epsilon in EPSILONS:
        accuracy, chosen = {}, ""
        for mechanism in MECHANISMS:
            accuracy[mechanism], took = median_accuracy(
                table, split, epsilon, mechanism, seeds, bounds
            )
            chosen = took if mechanism == "auto" else chosen
        flag = " !" if accuracy["auto"] < accuracy["laplace"] else ""
        yield (
            f"| {table.name} ({table.X.shape[1]}) | {epsilon:g} "
            + "".join(f"| {accuracy[m]:.3f} " for m in MECHANISMS)
            + f"| {chosen}{flag} | {sklearn:.3f} | {majority:.3f} |"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--bounds", choices=("private", "stated"), default="private")
    parser.add_argument("--tables", default="breast_cancer,wine,digits,Caravan,adult")
    args = parser.parse_args()
    tables, skipped = load(args.tables.split(","))
    seeds = range(args.seeds)
    print(
        f"bounds {args.bounds}, stated classes, delta 1e-6, median of "
        f"{args.seeds} seeds, held-out accuracy (30 %)\n"
    )
    print(
        "| table (features) | ε | laplace | gaussian | auto | auto took "
        "| scikit-learn | majority |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for table in tables:
        for row in rows_of(table, seeds, args.bounds):
            print(row, flush=True)
    for message in skipped:
        print(f"skipped {message}")


if __name__ == "__main__":
    main()
