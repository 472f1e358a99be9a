"""GridSearchCV(n_jobs=2) over a private estimator with an in-memory accountant
either runs with every spend recorded once, or is refused before any fit
(issue 28, "done when").

Before issue 28, every worker process refused to spend (AccountantCopyError)
and the search failed with an empty ledger whatever the budget.
"""

from collections import Counter

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV

from skdp import BudgetAccountant, PrivateLogisticRegression

# 300 rows keep the test fast; the models are noisy, and that is not its point
pytestmark = pytest.mark.filterwarnings("ignore::skdp.NoiseDominatedWarning")

GRID = {"C": [0.1, 1.0]}
N_SPLITS = 3
N_FITS = len(GRID["C"]) * N_SPLITS + 1  # every candidate on every split, the refit


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=300, n_features=4, random_state=0)
    return np.clip(X, -3, 3), y


def _search(acc, n_jobs):
    model = PrivateLogisticRegression(
        0.5,
        1e-6,
        classes=[0, 1],
        feature_bounds=(-3, 3),
        accountant=acc,
        random_state=0,
    )
    return GridSearchCV(model, GRID, cv=N_SPLITS, n_jobs=n_jobs)


def _ledger(acc):
    return Counter((e.label, e.epsilon, e.delta) for e in acc.entries)


@pytest.mark.parametrize("backend", ["loky", "multiprocessing"])
def test_n_jobs_2_records_every_fit_once(data, backend):
    one_process = BudgetAccountant(10.0, 1e-4)
    _search(one_process, n_jobs=1).fit(*data)
    acc = BudgetAccountant(10.0, 1e-4)
    with parallel_config(backend=backend):
        search = _search(acc, n_jobs=2).fit(*data)
    assert len(acc.entries) == N_FITS  # one entry per fit, as in one process
    assert _ledger(acc) == _ledger(one_process)
    assert acc.total() == one_process.total() == (3.5, 7e-06)
    assert search.best_estimator_.accountant is acc


def test_n_jobs_2_plan_over_the_budget_is_refused_before_any_fit(data):
    acc = BudgetAccountant(3.0, 1e-4)  # the plan costs 7 x 0.5 = 3.5
    with parallel_config(backend="loky"):
        with pytest.raises(ValueError, match="All the 6 fits failed") as failed:
            _search(acc, n_jobs=2).fit(*data)
    message = str(failed.value)
    assert "GridSearchCV refused before its first fit" in message
    assert "2 candidates × 3 splits + 1 refit = 7 fits, costs epsilon=3.5" in message
    assert "check_budget" in message and "NoisyMaxSearchCV" in message
    assert acc.entries == ()


def test_forked_workers_do_not_plan_the_parents_search_again(data, tmp_path):
    # a worker forked inside search.fit (joblib's multiprocessing backend)
    # has the parent's search frames on its stack; with a file ledger the
    # children charge it directly, and one planning the search again after
    # other fits were charged would refuse fits that the plan covers
    acc = BudgetAccountant(3.5, 1e-4, ledger=tmp_path / "budget.sqlite")
    with parallel_config(backend="multiprocessing"):
        _search(acc, n_jobs=2).set_params(error_score="raise").fit(*data)
    assert len(acc.entries) == N_FITS
    assert acc.total() == (3.5, 7e-06)
