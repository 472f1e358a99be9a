"""Issue 27: PrivateGaussianNB with private bounds is never below the prior."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.naive_bayes import GaussianNB

from skdp.naive_bayes import PrivateGaussianNB
from skdp.naive_bayes._post_processing import share_unresolved_variances


def mean_score(X, y, epsilon, seeds=range(4)):
    scores = []
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = PrivateGaussianNB(epsilon, classes=np.unique(y), random_state=seed)
            scores.append(model.fit(X, y).score(X, y))
    return np.mean(scores)


def test_breast_cancer_at_epsilon_1_is_not_below_the_majority_rate():
    # before: 0.373 at every seed (bounds about 0.001, predict unclipped)
    X, y = load_breast_cancer(return_X_y=True)
    assert mean_score(X, y, 1.0) >= np.bincount(y).max() / y.size - 0.01
    assert mean_score(X, y, 3.0) > 0.85  # before: 0.373


def test_digits_at_epsilon_3_is_well_above_chance():
    X, y = load_digits(return_X_y=True)
    assert mean_score(X, y, 3.0, seeds=range(2)) > 0.5  # before: 0.10


def test_breast_cancer_converges_to_scikit_learn():
    X, y = load_breast_cancer(return_X_y=True)
    reference = GaussianNB().fit(X, y).score(X, y)
    assert mean_score(X, y, 1e6, seeds=range(2)) == pytest.approx(reference, abs=0.005)


def test_predict_clips_rows_to_the_released_bounds():
    # class 0 near the top with a small variance, class 1 low and wide: a row
    # far above the bounds is, once clipped as the model's rows were, a
    # class-0 row; unclipped, the wider class would take it
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0.9, 0.03, 5_000), rng.normal(0.2, 0.2, 5_000)][:, None]
    y = np.r_[np.zeros(5_000, int), np.ones(5_000, int)]
    model = PrivateGaussianNB(1e6, bounds=(0.0, 1.0), classes=[0, 1], random_state=0)
    model.fit(np.clip(X, 0, 1), y)
    assert model.predict([[1.0]])[0] == 0
    assert model.predict([[1000.0]])[0] == 0


def test_unresolved_variances_are_shared_by_every_class():
    counts = np.array([300.0, 100.0])
    floor = np.array([[0.01, 0.01], [0.03, 0.03]])  # the small class's is wider
    # feature 0: class 1's variance is at its floor (unresolved); feature 1:
    # both above their floors (resolved), kept as released
    variances = np.array([[0.20, 0.20], [0.0, 0.05]])
    shared, unresolved = share_unresolved_variances(counts, variances, floor)
    np.testing.assert_array_equal(unresolved, [True, False])
    assert shared[0, 0] == shared[1, 0] == pytest.approx(0.75 * 0.20 + 0.25 * 0.03)
    np.testing.assert_array_equal(shared[:, 1], [0.20, 0.05])
