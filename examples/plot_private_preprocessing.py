"""
Private preprocessing on UCI Adult: scalers, discovered categories, quantiles
=============================================================================

A pipeline that learns its preprocessing from the sensitive data, privately:
:class:`~skdp.preprocessing.PrivateOneHotEncoder` discovers the categories
(values shared by few people are never revealed),
:class:`~skdp.preprocessing.PrivateStandardScaler` standardises the numeric
columns, and :class:`~skdp.linear_model.PrivateLogisticRegression` is the
model. One :class:`~skdp.BudgetAccountant` is charged for all three. Then the
joint quantile release is compared with splitting ε over the levels on the
heavily tied ``hours-per-week`` column. Data: Becker and Kohavi (1996),
CC BY 4.0, shipped in ``examples/data``.
"""

# %%
# A pipeline whose every learned step is private
# ----------------------------------------------
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant
from skdp.linear_model import PrivateLogisticRegression
from skdp.preprocessing import (
    PrivateOneHotEncoder,
    PrivateQuantile,
    PrivateStandardScaler,
)

NUMERIC = {"age": (17, 90), "education-num": (1, 16), "hours-per-week": (1, 99)}
CATEGORICAL = ["workclass", "marital-status", "occupation", "relationship", "sex"]

adult = pd.read_csv(Path("data") / "adult.csv.gz", skipinitialspace=True)
X = adult[list(NUMERIC) + CATEGORICAL]
y = adult["Salary"].str.startswith(">50K").astype(int)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.25, random_state=0
)

accountant = BudgetAccountant(epsilon=3.0, delta=1e-5)
bounds = tuple(np.array(list(NUMERIC.values()), dtype=float).T)
preprocessing = ColumnTransformer(
    [
        (
            "numeric",
            PrivateStandardScaler(0.5, bounds=bounds, accountant=accountant),
            list(NUMERIC),
        ),
        (
            "categorical",
            PrivateOneHotEncoder(epsilon=0.5, delta=1e-6, accountant=accountant),
            CATEGORICAL,
        ),
    ]
)
model = make_pipeline(
    preprocessing,
    # the steps above already put every column on one scale (standardised
    # numbers, 0/1 categories): "scaled" uses them as given, with no budget
    # spent on private feature scales
    PrivateLogisticRegression(
        epsilon=1.0, delta=1e-6, feature_bounds="scaled", accountant=accountant
    ),
)
model.fit(X_train, y_train)
print(f"test accuracy: {model.score(X_test, y_test):.3f}")
print(f"spent: {accountant.total()}")
encoder = model[0].named_transformers_["categorical"]
print(f"categories kept: {sum(c.size for c in encoder.categories_)}")

# %%
# Joint quantiles on tied data
# ----------------------------
# Half of Adult works exactly 40 hours a week. The joint release treats the
# tie as an atom and puts every decile that falls inside it exactly at 40;
# the independent release splits ε over the nine levels.
hours = adult[["hours-per-week"]].to_numpy(dtype=float)
ordered = np.sort(hours[:, 0])
levels = np.arange(1, 10) / 10
lab = BudgetAccountant(epsilon=np.inf)  # an experiment: every run is charged


def mean_rank_error(values):
    below = np.searchsorted(ordered, values)
    at_most = np.searchsorted(ordered, values, side="right")
    target = levels * ordered.size
    return np.mean(np.maximum.reduce([below - target, target - at_most, 0 * target]))


errors = {"joint": [], "exponential": []}
for seed in range(10):
    for method in errors:
        est = PrivateQuantile(
            levels,
            epsilon=1.0,
            bounds=(0, 100),
            method=method,
            accountant=lab,
            random_state=seed,
        ).fit(hours)
        errors[method].append(mean_rank_error(est.quantiles_[:, 0]))

fig, ax = plt.subplots(figsize=(5, 3))
ax.bar(list(errors), [np.mean(v) for v in errors.values()], color=["C0", "C1"])
ax.set_ylabel("mean rank error (rows)")
ax.set_title("9 deciles of hours-per-week, ε = 1")
fig.tight_layout()
plt.show()
