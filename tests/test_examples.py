"""Every gallery example runs (non-interactive matplotlib backend)."""

import ast
import math
import runpy
import warnings
from pathlib import Path

import pytest

from skdp import BudgetAccountant, NoiseDominatedWarning

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("plot_*.py"))


def test_there_are_examples():
    assert EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_has_a_gallery_title(path):
    # sphinx-gallery takes the first line of the module docstring, underlined
    # with "=", as the example's title.
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert docstring, f"{path.name} has no module docstring"
    title, underline = docstring.splitlines()[:2]
    assert title.strip() and set(underline.strip()) == {"="}
    assert len(underline.strip()) >= len(title.strip())


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path, monkeypatch):
    matplotlib = pytest.importorskip(
        "matplotlib", reason="examples draw plots; matplotlib is in the test extra"
    )
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.close("all")
    monkeypatch.chdir(path.parent)
    # A fresh unlimited default accountant (like the process default), so the
    # example's spends stay out of the default that other tests may look at.
    # Users copy examples: one that warns NoiseDominatedWarning teaches a
    # noise-dominated setting (an example that shows one on purpose silences
    # the note where it does, with a comment saying so).
    with BudgetAccountant(math.inf, 1.0), warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatedWarning)
        runpy.run_path(str(path), run_name="__main__")
    try:
        assert plt.get_fignums(), f"{path.name} draws no figure"
    finally:
        plt.close("all")
