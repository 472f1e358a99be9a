"""Reports on a BudgetAccountant's ledger: a text table, HTML and a plot.

Everything here works on a :class:`Snapshot`, one consistent reading of an
accountant (its entries, their composed total and the remaining budget), so
that a report on a ledger shared with other threads or processes never mixes
two states of it. Sums over entries are exact, as in the accountant: each
float is read as the decimal number its repr writes.
"""

import decimal
import html
import itertools
import math
from datetime import UTC, datetime
from typing import NamedTuple

from skdp.accounting._composition import DECIMAL_ONE, _ratio_up
from skdp.accounting._rounding import float_up

__all__ = [
    "Snapshot",
    "format_html",
    "format_report",
    "plot_ledger",
    "take_snapshot",
]

GROUPINGS = ("label", "estimator", "entry")

# Rows of grouped spends shown by the HTML representation; the rest are
# summarised in one line so that a long ledger still renders quickly.
HTML_MAX_ROWS = 50

# Decimal arithmetic that never rounds: libmpdec stores only the digits a
# number has, so the maximal precision costs nothing for short decimals.
_EXACT = decimal.Context(
    prec=decimal.MAX_PREC,
    Emax=decimal.MAX_EMAX,
    Emin=decimal.MIN_EMIN,
    traps=[decimal.Inexact, decimal.Rounded],
)


class Snapshot(NamedTuple):
    """One consistent reading of an accountant, as plain values.

    ``basic`` is the exact sum of the entries rounded up; ``spent`` is what
    :meth:`BudgetAccountant.total` reports for them, ``mode`` the
    accountant's composition and ``composition`` the rule that gave
    ``spent`` (with ``"advanced"``, the smaller of basic and advanced). ``labels`` holds
    the exact per-label sums the ledger keeps (so grouped reports never read
    the entries); ``entries`` is filled only for the views that list them.
    """

    count: int
    labels: dict
    entries: tuple
    budget: tuple
    slack: float
    mode: str
    basic: tuple
    spent: tuple
    composition: str
    remaining: tuple
    ledger: str | None
    unit: str = "row"
    max_rows_per_group: int | None = None


def take_snapshot(accountant, *, entries=False, attempts=3):
    """Read an accountant's totals, per-label sums and remaining budget together.

    The totals and the per-label sums are read together (one transaction or
    lock). With ``entries``, the entries are read too: the ledger only grows,
    so the first ``totals.count`` entries are exactly those its totals cover.
    ``remaining`` is read in between; if a concurrent spend lands meanwhile
    the reading is retried, and after ``attempts`` the remaining budget may
    already include that newer spend.
    """
    ledger = accountant._ledger
    for _ in range(attempts):
        totals, labels = ledger.label_totals()
        remaining = accountant.remaining()
        if ledger.totals().count == totals.count:
            break
    listed = ledger.read()[: totals.count] if entries else ()
    statements = accountant._compose(totals)
    composition = accountant.composition
    if composition == "advanced":
        # min() keeps the first of equal statements, so ties count as basic.
        chosen = min(statements)
        composition = "basic" if statements.index(chosen) == 0 else "advanced"
    basic_eps, basic_delta = statements[0]
    return Snapshot(
        count=totals.count,
        labels=labels,
        entries=listed,
        budget=(accountant.epsilon, accountant.delta),
        slack=accountant.slack,
        mode=accountant.composition,
        basic=(float_up(basic_eps), float_up(basic_delta)),
        spent=accountant._total_of(totals),
        composition=composition,
        remaining=remaining,
        ledger=accountant.ledger,
        unit=accountant.unit,
        max_rows_per_group=accountant.max_rows_per_group,
    )


# -- exact sums -------------------------------------------------------------


def decimal_reading(value):
    """``exact(value)`` as a Decimal: the number the float's repr writes."""
    return decimal.Decimal(repr(float(value)))


class _Memo(dict):
    """``memo[x]`` is ``function(x)``, computed once per distinct ``x``."""

    def __init__(self, function):
        self.function = function

    def __missing__(self, value):
        result = self[value] = self.function(value)
        return result


def cumulative_sums(values):
    """The running exact sums of ``values``, each rounded to the nearest float."""
    readings = map(_Memo(decimal_reading).__getitem__, values)
    return list(map(float, itertools.accumulate(readings, _EXACT.add)))


# -- grouping ---------------------------------------------------------------


def check_by(by):
    if by not in GROUPINGS:
        raise ValueError(
            f"by must be one of {', '.join(map(repr, GROUPINGS))}; got {by!r}."
        )
    return by


def estimator_of(label):
    """The part of a label before its first ``": "`` (the estimator's class)."""
    return label.split(": ", 1)[0]


# -- text -------------------------------------------------------------------


def format_number(value):
    """A compact decimal (six significant digits); infinity as ``inf``."""
    return format(float(value), ".6g")


def printable(label):
    """A label on one line: control characters shown as escapes."""
    return label if label.isprintable() else repr(label)[1:-1]


def format_time(timestamp):
    """An entry's wall-clock time, in UTC, ISO 8601 to the second."""
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")


def format_table(rows, header=None, right=()):
    """Rows of strings as aligned lines; columns in ``right`` right-aligned.

    With a header, a rule of dashes under each column separates it from the
    rows.
    """
    all_rows = rows if header is None else [header, *rows]
    if not all_rows:
        return []
    widths = [max(map(len, column)) for column in zip(*all_rows, strict=True)]
    # One format string for every line: much faster than padding cell by cell.
    template = "  ".join(
        f"{{:{'>' if i in right else '<'}{width}}}" for i, width in enumerate(widths)
    )
    lines = [template.format(*row).rstrip() for row in all_rows]
    if header is not None:
        lines.insert(1, "  ".join("-" * width for width in widths))
    return lines


def label_groups(labels, by):
    """``{name: (spends, epsilon, delta)}`` from the exact per-label sums,
    grouped by label or by estimator, in order of first appearance."""
    key = estimator_of if by == "estimator" else None
    groups = {}
    for label, (count, eps, delta) in labels.items():
        name = label if key is None else key(label)
        total = groups.get(name, (0, 0, 0))
        groups[name] = (total[0] + count, total[1] + eps, total[2] + delta)
    return {
        name: (count, _ratio_up(eps, DECIMAL_ONE), _ratio_up(delta, DECIMAL_ONE))
        for name, (count, eps, delta) in groups.items()
    }


def grouped_lines(snapshot, by):
    cells = [
        [printable(name), str(count), *map(format_number, (eps, delta))]
        for name, (count, eps, delta) in label_groups(snapshot.labels, by).items()
    ]
    return format_table(cells, [by, "spends", "epsilon", "delta"], right={1, 2, 3})


def stated_unit(entry):
    """How an entry was stated, when that is not one row counted as is:
    its unit and, if the accountant converted it, the stated cost."""
    unit = entry.unit
    if unit == "group" and entry.group_rows is not None:
        unit = f"group of <= {entry.group_rows} rows"
    if entry.counted is None:
        return unit if entry.unit != "row" else ""
    eps, delta = format_number(entry.epsilon), format_number(entry.delta)
    return f"{unit}: epsilon={eps}, delta={delta}"


def entry_lines(snapshot):
    """One line per entry, its counted cost (in the accountant's unit) and the
    running sums; a column of the stated units and costs when any entry has
    another unit than one row."""
    entries = snapshot.entries
    counted = [e.cost[:2] for e in entries]
    cum_eps = map(format_number, cumulative_sums(c[0] for c in counted))
    cum_delta = map(format_number, cumulative_sums(c[1] for c in counted))
    # Costs and times repeat (a batch of spends shares one time): format once.
    number = _Memo(format_number)
    when = _Memo(format_time)
    cells = [
        [
            str(i),
            when[time],
            printable(label),
            number[eps],
            number[delta],
            next(cum_eps),
            next(cum_delta),
        ]
        for i, ((label, _, _, time, *_), (eps, delta)) in enumerate(
            zip(entries, counted, strict=True), start=1
        )
    ]
    header = [
        "#",
        "time (UTC)",
        "label",
        "epsilon",
        "delta",
        "cum. epsilon",
        "cum. delta",
    ]
    stated = [stated_unit(e) for e in entries]
    if any(stated):
        header.append("stated for")
        cells = [[*row, text] for row, text in zip(cells, stated, strict=True)]
    return format_table(cells, header, right={0, 3, 4, 5, 6})


_SPENT_NOTES = {
    "basic": "basic composition: the sum of the entries",
    "advanced": "advanced composition, smaller than the basic sum",
    "zcdp": "zCDP composition, converted at delta (Canonne-Kamath-Steinke)",
    "pld": "PLD composition at the delta budget (pessimistic)",
}


def budget_lines(snapshot):
    """The budget, what was spent under which composition, and what remains."""
    budget_eps, budget_delta = snapshot.budget
    slack = snapshot.slack

    def pair(eps, delta):
        return [f"epsilon={format_number(eps)}", f"delta={format_number(delta)}"]

    budget_note = "no limit on delta" if budget_delta == 1.0 else ""
    if slack > 0:
        purpose = (
            "the zCDP conversion"
            if snapshot.mode == "zcdp"
            else ("advanced composition")
        )
        budget_note = f"slack={format_number(slack)} of delta for {purpose}" + (
            f"; {budget_note}" if budget_note else ""
        )
    if snapshot.unit == "group":
        rows = snapshot.max_rows_per_group
        per = "per group (a person)" + (
            "" if rows is None else f", <= {rows} rows each"
        )
        budget_note = per + (f"; {budget_note}" if budget_note else "")
    rows = [["budget", *pair(budget_eps, budget_delta), budget_note]]
    if snapshot.mode != "basic":
        rows.append(["basic sum", *pair(*snapshot.basic), "sum of the entries"])
    note = _SPENT_NOTES[snapshot.composition]
    if snapshot.mode == "advanced" and snapshot.composition == "basic":
        note = "basic composition, no larger than advanced"
    rows.append(["spent", *pair(*snapshot.spent), note])
    rows.append(["remaining", *pair(*snapshot.remaining), ""])
    return format_table(rows)


def format_report(snapshot, by="label"):
    """The text report of :meth:`BudgetAccountant.report`."""
    check_by(by)
    n = snapshot.count
    where = "in memory" if snapshot.ledger is None else f"in {snapshot.ledger}"
    title = f"BudgetAccountant ledger ({where}): {n} spend{'s' * (n != 1)}"
    if by == "entry":
        table = entry_lines(snapshot)
        if n:
            table.append("cumulative sums are basic composition")
    else:
        table = grouped_lines(snapshot, by)
    if not n:
        table.append("(no spends)")
    return "\n".join([title, "", *table, "", *budget_lines(snapshot)])


# -- HTML -------------------------------------------------------------------

_CELL = 'style="text-align: {}; padding: 0 0.6em"'
_LEFT = _CELL.format("left")
_RIGHT = _CELL.format("right")


def _html_row(cells, tag="td", aligns=None):
    aligns = aligns or [_LEFT] * len(cells)
    inner = "".join(
        f"<{tag} {align}>{html.escape(cell)}</{tag}>"
        for cell, align in zip(cells, aligns, strict=True)
    )
    return f"<tr>{inner}</tr>"


def format_html(snapshot, max_rows=HTML_MAX_ROWS):
    """A small self-contained HTML summary: budget, spent, remaining, labels."""
    numbers = [_LEFT, _RIGHT, _RIGHT]
    spent = "spent" if snapshot.mode == "basic" else f"spent ({snapshot.composition})"
    summary = [
        _html_row(["", "epsilon", "delta"], "th", numbers),
        _html_row(["budget", *map(format_number, snapshot.budget)], aligns=numbers),
    ]
    if snapshot.mode != "basic":
        basic = map(format_number, snapshot.basic)
        summary.append(_html_row(["basic sum", *basic], aligns=numbers))
    summary += [
        _html_row([spent, *map(format_number, snapshot.spent)], aligns=numbers),
        _html_row(
            ["remaining", *map(format_number, snapshot.remaining)], aligns=numbers
        ),
    ]

    groups = label_groups(snapshot.labels, "label")
    columns = [_LEFT, _RIGHT, _RIGHT, _RIGHT]
    rows = [_html_row(["label", "spends", "epsilon", "delta"], "th", columns)]
    for name, (count, eps, delta) in itertools.islice(groups.items(), max_rows):
        cells = [name, str(count), format_number(eps), format_number(delta)]
        rows.append(_html_row(cells, aligns=columns))
    hidden = len(groups) - max_rows
    if hidden > 0:
        rows.append(
            f'<tr><td colspan="4" {_LEFT}>… {hidden} more '
            f"label{'s' * (hidden != 1)}</td></tr>"
        )
    if not groups:
        rows.append(f'<tr><td colspan="4" {_LEFT}>(no spends)</td></tr>')

    n = snapshot.count
    where = "" if snapshot.ledger is None else f", ledger {snapshot.ledger}"
    if snapshot.unit == "group":
        where += ", budget per group (a person)"
    caption = html.escape(f"BudgetAccountant: {n} spend{'s' * (n != 1)}{where}")
    return (
        '<div class="skdp-budget-accountant">'
        f"<table><caption>{caption}</caption>{''.join(summary)}</table>"
        f"<table>{''.join(rows)}</table>"
        "</div>"
    )


# -- plot -------------------------------------------------------------------


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "BudgetAccountant.plot requires matplotlib: pip install matplotlib"
        ) from exc
    return plt


def plot_ledger(snapshot, ax=None, *, delta=True):
    """Cumulative (basic) epsilon per entry, with the budget and the delta spent.

    Returns the Axes holding the epsilon curve; cumulative delta, when drawn,
    is on a twin Axes sharing its x axis.
    """
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots()
    entries = snapshot.entries
    index = range(len(entries) + 1)
    # Start from (0, 0): the value at x = k is the total after k spends.
    cum_eps = [0.0, *cumulative_sums(e.cost[0] for e in entries)]
    ax.plot(index, cum_eps, drawstyle="steps-post", color="C0", label="epsilon spent")
    budget_eps, budget_delta = snapshot.budget
    if math.isfinite(budget_eps):
        ax.axhline(budget_eps, color="C0", linestyle="--", label="epsilon budget")
    if snapshot.composition != "basic":
        ax.plot(
            [len(entries)],
            [snapshot.spent[0]],
            marker="o",
            linestyle="none",
            color="C2",
            label=f"epsilon spent, {snapshot.composition} composition",
        )
    ax.set_xlabel("entry")
    ax.set_ylabel("cumulative epsilon (basic composition)")
    handles, labels = ax.get_legend_handles_labels()
    top = ax  # the legend goes on the Axes drawn last, so no curve hides it

    if delta and any(e.cost[1] > 0 for e in entries):
        twin = ax.twinx()
        cum_delta = [0.0, *cumulative_sums(e.cost[1] for e in entries)]
        twin.plot(
            index,
            cum_delta,
            drawstyle="steps-post",
            color="C1",
            label="delta spent",
        )
        if budget_delta < 1.0:
            twin.axhline(budget_delta, color="C1", linestyle=":", label="delta budget")
        twin.set_ylabel("cumulative delta")
        twin_handles, twin_labels = twin.get_legend_handles_labels()
        handles += twin_handles
        labels += twin_labels
        top = twin
    # Cumulative curves rise to the right, so the upper left is usually free
    # ("best" would be slow on a long ledger).
    top.legend(handles, labels, loc="upper left")
    return ax
