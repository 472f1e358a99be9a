"""Holdout scores of NoisyMaxSearchCV(method='holdout'): one row, one score.

The selection runs permute-and-flip at sensitivity 1 (in units of the score's
range) on the summed held-out scores, which holds only if each held-out row's
score is a function of that row (and of the candidate, a private release from
the disjoint training part) alone. An outside review found two ways in which
one row moved every row's score:

- y of shape (n, 1): predictions of shape (n,) compared with it broadcast
  to (n, n), so each row's loss was a mean over every held-out row's target
  and each row was "correct" only if every prediction equalled its label.
  One added row with a huge x moved every regression loss to ``loss_bound``
  (measured epsilon >= 1.28 at a claimed 0.5), and one more correctly
  predicted row moved an accuracy total from 300 to 0.
- A candidate whose ``predict`` failed on the held-out batch (an unknown
  category, say) scored the worst on every held-out row: one row moved the
  total from 263 to 0.

The rule now: predictions and targets are compared row by row (each reshaped
to one row per held-out row); a batch that fails is predicted row by row,
and a row that cannot be scored alone scores the worst alone.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant
from skdp.base import PrivateEstimatorMixin
from skdp.linear_model import PrivateLinearRegression, PrivateLogisticRegression
from skdp.model_selection import NoisyMaxSearchCV, _search_selection
from skdp.model_selection._holdout import holdout_row_scores, holdout_total
from skdp.preprocessing import PrivateOneHotEncoder


class Fixed(RegressorMixin, BaseEstimator):
    """A fixed model: predicts ``slope * X[:, 0]``, as (n,) or (n, 1)."""

    def __init__(self, slope=1.0, column=False):
        self.slope = slope
        self.column = column

    def predict(self, X):
        pred = self.slope * np.asarray(X, dtype=float)[:, 0]
        return pred[:, None] if self.column else pred


class FailsOnValue(ClassifierMixin, BaseEstimator):
    """Predicts ``X[:, 0] > 0``; raises on any batch holding ``bad`` in X."""

    def __init__(self, bad=99.0):
        self.bad = bad

    def predict(self, X):
        X = np.asarray(X, dtype=float)
        if np.any(X[:, 0] == self.bad):
            raise ValueError(f"cannot predict {self.bad}")
        return (X[:, 0] > 0).astype(int)


def column_y_logistic():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (2000, 2))
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PrivateLogisticRegression(
            classes=[0, 1],
            epsilon=1.0,
            accountant=BudgetAccountant(delta=0.5),
            random_state=0,
        ).fit(X, y[:, None])


# -- H1: y of shape (n, 1) ---------------------------------------------------


def test_a_column_y_counts_each_correct_row_once():
    # /tmp/review/holdout_ycol_accuracy.py: before, 300.0 then 0.0
    model = column_y_logistic()
    X_held, y_held = np.full((300, 2), 0.9), np.ones((300, 1), dtype=int)
    X_more = np.vstack([X_held, [[-0.9, 0.0]]])  # predicted 0, labelled 0
    y_more = np.vstack([y_held, [[0]]])
    assert holdout_total(model, X_held, y_held, "accuracy", 1.0) == 300.0
    assert holdout_total(model, X_more, y_more, "accuracy", 1.0) == 301.0


def test_a_column_y_loss_is_each_rows_own():
    # /tmp/review/holdout_ycol.py, on the summed losses: one added row with a
    # huge x made every held-out row's loss loss_bound (total -300).
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (300, 2))
    y = X @ np.array([0.8, -0.6]) + 0.05 * rng.normal(size=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = PrivateLinearRegression(
            epsilon=1.0,
            data_norm=1.5,
            target_bounds=(-2, 2),
            accountant=BudgetAccountant(delta=0.5),
            random_state=0,
        ).fit(X, y)
    X_more, y_more = np.vstack([X, [[1e200, 1e200]]]), np.append(y, 0.0)
    for scoring in ("neg_squared_error", "neg_absolute_error"):
        column = holdout_total(model, X, y[:, None], scoring, 4.0)
        assert column == holdout_total(model, X, y, scoring, 4.0)
        assert column > -30  # a fit of noise 0.05: nowhere near -300
        more = holdout_total(model, X_more, y_more[:, None], scoring, 4.0)
        assert more == pytest.approx(column - 1.0, abs=1e-9)  # its own worst


@pytest.mark.parametrize("column_pred", [False, True])
@pytest.mark.parametrize(
    "scoring", ["accuracy", "neg_absolute_error", "neg_squared_error"]
)
def test_adding_one_row_to_a_column_y_moves_a_total_by_at_most_one(
    scoring, column_pred
):
    # before, with predictions (n,) against y (n, 1): every row was correct
    # only if all were, and every row's loss was a mean over all rows
    rng = np.random.RandomState(0)
    if scoring == "accuracy":
        X, y = np.ones((8, 1)), np.ones((8, 1))
    else:
        X, y = rng.normal(size=(8, 1)) * 0.3, rng.normal(size=(8, 1)) * 0.3
    loss_bound = 1.5
    models = [Fixed(slope, column_pred) for slope in (-1.0, 0.0, 1.0, 2.0)]
    added_rows = [-1e300, -10.0, -1.0, 0.0, 1.0, 2.0, 1e300]
    for model in models:
        base = holdout_total(model, X, y, scoring, loss_bound)
        for x_new in added_rows:
            for y_new in added_rows:
                X_more = np.vstack([X, [[x_new]]])
                y_more = np.vstack([y, [[y_new]]])
                diff = holdout_total(model, X_more, y_more, scoring, loss_bound) - base
                if scoring == "accuracy":
                    assert 0.0 <= diff <= 1.0
                else:
                    assert -1.0 <= diff <= 0.0


def test_a_prediction_of_another_shape_scores_the_worst_on_every_row():
    # The shapes are public (the candidate's outputs, the targets' columns)
    class TwoOutputs(BaseEstimator):
        def predict(self, X):
            return np.zeros((len(X), 2))

    y = np.zeros((5, 1))
    scores = holdout_row_scores(TwoOutputs(), np.zeros((5, 1)), y, "accuracy", None)
    np.testing.assert_array_equal(scores, np.zeros(5))
    total = holdout_total(TwoOutputs(), np.zeros((5, 1)), y, "neg_absolute_error", 2.0)
    assert total == -5.0


def test_a_several_output_loss_clips_each_output_before_the_mean():
    class Predicts(BaseEstimator):
        def predict(self, X):
            return np.array([[0.0, 0.0], [np.inf, 0.0], [np.nan, 0.0], [3.0, 1e308]])

    y = np.zeros((4, 2))
    scores = holdout_row_scores(
        Predicts(), np.zeros((4, 1)), y, "neg_absolute_error", 2.0
    )
    # per output: min(|error|, 2) / 2, then the mean of the row's outputs
    np.testing.assert_array_equal(scores, [0.0, -0.5, -0.5, -1.0])


@pytest.mark.parametrize("loss_bound", [1.7e308, 5e-324])
def test_a_several_output_loss_at_the_ends_of_loss_bound(loss_bound):
    class Predicts(BaseEstimator):
        def predict(self, X):
            return np.array([[1.7e308, -1.7e308], [0.0, 0.0], [1.7e308, 0.0]])

    y = np.array([[-1.7e308, 1.7e308], [0.0, 0.0], [0.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        total = holdout_total(
            Predicts(), np.zeros((3, 1)), y, "neg_absolute_error", loss_bound
        )
    assert total == -1.5  # rows: the worst, none, half the worst


class ChargesItsEpsilon(PrivateEstimatorMixin):
    """A stand-in private estimator: its fit charges ``epsilon``, nothing else."""

    def _fit_cost(self, n_features=None):
        from skdp.accounting import PrivacyCost

        return PrivacyCost(self.epsilon)

    def _charge_fit(self):
        self._charge([("release", self._fit_cost())])


class SingleOutput(ChargesItsEpsilon, RegressorMixin, BaseEstimator):
    """A private regressor (single output, by its tags) that reads y blindly."""

    def __init__(self, epsilon=1.0, accountant=None):
        self.epsilon = epsilon
        self.accountant = accountant

    def fit(self, X, y):
        self._charge_fit()
        self.y_shape_ = np.shape(y)[1:]
        return self

    def predict(self, X):
        return np.zeros(len(X))


def holdout_search(estimator, accountant, **params):
    params = {
        "method": "holdout",
        "scoring": "neg_absolute_error",
        "loss_bound": 1.0,
        "epsilon": 0.5,
        "refit": False,
        "random_state": 0,
        **params,
    }
    return NoisyMaxSearchCV(
        estimator, {"epsilon": [0.5, 1.0]}, accountant=accountant, **params
    )


def test_a_column_y_reaches_a_single_output_candidate_as_1d():
    X, y = np.zeros((40, 1)), np.zeros((40, 1))
    accountant = BudgetAccountant(epsilon=10.0)
    with pytest.warns(Warning, match="column-vector y"):  # scikit-learn's
        fitted = holdout_search(SingleOutput(), accountant).fit(X, y)
    assert fitted.best_estimator_.y_shape_ == ()


def test_y_of_several_columns_for_a_single_output_estimator_is_refused():
    X, y = np.zeros((40, 1)), np.zeros((40, 2))
    accountant = BudgetAccountant(epsilon=10.0)
    with pytest.raises(ValueError, match=r"shape \(40, 2\).*Nothing was charged"):
        holdout_search(SingleOutput(), accountant).fit(X, y)
    assert accountant.entries == ()


def test_a_search_scores_a_column_y_as_its_1d_y(monkeypatch):
    # End to end: the held-out totals with y (n, 1) are those with y (n,)
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (400, 2))
    y = X @ np.array([0.8, -0.6]) + 0.05 * rng.normal(size=400)
    X[0] = 1e200  # one row with a huge x, held out or not
    totals = []
    real = _search_selection.holdout_total

    def recorded(*args):
        totals.append(real(*args))
        return totals[-1]

    monkeypatch.setattr(_search_selection, "holdout_total", recorded)
    estimator = PrivateLinearRegression(data_norm=1.5, target_bounds=(-2, 2))
    for target in (y, y[:, None]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            holdout_search(
                estimator,
                BudgetAccountant(delta=0.5),
                scoring="neg_squared_error",
                loss_bound=4.0,
                holdout_size=0.5,
            ).fit(X, target)
    assert totals[:2] == totals[2:]
    assert min(totals) > -0.25 * 200  # not every held-out row's worst


# -- M3: a row whose prediction fails ----------------------------------------


def test_a_row_whose_prediction_fails_scores_the_worst_alone():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (300, 1))
    y = (X[:, 0] > 0).astype(int)
    model = FailsOnValue(bad=99.0)
    X_more, y_more = np.vstack([X, [[99.0]]]), np.append(y, 1)
    assert holdout_total(model, X, y, "accuracy", 1.0) == 300.0
    # before: every row scored the worst, total 0.0
    assert holdout_total(model, X_more, y_more, "accuracy", 1.0) == 300.0
    scores = holdout_row_scores(model, X_more, y_more, "accuracy", 1.0)
    np.testing.assert_array_equal(scores, np.append(np.ones(300), 0.0))


def test_a_row_with_an_unknown_category_scores_the_worst_alone():
    # /tmp/review/holdout_predict_fail.py: before, 263.0 then 0.0
    rng = np.random.default_rng(0)
    n = 2000
    X = np.where(rng.random((n, 1)) < 0.5, "a", "b").astype(object)
    y = (X[:, 0] == "a").astype(int) ^ (rng.random(n) < 0.1)
    accountant = BudgetAccountant(delta=0.5)
    pipe = make_pipeline(
        PrivateOneHotEncoder(
            epsilon=1.0, handle_unknown="error", random_state=0, accountant=accountant
        ),
        PrivateLogisticRegression(
            classes=[0, 1],
            epsilon=1.0,
            delta=1e-6,
            random_state=0,
            accountant=accountant,
        ),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y)
    X_held, y_held = X[:300], y[:300]
    X_more = np.vstack([X_held, [["zzz-unique"]]]).astype(object)
    y_more = np.append(y_held, 1)
    total = holdout_total(pipe, X_held, y_held, "accuracy", 1.0)
    assert total > 200
    assert holdout_total(pipe, X_more, y_more, "accuracy", 1.0) == total


def test_a_row_score_out_of_range_scores_the_worst_alone():
    def one_odd_row(model, X, y, scoring, loss_bound):
        scores = -np.ones(len(X)) * 0.5
        scores[0] = np.nan if len(X) % 2 else -3.0  # beyond loss_bound
        return scores

    for n_rows in (4, 5):
        total = holdout_total(
            None, np.zeros((n_rows, 1)), np.zeros(n_rows), "neg_absolute_error", 1.0
        )
        assert total == -n_rows  # no model: the worst on every row
        total = holdout_total(
            Fixed(),
            np.zeros((n_rows, 1)),
            np.zeros(n_rows),
            "neg_absolute_error",
            1.0,
            one_odd_row,
        )
        assert total == -1.0 - 0.5 * (n_rows - 1)


def test_a_search_with_a_failing_row_neither_raises_nor_warns():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (60, 1))
    X[:5] = 99.0
    y = (X[:, 0] > 0).astype(int)

    class PrivateFailsOnValue(ChargesItsEpsilon, FailsOnValue):
        def __init__(self, bad=99.0, epsilon=1.0, accountant=None):
            self.bad = bad
            self.epsilon = epsilon
            self.accountant = accountant

        def fit(self, X, y):
            self._charge_fit()
            self.classes_ = np.array([0, 1])
            return self

    accountant = BudgetAccountant(epsilon=10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fitted = holdout_search(
            PrivateFailsOnValue(), accountant, scoring="accuracy", loss_bound=None
        ).fit(X, y)
    assert fitted.best_index_ in (0, 1)
    assert accountant.total()[0] == 1.5
