"""The README's Python example runs as written; it says how long the suite takes."""

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_an_example():
    assert python_blocks()


def test_readme_examples_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the example writes budget.sqlite
    for block in python_blocks():
        exec(compile(block, str(README), "exec"), {})
    assert "budget.sqlite" in {p.name for p in tmp_path.iterdir()}
    assert capsys.readouterr().out.strip()


def _suite_claim():
    """(number of tests, minutes) that the README states beside the CI command."""
    text = README.read_text()
    before_command = text[: text.index("<!-- ci:tests -->")]
    paragraph = before_command.rstrip().rsplit("\n\n", 1)[-1]
    claim = re.search(
        r"About ([\d,]+) tests take about (\d+) minutes? on a 2-core machine",
        " ".join(paragraph.split()),
    )
    assert claim, f"the README does not say how long the test suite takes:\n{paragraph}"
    return int(claim.group(1).replace(",", "")), int(claim.group(2))


def test_readme_states_how_long_the_suite_takes():
    # The paragraph that introduces the CI command says how many tests run and
    # for how long; the number is checked against what pytest collects (the
    # time is measured by hand: a test cannot time the suite it is part of).
    stated, minutes = _suite_claim()
    assert 1 <= minutes <= 60
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=README.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    collected = re.search(r"^(\d+) tests? collected", result.stdout, flags=re.M)
    assert collected, result.stdout[-2000:] + result.stderr[-2000:]
    assert abs(int(collected.group(1)) - stated) <= 0.1 * stated
