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
* ``{"task": "real_models", "kind": "classification" | "regression",
  "npy": {"X_train": p, ...}, "epsilons": [...], "seeds": [...],
  "bounds_X": [lower, upper], "bounds_y": [l, u], "data_norm": r}``
  (``bench_real_tables.py``): held-out accuracy (R²) and fit time of
  diffprivlib's ``LogisticRegression`` and ``GaussianNB`` (or
  ``LinearRegression``) per ε and seed, each in two modes: ``"default"``,
  only ε stated (diffprivlib then reads ``data_norm``/``bounds`` from the
  data and warns; the answer counts its ``PrivacyLeakWarning`` s), and
  ``"stated"``, with the public ranges in the task (a careful user's).
* ``{"task": "batch", "tasks": [task, ...]}``: ``{"answers": [...]}``, the
  answers to the tasks in order, from one interpreter.
* ``{"task": "real_stats", "npy": path, "epsilons": [...], "seeds": [...],
  "bounds": [lower, upper], "quantiles": [...]}``: the values released by
  ``tools.mean``, ``tools.std`` and ``tools.quantile`` along ``axis=0`` (ε
  split over the columns, as diffprivlib does), in the same two modes.
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


def _leaks(caught):
    from diffprivlib.utils import PrivacyLeakWarning

    return sum(issubclass(w.category, PrivacyLeakWarning) for w in caught)


def _timed_fit(make, X, y):
    """(fitted model or the error's text, fit seconds, leak warnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        try:
            model = make().fit(X, y)
        except (ValueError, RuntimeError, FloatingPointError) as exc:
            model = f"{type(exc).__name__}: {exc}"
        seconds = time.perf_counter() - start
    return model, seconds, _leaks(caught)


def _real_model_makers(task):
    """Per model: its class, the default and the stated keyword arguments."""
    from diffprivlib import models

    bounds_X = tuple(np.asarray(b, dtype=float) for b in task["bounds_X"])
    if task["kind"] == "regression":
        stated = {"bounds_X": bounds_X, "bounds_y": tuple(task["bounds_y"])}
        return {"LinearRegression": (models.LinearRegression, {}, stated)}
    return {
        "LogisticRegression": (
            models.LogisticRegression,
            {},
            {"data_norm": float(task["data_norm"])},
        ),
        "GaussianNB": (models.GaussianNB, {}, {"bounds": bounds_X}),
    }


def real_models(task):
    """Scores of diffprivlib's models at its defaults and with stated ranges."""
    from diffprivlib import BudgetAccountant

    arrays = {key: np.load(path) for key, path in task["npy"].items()}
    makers = _real_model_makers(task)
    rows = []
    for name, (cls, default, stated) in makers.items():
        for mode, kwargs in (("default", default), ("stated", stated)):
            for epsilon in task["epsilons"]:
                row = {"model": name, "mode": mode, "epsilon": epsilon}
                row.update(scores=[], times=[], leaks=0, errors=[])
                for seed in task["seeds"]:

                    def make(cls=cls, seed=seed, epsilon=epsilon, kwargs=kwargs):
                        return cls(
                            epsilon=epsilon,
                            random_state=seed,
                            accountant=BudgetAccountant(),
                            **kwargs,
                        )

                    model, seconds, leaks = _timed_fit(
                        make, arrays["X_train"], arrays["y_train"]
                    )
                    row["times"].append(seconds)
                    row["leaks"] += leaks
                    if isinstance(model, str):
                        row["errors"].append(model)
                        row["scores"].append(float("nan"))
                        continue
                    score = model.score(arrays["X_test"], arrays["y_test"])
                    row["scores"].append(float(score))
                rows.append(row)
    return {"rows": rows}


def _release_stats(X, epsilon, bounds, seed, quantiles):
    """Released values per statistic (None where diffprivlib raised) and the
    errors' texts."""
    from diffprivlib import BudgetAccountant, tools

    calls = {
        "mean": (tools.mean, ()),
        "std": (tools.std, ()),
        "quantiles": (tools.quantile, (quantiles,)),
    }
    released, errors, seconds, leaks = {}, {}, {}, {}
    for key, (func, extra) in calls.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            try:
                value = func(
                    X,
                    *extra,
                    epsilon=epsilon,
                    bounds=bounds,
                    axis=0,
                    random_state=seed,
                    accountant=BudgetAccountant(),
                )
                released[key] = np.asarray(value, dtype=float).tolist()
            except (ValueError, RuntimeError, FloatingPointError) as exc:
                released[key] = None
                errors[key] = f"{type(exc).__name__}: {str(exc)[:120]}"
            seconds[key] = time.perf_counter() - start
        leaks[key] = _leaks(caught)
    released.update(errors=errors, seconds=seconds, leaks=leaks)
    return released


def real_stats(task):
    """Released mean, std and quantiles per column, both modes, per ε and seed."""
    X = np.load(task["npy"])
    stated = tuple(np.asarray(b, dtype=float) for b in task["bounds"])
    rows = []
    for mode, bounds in (("default", None), ("stated", stated)):
        for epsilon in task["epsilons"]:
            for seed in task["seeds"]:
                released = _release_stats(X, epsilon, bounds, seed, task["quantiles"])
                released.update(mode=mode, epsilon=epsilon, seed=seed)
                rows.append(released)
    return {"rows": rows}


def run_task(task):
    """The answer to one task; ``{"task": "batch", "tasks": [...]}`` answers
    ``{"answers": [...]}``, one per task, in one interpreter (diffprivlib's
    import costs seconds on a loaded machine)."""
    if task["task"] == "batch":
        return {"answers": [run_task(one) for one in task["tasks"]]}
    tasks = {
        "utility": utility,
        "timing": timing,
        "logreg": logreg,
        "linreg": linreg,
        "real_models": real_models,
        "real_stats": real_stats,
    }
    return tasks[task["task"]](task) if task["task"] in tasks else {}


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
    answer = run_task(task)
    answer["versions"] = versions
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
