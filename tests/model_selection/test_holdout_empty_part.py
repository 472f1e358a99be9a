"""NoisyMaxSearchCV(method='holdout') after its charge (review, issue 26).

The parts are drawn row by row after the charge, so for a small data set
the training part may be empty (probability ``holdout_size ** n``): the
private candidates refused their zero-row input (``Found array with 0
sample(s)``) and the search raised with its budget spent. Whether it raised
depended on the number of rows, which is private: with one row against two
(candidates at epsilon 0.01 and 0.02, selection at 0.03, so 0.03 charged)
it raised with probability 0.3 against 0.09, epsilon >= 1.2.

The rule now: a candidate is fitted on its part whatever the part holds,
zero rows included (its release on the empty data set); a candidate whose
fit or prediction fails all the same scores the worst possible score on
every held-out row. Nothing raises or warns after the charge.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from skdp import BudgetAccountant
from skdp.base import PrivateEstimatorMixin
from skdp.model_selection import NoisyMaxSearchCV
from skdp.naive_bayes import PrivateGaussianNB
from skdp.utils._zero_rows import fits_on_zero_rows


def search(accountant, seed=0, estimator=None, **params):
    params = {"holdout_size": 0.9, "refit": False, **params}
    return NoisyMaxSearchCV(
        estimator or PrivateGaussianNB(bounds=(0, 1), classes=[0, 1]),
        {"epsilon": [0.01, 0.02]},
        epsilon=0.03,
        method="holdout",
        accountant=accountant,
        random_state=seed,
        **params,
    )


def outcome(X, y, seed, **params):
    """The released choice, or the name of the exception raised."""
    accountant = BudgetAccountant(epsilon=10.0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return search(accountant, seed, **params).fit(X, y).best_index_
    except Exception as exc:
        return type(exc).__name__


X2 = np.array([[0.2, 0.4], [0.6, 0.8]])
Y2 = np.array([0, 1])


@pytest.mark.parametrize("n_rows", [1, 2])
def test_an_empty_training_part_neither_raises_nor_warns(n_rows):
    # holdout_size=0.9: the training part is empty for most of these seeds
    outcomes = {outcome(X2[:n_rows], Y2[:n_rows], seed) for seed in range(40)}
    assert outcomes <= {0, 1}


def test_an_empty_training_part_gives_a_trained_winner_with_refit_false():
    for seed in range(20):  # the part is empty with probability 0.9
        fitted = search(BudgetAccountant(epsilon=10.0), seed).fit(X2[:1], Y2[:1])
        # the winner is a private model (fitted on zero rows when the part
        # is empty) that predicts one of the public classes
        assert set(fitted.predict(X2)) <= {0, 1}


def test_an_empty_holdout_part_selects_without_scores():
    fitted = search(BudgetAccountant(epsilon=10.0), 0, holdout_size=1e-9).fit(X2, Y2)
    assert fitted.best_index_ in (0, 1)


class Fails(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator):
    """A private candidate whose release fails on its training part.

    ``fail_fit``: its fit raises after its charge; ``fail_predict``: its
    prediction raises; ``odd_predict``: it predicts one value too many.
    """

    def __init__(self, epsilon=1.0, accountant=None, mode="fit"):
        self.epsilon = epsilon
        self.accountant = accountant
        self.mode = mode

    def _fit_cost(self, n_features=None):
        from skdp.accounting import PrivacyCost

        return PrivacyCost(self.epsilon)

    def fit(self, X, y):
        self._charge([("release", self._fit_cost())])
        if self.mode == "fit":
            raise ValueError("a data-dependent failure")
        self.classes_ = np.array([0, 1])
        return self

    def predict(self, X):
        if self.mode == "predict":
            raise ValueError("a data-dependent failure")
        return np.zeros(len(X) + (self.mode == "odd"), dtype=int)


@pytest.mark.parametrize("mode", ["fit", "predict", "odd"])
def test_a_failing_candidate_scores_the_worst_and_nothing_raises(mode):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(60, 2))
    y = (X[:, 0] > 0.5).astype(int)
    accountant = BudgetAccountant(epsilon=10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fitted = NoisyMaxSearchCV(
            Fails(mode=mode),
            {"epsilon": [0.5]},
            epsilon=0.5,
            method="holdout",
            refit=False,
            accountant=accountant,
            random_state=0,
        ).fit(X, y)
    assert fitted.best_index_ == 0
    assert accountant.total()[0] == 0.5


def test_zero_rows_are_taken_only_inside_the_context():
    accountant = BudgetAccountant(epsilon=10.0)
    model = PrivateGaussianNB(bounds=(0, 1), classes=[0, 1], accountant=accountant)
    with pytest.raises(ValueError, match="0 sample"):
        model.fit(X2[:0], Y2[:0])
    assert accountant.entries == ()
    with fits_on_zero_rows():
        model.fit(X2[:0], Y2[:0])
    assert set(model.predict(X2)) <= {0, 1}


@pytest.mark.parametrize("loss_bound", [1.7e308, 5e-324])
def test_losses_at_the_ends_of_loss_bound_neither_raise_nor_warn(loss_bound):
    # At loss_bound near the largest double the summed losses overflowed to
    # -inf (a warning, then "scores must be finite" from the selection),
    # after the charge; the totals are now in units of loss_bound.
    from skdp.linear_model import PrivateLinearRegression

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(50, 2))
    y = np.full(50, 1e160)  # squared errors beyond the doubles
    accountant = BudgetAccountant(epsilon=10.0, delta=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fitted = NoisyMaxSearchCV(
            PrivateLinearRegression(data_norm=2.0, target_bounds=(-1, 1)),
            {"epsilon": [0.5, 1.0]},
            method="holdout",
            scoring="neg_squared_error",
            loss_bound=loss_bound,
            refit=False,
            accountant=accountant,
            random_state=0,
        ).fit(X, y)
    assert fitted.best_index_ in (0, 1)


def test_a_candidate_that_selects_its_labels_runs_on_any_training_part():
    # classes=None selects the labels privately on the training part: on no
    # rows (or one class) fewer than two are released and the candidate's
    # fit fails after its own charge, a function of its own release, so the
    # search scores it the worst instead of raising.
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    model = PrivateGaussianNB(bounds=(0, 1))
    fitted = search(accountant, estimator=model).fit(X2, Y2)
    assert fitted.best_params_ in ({"epsilon": 0.01}, {"epsilon": 0.02})
    assert accountant.entries


def test_a_row_of_several_outputs_scores_at_most_one():
    # Comparing 2-D predictions cell by cell counted up to n_outputs per
    # row, above the sensitivity 1 of the selection.
    from skdp.model_selection._holdout import holdout_row_scores

    class Constant:
        def predict(self, X):
            return np.zeros((len(X), 3), dtype=int)

    y = np.array([[0, 0, 0], [0, 1, 0]])
    scores = holdout_row_scores(Constant(), np.zeros((2, 1)), y, "accuracy", None)
    np.testing.assert_array_equal(scores, [1.0, 0.0])
