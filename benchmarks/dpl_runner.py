"""Run diffprivlib for the issue 4 and issue 6 benchmarks, in its own venv.

diffprivlib 0.6.5 does not import with scikit-learn >= 1.6 (0.6.6 not with
1.9), so it lives in a separate virtualenv (see ``benchmarks/README.md``); the
skdp benchmarks call this script with that venv's interpreter, send a JSON
task on stdin and read a JSON answer on stdout. Not meant to be run by hand,
but it can be::

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
* ``{"task": "linreg", "npy": {...}, "epsilon": e, "bounds_X": [l, u],
  "bounds_y": [l, u], "seeds": [...]}``: test R² of
  ``diffprivlib.models.LinearRegression`` with public box bounds, per seed.
* ``{"task": "logreg", "npy": {"X_train": p, "y_train": p, "X_test": p,
  "y_test": p}, "epsilon": e, "data_norm": r, "clip": bool, "seeds": [...]}``:
  test accuracy of ``diffprivlib.models.LogisticRegression(epsilon=e,
  data_norm=r, random_state=seed)`` for every seed, and of a non-private
  ``sklearn.linear_model.LogisticRegression(max_iter=1000)`` on the same
  arrays. ``r`` must be a public bound on the rows' L2 norm (from the feature
  schema, never from the data); with ``"clip": true`` every train and test row
  is first scaled down to norm ``r`` (a fixed row-wise map, so both fits and
  both splits see the same features). diffprivlib's ``PrivacyLeakWarning``
  (e.g. ``data_norm`` missing and read from the data) is raised as an error;
  other warnings are counted in the answer.
"""

import json
import sys
import time
import warnings
from collections import Counter

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


def _clip_rows(X, norm):
    """Rows scaled down to L2 norm ``norm`` (rows already inside unchanged)."""
    norms = np.linalg.norm(X, axis=1)
    scale = np.minimum(1.0, norm / np.maximum(norms, np.finfo(float).tiny))
    return X * scale[:, None]


def logreg(task):
    from diffprivlib import BudgetAccountant
    from diffprivlib.models import LogisticRegression as DPLogisticRegression
    from diffprivlib.utils import PrivacyLeakWarning
    from sklearn.linear_model import LogisticRegression

    arrays = {key: np.load(path) for key, path in task["npy"].items()}
    X_tr, y_tr = arrays["X_train"], arrays["y_train"]
    X_te, y_te = arrays["X_test"], arrays["y_test"]
    data_norm = float(task["data_norm"])
    if not data_norm > 0:
        raise ValueError(f"data_norm must be a positive public bound, not {data_norm}")
    # diagnostic only (not used by any fit): rows above the public bound
    above = float(np.mean(np.linalg.norm(X_tr, axis=1) > data_norm * (1 + 1e-12)))
    if task.get("clip"):
        X_tr, X_te = _clip_rows(X_tr, data_norm), _clip_rows(X_te, data_norm)
    base = LogisticRegression(max_iter=1000).fit(X_tr, y_tr).score(X_te, y_te)
    accuracies = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # never let diffprivlib read a bound from the data
        warnings.simplefilter("error", PrivacyLeakWarning)
        for seed in task["seeds"]:
            model = DPLogisticRegression(
                epsilon=task["epsilon"],
                data_norm=data_norm,
                random_state=seed,
                accountant=BudgetAccountant(),
            )
            accuracies.append(float(model.fit(X_tr, y_tr).score(X_te, y_te)))
    return {
        "accuracy": accuracies,
        "non_private": float(base),
        "train_rows_above_norm": above,
        "n_train": len(y_tr),
        "warnings": dict(Counter(w.category.__name__ for w in caught)),
    }


def linreg(task):
    """R² of diffprivlib's LinearRegression with public box bounds, per seed."""
    from diffprivlib import BudgetAccountant
    from diffprivlib.models import LinearRegression as DPLinearRegression
    from diffprivlib.utils import PrivacyLeakWarning

    arrays = {key: np.load(path) for key, path in task["npy"].items()}
    scores = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        for seed in task["seeds"]:
            model = DPLinearRegression(
                epsilon=task["epsilon"],
                bounds_X=tuple(task["bounds_X"]),
                bounds_y=tuple(task["bounds_y"]),
                random_state=seed,
                accountant=BudgetAccountant(),
            )
            model.fit(arrays["X_train"], arrays["y_train"])
            scores.append(float(model.score(arrays["X_test"], arrays["y_test"])))
    return {"r2": scores}


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
    elif task["task"] == "logreg":
        answer = logreg(task)
    elif task["task"] == "linreg":
        answer = linreg(task)
    else:
        answer = {}
    answer["versions"] = versions
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
