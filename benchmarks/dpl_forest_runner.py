"""Fit diffprivlib's RandomForestClassifier for ``bench_tree_models.py``
and ``bench_random_forest.py``.

Runs in diffprivlib's own virtual environment (see ``dpl_runner.py``, whose
fit helpers it reuses); reads a JSON task on stdin, writes a JSON answer::

    {"task": "forest", "npy": {"X_train": p, "y_train": p, "X_test": p,
     "y_test": p}, "epsilons": [...], "seeds": [...],
     "modes": {"default": {}, "stated": {"bounds": [lower, upper],
     "classes": [...]}}}

answers, per mode and ε, the held-out accuracy and ROC AUC (binary labels),
fit seconds and the number of ``PrivacyLeakWarning`` s per seed
(``"default"``: only ε stated, so diffprivlib reads the feature ranges and
the classes from the data and warns; ``"stated"``: the public ranges and
classes a careful user states). Other keyword arguments are diffprivlib's
defaults (10 trees of depth 5).
"""

import json
import sys
import warnings

import numpy as np
from dpl_runner import _timed_fit


def _auc(model, X_test, y_test):
    from sklearn.metrics import roc_auc_score

    if len(model.classes_) != 2:
        return float("nan")
    proba = model.predict_proba(X_test)[:, 1]
    return float(roc_auc_score(y_test == model.classes_[1], proba))


def _stated(params):
    kwargs = dict(params)
    if "bounds" in kwargs:
        kwargs["bounds"] = tuple(np.asarray(b, dtype=float) for b in kwargs["bounds"])
    return kwargs


def forest(task):
    from diffprivlib import BudgetAccountant
    from diffprivlib.models import RandomForestClassifier

    arrays = {key: np.load(path) for key, path in task["npy"].items()}
    X_te, y_te = arrays["X_test"], arrays["y_test"]
    rows = []
    for mode, params in task["modes"].items():
        for epsilon in task["epsilons"]:
            row = {"mode": mode, "epsilon": epsilon, "times": [], "leaks": 0}
            row["scores"] = {"accuracy": [], "auc": [], "predicted_positive": []}
            row["errors"] = []
            for seed in task["seeds"]:

                def make(epsilon=epsilon, seed=seed, params=params):
                    return RandomForestClassifier(
                        epsilon=epsilon,
                        random_state=seed,
                        accountant=BudgetAccountant(),
                        **_stated(params),
                    )

                model, seconds, leaks = _timed_fit(
                    make, arrays["X_train"], arrays["y_train"]
                )
                row["times"].append(seconds)
                row["leaks"] += leaks
                if isinstance(model, str):
                    row["errors"].append(model)
                    continue
                predicted = model.predict(X_te)
                positive = float(np.mean(predicted == model.classes_[-1]))
                row["scores"]["accuracy"].append(float(np.mean(predicted == y_te)))
                row["scores"]["predicted_positive"].append(positive)
                row["scores"]["auc"].append(_auc(model, X_te, y_te))
            rows.append(row)
    return {"rows": rows}


def main():
    task = json.load(sys.stdin)
    warnings.simplefilter("ignore")
    import diffprivlib

    answer = forest(task) if task["task"] == "forest" else {}
    answer["versions"] = {"diffprivlib": diffprivlib.__version__}
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
