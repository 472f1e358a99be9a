"""Run one diffprivlib task in its own virtual environment (``dpl_runner.py``).

diffprivlib does not import with the scikit-learn the benchmarks use, so each
bench sends a JSON task to ``dpl_runner.py`` under another interpreter and
reads the JSON answer.
"""

import json
import subprocess
from pathlib import Path

RUNNER = Path(__file__).resolve().parent / "dpl_runner.py"


def run_dpl_task(python, task, script=None):
    """The runner's JSON answer to ``task``, or None (with a printed note).

    ``script`` is Python source to run instead of ``dpl_runner.py``
    (``python -c``), reading the same JSON task on stdin.
    """
    command = [python, str(RUNNER)] if script is None else [python, "-c", script]
    try:
        done = subprocess.run(
            command,
            input=json.dumps(task),
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        err = getattr(exc, "stderr", "") or str(exc)
        last = (err.strip().splitlines() or ["no message"])[-1]
        print(f"(diffprivlib skipped for {python}: {last})")
        return None
    return json.loads(done.stdout)
