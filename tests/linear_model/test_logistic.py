"""PrivateLogisticRegression: accounting, accuracy, robustness, sklearn use."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from sklearn.compose import ColumnTransformer
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skdp import BudgetAccountant, BudgetExceededError, NoisyMaxSearchCV
from skdp.exceptions import NoiseDominatedWarning
from skdp.linear_model import PrivateLogisticRegression, _logistic
from skdp.mechanisms import analytic_gaussian_sigma, gaussian_noise_multipliers
from skdp.model_selection import fit_cost


@pytest.fixture(scope="module")
def binary():
    X, y = make_classification(20_000, 8, n_informative=5, random_state=0)
    X /= np.sqrt(8)  # rows of about unit norm
    return train_test_split(X, y, test_size=0.3, random_state=0)


def test_charges_its_epsilon_and_delta_once_before_reading_data(binary):
    X, _, y, _ = binary
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    clf = PrivateLogisticRegression(
        0.5, 1e-6, classes=[0, 1], accountant=acc, random_state=0
    )
    clf.fit(X, y)
    assert tuple(acc.total()) == pytest.approx((0.5, 1e-6))
    assert (clf.epsilon_spent_, clf.delta_spent_) == pytest.approx((0.5, 1e-6))
    assert len(acc.entries) == 1
    cost = fit_cost(clf)
    assert (cost.epsilon, cost.delta) == (0.5, 1e-6)
    ratio = analytic_gaussian_sigma(1.0, 0.5, 1e-6)
    assert cost.rho == pytest.approx(0.5 / ratio**2)


def test_refused_when_the_budget_is_short_and_nothing_is_charged(binary):
    X, _, y, _ = binary
    acc = BudgetAccountant(epsilon=0.4, delta=1e-5)
    with pytest.raises(BudgetExceededError):
        PrivateLogisticRegression(0.5, accountant=acc).fit(X, y)
    assert tuple(acc.total()) == (0.0, 0.0)


@pytest.mark.parametrize(
    ("X", "y", "kwargs", "message"),
    [
        ([[0.0], [np.nan]], [0, 1], {}, "NaN or inf"),
        ([[0.0], [1.0]], [0, 2], {"classes": [0, 1]}, "not in the public classes"),
        ([[0.0], [1.0]], [1, 1], {"classes": [1]}, "at least 2 public classes"),
    ],
)
def test_input_errors_cost_nothing(X, y, kwargs, message):
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match=message):
        PrivateLogisticRegression(accountant=acc, **kwargs).fit(X, y)
    assert tuple(acc.total()) == (0.0, 0.0)


def test_the_steps_compose_to_one_gaussian_mechanism():
    ratios = gaussian_noise_multipliers(1.0, 1e-6, _logistic._shares(10))
    total = analytic_gaussian_sigma(1.0, 1.0, 1e-6)
    # sum of squared GDP parameters equals that of the whole budget
    assert np.sum(1.0 / ratios**2) == pytest.approx(1.0 / total**2, rel=1e-12)
    assert ratios.size == 12  # count, curvature, 10 steps


def test_binary_accuracy_close_to_non_private(binary):
    X, Xt, y, yt = binary
    reference = LogisticRegression().fit(X, y).score(Xt, yt)
    scores = [
        PrivateLogisticRegression(1.0, random_state=s).fit(X, y).score(Xt, yt)
        for s in range(3)
    ]
    assert np.median(scores) > reference - 0.02
    clf = PrivateLogisticRegression(1.0, random_state=0).fit(X, y)
    assert clf.coef_.shape == (1, 8) and clf.intercept_.shape == (1,)
    proba = clf.predict_proba(Xt)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(
        clf.classes_[(proba[:, 1] > 0.5).astype(int)], clf.predict(Xt)
    )


def test_multinomial():
    X, y = make_classification(
        30_000, 6, n_informative=4, n_classes=3, n_clusters_per_class=1, random_state=1
    )
    X /= np.sqrt(6)
    labels = np.array(["a", "b", "c"])[y]
    X, Xt, y, yt = train_test_split(X, labels, random_state=0)
    reference = LogisticRegression().fit(X, y).score(Xt, yt)
    clf = PrivateLogisticRegression(1.0, random_state=0).fit(X, y)
    assert clf.coef_.shape == (3, 6) and list(clf.classes_) == ["a", "b", "c"]
    assert clf.score(Xt, yt) > reference - 0.03
    assert np.allclose(clf.predict_proba(Xt).sum(axis=1), 1.0)


def test_public_classes_absent_from_y_are_kept():
    X, y = make_classification(2_000, 3, n_informative=2, n_redundant=0, random_state=0)
    clf = PrivateLogisticRegression(classes=[0, 1, 2], random_state=0).fit(X, y)
    assert list(clf.classes_) == [0, 1, 2] and clf.coef_.shape == (3, 3)


def test_reproducible_with_a_seed(binary):
    X, _, y, _ = binary
    a = PrivateLogisticRegression(random_state=3).fit(X, y)
    b = PrivateLogisticRegression(random_state=3).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize(
    "X",
    [
        np.array([[1e300, -1e300], [0.0, 0.0], [1e-300, 5e-324], [1.0, 1.0]]),
        np.array([[1e154, 1e154], [-1e154, 1e154], [1.0, 0.0], [0.0, 1.0]]),
        np.zeros((4, 2)),
    ],
)
@pytest.mark.parametrize("feature_bounds", [None, "scaled"])
def test_extreme_data_neither_raises_nor_warns_after_the_charge(X, feature_bounds):
    # only the NoiseDominatedWarning of the released scales may show (4 rows)
    y = np.array([0, 1, 0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        clf = PrivateLogisticRegression(
            classes=[0, 1], feature_bounds=feature_bounds, random_state=0
        ).fit(X, y)
    assert np.all(np.isfinite(clf.coef_)) and np.all(np.isfinite(clf.intercept_))


def test_one_row_and_no_intercept():
    clf = PrivateLogisticRegression(
        fit_intercept=False, classes=[0, 1], random_state=0
    ).fit([[1.0, 2.0]], [1])
    assert np.array_equal(clf.intercept_, [0.0])


def test_pandas_feature_names_and_pipeline(binary):
    X, Xt, y, yt = binary
    names = [f"f{i}" for i in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)
    clf = PrivateLogisticRegression(random_state=0).fit(frame, y)
    assert list(clf.feature_names_in_) == names
    pipe = make_pipeline(StandardScaler(), PrivateLogisticRegression(random_state=0))
    assert pipe.fit(X, y).score(Xt, yt) > 0.6


def test_grid_search_charges_every_fit(binary):
    X, _, y, _ = binary
    acc = BudgetAccountant(delta=1e-3)
    search = GridSearchCV(
        PrivateLogisticRegression(0.1, accountant=acc, random_state=0),
        {"C": [0.1, 1.0]},
        cv=2,
    )
    search.fit(X, y)
    assert acc.total()[0] == pytest.approx(0.1 * (2 * 2 + 1))


def test_noisy_max_holdout_selects_C_privately(binary):
    X, Xt, y, yt = binary
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    search = NoisyMaxSearchCV(
        PrivateLogisticRegression(1.0, classes=[0, 1], random_state=0),
        {"C": [1e-4, 1.0]},
        method="holdout",
        epsilon=0.5,
        refit=False,
        accountant=acc,
        random_state=0,
    )
    search.fit(X, y)
    # both candidates train on the same rows (1 + 1), the selection runs on
    # the disjoint held-out rows: max(2, 0.5); the trained winner is released
    assert [e.epsilon for e in acc.entries] == [2.0]
    assert search.best_params_ == {"C": 1.0}  # C = 1e-4 shrinks to the prior
    assert search.score(Xt, yt) > 0.6


def test_sparse_input_gives_the_same_model_as_dense(binary):
    X, Xt, y, _ = binary
    X = np.where(np.abs(X) < 0.2, 0.0, X)  # some zeros to store sparsely
    dense = PrivateLogisticRegression(feature_bounds="scaled", random_state=0)
    csr = PrivateLogisticRegression(feature_bounds="scaled", random_state=0)
    dense.fit(X, y)
    csr.fit(sparse.csr_matrix(X), y)
    assert np.array_equal(dense.coef_, csr.coef_)
    assert np.array_equal(dense.predict(Xt), csr.predict(sparse.csr_matrix(Xt)))
    # private scales: the same released scales; sparse input is not centred
    dense = PrivateLogisticRegression(random_state=0).fit(X, y)
    csr = PrivateLogisticRegression(random_state=0).fit(sparse.csr_matrix(X), y)
    assert np.array_equal(dense.feature_scale_, csr.feature_scale_)
    assert np.all(csr.feature_location_ == 0)


def test_default_one_hot_pipeline_works():
    frame = pd.DataFrame(
        {"colour": ["red", "blue", "green"] * 400, "size": [0.1, 0.5, 0.9] * 400}
    )
    y = (frame["colour"] == "red").astype(int)
    pipe = make_pipeline(
        ColumnTransformer(
            [
                (
                    "cat",
                    OneHotEncoder(categories=[["blue", "green", "red"]]),
                    ["colour"],
                ),
                ("num", "passthrough", ["size"]),
            ]
        ),
        PrivateLogisticRegression(random_state=0),
    )
    assert pipe.fit(frame, y).score(frame, y) > 0.9


def test_sparse_nan_is_named_and_costs_nothing():
    X = sparse.csr_matrix(np.array([[0.0, 1.0], [np.nan, 0.0]]))
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="column 0"):
        PrivateLogisticRegression(accountant=acc).fit(X, [0, 1])
    assert acc.entries == ()
