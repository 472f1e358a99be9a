"""Adversarial review of the early plan check (issue 28, item 2): a search
whose private scorer charges the same accountant plans its scores too."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, cross_validate

from skdp import BudgetAccountant
from skdp.exceptions import BudgetExceededError, NoiseDominatedWarning
from skdp.linear_model import PrivateLogisticRegression
from skdp.metrics import make_private_scorer

EPS = 0.125  # every fit and every score: binary fractions, exact sums
DELTA = 2.0**-20


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    return X, (X[:, 0] > 0).astype(int)


def _model():
    return PrivateLogisticRegression(
        EPS, DELTA, max_norm=3.0, classes=[0, 1], feature_bounds=(-3, 3)
    )


def _scorer():
    return make_private_scorer("accuracy", epsilon=EPS)


def test_a_search_whose_scores_do_not_fit_is_refused_before_its_first_fit():
    # 2 candidates x 2 splits + 1 refit = 5 fits (0.625) fit the budget, the
    # 4 private scores (0.5) do not: the check passed, the folds and scores
    # spent the budget and the refit was refused, leaving no model.
    X, y = _data()
    acc = BudgetAccountant(5 * EPS, delta=1e-3)
    search = GridSearchCV(_model(), {"C": [1.0, 2.0]}, cv=2, scoring=_scorer())
    with acc, pytest.raises(BudgetExceededError, match=r"\+ 4 private scores"):
        search.set_params(error_score="raise").fit(X, y)
    assert acc.entries == ()


@pytest.mark.parametrize("train", [False, True])
def test_a_plan_with_its_scores_that_fits_runs(train):
    X, y = _data()
    n_scores = 4 * (1 + train)
    acc = BudgetAccountant((5 + n_scores) * EPS, delta=1e-3)
    search = GridSearchCV(
        _model(),
        {"C": [1.0, 2.0]},
        cv=2,
        scoring=_scorer(),
        return_train_score=train,
        error_score="raise",
    )
    with acc, warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        search.fit(X, y)
    assert len(acc.entries) == 5 + n_scores
    assert acc.remaining()[0] == 0.0


def test_cross_validate_plans_its_private_train_and_test_scores():
    X, y = _data()
    acc = BudgetAccountant(3 * EPS + 3 * EPS, delta=1e-3)  # not the train ones
    with acc, pytest.raises(BudgetExceededError, match=r"\+ 6 private scores"):
        cross_validate(
            _model(),
            X,
            y,
            cv=3,
            scoring=_scorer(),
            return_train_score=True,
            error_score="raise",
        )
    assert acc.entries == ()


def test_scores_charged_elsewhere_are_not_planned_here():
    # the scorer charges the default in effect; the model an accountant of
    # its own: the model's plan is its 5 fits alone (no false refusal)
    X, y = _data()
    acc = BudgetAccountant(5 * EPS, delta=1e-3)
    search = GridSearchCV(
        _model().set_params(accountant=acc),
        {"C": [1.0, 2.0]},
        cv=2,
        scoring=_scorer(),
        error_score="raise",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        search.fit(X, y)
    assert len(acc.entries) == 5


_HANG_SCRIPT = """
import gc
from skdp import BudgetAccountant
from skdp.utils._search_hint import running_searches
for threshold in (1, 2, 3, 5, 10):
    gc.set_threshold(threshold)
    for _ in range(300):
        garbage = BudgetAccountant(1.0)
        garbage.cycle = garbage  # freed only by a collection
        del garbage
        running_searches()  # what every charge runs, outside a search
print("done")
"""


def test_looking_for_searches_cannot_hang_in_a_collection():
    # sys._current_frames() holds CPython 3.11's thread-list lock while it
    # makes frame objects; a collection there that freed an accountant's
    # threading.local took the lock again and the process hung (this suite
    # hung in test_accountant.py, gdb: local_clear under _current_frames).
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _HANG_SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
