"""PrivateRandomForestClassifier: budget, refusals, rows per tree, audits,
convergence, extremes and pandas input."""

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.audit import audit_mechanism
from skdp.ensemble import PrivateRandomForestClassifier
from skdp.mechanisms import check_random_source
from skdp.tree import _fit, _leaf_counts

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ helpers
from _tree_walk import leaf_of

MAX = np.finfo(float).max


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, 3))
    return X, (X[:, 0] + X[:, 1] > 1).astype(int)


def _forest(**params):
    defaults = dict(
        n_estimators=4, bounds=(0, 1), classes=[0, 1], max_depth=3, random_state=0
    )
    return PrivateRandomForestClassifier(**{**defaults, **params})


# -- budget -----------------------------------------------------------------


def test_stated_classes_and_bounds_charge_epsilon_once_and_no_delta():
    acc = BudgetAccountant(epsilon=1.0)
    _forest(epsilon=1.0, accountant=acc).fit(*_data())
    assert acc.total() == (1.0, 0.0)
    assert [e.label for e in acc.entries] == [
        "PrivateRandomForestClassifier: leaf class counts"
    ]


def test_private_labels_and_bounds_split_the_budget_and_are_charged_first():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    forest = _forest(epsilon=1.0, bounds=None, classes=None, accountant=acc)
    forest.fit(*_data(3000))
    labels = [e.label.split(": ")[1] for e in acc.entries]
    assert labels[0].startswith("label set") and labels[-1] == "leaf class counts"
    assert any("bound" in label for label in labels[1:-1])
    assert acc.entries[0].epsilon == pytest.approx(0.1)
    assert acc.entries[-1].epsilon == pytest.approx(0.63)  # 0.9 minus 30 %
    assert math.fsum(e.epsilon for e in acc.entries) <= 1.0
    assert acc.total()[1] == 1e-6
    assert forest.classes_.tolist() == [0, 1]


@pytest.mark.parametrize(
    "params, X_change, y_change, match",
    [
        ({}, None, lambda y: np.where(y == 1, 2, y), "not in the public classes"),
        ({}, lambda X: np.where(X > 0.9, np.nan, X), None, "NaN|finite"),
        ({"mechanism": "gaussian", "delta": 0.0}, None, None, "delta > 0"),
        ({"classes": None, "delta": 0.0}, None, None, "delta > 0"),
        ({"epsilon": 1e-300}, None, None, "Nothing was charged"),
        ({"max_depth": 21}, None, None, "max_depth"),
        ({"n_estimators": 0}, None, None, "n_estimators"),
        ({"tree_rows": "some"}, None, None, "tree_rows"),
        ({"tree_weighting": "votes"}, None, None, "tree_weighting"),
        ({"bounds": (1, 0)}, None, None, "bound"),
    ],
)
def test_nothing_is_charged_when_validation_refuses(params, X_change, y_change, match):
    X, y = _data()
    X = X if X_change is None else X_change(X)
    y = y if y_change is None else y_change(y)
    acc = BudgetAccountant(delta=1.0)
    with pytest.raises(ValueError, match=match):
        _forest(accountant=acc, **params).fit(X, y)
    assert acc.total() == (0.0, 0.0) and len(acc.entries) == 0


def test_fit_cost_is_what_fit_charges_with_private_labels():
    acc = BudgetAccountant(delta=1.0)
    forest = _forest(classes=None, mechanism="gaussian", accountant=acc)
    cost = forest._fit_cost()
    forest.fit(*_data(3000))
    assert acc.total() == pytest.approx((cost.epsilon, cost.delta), rel=1e-12)


# -- rows per tree ----------------------------------------------------------


@pytest.mark.parametrize("tree_rows, copies", [("disjoint", 1), ("all", 4)])
def test_each_row_is_counted_in_one_tree_or_in_all(tree_rows, copies):
    # noise ~1e-9: the counts add up to the rows counted, exactly
    X, y = _data(500)
    forest = _forest(epsilon=1e9, tree_rows=tree_rows).fit(X, y)
    assert round(float(forest.leaf_counts_.sum())) == copies * 500
    per_tree = forest.leaf_counts_.sum(axis=(1, 2))
    if tree_rows == "disjoint":  # a uniform tree per row: about 125 each
        assert np.all(np.abs(per_tree - 125) < 5 * math.sqrt(500 * 3 / 16))


@pytest.mark.parametrize("tree_rows, trees_per_row", [("disjoint", 1), ("all", 4)])
def test_the_release_is_calibrated_to_the_trees_a_row_is_counted_in(
    monkeypatch, tree_rows, trees_per_row
):
    seen = []
    release = _fit.release_leaf_counts

    def spy(counts, per_row, *args):
        seen.append(per_row)
        return release(counts, per_row, *args)

    monkeypatch.setattr(_fit, "release_leaf_counts", spy)
    forest = _forest(epsilon=2.0, tree_rows=tree_rows).fit(*_data())
    assert seen == [trees_per_row]
    assert forest.noise_std_ == pytest.approx(math.sqrt(2) * trees_per_row / 2.0)


# -- audits -----------------------------------------------------------------

AUDIT = {"n_samples": 4_000, "n_pilot": 1_000, "random_state": 0}
N_TREES = 3
SPLITS = (np.zeros((N_TREES, 0), dtype=np.intp), np.zeros((N_TREES, 0)))
D0 = (np.zeros((3, 1)), np.zeros(3, dtype=np.intp))  # one leaf per tree
D1 = (np.zeros((4, 1)), np.zeros(4, dtype=np.intp))  # plus one row


def _released_counts(tree_rows):
    """The estimator's release stage at ε = 1: rows to trees and exact
    counts (:func:`~skdp.tree._fit.forest_counts`) per run, then the noise
    of all runs in one :func:`~skdp.tree._leaf_counts.release_leaf_counts`
    call (i.i.d. per count, as in one fit). Output: each tree's class-0
    count (post-processing of the release)."""

    def mechanism(data, seed, n_runs=1):
        source = check_random_source(seed)
        runs = [
            _fit.forest_counts(*data, 2, *SPLITS, tree_rows, source)
            for _ in range(n_runs)
        ]
        counts = np.concatenate([c for c, _ in runs])
        noisy, _ = _fit.release_leaf_counts(counts, runs[0][1], 1.0, 0.0, source)
        return noisy[:, 0, 0].reshape(n_runs, N_TREES)

    return mechanism


@pytest.mark.parametrize("tree_rows", ["disjoint", "all"])
def test_audit_of_the_release_stays_within_epsilon(tree_rows):
    result = audit_mechanism(_released_counts(tree_rows), D0, D1, **AUDIT)
    assert result.epsilon_lower_bound <= 1.0, str(result)


def test_audit_catches_a_tree_that_sees_rows_of_another_trees_subset(monkeypatch):
    # twin: the rows go to every tree, the noise stays that of one
    monkeypatch.setattr(
        _fit, "rows_of_trees", lambda tree_of_row, n_trees: [slice(None)] * n_trees
    )
    result = audit_mechanism(_released_counts("disjoint"), D0, D1, **AUDIT)
    assert result.epsilon_lower_bound > 1.0, str(result)


def test_audit_catches_trees_on_all_rows_not_composed(monkeypatch):
    # twin: every row in every tree, the sensitivity of one tree
    monkeypatch.setattr(_leaf_counts, "leaf_count_sensitivity", lambda m: (1.0, 1.0))
    result = audit_mechanism(_released_counts("all"), D0, D1, **AUDIT)
    assert result.epsilon_lower_bound > 1.0, str(result)


@pytest.mark.slow
def test_audit_of_the_whole_fit_stays_within_epsilon():
    # the estimator end to end (bounds and classes stated): the faster
    # audits above check the same release stage unmarked
    def fit(data, seed):
        X, codes = data
        forest = _forest(
            n_estimators=N_TREES, max_depth=0, epsilon=1.0, random_state=seed
        )
        return forest.fit(X, codes).leaf_counts_.ravel()

    result = audit_mechanism(fit, D0, D1, n_samples=2000, n_pilot=500, random_state=0)
    assert result.epsilon_lower_bound <= 1.0, str(result)


# -- convergence, prediction ------------------------------------------------


def test_as_epsilon_grows_each_leaf_gives_its_rows_class_frequencies():
    X, y = _data(400)
    forest = _forest(epsilon=1e12, tree_rows="all").fit(X, y)
    for tree in forest.estimators_:
        leaves = np.array([leaf_of(row, tree) for row in X])
        for leaf in np.unique(leaves):
            frequencies = np.bincount(y[leaves == leaf], minlength=2) / np.sum(
                leaves == leaf
            )
            np.testing.assert_allclose(tree.leaf_proba_[leaf], frequencies, atol=1e-9)


def _hand_leaf_proba(counts, leaf, depth, weight):
    """A leaf's probabilities walked from the root down its path: each node's
    clipped counts (the sum of its leaves') plus ``weight`` rows distributed
    as its parent's, normalised (the root: its counts normalised)."""
    clipped = np.maximum(counts, 0.0)
    proba = clipped.sum(axis=0) / clipped.sum()
    for level in range(1, depth + 1):
        width = 2 ** (depth - level)  # leaves under a node of this level
        first = (leaf // width) * width
        node = clipped[first : first + width].sum(axis=0)
        proba = (node + weight * proba) / (node.sum() + weight)
    return proba


def _hand_gini_decrease(counts):
    clipped = np.maximum(counts, 0.0)

    def gini(row):
        return 1.0 - sum((c / row.sum()) ** 2 for c in row) if row.sum() else 0.0

    below = sum(leaf.sum() / clipped.sum() * gini(leaf) for leaf in clipped)
    return gini(clipped.sum(axis=0)) - below


def test_predict_proba_weighs_the_trees_by_their_released_impurity_decrease():
    # the public rule on the released counts, computed by hand row by row:
    # leaves shrunk towards their parents with noise_std / n_estimators
    # rows, trees weighted by the Gini decrease of their released counts
    X, y = _data(400)
    forest = _forest(epsilon=0.5).fit(X, y)
    counts, n_trees = forest.leaf_counts_, forest.n_estimators
    decreases = np.array([_hand_gini_decrease(c) for c in counts])
    weights = decreases / decreases.sum()
    assert weights.std() > 0.05  # the trees are not weighed alike
    np.testing.assert_allclose(forest.tree_weights_, weights, rtol=1e-9)
    shrink = forest.noise_std_ / n_trees
    for row in X[:20]:
        expected = sum(
            w * _hand_leaf_proba(c, leaf_of(row, tree), 3, shrink)
            for w, c, tree in zip(weights, counts, forest.estimators_, strict=True)
        )
        np.testing.assert_allclose(forest.predict_proba(row[None])[0], expected)


@pytest.mark.parametrize("tree_weighting", ["impurity", "uniform"])
def test_predict_is_the_most_probable_class_of_the_weighted_trees(tree_weighting):
    X, y = _data()
    forest = _forest(epsilon=1.0, tree_weighting=tree_weighting).fit(X, y)
    trees = np.array([tree.predict_proba(X) for tree in forest.estimators_])
    if tree_weighting == "uniform":
        np.testing.assert_array_equal(forest.tree_weights_, np.full(4, 0.25))
    proba = forest.predict_proba(X)
    np.testing.assert_allclose(proba, np.tensordot(forest.tree_weights_, trees, 1))
    np.testing.assert_array_equal(
        forest.predict(X), forest.classes_[proba.argmax(axis=1)]
    )


def test_a_seed_reproduces_the_fit_and_another_seed_differs():
    X, y = _data()
    a, b, c = (_forest(random_state=s).fit(X, y) for s in (1, 1, 2))
    np.testing.assert_array_equal(a.leaf_counts_, b.leaf_counts_)
    assert not np.array_equal(a.leaf_counts_, c.leaf_counts_)


# -- extremes and input types -------------------------------------------------


@pytest.mark.parametrize(
    "bounds, values",
    [
        ((-MAX, MAX), [-MAX, MAX, 0.0, 5e-324]),
        ((0.0, 1e-323), [0.0, 5e-324, 1e-323, -1.0, 1.0]),  # subnormal width
        ((-MAX, -MAX / 2), [-MAX, 0.0, 5e-324]),
    ],
)
def test_extreme_bounds_and_values_fit_and_predict_without_a_warning(bounds, values):
    rng = np.random.default_rng(0)
    X = rng.choice(values, size=(200, 2))
    y = rng.integers(0, 2, 200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        forest = _forest(bounds=bounds, max_depth=4).fit(X, y)
        proba = forest.predict_proba(X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.all(forest.tree_weights_ >= 0)
    np.testing.assert_allclose(forest.tree_weights_.sum(), 1.0)


@pytest.mark.parametrize("bounds", [(0.0, 5e-324), (1.0, 1.0)])
def test_bounds_without_a_half_width_are_refused_before_the_charge(bounds):
    # check_bounds' rule for every skdp estimator: half the width must not
    # round to 0 (the smallest subnormal width, and a point, are refused)
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="bounds"):
        _forest(bounds=bounds, accountant=acc).fit(*_data())
    assert acc.total() == (0.0, 0.0)


def test_pandas_input_with_string_labels():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    labels = pd.Series(np.where(y == 1, "yes", "no"))
    forest = _forest(classes=["no", "yes"]).fit(frame, labels)
    assert forest.feature_names_in_.tolist() == ["a", "b", "c"]
    assert forest.classes_.tolist() == ["no", "yes"]
    with pytest.warns(UserWarning, match="feature names"):  # as scikit-learn
        from_array = forest.predict(X)
    np.testing.assert_array_equal(forest.predict(frame), from_array)
    assert set(forest.predict(frame)) <= {"no", "yes"}
