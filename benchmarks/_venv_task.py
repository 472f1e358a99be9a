"""Run one JSON task under another virtual environment's interpreter.

Libraries that must never be skdp dependencies (diffprivlib, InterpretML)
live in their own virtual environments; a benchmark sends a JSON task on
stdin to a runner script run by that environment's ``python`` and reads the
JSON answer on stdout. ``_dpl.py`` (diffprivlib) and ``_ebm.py``
(InterpretML's DP-EBM) are this helper with their runner filled in.
"""

import json
import subprocess


def run_venv_task(python, runner, task, library, script=None):
    """The runner's JSON answer to ``task``, or None (with a printed note).

    ``runner`` is the script's path; ``script`` is Python source to run
    instead (``python -c``), reading the same JSON task on stdin. ``library``
    names what is skipped in the note when the interpreter or the task fails.
    """
    command = [python, str(runner)] if script is None else [python, "-c", script]
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
        print(f"({library} skipped for {python}: {last})")
        return None
    return json.loads(done.stdout)
