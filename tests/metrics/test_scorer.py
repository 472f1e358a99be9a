"""make_private_scorer: the metric it releases, its sign, its labels, its charge."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import accuracy_score, log_loss, mean_squared_error, roc_auc_score
from sklearn.model_selection import cross_val_score

from skdp import BudgetAccountant, PrivateGaussianNB
from skdp.metrics import make_private_scorer, private_r2_score

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2000, 2))
Y = (X[:, 0] + 0.5 * RNG.normal(size=2000) > 0).astype(int)
NB = PrivateGaussianNB(classes=[0, 1], bounds=(-4, 4), random_state=0).fit(X, Y)
HUGE = 1e7


@pytest.mark.parametrize(
    "name, reference, sign",
    [
        ("accuracy", lambda m: accuracy_score(Y, m.predict(X)), 1),
        ("roc_auc", lambda m: roc_auc_score(Y, m.predict_proba(X)[:, 1]), 1),
        ("neg_log_loss", lambda m: log_loss(Y, m.predict_proba(X)), -1),
    ],
)
def test_scorer_releases_the_metric_in_scikit_learns_sign(name, reference, sign):
    kwargs = {"bins": 1000} if name == "roc_auc" else {}
    scorer = make_private_scorer(name, epsilon=HUGE, **kwargs)
    value = scorer(NB, X, Y, random_state=0)
    assert value == pytest.approx(sign * reference(NB), abs=1e-3)  # 1000 bins


def test_labels_come_from_a_private_models_classes_and_are_refused_otherwise():
    acc = BudgetAccountant(epsilon=5.0)
    scorer = make_private_scorer("accuracy", epsilon=0.5)
    scorer(NB, X, Y, accountant=acc, random_state=0)
    assert acc.total() == (0.5, 0.0)
    plain = LogisticRegression().fit(X, Y)  # its classes_ were read from y
    with pytest.raises(ValueError, match="needs public labels"):
        scorer(plain, X, Y, accountant=acc)
    assert acc.total() == (0.5, 0.0)
    stated = make_private_scorer("accuracy", epsilon=0.5, labels=[0, 1])
    assert stated(plain, X, Y, accountant=acc) > 0.7


def test_regression_scorer_needs_target_bounds_and_matches_the_function():
    with pytest.raises(ValueError, match="target_bounds"):
        make_private_scorer("r2", epsilon=1.0)
    y = X @ np.array([1.0, -1.0]) + RNG.normal(size=2000)
    model = LinearRegression().fit(X, y)
    scorer = make_private_scorer("r2", epsilon=1.0, target_bounds=(-8, 8))
    assert (
        scorer(model, X, y, random_state=3)
        == private_r2_score(
            y, model.predict(X), target_bounds=(-8, 8), epsilon=1.0, random_state=3
        ).value
    )
    mse = make_private_scorer(
        "neg_mean_squared_error", epsilon=HUGE, target_bounds=(-8, 8)
    )
    clipped = np.clip(model.predict(X), -8, 8)
    expected = mean_squared_error(np.clip(y, -8, 8), clipped)
    assert mse(model, X, y, random_state=0) == pytest.approx(-expected, rel=1e-6)


def test_scorer_works_as_scoring_in_scikit_learn_and_charges_every_call():
    acc = BudgetAccountant(epsilon=5.0)
    scorer = make_private_scorer("accuracy", epsilon=0.2, labels=[0, 1])
    with acc:
        scores = cross_val_score(NB, X, Y, cv=3, scoring=scorer)
    assert scores.shape == (3,)
    # scikit-learn's folds are not planned: 3 fits (1.0 each) and 3 scores
    assert acc.total()[0] == pytest.approx(3 * 1.0 + 3 * 0.2)


def test_unknown_metric_is_refused():
    with pytest.raises(ValueError, match="does not know the metric"):
        make_private_scorer("jaccard", epsilon=1.0)


@pytest.mark.parametrize(
    "name, kwargs, reference",
    [
        # the probability of pos_label=0, as scikit-learn's scorers take the
        # column of pos_label in classes_
        ("roc_auc", {"pos_label": 0}, lambda p: roc_auc_score(1 - Y, p[:, 0])),
        ("roc_auc", {"labels": [1, 0]}, lambda p: roc_auc_score(1 - Y, p[:, 0])),
        ("neg_log_loss", {"labels": [1, 0]}, lambda p: -log_loss(Y, p)),
    ],
)
def test_probability_columns_follow_the_models_classes(name, kwargs, reference):
    # before: the scorer always took predict_proba's last column (class 1)
    # as the positive score and its columns in the scorer's label order, so
    # pos_label=0 gave 1 - AUC (0.06 for 0.94) and labels=[1, 0] a
    # log-loss of 2.57 for 0.31
    kwargs = {"bins": 1000, **kwargs} if name == "roc_auc" else kwargs
    scorer = make_private_scorer(name, epsilon=HUGE, **kwargs)
    acc = BudgetAccountant(epsilon=HUGE)
    value = scorer(NB, X, Y, accountant=acc, random_state=0)
    assert value == pytest.approx(reference(NB.predict_proba(X)), abs=2e-3)
