"""NoisyMaxSearchCV refuses input it cannot use before charging (issue 26).

With ``refit=False`` and ``method="subsample"`` no private estimator probes
the input before the charge: a NaN or an empty input was charged the whole
selection and then made every block abstain.
"""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression

from skdp import BudgetAccountant
from skdp.model_selection import NoisyMaxSearchCV


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    return X, (X[:, 0] > 0).astype(int)


def search(estimator, accountant):
    return NoisyMaxSearchCV(
        estimator,
        {"C": [1.0, 2.0]},
        n_blocks=5,
        refit=False,
        accountant=accountant,
        random_state=0,
    )


def with_nan(array, index):
    array = array.astype(np.float64)
    array[index] = np.nan
    return array


CASES = {
    "NaN in X": lambda X, y: (with_nan(X, (5, 1)), y),
    "inf in X": lambda X, y: (np.where(X > 2.5, np.inf, X), y),
    "NaN in y": lambda X, y: (X, with_nan(y, 7)),
    "no rows": lambda X, y: (X[:0], y[:0]),
}


@pytest.mark.parametrize("case", CASES)
def test_unusable_input_is_refused_before_the_charge(data, case):
    X, y = CASES[case](*data)
    accountant = BudgetAccountant(epsilon=10.0)
    with pytest.raises(ValueError, match="Nothing was charged"):
        search(LogisticRegression(), accountant).fit(X, y)
    assert accountant.entries == ()


class NanTolerant(ClassifierMixin, BaseEstimator):
    """A plain model that declares it takes NaN (the majority class)."""

    def __init__(self, C=1.0):
        self.C = C

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def fit(self, X, y):
        self.classes_, counts = np.unique(y, return_counts=True)
        self.majority_ = self.classes_[np.argmax(counts)]
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


def test_nan_is_taken_by_a_model_that_takes_it(data):
    X, y = CASES["NaN in X"](*data)
    accountant = BudgetAccountant(epsilon=10.0)
    search(NanTolerant(), accountant).fit(X, y)
    assert accountant.total()[0] == 1.0
