"""``python -m skdp``: a short demonstration of a private pipeline and its ledger."""

import argparse
import sys

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant, DPClipper, PrivateMean, __version__


def format_ledger(accountant):
    """The accountant's entries as a plain-text table."""
    lines = [f"{'#':>3}  {'label':<42} {'epsilon':>10} {'delta':>10}"]
    for i, entry in enumerate(accountant.entries, 1):
        lines.append(
            f"{i:>3}  {entry.label:<42} {entry.epsilon:>10.4g} {entry.delta:>10.3g}"
        )
    eps, delta = accountant.total()
    lines.append(f"{'':>3}  {'total':<42} {eps:>10.4g} {delta:>10.3g}")
    lines.append(
        f"{'':>3}  {'budget':<42} {accountant.epsilon:>10.4g} {accountant.delta:>10.3g}"
    )
    return "\n".join(lines)


# Public bounds from domain knowledge, never from the data.
DEMO_BOUNDS = {"age": (18.0, 90.0), "bmi": (15.0, 50.0), "bp": (60.0, 140.0)}


def demo(epsilon=1.0):
    """Fit a private pipeline on scikit-learn's diabetes data; print the ledger."""
    data = load_diabetes(scaled=False)
    columns = [list(data.feature_names).index(name) for name in DEMO_BOUNDS]
    X = data.data[:, columns]
    lower, upper = (list(side) for side in zip(*DEMO_BOUNDS.values(), strict=True))
    bounds = (lower, upper)
    accountant = BudgetAccountant(epsilon=epsilon)
    pipe = make_pipeline(
        DPClipper(bounds=bounds),
        PrivateMean(epsilon=epsilon / 2, bounds=bounds, random_state=0),
    )
    with accountant:
        pipe.fit(X)
    print(f"skdp {__version__}: private means of the diabetes data (442 rows)")
    print(f"  {'column':<7} {'bounds':<13} {'private':>8} {'exact':>8}")
    exact = X.mean(axis=0)
    for (name, (low, high)), value, true in zip(
        DEMO_BOUNDS.items(), pipe[-1].mean_, exact, strict=True
    ):
        print(f"  {name:<7} [{low:g}, {high:g}]{'':<4} {value:8.2f} {true:8.2f}")

    search = GridSearchCV(
        make_pipeline(DPClipper(bounds=bounds), PrivateMean(bounds=bounds)),
        {"privatemean__epsilon": [0.05, 0.1]},
        cv=2,
        scoring=_closeness_to_centre,
        error_score="raise",
    )
    with accountant:
        search.fit(X)
    print(
        "\nBudget ledger: one fit, then a grid search of 2 candidates x 2 folds + refit"
    )
    print(format_ledger(accountant))


def _closeness_to_centre(estimator, X, y=None):
    return -float(np.abs(estimator.transform(X)).mean())


def main(argv=None):
    parser = argparse.ArgumentParser(prog="skdp", description=__doc__)
    parser.add_argument("--version", action="version", version=__version__)
    parser.add_argument(
        "--epsilon", type=float, default=1.0, help="total budget (default 1.0)"
    )
    args = parser.parse_args(argv)
    demo(args.epsilon)
    return 0


if __name__ == "__main__":
    sys.exit(main())
