"""Every gallery example runs (non-interactive matplotlib backend)."""

import runpy
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("plot_*.py"))


def test_there_are_examples():
    assert EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path, monkeypatch):
    matplotlib = pytest.importorskip(
        "matplotlib", reason="examples draw plots; matplotlib is in the test extra"
    )
    matplotlib.use("Agg")
    monkeypatch.chdir(path.parent)
    runpy.run_path(str(path), run_name="__main__")
    import matplotlib.pyplot as plt

    plt.close("all")
