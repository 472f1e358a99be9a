"""PrivateDecisionTreeClassifier: one random tree, its budget and its leaves."""

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.ensemble import PrivateRandomForestClassifier
from skdp.tree import PrivateDecisionTreeClassifier


def _data(n=800, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    return X, np.where(X[:, 0] > 0.5, "b", "a")


def _tree(**params):
    defaults = dict(bounds=(-2, 2), classes=["a", "b"], max_depth=4, random_state=0)
    return PrivateDecisionTreeClassifier(**{**defaults, **params})


def test_a_tree_is_a_forest_of_one_tree_bit_for_bit():
    X, y = _data()
    tree = _tree().fit(X, y)
    forest = PrivateRandomForestClassifier(
        1, bounds=(-2, 2), classes=["a", "b"], max_depth=4, random_state=0
    ).fit(X, y)
    np.testing.assert_array_equal(tree.threshold_, forest.estimators_[0].threshold_)
    np.testing.assert_array_equal(tree.leaf_counts_, forest.leaf_counts_[0])
    np.testing.assert_array_equal(tree.predict_proba(X), forest.predict_proba(X))


def test_stated_classes_give_a_pure_epsilon_fit_with_one_entry():
    acc = BudgetAccountant(epsilon=0.5)
    tree = _tree(epsilon=0.5, accountant=acc).fit(*_data())
    assert acc.total() == (0.5, 0.0) == (tree.epsilon_spent_, tree.delta_spent_)
    assert tree.leaf_counts_.shape == (16, 2)
    assert tree.noise_std_ == pytest.approx(np.sqrt(2) / 0.5)  # Laplace 1/eps


def test_a_label_outside_the_stated_classes_is_refused_before_the_charge():
    X, y = _data()
    y[0] = "c"
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="not in the public classes"):
        _tree(accountant=acc).fit(X, y)
    assert acc.total() == (0.0, 0.0)


def test_private_label_selection_charges_its_share_of_delta():
    acc = BudgetAccountant(delta=1e-6)
    tree = _tree(classes=None, mechanism="gaussian", accountant=acc).fit(*_data(3000))
    assert tree.classes_.tolist() == ["a", "b"]
    assert acc.total() == pytest.approx((1.0, 1e-6))


def test_as_epsilon_grows_the_leaves_give_their_rows_class_frequencies():
    X, y = _data(300)
    tree = _tree(epsilon=1e12, max_depth=3).fit(X, y)
    proba = tree.predict_proba(X)
    codes = (y == "b").astype(int)
    # pure leaves on both sides of x0 = 0.5 and mixed ones: not one prior
    assert {0.0, 1.0} < set(np.round(proba[:, 1], 9))
    # rows reaching the same leaf share its frequencies: group them by proba
    for value in np.unique(proba[:, 1]):
        rows = proba[:, 1] == value
        assert codes[rows].mean() == pytest.approx(value, abs=1e-9)


def test_predict_log_proba_and_predict_agree_with_predict_proba():
    X, y = _data()
    tree = _tree().fit(X, y)
    proba = tree.predict_proba(X)
    np.testing.assert_allclose(np.exp(tree.predict_log_proba(X)), proba)
    np.testing.assert_array_equal(tree.predict(X), tree.classes_[proba.argmax(1)])
