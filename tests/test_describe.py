"""``skdp describe``: private statistics of a CSV file, one budget, clear errors."""

import gzip
import json
from fractions import Fraction

import numpy as np
import pytest

from skdp import BudgetAccountant, BudgetExceededError
from skdp.__main__ import main
from skdp._describe import describe, read_numeric_csv
from skdp.accounting._composition import exact, split_budget


def write_csv(path, header, rows, opener=open):
    with opener(path, "wt", encoding="utf-8") as handle:
        handle.write(",".join(header) + "\n")
        for row in rows:
            handle.write(",".join(str(x) for x in row) + "\n")
    return path


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    n = 20_000
    age = rng.uniform(20, 80, n).round(1)
    score = rng.normal(50, 10, n).round(2)
    city = rng.choice(["a", "b"], n)
    rows = list(zip(age, score, city, strict=True))
    rows[3] = (rows[3][0], "?", rows[3][2])  # a missing value
    return write_csv(tmp_path / "t.csv", ["age", "score", "city"], rows), age, score


def spent(acc):
    return sum(Fraction(repr(e.epsilon)) for e in acc.entries)


# -- reading -------------------------------------------------------------------
def test_reads_numeric_columns_and_missing_cells(table):
    path, age, _ = table
    data = read_numeric_csv(path)
    assert list(data) == ["age", "score"]  # 'city' is not numeric
    np.testing.assert_array_equal(data["age"], age)
    assert np.isnan(data["score"][3]) and np.isnan(data["score"]).sum() == 1


def test_reads_gzip(tmp_path):
    path = write_csv(tmp_path / "t.csv.gz", ["x"], [[1], [2.5]], opener=gzip.open)
    np.testing.assert_array_equal(read_numeric_csv(path)["x"], [1.0, 2.5])


@pytest.mark.parametrize(
    "header, rows, columns, match",
    [
        (["a"], [["x"], ["y"]], None, "no numeric columns"),
        (["a", "b"], [[1, "x"]], ["b"], "not numeric"),
        (["a"], [[1]], ["zz"], "Columns not in"),
    ],
)
def test_read_errors(tmp_path, header, rows, columns, match):
    path = write_csv(tmp_path / "t.csv", header, rows)
    with pytest.raises(ValueError, match=match):
        read_numeric_csv(path, columns)


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_numeric_csv(tmp_path / "nope.csv")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match="empty"):
        read_numeric_csv(tmp_path / "empty.csv")


# -- the statistics and their cost ---------------------------------------------
def test_charges_the_budget_up_front_and_never_more(table):
    path, *_ = table
    acc = BudgetAccountant(epsilon=0.7)
    rows = describe(read_numeric_csv(path), epsilon=0.7, accountant=acc, random_state=0)
    assert spent(acc) <= Fraction("0.7")
    assert float(spent(acc)) == pytest.approx(0.7, rel=1e-12)
    assert len(acc.entries) == 2 * 3  # bounds, mean (with the count), quantiles
    assert sum(row["epsilon"] for row in rows.values()) == pytest.approx(0.7)


def test_accurate_on_a_large_table(table):
    path, age, score = table
    rows = describe(
        read_numeric_csv(path),
        epsilon=2.0,
        bounds={"age": (0, 100)},
        random_state=1,
    )
    assert rows["age"]["lower"] == 0 and rows["age"]["upper"] == 100
    assert abs(rows["age"]["count"] - age.size) < 200
    assert abs(rows["age"]["mean"] - age.mean()) < 1.0
    assert abs(rows["age"]["median"] - np.median(age)) < 2.0
    iqr = np.subtract(*np.percentile(age, [75, 25]))
    assert abs(rows["age"]["iqr"] - iqr) < 4.0
    clean = score[~np.isnan(score)]
    assert rows["score"]["lower"] <= np.percentile(clean, 1)
    assert rows["score"]["upper"] >= np.percentile(clean, 99)
    assert abs(rows["score"]["mean"] - clean.mean()) < 2.0


def test_insufficient_budget_reads_nothing(table):
    path, *_ = table
    acc = BudgetAccountant(epsilon=0.5)
    with pytest.raises(BudgetExceededError):
        describe(read_numeric_csv(path), epsilon=1.0, accountant=acc)
    assert acc.entries == ()


@pytest.mark.parametrize(
    "data, kwargs, match",
    [
        ({}, {}, "No columns"),
        ({"a": [1.0, np.inf]}, {}, "infinite"),
        ({"a": [np.nan]}, {}, "no values"),
        ({"a": [1.0]}, {"bounds": {"b": (0, 1)}}, "unknown columns"),
        ({"a": [1.0]}, {"bounds": {"a": (1, 0)}}, "a"),
        ({"a": [1.0]}, {"epsilon": 0.0}, "epsilon"),
    ],
)
def test_bad_input_charges_nothing(data, kwargs, match):
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(ValueError, match=match):
        describe(data, accountant=acc, **kwargs)
    assert acc.entries == ()


@pytest.mark.parametrize("seed", range(20))
def test_split_budget_never_exceeds_the_total(seed):
    rng = np.random.default_rng(seed)
    total = float(rng.choice([0.1, 0.3, 0.7, 1.0, 1 / 3, 2.9, 1e-3]))
    weights = rng.uniform(0.01, 1.0, rng.integers(1, 12))
    parts = split_budget(total, weights)
    assert len(parts) == weights.size and min(parts) >= 0
    assert sum(exact(p) for p in parts) <= exact(total)
    assert float(sum(exact(p) for p in parts)) == pytest.approx(total, rel=1e-12)


# -- the command line ----------------------------------------------------------
def test_cli_json(table, capsys):
    path, *_ = table
    assert main(["describe", str(path), "--json", "--seed", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["columns"]) == {"age", "score"}
    assert out["ledger_spent"] == pytest.approx(1.0)


def test_cli_demo_table_without_a_file(capsys):
    assert main(["describe", "--columns", "age,income"]) == 0
    out = capsys.readouterr().out
    assert "synthetic demo table" in out and "income" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["describe", "missing.csv"], "No such file"),
        (["describe", "--epsilon", "-1"], "epsilon"),
        (["describe", "--columns", "nope"], "not in the demo table"),
        (["describe", "--bounds", "age=5"], "NAME=LOW:HIGH"),
    ],
)
def test_cli_errors_exit_2(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_cli_ledger_refuses_once_the_budget_is_spent(tmp_path, capsys):
    ledger = str(tmp_path / "budget.sqlite")
    run = ["describe", "--columns", "age", "--epsilon", "0.4", "--ledger", ledger]
    assert main([*run, "--budget", "1.0"]) == 0
    assert main(run) == 0  # the file keeps its budget of 1.0
    assert main(run) == 3  # 0.4 + 0.4 + 0.4 > 1.0
    assert "refused" in capsys.readouterr().err
    assert BudgetAccountant.open(ledger).total()[0] == pytest.approx(0.8)


def test_tour_without_a_command_prints_the_ledger(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "PrivateMean: row count and clipped sums" in out and "remaining" in out


# -- one meaning per option (issue 13, item 5) ----------------------------------
@pytest.mark.parametrize(
    "args",
    [
        ["--epsilon", "0.1", "describe", "--columns", "age"],  # main: spent 1.0
        ["describe", "--columns", "age", "--epsilon", "0.1"],
        ["--ledger", "L", "describe", "--columns", "age", "--epsilon", "0.1"],
    ],
)
def test_cli_epsilon_before_or_after_the_command_is_what_is_charged(
    tmp_path, monkeypatch, args
):
    monkeypatch.chdir(tmp_path)
    ledger = str(tmp_path / "budget.sqlite")
    if "--ledger" in args:
        args = [ledger if a == "L" else a for a in args]
    else:
        args = [*args, "--ledger", ledger]
    assert main(args) == 0
    acc = BudgetAccountant.open(ledger)
    # a new ledger's budget is the run's epsilon (main: 1.0), and the run
    # spends exactly that
    assert acc.epsilon == 0.1
    assert spent(acc) <= Fraction("0.1")
    assert float(spent(acc)) == pytest.approx(0.1, rel=1e-12)


def test_cli_budget_that_differs_from_the_ledger_is_an_error(tmp_path, capsys):
    ledger = str(tmp_path / "budget.sqlite")
    run = ["describe", "--columns", "age", "--epsilon", "0.1", "--ledger", ledger]
    assert main([*run, "--budget", "1.0"]) == 0
    assert main([*run, "--budget", "1.0"]) == 0  # the same budget: fine
    # main: --budget 5 was silently ignored
    assert main([*run, "--budget", "5"]) == 2
    err = capsys.readouterr().err
    assert "--budget 5" in err and "epsilon=1" in err
    assert float(spent(BudgetAccountant.open(ledger))) == pytest.approx(0.2)


def test_cli_tour_at_a_small_epsilon(capsys):
    # main: a traceback (the tour's grid search overspent its own budget)
    assert main(["--epsilon", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "budget     epsilon=0.5" in out


def test_cli_ledger_options_do_not_apply_to_the_tour(tmp_path, capsys):
    assert main(["--ledger", str(tmp_path / "x.sqlite")]) == 2
    assert "apply to 'skdp describe'" in capsys.readouterr().err
    assert not (tmp_path / "x.sqlite").exists()
