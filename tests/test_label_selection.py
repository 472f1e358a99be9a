"""Classifiers never read their label set from ``y`` for free.

``classes=None`` selects the labels privately (the linear and naive Bayes
classifiers) or is refused before the charge (sample-and-aggregate); a label
held by one row is then released with probability at most δ.
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from skdp import BudgetAccountant
from skdp.ensemble import SampleAggregateEstimator
from skdp.linear_model import PrivateLogisticRegression
from skdp.mechanisms import partition_threshold, select_labels
from skdp.naive_bayes import PrivateGaussianNB

SELECTING = [
    PrivateLogisticRegression(epsilon=4.0),
    PrivateGaussianNB(epsilon=4.0, bounds=(-3, 3)),
]


def _two_classes(n=600, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(y[:, None] - 0.5, 0.5, size=(n, 2))
    return X, y


def _with_rare_label(X, y, label, count):
    extra = np.repeat(X[:1], count, axis=0)
    return np.vstack([X, extra]), np.append(y, [label] * count)


@pytest.mark.parametrize("estimator", SELECTING, ids=lambda e: type(e).__name__)
def test_a_label_held_by_one_row_is_not_released(estimator):
    X, y = _with_rare_label(*_two_classes(), label=7, count=1)
    for seed in range(20):
        model = clone(estimator).set_params(random_state=seed).fit(X, y)
        assert model.classes_.tolist() == [0, 1]
        assert model.predict(X).tolist().count(7) == 0


@pytest.mark.parametrize("estimator", SELECTING, ids=lambda e: type(e).__name__)
def test_the_selection_is_charged_as_its_own_ledger_entry(estimator):
    X, y = _two_classes()
    accountant = BudgetAccountant(epsilon=4.0, delta=1e-6)
    model = clone(estimator).set_params(accountant=accountant, random_state=0).fit(X, y)
    labels = [e for e in accountant.entries if "label set" in e.label]
    # Gaussian noise shares δ; Laplace sums spend none and leave it all
    delta = 1e-6 if isinstance(estimator, PrivateGaussianNB) else 1e-7
    assert [(e.epsilon, e.delta) for e in labels] == [(0.4, delta)]
    assert model.epsilon_spent_ == pytest.approx(4.0)
    assert model.classes_.tolist() == [0, 1]


@pytest.mark.parametrize("estimator", SELECTING, ids=lambda e: type(e).__name__)
def test_rows_of_an_unreleased_label_are_left_out(estimator):
    # 10 rows of label 5 at a selection threshold far above 10: the label is
    # not released, its rows are dropped, and the model has two classes
    X, y = _with_rare_label(*_two_classes(), label=5, count=10)
    assert partition_threshold(0.4, 1e-7) >= 40
    model = clone(estimator).set_params(random_state=0).fit(X, y)
    assert model.classes_.tolist() == [0, 1]
    assert set(model.predict(X)) <= {0, 1}


@pytest.mark.parametrize("estimator", SELECTING, ids=lambda e: type(e).__name__)
def test_one_label_is_an_error_of_the_release_with_its_budget_spent(estimator):
    # Before: refused before the charge, so the refusal said "one label".
    # Now the error is a function of the released label set.
    X, y = _two_classes()
    accountant = BudgetAccountant(epsilon=4.0, delta=1e-6)
    with pytest.raises(ValueError, match=r"released 1 label.*classes=\[\.\.\.\]"):
        clone(estimator).set_params(accountant=accountant, random_state=0).fit(
            X, np.zeros_like(y)
        )
    assert accountant.total() == pytest.approx((4.0, 1e-6))


def test_no_delta_and_no_classes_is_refused_before_the_charge():
    X, y = _two_classes()
    accountant = BudgetAccountant(epsilon=4.0, delta=1e-6)
    model = PrivateGaussianNB(delta=0.0, accountant=accountant)
    with pytest.raises(ValueError, match=r"needs delta > 0.*classes=\[\.\.\.\]"):
        model.fit(X, y)
    assert accountant.total() == (0.0, 0.0)
    model.set_params(classes=[0, 1], delta=1e-6).fit(X, y)  # Laplace: pure ε-DP
    assert accountant.total() == (1.0, 0.0)  # the default epsilon


def test_naive_bayes_priors_need_stated_classes():
    X, y = _two_classes()
    accountant = BudgetAccountant(epsilon=4.0, delta=1e-6)
    with pytest.raises(ValueError, match=r"priors=...\) needs the public classes"):
        PrivateGaussianNB(priors=[0.5, 0.5], accountant=accountant).fit(X, y)
    assert accountant.total() == (0.0, 0.0)


def test_sample_aggregate_classifier_needs_stated_classes_before_the_charge():
    X, y = _two_classes()
    accountant = BudgetAccountant(epsilon=4.0)
    model = SampleAggregateEstimator(LogisticRegression(), accountant=accountant)
    with pytest.raises(ValueError, match="needs the public label set"):
        model.fit(X, y)
    assert accountant.total() == (0.0, 0.0)
    model.set_params(classes=[0, 1]).fit(X, y)
    assert model.classes_.tolist() == [0, 1]


def test_select_labels_keeps_the_dtype_and_marks_unreleased_rows():
    y = np.array(["b"] * 300 + ["a"] * 300 + ["z"])
    labels, codes = select_labels(y, 1.0, 1e-6, random_state=0)
    assert labels.tolist() == ["a", "b"] and labels.dtype == y.dtype
    assert codes[0] == 1 and codes[300] == 0 and codes[-1] == -1


def test_select_labels_releases_a_one_row_label_with_probability_at_most_delta():
    # The mechanism's δ: the one-row label clears the threshold with
    # probability P(1 + Z >= τ) <= δ. At δ = 0.2 that is measurable.
    y = np.array([0] * 50 + [1])
    released = [
        1 in select_labels(y, 1.0, 0.2, random_state=seed)[0] for seed in range(2000)
    ]
    assert np.mean(released) <= 0.2 + 3 * np.sqrt(0.2 * 0.8 / 2000)


def test_naive_bayes_fits_a_budget_equal_to_its_epsilon():
    # 9 - 2.7 rounds up in floats; the parts charged must sum to 9 exactly
    X, y = _two_classes()
    accountant = BudgetAccountant(epsilon=9.0)
    PrivateGaussianNB(
        epsilon=9.0, classes=[0, 1], mechanism="laplace", delta=0.0
    ).set_params(accountant=accountant).fit(X, y)
    assert accountant.remaining()[0] >= 0.0


@pytest.mark.parametrize(
    "params",
    [{"epsilon": 5e-10}, {"delta": 1e-323}],
    ids=["epsilon_share_below_the_sampler", "delta_share_underflows"],
)
def test_a_selection_share_the_sampler_cannot_run_is_refused_before_the_charge(
    params,
):
    # Before: charged, then the selection raised inside partition_selection.
    X, y = _two_classes()
    accountant = BudgetAccountant(delta=1.0)
    with pytest.raises(ValueError, match="selects its label set with 10%"):
        PrivateLogisticRegression(accountant=accountant, **params).fit(X, y)
    assert accountant.total() == (0.0, 0.0)


def test_labels_beyond_float_precision_stay_distinct_ints():
    # 2**60 and 2**60 + 1 are one float64: classes_ keeps them as int64
    X, y = _two_classes()
    big = [2**60 + int(v) for v in y]
    model = PrivateLogisticRegression(epsilon=4.0, random_state=0).fit(X, big)
    assert model.classes_.tolist() == [2**60, 2**60 + 1]
    assert model.classes_.dtype == np.int64


def test_split_budget_refuses_a_zero_last_weight():
    # the last part takes what the others leave; with weight 0 nothing
    # checked the others against the total
    from skdp.accounting._composition import split_budget

    with pytest.raises(ValueError, match="positive last weight"):
        split_budget(8.44577429673523, [1, 5, 9, 0])
