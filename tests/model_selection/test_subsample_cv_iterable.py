"""``cv`` given as an iterable of splits in ``method='subsample'``.

Every block of the search receives the same ``cv`` object. A generator of
splits is consumed before the charge by the plan message (``check_cv``), so
every block then sees no split: its scores are NaN and it votes for the
first candidate, whatever its rows; and a generator cannot be pickled, so
with worker processes the paid-for search fails after the charge. Neither
depends on the data, but both are decided by public parameters, so the
search refuses such a ``cv`` before the charge (review finding, LOW).
"""

import numpy as np
import pytest
from sklearn.model_selection import KFold

from skdp import BudgetAccountant
from skdp.linear_model import PrivateLogisticRegression
from skdp.model_selection import NoisyMaxSearchCV


def test_a_generator_of_splits_is_refused_before_any_charge():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = (X[:, 0] > 0).astype(int)
    acc = BudgetAccountant()
    search = NoisyMaxSearchCV(
        PrivateLogisticRegression(1.0, classes=[0, 1], max_iter=2),
        {"C": [0.1, 1.0]},
        epsilon=1.0,
        method="subsample",
        n_blocks=2,
        cv=KFold(2).split(X[:40]),
        accountant=acc,
        random_state=0,
        refit=False,
    )
    with pytest.raises(ValueError, match="one-pass iterator"):
        search.fit(X, y)
    assert acc.entries == ()


def test_a_list_of_splits_is_still_accepted():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = (X[:, 0] > 0).astype(int)
    acc = BudgetAccountant()
    NoisyMaxSearchCV(
        PrivateLogisticRegression(1.0, classes=[0, 1], max_iter=2),
        {"C": [0.1, 1.0]},
        epsilon=1.0,
        method="subsample",
        n_blocks=2,
        cv=list(KFold(2).split(X[:40])),
        accountant=acc,
        random_state=0,
        refit=False,
    ).fit(X, y)
    assert len(acc.entries) == 1
