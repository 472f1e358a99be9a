"""What private label selection costs: stated ``classes`` against ``classes=None``.

With ``classes=None`` a classifier spends 10 % of its ε (and of its δ, or all
of it with Laplace sums) on partition selection of its labels, and leaves out
the rows of labels it does not release. This measures the test accuracy of
``PrivateLogisticRegression`` and ``PrivateGaussianNB`` with the labels stated
and selected, side by side, on real tables:

* UCI Adult (``../shared/data/adult.csv.gz``; features of
  ``bench_sample_aggregate.adult_features``), 2 classes;
* scikit-learn's breast cancer (569 rows, 2 classes) and digits (1,797 rows,
  10 classes of about 180), features scaled by their public ranges
  (``[0, 16]`` for digits' pixels; the columns' min and max for breast
  cancer, as a stand-in for a codebook);
* the share of fits whose selection released fewer labels than exist (a
  fit with fewer than two raises after its charge).

Seeds 0-9, ε ∈ {0.3, 1, 3}, δ = 1e-6, one split (``test_size=0.25``).

Reproduce::

    PYTHONPATH=. python benchmarks/bench_label_selection.py
"""

import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_sample_aggregate import adult_features

from skdp.linear_model import PrivateLogisticRegression
from skdp.naive_bayes import PrivateGaussianNB

EPSILONS = (0.3, 1.0, 3.0)
SEEDS = range(10)


def tables():
    X, y = adult_features()
    yield "adult", X, np.asarray(y)
    X, y = load_breast_cancer(return_X_y=True)
    low, high = X.min(axis=0), X.max(axis=0)
    yield "breast_cancer", (X - low) / (high - low), y
    X, y = load_digits(return_X_y=True)
    yield "digits", X / 16.0, y


def models(X):
    return {
        "logistic": PrivateLogisticRegression(),
        "naive_bayes": PrivateGaussianNB(bounds=(0.0, float(np.max(X)) or 1.0)),
    }


def run_one(model, X_train, y_train, X_test, y_test):
    """(accuracy or NaN, number of released labels)."""
    try:
        fitted = model.fit(X_train, y_train)
    except ValueError:  # fewer than two labels released: the fit's budget spent
        return np.nan, 0
    return fitted.score(X_test, y_test), fitted.classes_.size


def main():
    warnings.simplefilter("ignore")
    print("| table | model | ε | stated classes | classes=None | labels released |")
    print("|---|---|---|---|---|---|")
    for name, X, y in tables():
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.25, random_state=0
        )
        labels = np.unique(y)  # the codebook's label set, stated
        for model_name, base in models(X).items():
            for epsilon in EPSILONS:
                stated, selected, released = [], [], []
                for seed in SEEDS:
                    params = {"epsilon": epsilon, "random_state": seed}
                    model = clone(base).set_params(**params, classes=labels)
                    stated.append(run_one(model, X_train, y_train, X_test, y_test)[0])
                    model = clone(base).set_params(**params, classes=None)
                    score, n = run_one(model, X_train, y_train, X_test, y_test)
                    selected.append(score)
                    released.append(n)
                print(
                    f"| {name} | {model_name} | {epsilon:g} | "
                    f"{np.nanmean(stated):.3f} | {np.nanmean(selected):.3f} "
                    f"({np.isnan(selected).sum()} raised) | "
                    f"{np.mean(released):.1f} of {labels.size} |"
                )


if __name__ == "__main__":
    main()
