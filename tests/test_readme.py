"""The README's Python example runs as written."""

import re
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
