"""``skdp describe``: private statistics of a CSV file, one budget, clear errors."""

import gzip
import json
import os
import subprocess
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from _csv_tables import write_reference_table

from skdp import BudgetAccountant, BudgetExceededError
from skdp.__main__ import main
from skdp._describe import (
    STATISTICS,
    TAIL_SHARE_NOTE,
    describe,
    read_numeric_csv,
    tail_share,
)
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
    # every column of the header; 'city' holds text: every cell is missing
    assert list(data) == ["age", "score", "city"] and np.isnan(data["city"]).all()
    np.testing.assert_array_equal(data["age"], age)
    assert np.isnan(data["score"][3]) and np.isnan(data["score"]).sum() == 1


def test_reads_gzip(tmp_path):
    path = write_csv(tmp_path / "t.csv.gz", ["x"], [[1], [2.5]], opener=gzip.open)
    np.testing.assert_array_equal(read_numeric_csv(path)["x"], [1.0, 2.5])


@pytest.mark.parametrize(
    "header, rows, columns, match",
    [
        (["a"], [[1]], ["zz"], "Columns not in"),
        (["a", "b"], [[1, "x"]], ["b", "c"], "Columns not in"),
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
    data = read_numeric_csv(path, ["age", "score"])
    rows = describe(data, epsilon=0.7, accountant=acc, random_state=0)
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
        ({"a": [1.0]}, {"bounds": {"b": (0, 1)}}, "unknown columns"),
        ({"a": [1.0]}, {"bounds": {"a": (1, 0)}}, "a"),
        ({"a": [1.0]}, {"epsilon": 0.0}, "epsilon"),
        ({"a": [1.0]}, {"n_jobs": 0}, "n_jobs"),
        ({"a": [1.0]}, {"n_jobs": 1.5}, "n_jobs"),
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
    assert list(out["columns"]) == ["age", "score", "city"]
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


# -- at scale (issue 17, items 4 and 6) -----------------------------------------
def run_cli(*args, cwd=None):
    """Run the console script ``skdp`` (``python -m skdp`` if it is not
    installed next to this interpreter) on the skdp this process imports."""
    import skdp

    script = Path(sys.executable).with_name("skdp")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "skdp"]
    env = dict(os.environ)
    package_dir = str(Path(skdp.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (package_dir, env.get("PYTHONPATH")) if p
    )
    return subprocess.run(
        [*command, *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
    )


def released(out):
    return {
        name: tuple(row[s] for s in (*STATISTICS, "epsilon"))
        for name, row in json.loads(out)["columns"].items()
    }


def described(path, seed, columns=None, **kwargs):
    """What :func:`describe` releases in-process on the table as read."""
    rows = describe(read_numeric_csv(path, columns), random_state=seed, **kwargs)
    return {
        name: tuple(row[s] for s in (*STATISTICS, "epsilon"))
        for name, row in rows.items()
    }


def test_cli_releases_what_describe_releases_on_the_table_it_reads(tmp_path):
    """The console script adds nothing to the release: with a seed it prints
    exactly what ``describe`` releases on ``read_numeric_csv``'s table (that
    reader is compared bit for bit with the pre-streaming reader in
    ``test_csv_reader.py``). The noise itself is pinned by no number here:
    the exact samplers changed (issue 18) while the distribution did not."""
    path = write_reference_table(tmp_path / "t.csv")
    result = run_cli("describe", path, "--json", "--seed", 3)
    assert result.returncode == 0, result.stderr
    expected = described(path, 3)
    assert released(result.stdout) == expected
    assert list(expected) == ["id", "age", "city, state", "income", "delta", "score"]
    result = run_cli(
        "describe", path, "--json", "--seed", 5, "--columns", "score,age",
        "--bounds", "age=0:100", "--epsilon", 0.5,
    )  # fmt: skip
    two = described(
        path, 5, ["score", "age"], epsilon=0.5, bounds={"age": (0.0, 100.0)}
    )
    assert released(result.stdout) == two
    # columns described two at a time, in threads: the same release
    result = run_cli("describe", path, "--json", "--seed", 3, "--n-jobs", 2)
    assert released(result.stdout) == expected


def write_columns(path, columns):
    names = list(columns)
    n = len(columns[names[0]])
    lines = [",".join(names)]
    lines += [",".join(str(columns[c][i]) for c in names) for i in range(n)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_cli_describes_an_empty_column_and_notes_its_released_count(tmp_path):
    # main: 'unused' was left out with a note on stderr and the budget split
    # over the 2 others (0.3 each), a schema read from the cells
    rng = np.random.default_rng(0)
    age = rng.integers(18, 90, 3000)
    hours = rng.integers(1, 99, 3000)
    empty = rng.choice(["", "NA", "?"], 3000)
    path = write_columns(
        tmp_path / "e.csv", {"age": age, "unused": empty, "hours": hours}
    )
    ledger = tmp_path / "l.sqlite"
    result = run_cli(
        "describe", path, "--json", "--seed", 4, "--epsilon", 0.6, "--ledger", ledger
    )
    assert result.returncode == 0 and result.stderr == ""
    out = json.loads(result.stdout)
    assert list(out["columns"]) == ["age", "unused", "hours"]
    for row in out["columns"].values():
        assert row["epsilon"] == pytest.approx(0.2, rel=1e-12)
    assert out["columns"]["unused"]["count"] < 100
    # the note is a post-processing of the released counts
    assert [note[:9] for note in out["notes"] if "--columns" in note] == ["unused: a"]
    assert BudgetAccountant.open(ledger).total()[0] == pytest.approx(0.6)
    # described with --columns, the empty column is gone and so is its share
    result = run_cli("describe", path, "--json", "--columns", "age,hours")
    assert {
        row["epsilon"] for row in json.loads(result.stdout)["columns"].values()
    } == {0.5}


def test_cli_a_file_without_numbers_is_described_at_its_cost(tmp_path):
    # main: "Every column has no values", a refusal decided by the cells
    path = write_columns(tmp_path / "n.csv", {"a": [""] * 5, "b": ["NA"] * 5})
    ledger = tmp_path / "l.sqlite"
    result = run_cli("describe", path, "--ledger", ledger)
    assert result.returncode == 0 and result.stderr == ""
    assert BudgetAccountant.open(ledger).total()[0] == pytest.approx(1.0)


def test_tail_share_is_a_function_of_released_values():
    # capital-gain of UCI Adult at epsilon = 1 (seed 1): released mean 695
    # (true 1078), upper bound 21,579, 132 rows of tolerance
    share = tail_share(132, 32586, 695.461, 0.0, 21579.2)
    assert share == pytest.approx(132 * 21579.2 / (32586 * 695.461))
    assert 0.12 < share < 0.13
    assert tail_share(132, 32562, 38.56, 0.0, 84.29) < 0.01  # age
    assert tail_share(10, 100, 5.0, -5.0, 5.0) == pytest.approx(0.1)
    assert tail_share(10**6, 100, 1.0, 0.0, 5.0) == 1.0
    assert tail_share(10, 0, 5.0, 0.0, 9.0) is None
    assert tail_share(10, 100, -1.0, 0.0, 9.0) is None


def test_cli_notes_an_upper_bound_that_may_cut_off_the_mean(tmp_path):
    rng = np.random.default_rng(1)
    n = 20_000
    gain = np.where(rng.random(n) < 0.92, 0, rng.lognormal(8.5, 1.5, n)).round()
    age = rng.integers(18, 90, n)
    path = write_columns(tmp_path / "g.csv", {"age": age, "gain": gain})
    result = run_cli("describe", path, "--seed", 0)
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stdout.splitlines() if line.startswith("Note:")]
    assert len(notes) == 1 and notes[0].startswith("Note: gain: the upper bound")
    out = json.loads(run_cli("describe", path, "--seed", 0, "--json").stdout)
    gain_row, age_row = out["columns"]["gain"], out["columns"]["age"]
    assert gain_row["upper"] < gain.max()  # the bound cut the tail ...
    assert gain_row["mean"] < 0.95 * gain.mean()  # ... and the mean with it
    for row in (gain_row, age_row):  # recomputed from the released values
        again = tail_share(
            row["tail_rows"], row["count"], row["mean"], row["lower"], row["upper"]
        )
        assert row["tail_share"] == again
    assert gain_row["tail_share"] >= TAIL_SHARE_NOTE > age_row["tail_share"]
    assert len(out["notes"]) == 1 and out["notes"][0].startswith("gain:")
    public = run_cli(
        "describe", path, "--seed", 0, "--json", "--bounds", "gain=0:1000000"
    )
    assert json.loads(public.stdout)["columns"]["gain"]["tail_share"] is None


def test_cli_progress_goes_to_stderr_and_quiet_silences_it(tmp_path):
    path = write_columns(tmp_path / "p.csv", {"x": np.arange(2000), "y": np.ones(2000)})
    verbose = run_cli("describe", path, "--json", "--seed", 0, "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    json.loads(verbose.stdout)  # stdout is the JSON alone
    lines = verbose.stderr.splitlines()
    assert lines[-3].startswith("skdp describe: reading p.csv: 100% (")
    assert lines[-2].startswith("[describe] column 1 of 2 ('x') done in")
    assert lines[-1].startswith("[describe] column 2 of 2 ('y') done in")
    # a short read prints nothing by default, and never with --quiet
    assert run_cli("describe", path, "--seed", 0).stderr == ""
    assert run_cli("describe", path, "--seed", 0, "-q").stderr == ""
    both = run_cli("describe", path, "-q", "-v")
    assert both.returncode == 2 and "not allowed with" in both.stderr


def test_describe_verbose_reports_each_column(capsys):
    rng = np.random.default_rng(0)
    describe({"a": rng.uniform(0, 1, 500)}, bounds={"a": (0, 1)}, verbose=1)
    assert capsys.readouterr().err.startswith("[describe] column 1 of 1 ('a') done")
    describe({"a": rng.uniform(0, 1, 500)}, bounds={"a": (0, 1)})
    assert capsys.readouterr().err == ""


def test_describe_charges_every_column_it_is_given_without_a_warning():
    # main: a UserWarning "'b' has no values", and b's share went to a
    acc = BudgetAccountant(epsilon=1.0)
    data = {"a": np.arange(100.0), "b": np.full(10, np.nan)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = describe(data, epsilon=1.0, accountant=acc, random_state=0)
    assert list(rows) == ["a", "b"] and rows["b"]["epsilon"] == 0.5
    assert {entry.label.split("'")[1] for entry in acc.entries} == {"a", "b"}


def peak_rss_mb(result_args, tmp_path):
    """Peak resident memory of the console script run with these arguments."""
    import skdp

    script = Path(sys.executable).with_name("skdp")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "skdp"]
    env = dict(os.environ)
    package_dir = str(Path(skdp.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (package_dir, env.get("PYTHONPATH")) if p
    )
    child = subprocess.Popen(
        [*command, *map(str, result_args)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(child.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return usage.ru_maxrss / 1024


@pytest.mark.skipif(not hasattr(os, "wait4"), reason="needs os.wait4 (POSIX)")
def test_cli_columns_costs_no_memory_for_the_other_columns(tmp_path):
    n = 600_000
    table = np.random.default_rng(0).integers(0, 1000, size=(n, 8))
    for name, width in (("one.csv", 1), ("eight.csv", 8)):
        np.savetxt(
            tmp_path / name,
            table[:, :width],
            fmt="%d",
            delimiter=",",
            header=",".join("abcdefgh"[:width]),
            comments="",
        )
    run = ["--seed", 0, "--columns", "a"]
    one = peak_rss_mb(["describe", tmp_path / "one.csv", *run], tmp_path)
    eight = peak_rss_mb(["describe", tmp_path / "eight.csv", *run], tmp_path)
    # seven more columns in the file, none of them read into memory: less
    # than half of what they would take as float64 (the old reader kept
    # every cell as a string: about 250 MB more here)
    assert eight - one < 0.5 * 7 * 8 * n / 2**20
