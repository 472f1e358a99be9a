"""``"auto"`` settings of the boosting estimators: the stated values, by
``boosting`` and ε (public), and nothing else.

The cyclic classifier's values come from a measurement on Adult
(``benchmarks/bench_cyclic_boosting.py``); here they are checked to be
what ``"auto"`` fits, bit for bit, against the same fit with the values
written out, and that the plan (``fit_cost``) and ``n_iter_`` agree.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from skdp import BudgetAccountant
from skdp.ensemble import (
    PrivateHistGradientBoostingClassifier,
    PrivateHistGradientBoostingRegressor,
)
from skdp.model_selection import fit_cost

pytestmark = pytest.mark.filterwarnings("ignore::skdp.NoiseDominatedWarning")

TREES = {"max_iter": 30, "max_bins": 8, "learning_rate": 0.3, "bin_share": 0.1}
CYCLIC_LOW = {"max_iter": 3, "max_bins": 16, "learning_rate": 0.5, "bin_share": 0.4}
CYCLIC = {"max_iter": 5, "max_bins": 32, "learning_rate": 0.5, "bin_share": 0.2}


def _fit(cls, X, y, epsilon, **params):
    extra = {"classes": [0, 1]} if cls is PrivateHistGradientBoostingClassifier else {}
    model = cls(
        epsilon,
        max_depth=2,
        random_state=3,
        accountant=BudgetAccountant(100.0, 0.5),
        **extra,
        **params,
    )
    return model.fit(X, y)


@pytest.mark.parametrize(
    ("boosting", "epsilon", "stated"),
    [
        ("trees", 1.0, TREES),
        ("cyclic", 0.3, CYCLIC_LOW),
        ("cyclic", 0.999, CYCLIC_LOW),
        ("cyclic", 1.0, CYCLIC),
        ("cyclic", 7.0, CYCLIC),
    ],
)
def test_the_classifiers_auto_is_the_stated_setting(boosting, epsilon, stated):
    X, y = make_classification(300, 4, random_state=0)
    cls = PrivateHistGradientBoostingClassifier
    auto = _fit(cls, X, y, epsilon, boosting=boosting)
    written = _fit(cls, X, y, epsilon, boosting=boosting, **stated)
    np.testing.assert_array_equal(auto.predict_proba(X), written.predict_proba(X))
    assert auto.n_iter_ == stated["max_iter"]
    assert fit_cost(auto, X) == fit_cost(written, X)


@pytest.mark.parametrize("boosting", ["trees", "cyclic"])
def test_the_regressors_auto_is_the_trees_setting_in_either_mode(boosting):
    X, y = make_regression(300, 3, noise=1.0, random_state=0)
    cls = PrivateHistGradientBoostingRegressor
    auto = _fit(cls, X, y, 0.5, boosting=boosting, target_bounds=(-300, 300))
    written = _fit(
        cls, X, y, 0.5, boosting=boosting, target_bounds=(-300, 300), **TREES
    )
    np.testing.assert_array_equal(auto.predict(X), written.predict(X))
    assert auto.n_iter_ == 30


def test_a_stated_value_overrides_auto_alone():
    X, y = make_classification(300, 4, random_state=0)
    cls = PrivateHistGradientBoostingClassifier
    mixed = _fit(cls, X, y, 2.0, boosting="cyclic", max_iter=2)
    written = _fit(cls, X, y, 2.0, boosting="cyclic", **{**CYCLIC, "max_iter": 2})
    np.testing.assert_array_equal(mixed.predict_proba(X), written.predict_proba(X))
    assert mixed.n_iter_ == 2
