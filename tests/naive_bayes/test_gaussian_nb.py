"""PrivateGaussianNB: ledger, accuracy against sklearn, public classes, audit."""

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.naive_bayes import GaussianNB

from skdp import BudgetAccountant, PrivateGaussianNB
from skdp.audit import audit_mechanism
from skdp.mechanisms import check_random_source
from skdp.preprocessing._standard import release_moment_sums
from skdp.sensitivity import _moments

BOUNDS = (-6.0, 8.0)


def blobs(n=40_000, seed=0, n_classes=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    X = rng.normal(y[:, None] * 1.5, 1.0 + 0.3 * y[:, None], size=(n, 4))
    return X, y


def test_one_entry_and_close_to_sklearn():
    X, y = blobs(200_000)  # noise on a variance ~ 1/n_class: 1.5 % here
    acc = BudgetAccountant(epsilon=1.0)
    est = PrivateGaussianNB(
        1.0, bounds=BOUNDS, classes=[0, 1, 2], accountant=acc, random_state=0
    )
    est.fit(X, y)
    ref = GaussianNB().fit(X, y)
    assert [e.label for e in acc.entries] == [
        "PrivateGaussianNB: per-class counts, sums and squares"
    ]
    assert acc.total() == (1.0, 0.0)
    np.testing.assert_allclose(est.theta_, ref.theta_, atol=0.05)
    np.testing.assert_allclose(est.var_, ref.var_, rtol=0.05)
    np.testing.assert_allclose(est.class_prior_, ref.class_prior_, atol=0.01)
    assert abs(est.score(X, y) - ref.score(X, y)) < 0.01
    proba = est.predict_proba(X[:10])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.classes_[proba.argmax(1)], est.predict(X[:10]))


def test_public_classes_include_an_absent_one_and_unknown_labels_fail():
    X, y = blobs(5_000, n_classes=2)
    est = PrivateGaussianNB(bounds=BOUNDS, classes=[0, 1, 2], random_state=0).fit(X, y)
    assert est.classes_.tolist() == [0, 1, 2]
    assert est.class_count_[2] < 50  # noise only, at least 1
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError, match="not in the public classes"):
        PrivateGaussianNB(bounds=BOUNDS, classes=[0, 5], accountant=acc).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 public classes"):
        PrivateGaussianNB(bounds=BOUNDS, classes=[0], accountant=acc).fit(X, y)
    assert acc.total() == (0.0, 0.0)


def test_public_priors_are_used_and_checked():
    X, y = blobs(5_000, n_classes=2)
    est = PrivateGaussianNB(
        bounds=BOUNDS, classes=[0, 1], priors=[0.9, 0.1], random_state=0
    )
    np.testing.assert_array_equal(est.fit(X, y).class_prior_, [0.9, 0.1])
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError, match="sum to 1"):
        PrivateGaussianNB(
            bounds=BOUNDS, classes=[0, 1], priors=[0.9, 0.3], accountant=acc
        ).fit(X, y)
    assert acc.total() == (0.0, 0.0)


def test_pandas_feature_names_and_grid_search():
    X, y = blobs(6_000, n_classes=2)
    frame = pd.DataFrame(X, columns=list("abcd"))
    search = GridSearchCV(
        PrivateGaussianNB(bounds=BOUNDS, random_state=0),
        {"var_smoothing": [1e-9, 1e-2]},
        cv=2,
    ).fit(frame, y)
    assert list(search.best_estimator_.feature_names_in_) == list("abcd")
    assert search.best_score_ > 0.7


# -- audit: a row belongs to one class ---------------------------------------

EPS = 1.0
AUDIT = {"n_samples": 5_000, "n_pilot": 1_000, "random_state": 0}
D0 = (np.zeros((3, 1)), np.array([0, 1, 2]))
D1 = (np.zeros((4, 1)), np.array([0, 1, 2, 0]))


def release_first_terms(data, seed):
    """The estimator's release, reduced to the total of the classes' (1 - a)²
    sums (post-processing, so a bound on its epsilon bounds the fit's)."""
    X, y = data
    noisy, _ = release_moment_sums(
        X, np.zeros(1), np.ones(1), EPS, 0.0, check_random_source(seed), y, 3
    )
    return float(noisy[:, 0, 0].sum())


def test_audit_passes_and_a_row_in_every_class_twin_is_caught(monkeypatch):
    honest = audit_mechanism(release_first_terms, D0, D1, **AUDIT)
    assert honest.epsilon_lower_bound <= EPS, str(honest)

    def every_class(terms, codes, n_groups):
        sums = np.stack([t.sum(axis=0) for t in terms])
        return np.repeat(sums[None], n_groups, axis=0)

    monkeypatch.setattr(_moments, "_group_sums", every_class)
    mutant = audit_mechanism(release_first_terms, D0, D1, **AUDIT)
    assert mutant.epsilon_lower_bound > EPS, str(mutant)
