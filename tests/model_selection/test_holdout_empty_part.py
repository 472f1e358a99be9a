"""NoisyMaxSearchCV(method='holdout') after its charge (review).

The training part is drawn row by row after the charge, so for a small data
set it may be empty; the private candidates then refuse their zero-row input
(``Found array with 0 sample(s)``) and the search raises with its budget
spent. Whether it raises depends on the number of rows, which is private:
with the same seed, one more row (in the training part) makes it succeed.
The fix needs the candidates' releases to run on zero rows (see the review
report), so the test is marked xfail(strict) until then.
"""

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.model_selection import NoisyMaxSearchCV
from skdp.naive_bayes import PrivateGaussianNB


def search(accountant):
    return NoisyMaxSearchCV(
        PrivateGaussianNB(bounds=(0, 1), classes=[0, 1]),
        {"epsilon": [0.5, 1.0]},
        method="holdout",
        holdout_size=0.9,
        refit=False,
        accountant=accountant,
        random_state=0,
    )


@pytest.mark.xfail(
    strict=True,
    reason="an empty training part raises after the charge (review finding)",
)
def test_an_empty_training_part_does_not_raise_after_the_charge():
    X = np.array([[0.2, 0.4], [0.6, 0.8]])
    y = np.array([0, 1])
    accountant = BudgetAccountant(epsilon=10.0)
    try:
        search(accountant).fit(X, y)
    except ValueError:
        spent, _ = accountant.total()
        assert spent == 0.0, f"raised after charging epsilon={spent}"
