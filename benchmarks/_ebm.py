"""Run one InterpretML (DP-EBM) task in its own virtual environment.

InterpretML is a benchmark-only comparison, never an skdp dependency: it
lives in ``/work/ebmvenv`` (``python -m venv /work/ebmvenv;
/work/ebmvenv/bin/pip install interpret-core==0.7.8``) and the benchmarks
send it a JSON task through ``ebm_runner.py`` (see ``_venv_task.py``).
"""

from pathlib import Path

from _venv_task import run_venv_task

RUNNER = Path(__file__).resolve().parent / "ebm_runner.py"
DEFAULT_EBM_PYTHON = "/work/ebmvenv/bin/python"


def run_ebm_task(python, task):
    """The runner's JSON answer to ``task``, or None (with a printed note)."""
    return run_venv_task(python, RUNNER, task, "InterpretML DP-EBM")
