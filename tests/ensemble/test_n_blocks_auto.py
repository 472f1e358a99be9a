"""SampleAggregateEstimator defaults: n_blocks="auto", the default output
bounds of linear classifiers, and the public noise-dominated warning."""

import math
import re
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from skdp import BudgetAccountant, NoiseDominatedWarning
from skdp.ensemble import SampleAggregateEstimator
from skdp.ensemble._n_blocks import auto_n_blocks, noise_ratio
from skdp.ensemble._output_space import _Ball, _Box, _Sphere
from skdp.mechanisms import analytic_gaussian_sigma


def _data(n_samples=4000, n_features=4):
    return make_classification(
        n_samples=n_samples, n_features=n_features, n_redundant=0, random_state=0
    )


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_auto_is_the_documented_laplace_rule(epsilon):
    X, y = _data()
    est = SampleAggregateEstimator(
        LogisticRegression(), classes=[0, 1], epsilon=epsilon, random_state=0
    ).fit(X, y)
    D = X.shape[1] + 1  # coef_ and intercept_
    assert est.n_blocks_ == math.ceil(2 * math.sqrt(2) * D / (epsilon * 0.25))
    assert est.n_blocks_ == math.ceil(11.3137 * D / epsilon)


def test_auto_is_the_documented_gaussian_rule():
    X, y = _data()
    est = SampleAggregateEstimator(
        LogisticRegression(), classes=[0, 1], delta=1e-6, random_state=0
    ).fit(X, y)
    c = analytic_gaussian_sigma(1.0, 1.0, 1e-6)
    assert est.n_blocks_ == math.ceil(8 * c * math.sqrt(X.shape[1] + 1))


def test_auto_never_reads_the_row_count():
    small, large = _data(600), _data(20_000)
    ks = {
        SampleAggregateEstimator(LogisticRegression(), classes=[0, 1], random_state=0)
        .fit(X, y)
        .n_blocks_
        for X, y in (small, large)
    }
    assert len(ks) == 1


def test_expected_n_samples_caps_blocks_at_one_row_per_parameter():
    X, y = _data()
    est = SampleAggregateEstimator(
        LogisticRegression(), classes=[0, 1], expected_n_samples=100, random_state=0
    ).fit(X, y)
    assert est.n_blocks_ == 100 // (X.shape[1] + 1)
    # a generous guess leaves the noise rule alone
    est.set_params(expected_n_samples=10**6).fit(X, y)
    assert est.n_blocks_ == math.ceil(11.3137 * 5)


def test_auto_for_votes_counts_the_public_classes():
    X, y = _data()
    est = SampleAggregateEstimator(
        DecisionTreeClassifier(max_depth=2), classes=[0, 1], epsilon=2.0, random_state=0
    ).fit(X, y)
    assert est.aggregate_ == "vote"
    assert est.n_blocks_ == math.ceil(11.3137 * 2 / 2.0)


def test_noise_ratio_agrees_for_sphere_ball_and_cube():
    D, eps = 7, 0.8
    laplace = 2 * math.sqrt(2) * D / eps
    for space in (_Sphere(3.0, D), _Ball(0.5, D), _Box(-np.ones(D), np.ones(D))):
        assert noise_ratio(space, eps, 0.0) == pytest.approx(laplace)
    c = analytic_gaussian_sigma(1.0, eps, 1e-5)
    assert noise_ratio(_Sphere(1.0, D), eps, 1e-5) == pytest.approx(
        2 * c * math.sqrt(D)
    )
    assert auto_n_blocks(laplace, D) == math.ceil(laplace / 0.25)
    assert auto_n_blocks(laplace, D, expected_n_samples=3) == 1


def test_linear_classifier_defaults_to_the_unit_sphere():
    X, y = _data()
    est = SampleAggregateEstimator(
        LogisticRegression(), classes=[0, 1], random_state=0
    ).fit(X, y)
    params = np.append(est.estimator_.coef_, est.estimator_.intercept_)
    assert np.linalg.norm(params) == pytest.approx(1.0)
    assert est.score(X, y) > 0.8


def test_linear_regressor_still_needs_bounds():
    X, y = _data()
    with pytest.raises(ValueError, match="needs public output_bounds"):
        SampleAggregateEstimator(LinearRegression()).fit(X, y.astype(float))


def test_noise_dominated_setting_warns_at_the_callers_line_before_charging():
    X, y = _data()
    acc = BudgetAccountant(epsilon=1.0)
    est = SampleAggregateEstimator(
        LogisticRegression(),
        classes=[0, 1],
        n_blocks=10,
        accountant=acc,
        random_state=0,
    )
    with pytest.warns(NoiseDominatedWarning, match="n_blocks=57 keeps") as caught:
        est.fit(X, y)
    assert caught[0].filename == __file__
    assert len(acc.entries) == 1
    second = BudgetAccountant(epsilon=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatedWarning)
        with pytest.raises(NoiseDominatedWarning):
            est.set_params(accountant=second).fit(X, y)
    assert len(second.entries) == 0  # raised (as under -W error) before the charge


def test_auto_and_a_large_enough_setting_do_not_warn():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatedWarning)
        SampleAggregateEstimator(
            LogisticRegression(), classes=[0, 1], random_state=0
        ).fit(X, y)
        SampleAggregateEstimator(
            LogisticRegression(), classes=[0, 1], n_blocks=19, random_state=0
        ).fit(X, y)  # noise 14.1/19 < 1 of the signal


def test_verbose_prints_the_number_of_blocks_and_nothing_from_them(capsys):
    X, y = _data()
    SampleAggregateEstimator(LogisticRegression(), classes=[0, 1], random_state=0).fit(
        X, y
    )
    assert capsys.readouterr().out == ""
    SampleAggregateEstimator(
        LogisticRegression(), classes=[0, 1], verbose=1, random_state=0
    ).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "[SampleAggregateEstimator] Fitting 57 blocks (the 'auto' rule), "
        "aggregate='parameters'"
    )
    pattern = r"\[SampleAggregateEstimator\] END 57 block fits and the release; "
    assert re.fullmatch(pattern + r"total time=\d+\.\ds", lines[1])
    assert len(lines) == 2


def test_warning_inside_a_search_names_the_callers_line():
    from skdp.model_selection import NoisyMaxSearchCV

    X, y = _data(2000)
    search = NoisyMaxSearchCV(
        SampleAggregateEstimator(LogisticRegression(), classes=[0, 1], n_blocks=10),
        {"estimator__C": [0.1, 1.0]},
        method="holdout",
        refit=False,
        accountant=BudgetAccountant(),
        random_state=0,
    )
    with pytest.warns(NoiseDominatedWarning) as caught:
        search.fit(X, y)  # candidates fitted through joblib (n_jobs=None)
    assert {w.filename for w in caught} == {__file__}
