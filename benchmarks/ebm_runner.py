"""Fit InterpretML's DP-EBM for ``bench_tree_models.py``, in its own venv.

InterpretML (``interpret-core``) is never an skdp dependency; it lives in a
benchmark-only virtual environment (see ``_ebm.py`` and the README section
"Private trees and boosting against DP-EBM"). The benchmark sends a JSON task
on stdin and reads a JSON answer on stdout. Not meant to be run by hand, but
it can be::

    echo '{"task": "version"}' | /work/ebmvenv/bin/python benchmarks/ebm_runner.py

Tasks:

* ``{"task": "dp_ebm", "kind": "classification" | "regression",
  "data": {"npy": {"X_train": p, "y_train": p, "X_test": p, "y_test": p}}
  or {"csv": {"train": p, "test": p, "label": name}}, "epsilons": [...],
  "seeds": [...], "delta": d, "modes": {name: keyword arguments}}``: for
  every mode, ε and seed, ``DPExplainableBoostingClassifier`` (or
  ``...Regressor``) with ``epsilon``, ``delta``, ``random_state=seed`` and
  the mode's keyword arguments (``{}`` is DP-EBM's defaults; a careful
  user's ``privacy_bounds``, ``feature_types``, ``privacy_target_min`` /
  ``privacy_target_max``): held-out accuracy and ROC AUC (R² for
  regression), fit seconds and the warnings DP-EBM raised (its "Possible
  privacy violation" warnings say what it read from the data).
* ``{"task": "batch", "tasks": [task, ...]}``: ``{"answers": [...]}``.
"""

import json
import re
import sys
import time
import warnings
from collections import Counter

import numpy as np


def _load(data):
    """(X_train, y_train, X_test, y_test); a CSV keeps its column types."""
    if "npy" in data:
        arrays = {key: np.load(path) for key, path in data["npy"].items()}
        return arrays["X_train"], arrays["y_train"], arrays["X_test"], arrays["y_test"]
    import pandas as pd

    csv = data["csv"]
    train, test = pd.read_csv(csv["train"]), pd.read_csv(csv["test"])
    y_train, y_test = train.pop(csv["label"]), test.pop(csv["label"])
    return train, y_train.to_numpy(), test, y_test.to_numpy()


def _kwargs(mode):
    """The mode's keyword arguments, ``privacy_bounds`` as DP-EBM takes it."""
    kwargs = dict(mode)
    bounds = kwargs.get("privacy_bounds")
    if isinstance(bounds, list):
        kwargs["privacy_bounds"] = np.asarray(bounds, dtype=float)
    return kwargs


def _scores(model, kind, X_test, y_test):
    from sklearn.metrics import r2_score, roc_auc_score

    if kind == "regression":
        return {"r2": float(r2_score(y_test, model.predict(X_test)))}
    accuracy = float(np.mean(model.predict(X_test) == y_test))
    proba = model.predict_proba(X_test)[:, 1]
    positive = model.classes_[1]
    return {
        "accuracy": accuracy,
        "auc": float(roc_auc_score(y_test == positive, proba)),
        "predicted_positive": float(np.mean(model.predict(X_test) == positive)),
    }


def _short(message):
    """The message on one line, the seed in a random_state warning elided (so
    one message per kind is counted)."""
    text = " ".join(str(message).split())
    return re.sub(r"random_state of -?\d+", "random_state of <seed>", text)[:300]


def dp_ebm(task):
    from interpret.privacy import (
        DPExplainableBoostingClassifier,
        DPExplainableBoostingRegressor,
    )

    kind = task["kind"]
    cls = (
        DPExplainableBoostingRegressor
        if kind == "regression"
        else DPExplainableBoostingClassifier
    )
    X_train, y_train, X_test, y_test = _load(task["data"])
    rows = []
    for mode, params in task["modes"].items():
        for epsilon in task["epsilons"]:
            row = {"mode": mode, "epsilon": epsilon, "times": [], "errors": []}
            scores, messages = {}, Counter()
            for seed in task["seeds"]:
                model = cls(
                    epsilon=epsilon,
                    delta=task["delta"],
                    random_state=seed,
                    **_kwargs(params),
                )
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    start = time.perf_counter()
                    try:
                        model.fit(X_train, y_train)
                    except (ValueError, RuntimeError) as exc:
                        row["errors"].append(_short(f"{type(exc).__name__}: {exc}"))
                        continue
                    finally:
                        row["times"].append(time.perf_counter() - start)
                messages.update({_short(w.message) for w in caught})
                for key, value in _scores(model, kind, X_test, y_test).items():
                    scores.setdefault(key, []).append(value)
            row.update(scores=scores, warnings=dict(messages))
            rows.append(row)
    return {"rows": rows}


def run_task(task):
    if task["task"] == "batch":
        return {"answers": [run_task(one) for one in task["tasks"]]}
    tasks = {"dp_ebm": dp_ebm}
    return tasks[task["task"]](task) if task["task"] in tasks else {}


def main():
    task = json.load(sys.stdin)
    import interpret
    import sklearn

    answer = run_task(task)
    answer["versions"] = {
        "interpret-core": interpret.__version__,
        "numpy": np.__version__,
        "scikit-learn": sklearn.__version__,
    }
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
