"""``skdp`` / ``python -m skdp``: private statistics from the command line.

``skdp describe [FILE]`` prints private descriptive statistics of a CSV file;
``skdp`` alone runs a short demonstration of a private pipeline and its ledger.
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from skdp import (
    BudgetAccountant,
    BudgetExceededError,
    DPClipper,
    PrivateMean,
    __version__,
)
from skdp._describe import describe, format_table, read_numeric_csv

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
    print(accountant.report())


def _closeness_to_centre(estimator, X, y=None):
    return -float(np.abs(estimator.transform(X)).mean())


def _parse_bounds(items):
    bounds = {}
    for item in items or ():
        name, sep, pair = item.rpartition("=")
        low, colon, high = pair.partition(":")
        if not (sep and colon):
            raise ValueError(f"--bounds expects NAME=LOW:HIGH; got {item!r}.")
        bounds[name] = (float(low), float(high))
    return bounds


def _demo_table(n_rows=50_000):
    """A synthetic survey table (public, generated with a fixed seed)."""
    rng = np.random.default_rng(0)
    age = np.clip(rng.normal(42, 13, n_rows), 18, 90).round()
    hours = np.clip(rng.normal(40, 11, n_rows), 1, 99).round()
    income = rng.lognormal(10.5, 0.8, n_rows).round(-2)
    children = rng.poisson(1.2, n_rows).astype(float)
    return {"age": age, "hours": hours, "income": income, "children": children}


def _open_accountant(args):
    if args.ledger is None:
        return BudgetAccountant(epsilon=args.epsilon)
    if Path(args.ledger).exists():
        return BudgetAccountant.open(args.ledger)
    budget = args.epsilon if args.budget is None else args.budget
    return BudgetAccountant(epsilon=budget, ledger=args.ledger)


def describe_command(args):
    """``skdp describe``: private statistics of a CSV file's numeric columns."""
    try:
        bounds = _parse_bounds(args.bounds)
        columns = args.columns.split(",") if args.columns else None
        if args.file is None:
            data, source = _demo_table(), "a synthetic demo table (50,000 rows)"
            if columns is not None:
                unknown = sorted(set(columns) - set(data))
                if unknown:
                    raise ValueError(
                        f"Columns not in the demo table: {unknown}; it has "
                        f"{list(data)}."
                    )
                data = {c: data[c] for c in columns}
        else:
            data, source = read_numeric_csv(args.file, columns), args.file
        accountant = _open_accountant(args)
        rows = describe(
            data,
            epsilon=args.epsilon,
            bounds=bounds,
            accountant=accountant,
            random_state=args.seed,
        )
    except BudgetExceededError as exc:
        print(f"skdp describe: refused: {exc}", file=sys.stderr)
        return 3
    except (OSError, ValueError, TypeError, KeyError) as exc:
        print(f"skdp describe: error: {exc}", file=sys.stderr)
        return 2
    spent, _ = accountant.total()
    if args.json:
        print(
            json.dumps(
                {
                    "source": str(source),
                    "epsilon": args.epsilon,
                    "ledger_spent": spent,
                    "columns": rows,
                },
                indent=2,
            )
        )
    else:
        print(
            f"Private statistics of {source}, epsilon={args.epsilon:g} "
            f"({args.epsilon / len(rows):.3g} per column)"
        )
        print(format_table(rows))
        if args.ledger is not None:
            print(f"\nLedger {args.ledger}: spent {spent:g} of {accountant.epsilon:g}")
    return 0


def _build_parser():
    parser = argparse.ArgumentParser(prog="skdp", description=__doc__)
    parser.add_argument("--version", action="version", version=__version__)
    parser.add_argument(
        "--epsilon", type=float, default=1.0, help="total budget (default 1.0)"
    )
    commands = parser.add_subparsers(dest="command")
    desc = commands.add_parser(
        "describe",
        help="private descriptive statistics of a CSV file",
        description="Private count, mean, median, IQR and clip bounds of every "
        "numeric column of a CSV file (.csv or .csv.gz, with a header row), at "
        "a total epsilon split equally between the columns. Without a file, "
        "describes a synthetic demo table.",
    )
    desc.add_argument("file", nargs="?", help="CSV file (default: a demo dataset)")
    desc.add_argument(
        "--epsilon", type=float, default=1.0, help="total epsilon (default 1.0)"
    )
    desc.add_argument("--columns", help="comma-separated numeric columns to describe")
    desc.add_argument(
        "--bounds",
        action="append",
        metavar="NAME=LOW:HIGH",
        help="public bounds of a column (repeatable); others are found privately",
    )
    desc.add_argument(
        "--ledger",
        help="SQLite ledger file: runs on the same data share its budget and are "
        "refused once it is spent",
    )
    desc.add_argument(
        "--budget",
        type=float,
        help="total budget of a new --ledger file (default: --epsilon)",
    )
    desc.add_argument("--json", action="store_true", help="print JSON")
    desc.add_argument(
        "--seed", type=int, help="fixed seed: reproducible, NOT private; tests only"
    )
    return parser


def main(argv=None):
    args = _build_parser().parse_args(argv)
    if args.command == "describe":
        return describe_command(args)
    demo(args.epsilon)
    return 0


if __name__ == "__main__":
    sys.exit(main())
