"""
A budget ledger through a grid search
=====================================

Every private fit charges a :class:`skdp.BudgetAccountant` before it reads the
data. ``clone`` keeps the same accountant, so when
:class:`~sklearn.model_selection.GridSearchCV` clones a private pipeline for
every candidate and every fold, all those fits are charged to one budget and
recorded in one ledger. :func:`skdp.model_selection.fit_cost` computes the
cost of the whole search from public parameters, so the budget can be checked
before anything runs.
"""

# %%
# A pipeline with private steps, and a grid
# -----------------------------------------
# :class:`skdp.PrivateMean` centres the features at private means (public
# bounds [-5, 5]), then :class:`skdp.SampleAggregateEstimator` fits a private
# logistic regression. The grid tries two values of the model's ε.
#
# Fixed seeds make this page reproducible, and therefore not private: real
# analyses leave ``random_state=None``.
import matplotlib.pyplot as plt
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant, PrivateMean, SampleAggregateEstimator
from skdp.model_selection import fit_cost

X, y = make_classification(
    n_samples=6_000, n_features=4, n_informative=2, random_state=0
)
accountant = BudgetAccountant(epsilon=5.0)
pipe = make_pipeline(
    PrivateMean(epsilon=0.2, bounds=(-5, 5), random_state=0),
    SampleAggregateEstimator(
        LogisticRegression(solver="liblinear"),
        classes=[0, 1],
        output_bounds=("l2", 3.0),
        random_state=0,
    ),
)
pipe.set_params(
    privatemean__accountant=accountant,
    sampleaggregateestimator__accountant=accountant,
)
search = GridSearchCV(pipe, {"sampleaggregateestimator__epsilon": [0.25, 0.5]}, cv=3)

# %%
# The cost, before any data is read
# ---------------------------------
# Two candidates on three folds, plus the refit of the winner (charged at the
# largest candidate cost): ``3 × (0.2 + 0.25) + 3 × (0.2 + 0.5) + (0.2 + 0.5)``.
# ``check`` raises :class:`skdp.BudgetExceededError` if that does not fit.
cost = fit_cost(search)
print(f"the search will cost {cost}")
accountant.check(cost.epsilon, cost.delta)
print(f"remaining before the search: {accountant.remaining()}")

# %%
# The search and its ledger
# -------------------------
search.fit(X, y)
print(f"best parameters: {search.best_params_}")
print(accountant.report())

# %%
# Each fit of the pipeline adds two entries: the private mean's row count and
# clipped sums (one release for these four features), then the model. The
# total grows by 0.45 per fold for the first candidate, by 0.7 per fold for
# the second and by 0.7 for the refit, and ends at exactly the 4.15 that
# ``fit_cost`` announced.
ax = accountant.plot()
ax.legend(loc="lower right")
for start, text in [(0, "ε = 0.25, 3 folds"), (6, "ε = 0.5, 3 folds"), (12, "refit")]:
    ax.axvline(start, color="0.8", linewidth=0.8, zorder=0)
    ax.text(start + 0.3, 5.2, text, fontsize="small")
ax.set_ylim(top=5.6)
ax.set_title("Cumulative ε spent by GridSearchCV (2 candidates × 3 folds + refit)")
plt.show()

# %%
# What the ledger does not cover
# ------------------------------
# The fits are private, but GridSearchCV chooses the best candidate by
# comparing cross-validation scores computed on the same private rows, and
# that comparison is not charged: ``best_params_`` (and ``cv_results_``) are
# not differentially private. Use :class:`skdp.NoisyMaxSearchCV` when the
# choice itself must be private, or score on data that are public.
