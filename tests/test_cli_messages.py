"""The command line's messages: each error names its cause in the terms of
the command that was typed, and stderr stays quiet unless asked."""

import numpy as np
import pytest

import skdp.__main__ as cli
from skdp.__main__ import main


def test_a_directory_is_named_as_a_directory(tmp_path, capsys):
    assert main(["describe", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is a directory" in err and "No such file" not in err


def test_an_unknown_flag_of_describe_shows_the_usage_of_describe(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["describe", "--bogus", "x.csv"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: skdp describe")
    assert "unrecognized arguments: --bogus" in err


def test_an_unknown_flag_without_a_command_shows_the_top_level_usage(capsys):
    with pytest.raises(SystemExit):
        main(["--bogus"])
    assert capsys.readouterr().err.startswith("usage: skdp [")


def test_top_level_help_has_no_rest_markup(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "skdp describe [FILE] prints" in out and "``" not in out


def test_per_column_lines_only_with_verbose(tmp_path, monkeypatch, capsys):
    # reading progress is shown at once (delay 0), as for a long file; the
    # per-column lines still wait for -v
    monkeypatch.setattr(cli, "PROGRESS_DELAY", 0.0)
    path = tmp_path / "t.csv"
    rows = np.random.default_rng(0).normal(size=(200, 2))
    path.write_text("a,b\n" + "\n".join(f"{x},{y}" for x, y in rows) + "\n")
    assert main(["describe", str(path), "--seed", "0"]) == 0
    quiet = capsys.readouterr().err
    assert "reading t.csv" in quiet and "[describe]" not in quiet
    assert main(["describe", str(path), "--seed", "0", "-v"]) == 0
    assert "[describe] column 1 of 2 ('a') done" in capsys.readouterr().err
