"""Private cross-validation: what it charges, what it refuses, what it returns."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold

from skdp import BudgetAccountant, PrivateGaussianNB, PrivateLinearRegression
from skdp.metrics import make_private_scorer
from skdp.model_selection import cross_validate

RNG = np.random.default_rng(0)
X = RNG.normal(size=(1500, 2))
Y = (X[:, 0] + 0.3 * RNG.normal(size=1500) > 0).astype(int)
NB = PrivateGaussianNB(epsilon=0.4, classes=[0, 1], bounds=(-4, 4), random_state=0)


@pytest.mark.parametrize("cv", [2, 3, 5])
def test_fits_compose_over_k_minus_one_folds_and_scores_in_parallel(cv):
    acc = BudgetAccountant(epsilon=10.0)
    scorer = make_private_scorer("accuracy", epsilon=0.3)
    result = cross_validate(
        NB, X, Y, scoring=scorer, cv=cv, accountant=acc, random_state=0
    )
    assert acc.total()[0] == pytest.approx(0.4 * (cv - 1) + 0.3)
    # one entry per fit's cost, one for all the scores
    assert len(acc.entries) == cv
    assert "parallel composition" in acc.entries[-1].label
    assert acc.entries[-1].epsilon == 0.3
    assert result["test_score"].shape == (cv,)
    assert np.all(np.abs(result["test_score"] - 0.9) < 0.1)
    assert np.all(result["test_std_error"] > 0)


def test_scores_equal_the_private_metric_of_each_fold_model_as_epsilon_grows():
    from sklearn.metrics import accuracy_score

    scorer = make_private_scorer("accuracy", epsilon=1e7)
    result = cross_validate(
        NB, X, Y, scoring=scorer, cv=3, random_state=1, return_estimator=True
    )
    # every row is scored once: the folds' accuracies, weighted by their
    # sizes, recombine to the accuracy of the fold models on all rows
    models = result["estimator"]
    assert len(models) == 3 and all(m is not None for m in models)
    per_model = [accuracy_score(Y, m.predict(X)) for m in models]
    assert np.all(np.abs(result["test_score"] - np.mean(per_model)) < 0.05)


def test_loss_scorers_are_negated_as_in_scikit_learn():
    y = X @ np.array([1.0, -2.0]) + RNG.normal(size=1500)
    model = PrivateLinearRegression(
        epsilon=1.0, feature_bounds=(-4, 4), target_bounds=(-12, 12), random_state=0
    )
    scorer = make_private_scorer(
        "neg_mean_squared_error", epsilon=1.0, target_bounds=(-12, 12)
    )
    result = cross_validate(model, X, y, scoring=scorer, cv=2, random_state=0)
    assert np.all(result["test_score"] < 0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"cv": KFold(3)}, "cv must be an integer"),
        ({"cv": 1}, "cv must be an integer"),
        ({"scoring": "accuracy"}, "private scorer"),
        (
            {
                "estimator": LogisticRegression(),
                "scoring": make_private_scorer("accuracy", labels=[0, 1]),
            },
            "costs nothing",
        ),
        ({"estimator": PrivateGaussianNB(bounds=(-4, 4))}, "needs public labels"),
        ({"y": Y + 1}, "not in the public|outside the public"),
        ({"X": np.full((1500, 2), np.nan)}, "NaN"),
    ],
)
def test_invalid_input_is_refused_before_any_charge(kwargs, match):
    acc = BudgetAccountant(epsilon=10.0)
    call = {
        "estimator": NB,
        "X": X,
        "y": Y,
        "scoring": make_private_scorer("accuracy", epsilon=0.3),
        "cv": 3,
    }
    call.update(kwargs)
    estimator, Xc, yc = call.pop("estimator"), call.pop("X"), call.pop("y")
    with pytest.raises((ValueError, TypeError), match=match):
        cross_validate(estimator, Xc, yc, accountant=acc, **call)
    assert acc.total() == (0.0, 0.0)


def test_a_budget_that_cannot_pay_the_whole_plan_is_refused_before_any_fit():
    from skdp.exceptions import BudgetExceededError

    acc = BudgetAccountant(epsilon=1.0)  # needs 4 x 0.4 + 0.3
    with pytest.raises(BudgetExceededError):
        cross_validate(
            NB,
            X,
            Y,
            scoring=make_private_scorer("accuracy", epsilon=0.3),
            cv=5,
            accountant=acc,
        )
    assert acc.total() == (0.0, 0.0)


def test_a_fold_whose_fit_fails_is_scored_on_public_predictions():
    # 3 rows in 5 folds: some training parts are tiny or empty; nothing raises
    acc = BudgetAccountant(epsilon=10.0)
    scorer = make_private_scorer("accuracy", epsilon=0.3)
    result = cross_validate(
        NB, X[:3], Y[:3], cv=5, accountant=acc, random_state=0, scoring=scorer
    )
    assert result["test_score"].shape == (5,)
    assert acc.total()[0] == pytest.approx(4 * 0.4 + 0.3)


@pytest.mark.parametrize("method", ["subsample", "holdout"])
def test_noisy_max_search_reads_a_private_scorer_as_its_metric(method):
    from skdp import NoisyMaxSearchCV

    grid = {"epsilon": [0.2, 0.4]}
    acc = BudgetAccountant(epsilon=10.0)
    scorer = make_private_scorer("accuracy", epsilon=5.0)  # never spent
    search = NoisyMaxSearchCV(
        NB,
        grid,
        epsilon=0.5,
        method=method,
        n_blocks=5,
        refit=False,
        scoring=scorer,
        accountant=acc,
        random_state=0,
    )
    default = BudgetAccountant()
    with default:  # a scorer called inside the search would charge it
        search.fit(X, Y)
    assert default.total() == (0.0, 0.0)
    named = NoisyMaxSearchCV(
        NB,
        grid,
        epsilon=0.5,
        method=method,
        n_blocks=5,
        refit=False,
        scoring="accuracy",
        accountant=BudgetAccountant(epsilon=10.0),
        random_state=0,
    )
    assert search.best_params_ == named.fit(X, Y).best_params_
    assert acc.total()[0] < 5.0  # the scorer's epsilon was not charged


def test_privacy_utility_curve_charges_and_plans_each_private_score():
    from skdp.exceptions import BudgetExceededError
    from skdp.model_selection import privacy_utility_curve

    model = PrivateGaussianNB(classes=[0, 1], bounds=(-4, 4))
    scorer = make_private_scorer("accuracy", epsilon=0.1)
    acc = BudgetAccountant(epsilon=100.0)
    curve = privacy_utility_curve(
        model,
        X,
        Y,
        epsilons=[0.5, 1.0],
        n_repeats=2,
        scoring=scorer,
        accountant=acc,
        random_state=0,
    )
    # 2 x (0.5 + 1.0) for the fits, 4 x 0.1 for the scores (same test rows)
    assert acc.total()[0] == pytest.approx(3.4)
    assert np.all(np.abs(curve.scores - 0.9) < 0.1)
    short = BudgetAccountant(epsilon=3.2)  # the fits alone would fit
    with pytest.raises(BudgetExceededError):
        privacy_utility_curve(
            model,
            X,
            Y,
            epsilons=[0.5, 1.0],
            n_repeats=2,
            scoring=scorer,
            accountant=short,
            random_state=0,
        )
    assert short.total() == (0.0, 0.0)


def test_each_row_is_tested_once_and_trained_on_in_the_other_folds(monkeypatch):
    from skdp.metrics._scorer import PrivateScorer
    from skdp.model_selection import _validation

    ids = np.arange(300, dtype=float)
    X_ids = np.column_stack([ids, X[:300, 1]])
    trained, tested = [], []
    fit = _validation.fit_on_part

    def recording_fit(candidate, cost, X_train, y_train):
        trained.append(set(X_train[:, 0].astype(int)))
        return fit(candidate, cost, X_train, y_train)

    evaluate = PrivateScorer.evaluate_predictions

    def recording_evaluate(self, predictions, y, **kwargs):
        tested.append(len(y))
        return evaluate(self, predictions, y, **kwargs)

    monkeypatch.setattr(_validation, "fit_on_part", recording_fit)
    monkeypatch.setattr(PrivateScorer, "evaluate_predictions", recording_evaluate)
    cv = 4
    scorer = make_private_scorer("accuracy", epsilon=0.3)
    cross_validate(NB, X_ids, Y[:300], scoring=scorer, cv=cv, random_state=0)
    everyone = set(range(300))
    test_sets = [everyone - train for train in trained]
    assert sum(map(len, test_sets)) == 300  # disjoint and covering
    assert set().union(*test_sets) == everyone
    # first the input check of all of y (stopped at its charge), then one
    # release per fold on exactly that fold's rows
    assert tested == [300] + [len(t) for t in test_sets]
    for row in everyone:  # each row trains K - 1 of the K fold models
        assert sum(row in train for train in trained) == cv - 1


def _mae_folds(X_part, y_part):
    model = PrivateLinearRegression(
        epsilon=5.0,
        delta=1e-5,
        data_norm=2.0,
        feature_bounds="scaled",
        target_bounds=(0, 2),
        random_state=0,
    )
    scorer = make_private_scorer(
        "neg_mean_absolute_error", epsilon=100.0, target_bounds=(0, 2)
    )
    acc = BudgetAccountant(epsilon=1000.0, delta=1e-3)
    return cross_validate(
        model, X_part, y_part, scoring=scorer, cv=2, accountant=acc, random_state=1
    )["test_score"]


def test_one_row_with_a_non_finite_prediction_moves_its_fold_score_by_one_row():
    # A row at the largest double makes the fold model predict inf for it
    # (coefficient near 2). The metric refuses non-finite predictions, and
    # the refusal used to send the WHOLE fold to the public predictions: one
    # added row moved that fold's mean absolute error from about 0.01 to
    # 0.5, i.e. Σ|e| by hundreds of rows' worth, far beyond the sensitivity
    # (1 row) its noise is calibrated to. The rule is now per row: only the
    # row whose prediction the metric would refuse gets the public one.
    rng = np.random.default_rng(0)
    X_part = rng.uniform(0, 1, size=(2000, 1))
    y_part = 2 * X_part[:, 0]
    without = _mae_folds(X_part, y_part)
    with_row = _mae_folds(np.vstack([X_part, [[1.79e308]]]), np.append(y_part, 2.0))
    # one row of ~1000 in a fold moves the mean |e| by at most 2/1000; the
    # fold models themselves move a little (the row is in one training set)
    assert np.max(np.abs(with_row - without)) < 0.02


class _RaisesOnLargeRows(PrivateGaussianNB):
    """A private model whose ``predict`` fails on a part holding a row with
    a first feature above 100 (as a scikit-learn encoder fails on one
    unknown category)."""

    def predict(self, X):
        if np.any(np.asarray(X)[:, 0] > 100):
            raise ValueError("a row this model cannot predict")
        return super().predict(X)


def test_one_row_that_makes_predict_raise_changes_its_own_prediction_only():
    # before: the whole fold was scored on the public predictions (label 0
    # everywhere: accuracy about 0.5 instead of 0.9) because of one row
    model = _RaisesOnLargeRows(
        epsilon=0.4, classes=[0, 1], bounds=(-4, 4), random_state=0
    )
    scorer = make_private_scorer("accuracy", epsilon=100.0)
    X_part = np.vstack([X, [[1e3, 0.0]]])
    y_part = np.append(Y, 1)
    acc = BudgetAccountant(epsilon=1000.0)
    result = cross_validate(
        model, X_part, y_part, scoring=scorer, cv=2, accountant=acc, random_state=0
    )
    assert np.all(np.abs(result["test_score"] - 0.9) < 0.05)


def test_no_fit_times_are_returned_they_measure_the_private_fold_sizes():
    # scikit-learn returns "fit_time"; here a fold model's fit time grows
    # with its training part's number of rows, a private count that no
    # noise covers (the docstring says the fold sizes are not returned)
    scorer = make_private_scorer("accuracy", epsilon=0.3)
    acc = BudgetAccountant(epsilon=10.0)
    result = cross_validate(
        NB, X, Y, scoring=scorer, cv=2, accountant=acc, random_state=0
    )
    assert set(result) == {"test_score", "test_std_error"}


class _NaNOnLargeRows(PrivateGaussianNB):
    """A private model whose probabilities are NaN for a first feature above
    100 (as a model whose scores overflow on an extreme row)."""

    def predict_proba(self, X):
        proba = super().predict_proba(X)
        proba[np.asarray(X)[:, 0] > 100] = np.nan
        return proba


def test_privacy_utility_curve_scores_every_fit_whatever_the_test_rows_hold():
    # before: the private log-loss refused the NaN probabilities of a few
    # test rows and the sweep raised after its first fit was charged (1.0
    # spent, with "Nothing was charged." in the message). A per-row rule now.
    from skdp.model_selection import privacy_utility_curve

    X_part = np.vstack([X, [[1e3, 0.0]] * 20])
    y_part = np.append(Y, [1] * 20)
    scorer = make_private_scorer("neg_log_loss", epsilon=1.0, labels=[0, 1])
    acc = BudgetAccountant(epsilon=100.0)
    model = _NaNOnLargeRows(classes=[0, 1], bounds=(-4, 4))
    curve = privacy_utility_curve(
        model,
        X_part,
        y_part,
        epsilons=[1.0, 2.0],
        n_repeats=1,
        scoring=scorer,
        accountant=acc,
        random_state=0,
    )
    assert np.all(np.isfinite(curve.scores))
    assert acc.total()[0] == pytest.approx(3.0 + 2 * 1.0)


def test_a_sweep_score_drops_a_test_label_outside_the_public_ones():
    # the score of a sweep runs after fits were charged: a test row whose
    # label the public labels lack counts nowhere (per row) instead of
    # raising in the middle of the sweep
    from skdp.metrics._scorer import charged_to

    model = PrivateGaussianNB(
        epsilon=5.0,
        classes=[0, 1],
        bounds=(-4, 4),
        accountant=BudgetAccountant(epsilon=5.0),
        random_state=0,
    ).fit(X, Y)
    acc = BudgetAccountant(epsilon=3e6)
    score = charged_to(make_private_scorer("accuracy", epsilon=1e6), acc, 0)
    with_outsider = score(model, np.vstack([X, [[0.0, 0.0]]]), np.append(Y, 7))
    assert with_outsider == pytest.approx(score(model, X, Y), abs=1e-4)
    assert acc.total()[0] == pytest.approx(2e6)


@pytest.mark.parametrize("method", ["subsample", "holdout"])
@pytest.mark.parametrize(
    "kwargs", [{"pos_label": 0}, {"average": "macro"}], ids=["pos_label", "average"]
)
def test_noisy_max_search_refuses_scorer_parameters_it_would_ignore(method, kwargs):
    # the search reads a private scorer as its metric's scikit-learn name:
    # make_private_scorer("f1", pos_label=0) selected by the F1 of class 1
    from skdp import NoisyMaxSearchCV

    acc = BudgetAccountant(epsilon=10.0)
    search = NoisyMaxSearchCV(
        NB,
        {"epsilon": [0.2, 0.4]},
        epsilon=0.5,
        method=method,
        n_blocks=5,
        refit=False,
        scoring=make_private_scorer("f1", epsilon=1.0, **kwargs),
        accountant=acc,
        random_state=0,
    )
    with pytest.raises(ValueError, match="make_scorer"):
        search.fit(X, Y)
    assert acc.total() == (0.0, 0.0)


def test_a_pipeline_ending_in_a_non_private_learner_is_refused_before_the_charge():
    # the pipeline costs its private scaler's epsilon, so it passed the
    # "costs nothing" check; its fold models were scikit-learn trees fitted
    # on the private rows without noise (returned with return_estimator, and
    # read by every fold's score as if public). NoisyMaxSearchCV refuses them.
    from sklearn.pipeline import make_pipeline
    from sklearn.tree import DecisionTreeClassifier

    from skdp import PrivateStandardScaler

    pipe = make_pipeline(
        PrivateStandardScaler(epsilon=0.1, bounds=(-4, 4)), DecisionTreeClassifier()
    )
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(ValueError, match="not a private estimator"):
        cross_validate(
            pipe,
            X,
            Y,
            cv=2,
            scoring=make_private_scorer("accuracy", epsilon=1.0, labels=[0, 1]),
            accountant=acc,
            random_state=0,
        )
    assert acc.total() == (0.0, 0.0)


def test_privacy_utility_curve_with_a_private_scorer_refuses_a_non_private_learner():
    # the private scores read the fitted models as public releases; a
    # scikit-learn tree after a private scaler is not one
    from sklearn.pipeline import make_pipeline
    from sklearn.tree import DecisionTreeClassifier

    from skdp import PrivateStandardScaler
    from skdp.model_selection import privacy_utility_curve

    pipe = make_pipeline(
        PrivateStandardScaler(bounds=(-4, 4)), DecisionTreeClassifier()
    )
    acc = BudgetAccountant(epsilon=100.0)
    with pytest.raises(ValueError, match="not a private estimator"):
        privacy_utility_curve(
            pipe,
            X,
            Y,
            epsilons=[0.5, 1.0],
            n_repeats=1,
            param_name="privatestandardscaler__epsilon",
            scoring=make_private_scorer("accuracy", epsilon=1.0, labels=[0, 1]),
            accountant=acc,
            random_state=0,
        )
    assert acc.total() == (0.0, 0.0)


def test_a_seeded_curve_seeds_its_private_scores_too():
    # random_state seeded the fits but not the scorer's noise: two seeded
    # curves differed in their scores (and the test above failed about once
    # in 40 runs on a score 5 noise scales off)
    from skdp.model_selection import privacy_utility_curve

    def curve():
        return privacy_utility_curve(
            PrivateGaussianNB(classes=[0, 1], bounds=(-4, 4)),
            X,
            Y,
            epsilons=[0.5, 1.0],
            n_repeats=2,
            scoring=make_private_scorer("accuracy", epsilon=0.1),
            accountant=BudgetAccountant(epsilon=100.0),
            random_state=0,
        ).scores

    first = curve()
    np.testing.assert_array_equal(first, curve())
    assert not np.array_equal(first[:, 0], first[:, 1])  # repeats still differ
