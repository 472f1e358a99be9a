"""
Fit, tune and evaluate on Adult inside one budget
=================================================

A private model is not finished when it is fitted: choosing its
hyper-parameters and measuring how good it is both read private rows, and
each is a release. Here all three steps share one
:class:`~skdp.BudgetAccountant` of ε = 1 on the census income data (Becker
and Kohavi, 1996; CC BY 4.0, shipped in ``examples/data``):

1. :class:`~skdp.model_selection.RandomStoppingSearchCV` tunes
   :class:`~skdp.PrivateLogisticRegression` over 18 candidates by random
   stopping (Papernot and Steinke, 2022): each run fits one random candidate
   and scores it privately, and the number of runs is itself random, which
   is what makes tens of candidates affordable;
2. the winner's accuracy and ROC AUC on held-out rows come from
   :mod:`skdp.metrics`, each with an error bar for its noise;
3. the ledger at the end shows every spend.

Only the features' public schema is used to prepare the data (published
ranges and category lists), so no preprocessing step reads the rows.
"""

# %%
# Data with a public schema
# -------------------------
# Fixed seeds make this page reproducible, and therefore not private: real
# analyses leave ``random_state=None``.
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from skdp import BudgetAccountant, PrivateLogisticRegression
from skdp.metrics import (
    make_private_scorer,
    private_accuracy_score,
    private_score_histograms,
)
from skdp.model_selection import RandomStoppingSearchCV, fit_cost

RANGES = {  # published ranges: values are clipped to them, then scaled
    "age": (17, 90),
    "education-num": (1, 16),
    "hours-per-week": (1, 99),
    "capital-gain": (0, 100_000),
}
CATEGORIES = {  # the codebook's lists: an unseen value encodes as zeros
    "sex": ["Female", "Male"],
    "relationship": [
        "Husband",
        "Not-in-family",
        "Other-relative",
        "Own-child",
        "Unmarried",
        "Wife",
    ],
}

adult = pd.read_csv(Path("data") / "adult.csv.gz", skipinitialspace=True)
adult.columns = adult.columns.str.strip()
numeric = [(adult[c].clip(lo, hi) - lo) / (hi - lo) for c, (lo, hi) in RANGES.items()]
one_hot = [
    (adult[c].str.strip() == value).astype(float)
    for c, values in CATEGORIES.items()
    for value in values
]
X = np.column_stack(numeric + one_hot)
y = (adult["Salary"].str.strip() == ">50K").to_numpy(dtype=int)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
print(f"{X_train.shape[0]} training rows, {X_test.shape[0]} held-out rows")

# %%
# One budget, planned before any row is read
# -------------------------------------------
# Each candidate fit spends ε = 0.25 and its private score ε = 0.2 on the
# search's own held-out part. The search's whole cost, the Rényi bound of
# the repeated runs converted to (ε, δ), is known from these public numbers
# alone: ``fit_cost`` prints it before the search runs (0.69). The
# evaluation spends 0.1 on the accuracy and 0.2 on the AUC.
accountant = BudgetAccountant(epsilon=1.0, delta=1e-6)
search = RandomStoppingSearchCV(
    PrivateLogisticRegression(epsilon=0.25, delta=1e-7, classes=[0, 1]),
    {
        "C": [0.1, 1.0, 10.0],
        "max_norm": [None, 1.0],
        "max_iter": [30, 100, 300],
    },
    scoring=make_private_scorer("accuracy", epsilon=0.2),
    n_iter=3,
    accountant=accountant,
    random_state=0,
)
print("the search will cost", fit_cost(search))

# %%
# Tune
# ----
# Only the best run is released: its parameters, its private score and its
# fitted model (``refit=False``: the winner's fit is already paid for).
search.fit(X_train, y_train)
print("chosen:", search.best_params_)
print(f"its private holdout accuracy: {search.best_score_:.3f}")

# %%
# Evaluate on held-out rows
# -------------------------
# ``search.score(X_test, y_test)`` would be scikit-learn's exact accuracy: a
# release of the test rows that no accountant records. The private metrics
# charge the accountant before they read the labels and come with the
# standard deviation of their noise. One release of the scores' histograms
# (on 100 public bins) gives both the ROC curve and its area.
model = search.best_estimator_
accuracy = private_accuracy_score(
    y_test,
    model.predict(X_test),
    labels=[0, 1],
    epsilon=0.1,
    accountant=accountant,
    random_state=1,
)
histograms = private_score_histograms(
    y_test,
    model.predict_proba(X_test)[:, 1],
    epsilon=0.2,
    accountant=accountant,
    random_state=2,
)
print(f"test accuracy {accuracy.value:.3f} ± {accuracy.std_error:.3f}")
auc = histograms.roc_auc()
fpr, tpr, _ = histograms.roc_curve()
print(f"test ROC AUC  {auc.value:.3f} ± {auc.std_error:.3f}")

fig, ax = plt.subplots(figsize=(4.5, 4.5))
ax.plot(fpr.value, tpr.value, label=f"private ROC, AUC {auc.value:.3f}")
ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="chance")
ax.set(xlabel="false positive rate", ylabel="true positive rate")
ax.legend(loc="lower right")
fig.tight_layout()

# %%
# The ledger
# ----------
# Three entries: the search (one entry for all its runs) and the two
# metrics. Nothing else read the rows.
print(accountant.report())
