"""BudgetAccountant.report, _repr_html_ and plot: exact sums, layout, escaping."""

import re
import sys
from datetime import datetime
from fractions import Fraction
from itertools import accumulate

import matplotlib
import pytest

from skdp import BudgetAccountant
from skdp.accounting import LedgerEntry, _report

matplotlib.use("Agg")

SPENDS = [
    ("PrivateMean: clipped sums", 0.1, 1e-6),
    ("PrivateMean: count", 0.25, 0.0),
    ("PrivateLinearRegression: coef", 0.3, 2e-6),
    ("PrivateMean: clipped sums", 0.2, 1e-6),
    ("PrivateMean: clipped sums", 0.7, 0.0),
]


def decimal_value(x):
    """The number a float's repr writes, as the accountant reads it."""
    return Fraction(repr(x))


def fsum_exact(values):
    return sum((decimal_value(v) for v in values), Fraction(0))


def make_accountant(spends=SPENDS, **kwargs):
    acc = BudgetAccountant(**{"epsilon": 2.0, "delta": 1e-5, **kwargs})
    for label, eps, delta in spends:
        acc.spend(eps, delta, label=label)
    return acc


def table_rows(report, columns=4):
    """The cells of the table between the rule of dashes and the blank line."""
    lines = report.splitlines()
    start = next(i for i, line in enumerate(lines) if re.fullmatch("[- ]+", line))
    start += 1
    end = lines.index("", start)
    return [line.rsplit(maxsplit=columns - 1) for line in lines[start:end]]


def summary(report, name):
    """``{"epsilon": float, "delta": float}`` from the report's line ``name``."""
    line = next(line for line in report.splitlines() if line.startswith(name + " "))
    return {key: float(value) for key, value in re.findall(r"(\w+)=(\S+)", line)}


@pytest.fixture
def pyplot():
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def expected_groups(spends, key):
    groups = {}
    for label, eps, delta in spends:
        groups.setdefault(key(label), []).append((eps, delta))
    return {
        name: (
            len(costs),
            fsum_exact(eps for eps, _ in costs),
            fsum_exact(delta for _, delta in costs),
        )
        for name, costs in groups.items()
    }


@pytest.mark.parametrize(
    "by, key",
    [("label", lambda label: label), ("estimator", lambda label: label.split(":")[0])],
)
def test_grouped_sums_match_exact_hand_sums(by, key):
    rows = table_rows(make_accountant().report(by=by))
    expected = expected_groups(SPENDS, key)
    # in order of first appearance
    assert [row[0] for row in rows] == list(expected)
    for name, count, eps, delta in rows:
        n, exact_eps, exact_delta = expected[name]
        assert int(count) == n
        assert float(eps) == pytest.approx(float(exact_eps), rel=1e-6)
        assert float(delta) == pytest.approx(float(exact_delta), rel=1e-6)


def test_grouped_sums_by_hand():
    rows = table_rows(make_accountant().report())
    # 0.1 + 0.2 + 0.7 is exactly 1; 1e-6 + 1e-6 is exactly 2e-6
    assert rows == [
        ["PrivateMean: clipped sums", "3", "1", "2e-06"],
        ["PrivateMean: count", "1", "0.25", "0"],
        ["PrivateLinearRegression: coef", "1", "0.3", "2e-06"],
    ]
    rows = table_rows(make_accountant().report(by="estimator"))
    assert rows == [
        ["PrivateMean", "4", "1.25", "2e-06"],
        ["PrivateLinearRegression", "1", "0.3", "2e-06"],
    ]


def test_estimator_groups_split_at_first_colon_space():
    acc = make_accountant(
        [("Pipeline: step: mean", 0.1, 0.0), ("no colon", 0.2, 0.0)], epsilon=1.0
    )
    rows = table_rows(acc.report(by="estimator"))
    assert [row[0] for row in rows] == ["Pipeline", "no colon"]


def test_label_sums_read_floats_as_their_decimal_repr():
    from skdp.accounting._ledger import add_to_labels

    values = [0.1] * 10 + [0.2, 0.7, 1e-300, 5e-324, 1e308, 0.1 + 0.2]
    entries = [LedgerEntry("a", v, v, 0.0) for v in values]
    entries += [LedgerEntry("b", 0.1, 0.0, 0.0)] * 10
    groups = _report.label_groups(add_to_labels({}, entries), "label")
    assert groups["a"] == (len(values), float(fsum_exact(values)), groups["a"][2])
    assert groups["b"] == (10, 1.0, 0.0)  # ten times 0.1 is exactly 1


def test_cumulative_sums_round_the_exact_running_sums():
    values = [0.1, 0.2, 0.1, 1e-17, 0.3]
    expected = [float(s) for s in accumulate(map(decimal_value, values))]
    assert _report.cumulative_sums(values) == expected
    # 0.1 + 0.2 is 0.3 exactly, not 0.30000000000000004
    assert _report.cumulative_sums([0.1, 0.2])[-1] == 0.3


def test_by_entry_lists_every_entry_with_time_and_cumulative_sums():
    acc = make_accountant()
    report = acc.report(by="entry")
    *rows, note = table_rows(report, columns=5)  # label has spaces
    assert " ".join(note) == "cumulative sums are basic composition"
    assert len(rows) == len(SPENDS)
    cum_eps = accumulate(decimal_value(eps) for _, eps, _ in SPENDS)
    cum_delta = accumulate(decimal_value(delta) for _, _, delta in SPENDS)
    for i, (row, entry, ce, cd) in enumerate(
        zip(rows, acc.entries, cum_eps, cum_delta, strict=True), start=1
    ):
        number, time, label = row[0].split(maxsplit=2)
        assert int(number) == i
        assert label == entry.label
        assert abs(datetime.fromisoformat(time).timestamp() - entry.time) < 1
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", time)
        assert [float(x) for x in row[1:3]] == [entry.epsilon, entry.delta]
        assert float(row[3]) == pytest.approx(float(ce), rel=1e-6)
        assert float(row[4]) == pytest.approx(float(cd), rel=1e-6)


def test_budget_spent_and_remaining_lines():
    acc = make_accountant()
    report = acc.report()
    spent_eps = fsum_exact(eps for _, eps, _ in SPENDS)
    spent_delta = fsum_exact(delta for _, _, delta in SPENDS)
    assert summary(report, "budget") == {"epsilon": 2.0, "delta": 1e-5}
    assert summary(report, "spent") == pytest.approx(
        {"epsilon": float(spent_eps), "delta": float(spent_delta)}, rel=1e-6
    )
    remaining = {
        "epsilon": float(2 - spent_eps),
        "delta": float(decimal_value(1e-5) - spent_delta),
    }
    assert summary(report, "remaining") == pytest.approx(remaining, rel=1e-6)
    assert "basic composition" in report
    assert "basic sum" not in report  # only shown when slack > 0
    assert "5 spends" in report.splitlines()[0]


def test_infinite_budget_shows_inf():
    acc = make_accountant(epsilon=float("inf"), delta=1.0)
    report = acc.report()
    assert "epsilon=inf" in next(
        line for line in report.splitlines() if line.startswith("budget")
    )
    assert summary(report, "remaining")["epsilon"] == float("inf")
    assert "no limit on delta" in report
    assert ">inf<" in acc._repr_html_()


@pytest.mark.parametrize("by", ["label", "estimator", "entry"])
def test_empty_ledger(by):
    acc = BudgetAccountant(epsilon=1.0)
    report = acc.report(by=by)
    assert "0 spends" in report
    assert "(no spends)" in report
    assert summary(report, "spent") == {"epsilon": 0.0, "delta": 0.0}
    assert summary(report, "remaining") == {"epsilon": 1.0, "delta": 0.0}
    assert "(no spends)" in acc._repr_html_()


def test_invalid_by_raises():
    acc = make_accountant()
    with pytest.raises(ValueError, match="by must be one of"):
        acc.report(by="time")
    with pytest.raises(ValueError, match="by must be one of"):
        acc.report(by=None)


def test_control_characters_in_labels_stay_on_one_line():
    acc = make_accountant([("PrivateMean: a\nb", 0.1, 0.0)], epsilon=1.0)
    assert [row[0] for row in table_rows(acc.report())] == ["PrivateMean: a\\nb"]


def test_html_escapes_labels():
    label = '<script>alert("x")</script>: & more'
    acc = make_accountant([(label, 0.5, 0.0)], epsilon=1.0)
    page = acc._repr_html_()
    assert "<script>" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;: &amp; more" in page


def test_html_shows_budget_spent_remaining_and_labels():
    page = make_accountant()._repr_html_()
    for text in ["budget", "spent", "remaining", "PrivateMean: count", ">0.25<"]:
        assert text in page
    # clipped sums: 0.1 + 0.2 + 0.7 = 1 exactly
    assert re.search(r"PrivateMean: clipped sums</td><td[^>]*>3</td><td[^>]*>1<", page)


def test_html_caps_the_number_of_rows():
    spends = [(f"query {i % 60}", 0.001, 0.0) for i in range(600)]
    acc = make_accountant(spends, epsilon=1.0)
    page = acc._repr_html_()
    assert "query 49<" in page
    assert "query 50<" not in page
    assert "… 10 more labels" in page
    label_table = page.split("<table>")[2]
    # a header, 50 labels and the "more" row
    assert label_table.count("<tr>") == 1 + _report.HTML_MAX_ROWS + 1


def test_sqlite_ledger_reports_like_memory(tmp_path):
    memory = make_accountant(epsilon=2.0, delta=1e-5, slack=1e-6)
    path = tmp_path / "l.sqlite"
    sqlite = make_accountant(epsilon=2.0, delta=1e-5, slack=1e-6, ledger=path)
    for by in ["label", "estimator"]:
        memory_lines = memory.report(by=by).splitlines()
        sqlite_lines = sqlite.report(by=by).splitlines()
        assert str(path) in sqlite_lines[0]
        assert "in memory" in memory_lines[0]
        assert sqlite_lines[1:] == memory_lines[1:]

    def without_times(report):
        return [re.sub(r"\S+\+00:00", "", line) for line in report.splitlines()[1:]]

    assert without_times(sqlite.report(by="entry")) == without_times(
        memory.report(by="entry")
    )
    reopened = BudgetAccountant.open(path)
    assert reopened.report() == sqlite.report()
    assert str(path) in sqlite._repr_html_()


def test_slack_shows_basic_sum_and_advanced_total():
    # 300 x 0.01: the sum (3.0) is over the budget; the filter admits them
    spends = [("PrivateMean: clipped sums", 0.01, 0.0)] * 300
    acc = make_accountant(spends, epsilon=2.0, delta=1e-5, slack=1e-6)
    report = acc.report()
    basic = summary(report, "basic sum")
    spent = summary(report, "spent")
    assert basic == {"epsilon": 3.0, "delta": 1e-6}
    eps, delta = acc.total()
    assert eps < 2.0
    assert spent == pytest.approx({"epsilon": eps, "delta": delta}, rel=1e-5)
    spent_line = next(line for line in report.splitlines() if line.startswith("spent"))
    assert "advanced composition" in spent_line
    assert "slack=1e-06" in report
    assert "spent (advanced)" in acc._repr_html_()


def test_slack_with_basic_composition_smaller_says_so():
    acc = make_accountant([("PrivateMean: count", 0.5, 0.0)], slack=1e-6)
    report = acc.report()
    assert summary(report, "basic sum") == summary(report, "spent")
    spent_line = next(line for line in report.splitlines() if line.startswith("spent"))
    assert "basic composition" in spent_line


def test_snapshot_covers_only_the_entries_its_totals_include(monkeypatch):
    # A spend landing between reading the totals and the entries must not
    # appear in the table while missing from the totals.
    acc = make_accountant()
    ledger = acc._ledger
    read = ledger.read
    late = LedgerEntry("PrivateMean: late", 0.1, 0.0, 0.0)
    monkeypatch.setattr(ledger, "read", lambda: (*read(), late))
    snapshot = _report.take_snapshot(acc, entries=True)
    assert snapshot.entries == read()


def test_plot_draws_cumulative_sums(pyplot):
    acc = make_accountant()
    ax = acc.plot()
    epsilon_line = ax.get_lines()[0]
    n = len(SPENDS)
    assert list(epsilon_line.get_xdata()) == list(range(n + 1))
    expected_eps = [
        0.0,
        *(float(s) for s in accumulate(decimal_value(e) for _, e, _ in SPENDS)),
    ]
    assert [float(y) for y in epsilon_line.get_ydata()] == expected_eps
    assert epsilon_line.get_drawstyle() == "steps-post"
    budget = [line for line in ax.get_lines() if line.get_label() == "epsilon budget"]
    assert [float(y) for y in budget[0].get_ydata()] == [2.0, 2.0]

    (twin,) = [other for other in ax.figure.axes if other is not ax]
    delta_line = twin.get_lines()[0]
    expected_delta = [
        0.0,
        *(float(s) for s in accumulate(decimal_value(d) for _, _, d in SPENDS)),
    ]
    assert [float(y) for y in delta_line.get_ydata()] == expected_delta


def test_plot_on_given_axes_without_delta(pyplot):
    _, ax = pyplot.subplots()
    acc = make_accountant(epsilon=float("inf"))
    assert acc.plot(ax, delta=False) is ax
    assert ax.figure.axes == [ax]
    # no budget line for an infinite budget
    assert [line.get_label() for line in ax.get_lines()] == ["epsilon spent"]


def test_plot_skips_delta_axis_when_no_delta_spent(pyplot):
    acc = make_accountant([("PrivateMean: count", 0.5, 0.0)])
    ax = acc.plot()
    assert ax.figure.axes == [ax]


def test_plot_marks_advanced_composition_total(pyplot):
    spends = [("PrivateMean: clipped sums", 0.01, 0.0)] * 300
    acc = make_accountant(spends, epsilon=2.0, slack=1e-6)
    ax = acc.plot()
    (marker,) = [line for line in ax.get_lines() if "advanced" in str(line.get_label())]
    assert list(marker.get_xdata()) == [300]
    assert list(marker.get_ydata()) == [acc.total()[0]]


def test_plot_of_empty_ledger(pyplot):
    ax = BudgetAccountant(epsilon=1.0).plot()
    assert list(ax.get_lines()[0].get_ydata()) == [0.0]


def test_plot_without_matplotlib_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        make_accountant().plot()
