"""``skdp`` / ``python -m skdp``: private statistics from the command line.

``skdp describe [FILE]`` prints private descriptive statistics of a CSV file;
``skdp`` alone runs a short demonstration of a private pipeline and its ledger.
"""

import argparse
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np

from skdp import __version__
from skdp._csv import scan_numeric_csv
from skdp._describe import TAIL_SHARE_NOTE, describe, format_table
from skdp.accounting import BudgetAccountant
from skdp.exceptions import BudgetExceededError
from skdp.utils._progress import ProgressMeter

#: The module docstring without its reST markup, for ``skdp --help``.
PLAIN_DESCRIPTION = __doc__.replace("``", "")

#: Seconds of reading before progress lines start (without --verbose):
#: only long inputs get them.
PROGRESS_DELAY = 1.0

#: A column whose released count is below this share of the largest released
#: count gets a note (see :func:`_few_values_notes`).
FEW_VALUES_SHARE = 0.5

# Public bounds from domain knowledge, never from the data.
DEMO_BOUNDS = {"age": (18.0, 90.0), "bmi": (15.0, 50.0), "bp": (60.0, 140.0)}


def demo(epsilon=1.0):
    """Fit a private pipeline on scikit-learn's diabetes data; print the ledger."""
    # here, not at the top: ``skdp describe`` needs none of them
    from sklearn.datasets import load_diabetes
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline

    from skdp.preprocessing import DPClipper, PrivateMean

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

    # 2 folds x (0.05 + 0.1) + a refit of at most 0.1: 0.4 epsilon, which fits
    # in the half left after the pipeline's fit
    search = GridSearchCV(
        make_pipeline(DPClipper(bounds=bounds), PrivateMean(bounds=bounds)),
        {"privatemean__epsilon": [0.05 * epsilon, 0.1 * epsilon]},
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
    """The accountant of a run: in memory, a new ledger file, or an existing one.

    A new ``--ledger`` file gets the budget ``--budget`` (default: the run's
    ``--epsilon``). An existing file keeps the budget stored in it; a
    ``--budget`` that differs from it is an error, never silently ignored.
    """
    if args.ledger is None:
        return BudgetAccountant(epsilon=args.epsilon)
    if Path(args.ledger).exists():
        accountant = BudgetAccountant.open(args.ledger)
        if args.budget is not None and args.budget != accountant.epsilon:
            raise ValueError(
                f"--budget {args.budget:g} differs from the budget epsilon="
                f"{accountant.epsilon:g} stored in the existing ledger "
                f"{args.ledger!r}; a ledger's budget is fixed when it is created. "
                "Drop --budget to use the stored one, or pass a new --ledger file."
            )
        return accountant
    budget = args.epsilon if args.budget is None else args.budget
    return BudgetAccountant(epsilon=budget, ledger=args.ledger)


def _read_table(args, columns):
    """``(data, source)`` of the file or the demo."""
    if args.file is None:
        data, source = _demo_table(), "a synthetic demo table (50,000 rows)"
        if columns is not None:
            unknown = sorted(set(columns) - set(data))
            if unknown:
                raise ValueError(
                    f"Columns not in the demo table: {unknown}; it has {list(data)}."
                )
            data = {c: data[c] for c in columns}
        return data, source
    path = Path(args.file)
    size = path.stat().st_size if path.is_file() else None
    delay = math.inf if args.quiet else 0.0 if args.verbose else PROGRESS_DELAY
    progress = ProgressMeter(f"skdp describe: reading {path.name}", size, delay=delay)
    data = scan_numeric_csv(path, columns, progress=progress, n_jobs=args.n_jobs)
    return data, args.file


def _tail_notes(rows):
    """One sentence per column whose upper bound may cut off part of the
    mean, from released values only (see :func:`skdp._describe.tail_share`)."""
    notes = []
    for name, row in rows.items():
        share = row.get("tail_share")
        if share is None or share < TAIL_SHARE_NOTE:
            continue
        notes.append(
            f"{name}: the upper bound {row['upper']:.6g} may cut off part of the "
            f"mean (up to about {row['tail_rows']:.0f} rows may lie above it; at "
            f"the bound they make {share:.0%} of the mean). Pass --bounds "
            f"{name}=LOW:HIGH if the range is known."
        )
    return notes


def _few_values_notes(rows):
    """One sentence per column whose released count is below
    ``FEW_VALUES_SHARE`` of the largest released count: most of its cells
    are missing or not numbers (a column of text?), and its share of the
    budget might serve the others. From released values only."""
    largest = max(row["count"] for row in rows.values())
    return [
        f"{name}: about {row['count']} values, fewer than "
        f"{FEW_VALUES_SHARE:.0%} of the {largest} of the fullest column; most "
        "of its cells are missing or not numbers. Its share of epsilon is "
        "spent all the same: pass --columns with the numeric columns only "
        "to split the budget between them."
        for name, row in rows.items()
        if row["count"] < FEW_VALUES_SHARE * largest
    ]


def _note(message):
    print(f"skdp describe: note: {message}", file=sys.stderr)


def _notes_of(warnings_caught):
    for warning in warnings_caught:
        _note(str(warning.message))


def describe_command(args):
    """``skdp describe``: private statistics of a CSV file's columns."""
    caught = []  # warnings of describe: notes, printed whatever happens next
    try:
        bounds = _parse_bounds(args.bounds)
        columns = args.columns.split(",") if args.columns else None
        data, source = _read_table(args, columns)
        accountant = _open_accountant(args)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            rows = describe(
                data,
                epsilon=args.epsilon,
                bounds=bounds,
                accountant=accountant,
                random_state=args.seed,
                n_jobs=args.n_jobs,
                verbose=int(args.verbose),
            )
    except BudgetExceededError as exc:
        _notes_of(caught)
        print(f"skdp describe: refused: {exc}", file=sys.stderr)
        return 3
    except (OSError, ValueError, TypeError, KeyError) as exc:
        _notes_of(caught)
        print(f"skdp describe: error: {exc}", file=sys.stderr)
        return 2
    _notes_of(caught)
    notes = _tail_notes(rows) + _few_values_notes(rows)
    spent, _ = accountant.total()
    if args.json:
        print(
            json.dumps(
                {
                    "source": str(source),
                    "epsilon": args.epsilon,
                    "ledger_spent": spent,
                    "columns": rows,
                    "notes": notes,
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
        for note in notes:
            print(f"Note: {note}")
        if args.ledger is not None:
            print(f"\nLedger {args.ledger}: spent {spent:g} of {accountant.epsilon:g}")
    return 0


#: Options accepted before and after the subcommand, with one meaning and one
#: default each (``skdp --epsilon 0.1 describe`` = ``skdp describe --epsilon
#: 0.1``). Their defaults are filled in after parsing: a default given to the
#: subcommand's parser would overwrite the value given before it.
SHARED_OPTIONS = {"epsilon": 1.0, "ledger": None, "budget": None}


def _shared_options():
    shared = argparse.ArgumentParser(add_help=False)
    shared.add_argument(
        "--epsilon",
        type=float,
        default=argparse.SUPPRESS,
        help="total epsilon of the run (default 1.0)",
    )
    shared.add_argument(
        "--ledger",
        default=argparse.SUPPRESS,
        help="SQLite ledger file: runs on the same data share its budget and are "
        "refused once it is spent (the file persists between runs)",
    )
    shared.add_argument(
        "--budget",
        type=float,
        default=argparse.SUPPRESS,
        help="total budget of a new --ledger file (default: --epsilon); for an "
        "existing file it must equal the stored budget",
    )
    return shared


def _build_parser():
    shared = _shared_options()
    parser = argparse.ArgumentParser(
        prog="skdp", description=PLAIN_DESCRIPTION, parents=[shared]
    )
    parser.add_argument("--version", action="version", version=__version__)
    commands = parser.add_subparsers(dest="command")
    desc = commands.add_parser(
        "describe",
        parents=[shared],
        help="private descriptive statistics of a CSV file",
        description="Private count, mean, median, IQR and clip bounds of every "
        "column of a CSV file's header (.csv or .csv.gz), or of the columns "
        "given by --columns, at a total epsilon split equally between them. "
        "Without a file, describes a synthetic demo table.",
        epilog="The schema is yours, never the cells': the columns described "
        "are the header's (or --columns), the first line of the file, and "
        "the budget is split between them before a cell is read. Each line "
        "(ended by \\n, \\r\\n or a lone \\r) is one row, and each cell is "
        "read on its own: a cell that is not a finite number (empty, NA, "
        "text, inf) is missing, left out of its column's statistics only, "
        "and a quote left open ends with its line. "
        "So one row can change only its own cells' contribution, never which "
        "columns are described or their share of epsilon; a column of text "
        "is described too (its released count is about 0: pass --columns to "
        "leave it out). Notes after the table come from released values "
        "only: a column whose released count is below "
        f"{FEW_VALUES_SHARE:.0%} of the largest one, and a privately chosen "
        "upper bound that may cut off part of the mean (the rows the bound "
        f"search lets lie above it would carry at least {TAIL_SHARE_NOTE:.0%} "
        "of the mean at the bound). Progress lines (bytes read) go to stderr, "
        "for the person running the command, after "
        f"{PROGRESS_DELAY:g} s of reading.",
    )
    desc.add_argument("file", nargs="?", help="CSV file (default: a demo dataset)")
    desc.add_argument(
        "--columns",
        help="comma-separated columns to describe, by their names in the header "
        "(default: every column of the header)",
    )
    desc.add_argument(
        "--bounds",
        action="append",
        metavar="NAME=LOW:HIGH",
        help="public bounds of a column (repeatable); others are found privately",
    )
    desc.add_argument("--json", action="store_true", help="print JSON")
    desc.add_argument(
        "--n-jobs",
        type=int,
        metavar="N",
        help="threads reading the file and describing columns (default 1; -1: "
        "all processors); the output is the same",
    )
    chatter = desc.add_mutually_exclusive_group()
    chatter.add_argument(
        "-q", "--quiet", action="store_true", help="no progress lines on stderr"
    )
    chatter.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="progress lines on stderr from the start, and one per column",
    )
    desc.add_argument(
        "--seed", type=int, help="fixed seed: reproducible, NOT private; tests only"
    )
    return parser


def _parse(argv):
    parser = _build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # argparse reports a subcommand's unknown flag with the top-level
        # usage; show the usage of the command that was given instead
        command = _subparser(parser, args.command)
        command.error(f"unrecognized arguments: {' '.join(unknown)}")
    for name, default in SHARED_OPTIONS.items():
        if not hasattr(args, name):
            setattr(args, name, default)
    if not (math.isfinite(args.epsilon) and args.epsilon > 0):
        raise ValueError(f"--epsilon must be a finite number > 0; got {args.epsilon}.")
    if args.budget is not None and not args.budget > 0:
        raise ValueError(f"--budget must be > 0; got {args.budget}.")
    return args


def _subparser(parser, name):
    """The parser of subcommand ``name``, or ``parser`` itself for None."""
    if name is None:
        return parser
    actions = parser._subparsers._group_actions
    return next(a.choices[name] for a in actions if name in a.choices)


def main(argv=None):
    try:
        args = _parse(argv)
    except ValueError as exc:
        print(f"skdp: error: {exc}", file=sys.stderr)
        return 2
    if args.command == "describe":
        return describe_command(args)
    if args.ledger is not None or args.budget is not None:
        print(
            "skdp: error: --ledger and --budget apply to 'skdp describe'; the tour "
            "uses an accountant of its own with the budget --epsilon.",
            file=sys.stderr,
        )
        return 2
    try:
        demo(args.epsilon)
    except BudgetExceededError as exc:  # not expected: the tour plans its spends
        print(f"skdp: refused: {exc}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
