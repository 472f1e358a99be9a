"""Run diffprivlib's RandomForestClassifier for ``bench_random_forest.py``.

Called under diffprivlib's own interpreter (see ``benchmarks/README.md``):
reads a JSON task on stdin, answers JSON on stdout::

    {"npy": {"X_train": p, "y_train": p, "X_test": p, "y_test": p},
     "bounds": [[lower...], [upper...]], "classes": [...],
     "n_estimators": T, "max_depth": D, "epsilons": [...], "seeds": [...]}

Answer: ``{"version": v, "accuracy": {eps: [per seed]}, "auc": {...},
"seconds": {...}}``, each fit with the stated public bounds and classes
(no ``PrivacyLeakWarning``: one is raised as an error).
"""

import json
import sys
import time
import warnings

import numpy as np


def main():
    task = json.load(sys.stdin)
    import diffprivlib
    from diffprivlib import BudgetAccountant
    from diffprivlib.models import RandomForestClassifier
    from diffprivlib.utils import PrivacyLeakWarning
    from sklearn.metrics import roc_auc_score

    warnings.simplefilter("error", PrivacyLeakWarning)
    data = {k: np.load(p) for k, p in task["npy"].items()}
    bounds = (np.asarray(task["bounds"][0]), np.asarray(task["bounds"][1]))
    answer = {
        "version": diffprivlib.__version__,
        "accuracy": {},
        "auc": {},
        "seconds": {},
    }
    for eps in task["epsilons"]:
        acc, auc, secs = [], [], []
        for seed in task["seeds"]:
            start = time.perf_counter()
            model = RandomForestClassifier(
                n_estimators=task["n_estimators"],
                epsilon=eps,
                bounds=bounds,
                classes=task["classes"],
                max_depth=task["max_depth"],
                random_state=seed,
                accountant=BudgetAccountant(),
            ).fit(data["X_train"], data["y_train"])
            secs.append(time.perf_counter() - start)
            acc.append(float(model.score(data["X_test"], data["y_test"])))
            proba = model.predict_proba(data["X_test"])[:, 1]
            auc.append(float(roc_auc_score(data["y_test"], proba)))
        key = repr(eps)
        answer["accuracy"][key], answer["auc"][key] = acc, auc
        answer["seconds"][key] = secs
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
