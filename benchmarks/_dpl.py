"""Run one diffprivlib task in its own virtual environment (``dpl_runner.py``).

diffprivlib does not import with the scikit-learn the benchmarks use, so each
bench sends a JSON task to ``dpl_runner.py`` under another interpreter and
reads the JSON answer (see ``_venv_task.py``).
"""

from pathlib import Path

from _venv_task import run_venv_task

RUNNER = Path(__file__).resolve().parent / "dpl_runner.py"


def run_dpl_task(python, task, script=None):
    """The runner's JSON answer to ``task``, or None (with a printed note).

    ``script`` is Python source to run instead of ``dpl_runner.py``
    (``python -c``), reading the same JSON task on stdin.
    """
    return run_venv_task(python, RUNNER, task, "diffprivlib", script=script)
