"""Fit time and peak extra memory of one tree model, each fit in a child.

``bench_tree_models.py`` measures skdp's private boosting against
scikit-learn's ``HistGradientBoostingClassifier`` with the same number of
trees. Every fit runs in a fresh child interpreter (this file run as a
script, with the parent's ``PYTHONPATH``): the child imports the libraries,
loads ``X`` and ``y`` from ``.npy`` files, resets the kernel's high-water
mark of its resident set to the current size (``5`` written to
``/proc/self/clear_refs``, Linux; ``ru_maxrss`` cannot be reset, and the
imports' own peak hid the fit's in a first version), fits, and reads the
high-water mark (``VmHWM`` in ``/proc/self/status``). Peak minus the
resident size before the fit is the fit's **peak extra memory**, counted in
copies of X (``X.nbytes``); it includes every thread's allocations (numpy,
Cython and OpenMP buffers), which ``tracemalloc`` would partly miss.
``"threads": 1`` in a spec limits OpenMP and BLAS to one thread
(``threadpoolctl``); without it each library uses its defaults
(scikit-learn's OpenMP: every core). The fits alternate
(scikit-learn, skdp, scikit-learn, skdp, ...) so that both see the same
machine load.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()


def make_model(spec):
    """The estimator a speed spec names: ``{"model": "hgb" | "skdp",
    "params": {...}}``."""
    if spec["model"] == "hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(**spec["params"])
    from skdp.ensemble import PrivateHistGradientBoostingClassifier

    return PrivateHistGradientBoostingClassifier(**spec["params"])


def _status_bytes(key):
    """``VmRSS`` or ``VmHWM`` of this process, in bytes (Linux)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024  # the file says kB
    raise OSError(f"{key} not in /proc/self/status")


def _reset_peak():
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


def child(spec):
    """Fit once; the answer: seconds, peak extra bytes, X's bytes."""
    model = make_model(spec)
    if "accountant" in model.get_params():
        from skdp import BudgetAccountant

        model.set_params(accountant=BudgetAccountant(epsilon=np.inf, delta=1.0))
    X, y = np.load(spec["X"]), np.load(spec["y"])
    from threadpoolctl import threadpool_limits

    _reset_peak()
    before = _status_bytes("VmRSS")
    with threadpool_limits(limits=spec.get("threads")):
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "extra_bytes": _status_bytes("VmHWM") - before,
        "x_bytes": X.nbytes,
    }


def run_child(spec):
    done = subprocess.run(
        [sys.executable, str(HERE)],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return {"error": last}
    return json.loads(done.stdout)


def alternate(specs, repeat):
    """Per spec: the best time and the largest peak extra memory (copies of
    X) over ``repeat`` alternated fits, or the child's error."""
    runs = [[] for _ in specs]
    for _ in range(repeat):
        for i, spec in enumerate(specs):
            runs[i].append(run_child(spec))
    results = []
    for answers in runs:
        errors = [a["error"] for a in answers if "error" in a]
        if errors:
            results.append({"error": errors[0]})
            continue
        results.append(
            {
                "seconds": min(a["seconds"] for a in answers),
                "copies": max(a["extra_bytes"] / a["x_bytes"] for a in answers),
            }
        )
    return results


if __name__ == "__main__":
    json.dump(child(json.load(sys.stdin)), sys.stdout)
