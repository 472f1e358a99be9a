"""Run diffprivlib's mean and median for the issue 4 benchmarks, in its own venv.

diffprivlib does not import with scikit-learn >= 1.6, so it lives in a separate
virtualenv (see ``benchmarks/README.md``); the skdp benchmarks call this script
with that venv's interpreter, send a JSON task on stdin and read a JSON answer
on stdout. Not meant to be run by hand, but it can be::

    echo '{"task": "version"}' | /work/dplvenv/bin/python benchmarks/dpl_runner.py

Tasks:

* ``{"task": "utility", "data": D, "epsilon": e, "seeds": [...]}``: for every
  seed, the data set (``D = {"lognormal": [mu, sigma, n]}``, regenerated with
  ``np.random.default_rng(seed)``, or ``D = {"npy": path}``, the same column
  every time) and the errors of ``diffprivlib.tools.mean`` and
  ``diffprivlib.tools.median`` with the true bounds ``(x.min(), x.max())``,
  noise seeded by ``seed``. Answers the errors (NaN where diffprivlib raised)
  and the sample means (so the caller can check it saw the same data).
* ``{"task": "timing", "npy": path, "epsilon": e, "bounds": [l, u],
  "repeat": r, "median_repeat": m}``: best wall time of ``np.sort`` and
  ``diffprivlib.tools.mean`` over ``r`` runs and of ``diffprivlib.tools.median``
  over ``m`` runs (it takes over a minute on 10^7 rows) on the column.
"""

import json
import sys
import time
import warnings

import numpy as np


def _tools():
    import diffprivlib
    from diffprivlib import BudgetAccountant, tools

    return diffprivlib, BudgetAccountant, tools


def _column(data, seed):
    if "lognormal" in data:
        mu, sigma, n = data["lognormal"]
        return np.random.default_rng(seed).lognormal(mu, sigma, int(n))
    return np.load(data["npy"])


def _call(func, *args, **kwargs):
    """The float result, or NaN when diffprivlib raises (counted by the caller)."""
    try:
        return float(func(*args, **kwargs))
    except (RuntimeError, ValueError, FloatingPointError):
        return float("nan")


def utility(task):
    _, BudgetAccountant, tools = _tools()
    mean_err, median_err, sample_means = [], [], []
    column = None
    for seed in task["seeds"]:
        if column is None or "lognormal" in task["data"]:
            column = _column(task["data"], seed)
        bounds = (float(column.min()), float(column.max()))
        mean = _call(
            tools.mean,
            column,
            epsilon=task["epsilon"],
            bounds=bounds,
            random_state=seed,
            accountant=BudgetAccountant(),
        )
        median = _call(
            tools.median,
            column,
            epsilon=task["epsilon"],
            bounds=bounds,
            random_state=seed + 1,
            accountant=BudgetAccountant(),
        )
        sample_means.append(float(column.mean()))
        mean_err.append(float(mean) - sample_means[-1])
        median_err.append(float(median) - float(np.median(column)))
    return {
        "mean_err": mean_err,
        "median_err": median_err,
        "sample_means": sample_means,
    }


def _best_time(func, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def timing(task):
    _, BudgetAccountant, tools = _tools()
    x = np.load(task["npy"])
    eps, bounds, repeat = task["epsilon"], tuple(task["bounds"]), task["repeat"]
    return {
        "sort": _best_time(lambda: np.sort(x), repeat),
        "mean": _best_time(
            lambda: tools.mean(
                x, epsilon=eps, bounds=bounds, accountant=BudgetAccountant()
            ),
            repeat,
        ),
        "median": _best_time(
            lambda: tools.median(
                x, epsilon=eps, bounds=bounds, accountant=BudgetAccountant()
            ),
            task.get("median_repeat", repeat),
        ),
    }


def main():
    task = json.load(sys.stdin)
    warnings.simplefilter("ignore")
    diffprivlib, _, _ = _tools()
    import sklearn

    versions = {
        "diffprivlib": diffprivlib.__version__,
        "numpy": np.__version__,
        "scikit-learn": sklearn.__version__,
    }
    if task["task"] == "utility":
        answer = utility(task)
    elif task["task"] == "timing":
        answer = timing(task)
    else:
        answer = {}
    answer["versions"] = versions
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
