"""privacy_utility_curve and PrivacyUtilityDisplay: results, budget, plots."""

from fractions import Fraction

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.datasets import make_classification
from sklearn.linear_model import HuberRegressor, LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp import (
    BudgetAccountant,
    BudgetExceededError,
    PrivateMinMaxScaler,
    SampleAggregateEstimator,
)
from skdp.base import PrivateEstimatorMixin
from skdp.model_selection import (
    PrivacyUtilityCurve,
    PrivacyUtilityDisplay,
    privacy_utility_curve,
)

# small n_blocks on purpose (fast): the public noise-dominated warning is
# tested in tests/ensemble/test_n_blocks_auto.py
pytestmark = pytest.mark.filterwarnings("ignore::skdp.NoiseDominatedWarning")

EPSILONS = [1.0, 0.1, 0.5]
FIT_CALLS = []


class ProbeClassifier(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Charges ``factor * epsilon`` per fit and records the call; no privacy."""

    def __init__(
        self, epsilon=1.0, delta=0.0, factor=1.0, accountant=None, random_state=None
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.factor = factor
        self.accountant = accountant
        self.random_state = random_state

    def fit(self, X, y):
        FIT_CALLS.append(self.epsilon)
        self._charge([("probe", self.epsilon * self.factor, self.delta)])
        self.classes_ = np.unique(y)
        self.shift_ = np.random.default_rng(self.random_state).normal() / self.epsilon
        return self

    def predict(self, X):
        return self.classes_[(np.asarray(X)[:, 0] + self.shift_ > 0).astype(int)]


class ProbeTransformer(PrivateEstimatorMixin, TransformerMixin, BaseEstimator):
    """Charges ``epsilon`` per fit and passes X through."""

    def __init__(self, epsilon=1.0, accountant=None):
        self.epsilon = epsilon
        self.accountant = accountant

    def fit(self, X, y=None):
        self._charge([("probe", self.epsilon, 0.0)])
        return self

    def transform(self, X):
        return np.asarray(X)


@pytest.fixture(autouse=True)
def _clear_fit_calls():
    FIT_CALLS.clear()


@pytest.fixture(scope="module")
def data():
    return make_classification(
        n_samples=600, n_features=4, n_redundant=0, random_state=0
    )


def private_lr(**kwargs):
    return SampleAggregateEstimator(
        LogisticRegression(),
        classes=[0, 1],
        n_blocks=10,
        output_bounds=("l2", 5.0),
        **kwargs,
    )


def expected_total(epsilons, n_repeats):
    return float(n_repeats * sum(Fraction(repr(float(e))) for e in epsilons))


def test_shapes_sorting_and_charge(data):
    X, y = data
    acc = BudgetAccountant(epsilon=10.0)
    curve = privacy_utility_curve(
        private_lr(),
        X,
        y,
        epsilons=EPSILONS,
        n_repeats=2,
        accountant=acc,
        random_state=0,
    )
    assert isinstance(curve, PrivacyUtilityCurve)
    np.testing.assert_array_equal(curve.epsilons, [0.1, 0.5, 1.0])
    assert curve.scores.shape == (3, 2)
    assert np.all((curve.scores >= 0) & (curve.scores <= 1))
    assert curve.reference_score is None
    assert curve.scoring == "score"
    assert curve.estimator_name == "SampleAggregateEstimator"
    assert acc.total() == (expected_total(EPSILONS, 2), 0.0) == (3.2, 0.0)
    assert len(acc.entries) == 6
    assert curve.epsilon_spent == 3.2
    with pytest.raises(ValueError):
        curve.scores[0, 0] = 1.0  # read-only


def test_delta_parameter_is_charged_and_checked(data):
    X, y = data
    acc = BudgetAccountant(epsilon=10.0, delta=1e-4)
    curve = privacy_utility_curve(
        private_lr(delta=1e-6),
        X,
        y,
        epsilons=[0.5, 1.0],
        n_repeats=2,
        accountant=acc,
        random_state=0,
    )
    assert acc.total() == (3.0, 4e-6)
    assert curve.delta_spent == 4e-6
    small = BudgetAccountant(epsilon=10.0, delta=3e-6)
    with pytest.raises(BudgetExceededError):
        privacy_utility_curve(
            private_lr(delta=1e-6),
            X,
            y,
            epsilons=[0.5, 1.0],
            n_repeats=2,
            accountant=small,
        )
    assert small.entries == ()


def test_budget_too_small_raises_before_any_fit(data):
    X, y = data
    acc = BudgetAccountant(epsilon=3.0)
    with pytest.raises(BudgetExceededError, match="Nothing was fitted"):
        privacy_utility_curve(
            ProbeClassifier(),
            X,
            y,
            epsilons=EPSILONS,
            n_repeats=2,
            reference_estimator=LogisticRegression(),
            accountant=acc,
        )
    assert FIT_CALLS == []
    assert acc.entries == ()
    # exactly enough budget (decimal arithmetic): the sweep runs
    privacy_utility_curve(
        ProbeClassifier(),
        X,
        y,
        epsilons=EPSILONS,
        n_repeats=2,
        accountant=BudgetAccountant(epsilon=3.2),
    )
    assert len(FIT_CALLS) == 6


@pytest.mark.parametrize(
    "make_estimator, param_name, match",
    [
        (ProbeClassifier, "epsilonn", "not a parameter"),
        (private_lr, "estimator__C", "not the epsilon parameter"),
        (private_lr, "n_blocks", "not the epsilon parameter"),
        (
            lambda: SampleAggregateEstimator(HuberRegressor()),
            "estimator__epsilon",
            "not the epsilon parameter",
        ),
        (
            lambda: make_pipeline(StandardScaler(), private_lr()),
            "sampleaggregateestimator__epsilon_typo",
            "not a parameter",
        ),
        (
            lambda: make_pipeline(StandardScaler(), private_lr()),
            "epsilon",
            "not a parameter",
        ),
    ],
)
def test_bad_param_name_raises_nothing_charged(data, make_estimator, param_name, match):
    X, y = data
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(ValueError, match=match):
        privacy_utility_curve(
            make_estimator(),
            X,
            y,
            epsilons=[1.0],
            n_repeats=1,
            accountant=acc,
            param_name=param_name,
        )
    assert acc.entries == ()
    assert FIT_CALLS == []


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"epsilons": []}, ValueError),
        ({"epsilons": [[0.1, 1.0]]}, ValueError),
        ({"epsilons": [0.0, 1.0]}, ValueError),
        ({"epsilons": [-1.0]}, ValueError),
        ({"epsilons": [np.inf]}, ValueError),
        ({"epsilons": [np.nan]}, ValueError),
        ({"epsilons": ["a"]}, ValueError),
        ({"epsilons": [0.5, 0.5]}, ValueError),
        ({"epsilons": [1.0], "n_repeats": 0}, ValueError),
        ({"epsilons": [1.0], "n_repeats": 1.5}, TypeError),
        ({"epsilons": [1.0], "scoring": ["accuracy", "f1"]}, ValueError),
        ({"epsilons": [1.0], "random_state": -1}, ValueError),
        ({"epsilons": [1.0], "reference_estimator": ProbeClassifier()}, ValueError),
        ({"epsilons": [1.0], "accountant": "acc"}, TypeError),
    ],
)
def test_invalid_arguments_charge_nothing(data, kwargs, error):
    X, y = data
    acc = BudgetAccountant(epsilon=10.0)
    kwargs = {"accountant": acc, "n_repeats": 1, **kwargs}
    with pytest.raises(error):
        privacy_utility_curve(ProbeClassifier(), X, y, **kwargs)
    assert acc.entries == ()
    assert FIT_CALLS == []


def test_nested_pipeline_param(data):
    X, y = data
    acc = BudgetAccountant(epsilon=10.0)
    pipe = make_pipeline(StandardScaler(), private_lr())
    curve = privacy_utility_curve(
        pipe,
        X,
        y,
        epsilons=[0.5, 2.0],
        n_repeats=2,
        param_name="sampleaggregateestimator__epsilon",
        accountant=acc,
        random_state=0,
    )
    assert curve.scores.shape == (2, 2)
    assert curve.param_name == "sampleaggregateestimator__epsilon"
    assert acc.total() == (expected_total([0.5, 2.0], 2), 0.0)
    assert pipe[-1].accountant is None  # the user's estimator is untouched


def test_other_private_steps_are_part_of_the_cost(data):
    X, y = data
    pipe = make_pipeline(ProbeTransformer(epsilon=0.25), ProbeClassifier())
    kwargs = {"epsilons": [0.5, 1.0], "n_repeats": 2}
    kwargs["param_name"] = "probeclassifier__epsilon"
    short = BudgetAccountant(epsilon=3.0)  # the swept epsilons only
    with pytest.raises(BudgetExceededError):
        privacy_utility_curve(pipe, X, y, accountant=short, **kwargs)
    assert FIT_CALLS == [] and short.entries == ()
    acc = BudgetAccountant(epsilon=4.0)
    privacy_utility_curve(pipe, X, y, accountant=acc, **kwargs)
    assert acc.total() == (4.0, 0.0)
    assert len(FIT_CALLS) == 4


def test_fit_spending_more_than_epsilon_stops_the_sweep(data):
    X, y = data
    acc = BudgetAccountant(epsilon=100.0)
    with pytest.raises(RuntimeError, match="more than"):
        privacy_utility_curve(
            ProbeClassifier(factor=2.0),
            X,
            y,
            epsilons=EPSILONS,
            n_repeats=2,
            accountant=acc,
        )
    assert len(FIT_CALLS) == 1  # sequential: stopped at the first fit


def test_reference_score_matches_direct_fit(data):
    X, y = data
    curve = privacy_utility_curve(
        private_lr(),
        X,
        y,
        epsilons=[1.0],
        n_repeats=1,
        reference_estimator=LogisticRegression(),
        accountant=BudgetAccountant(),
        random_state=3,
        test_size=0.3,
    )
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=0.3, random_state=3, stratify=y
    )
    direct = LogisticRegression().fit(X_tr, y_tr).score(X_te, y_te)
    assert curve.reference_score == direct


def test_scoring_string_and_name(data):
    X, y = data
    curve = privacy_utility_curve(
        private_lr(),
        X,
        y,
        epsilons=[1.0],
        n_repeats=1,
        scoring="balanced_accuracy",
        accountant=BudgetAccountant(),
        random_state=0,
    )
    assert curve.scoring == "balanced_accuracy"


def test_same_random_state_same_scores_and_repeats_differ(data):
    X, y = data
    kwargs = {"epsilons": [0.05, 1.0], "n_repeats": 3, "random_state": 7}
    first = privacy_utility_curve(private_lr(), X, y, **kwargs)
    second = privacy_utility_curve(private_lr(), X, y, **kwargs)
    np.testing.assert_array_equal(first.scores, second.scores)
    assert np.ptp(first.scores[0]) > 0  # each repeat has its own seed


def test_fixed_estimator_random_state_warns_without_random_state(data):
    X, y = data
    with pytest.warns(UserWarning, match="same noise"):
        curve = privacy_utility_curve(
            ProbeClassifier(random_state=0), X, y, epsilons=[1.0], n_repeats=2
        )
    assert curve.scores[0, 0] == curve.scores[0, 1]


def test_n_jobs_threads_same_charge_and_scores(data):
    X, y = data
    results = {}
    for n_jobs in (None, 2):
        acc = BudgetAccountant(epsilon=10.0)
        results[n_jobs] = privacy_utility_curve(
            private_lr(),
            X,
            y,
            epsilons=EPSILONS,
            n_repeats=2,
            accountant=acc,
            random_state=0,
            n_jobs=n_jobs,
        )
        assert acc.total() == (expected_total(EPSILONS, 2), 0.0)
        assert len(acc.entries) == 6
    np.testing.assert_array_equal(results[None].scores, results[2].scores)


def test_default_accountant_is_used_and_estimator_accountant_kept(data):
    X, y = data
    acc = BudgetAccountant(epsilon=10.0)
    with acc:
        privacy_utility_curve(ProbeClassifier(), X, y, epsilons=[0.5], n_repeats=2)
    assert acc.total() == (1.0, 0.0)
    own = BudgetAccountant(epsilon=10.0)
    privacy_utility_curve(
        ProbeClassifier(accountant=own), X, y, epsilons=[0.5], n_repeats=2
    )
    assert own.total() == (1.0, 0.0)


def test_verbose_prints_the_plan_and_one_line_per_epsilon(data, capsys):
    X, y = data
    privacy_utility_curve(
        ProbeClassifier(),
        X,
        y,
        epsilons=[0.5, 1.0],
        n_repeats=3,
        verbose=1,
        accountant=BudgetAccountant(),
    )
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3  # the plan, then one line per epsilon
    assert lines[0].endswith("totalling 6 fits")
    assert lines[1].startswith("[privacy_utility_curve] epsilon=0.5: 3/3 fits")
    assert "mean score" in lines[2]


def test_to_frame_long_format():
    pd = pytest.importorskip("pandas")
    curve = PrivacyUtilityCurve(
        epsilons=np.array([0.1, 1.0]),
        scores=np.array([[0.5, 0.6, 0.7], [0.8, 0.9, 1.0]]),
    )
    frame = curve.to_frame()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == ["epsilon", "repeat", "score"]
    assert len(frame) == 6
    np.testing.assert_array_equal(frame["epsilon"], [0.1] * 3 + [1.0] * 3)
    np.testing.assert_array_equal(frame["repeat"], [0, 1, 2, 0, 1, 2])
    np.testing.assert_array_equal(frame["score"], curve.scores.ravel())
    means = frame.groupby("epsilon")["score"].mean().to_numpy()
    np.testing.assert_allclose(means, curve.mean_scores)
    with pytest.raises(ValueError, match="rows"):
        PrivacyUtilityCurve(epsilons=np.array([0.1]), scores=curve.scores)


# -- display --------------------------------------------------------------------


@pytest.fixture
def pyplot():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


SCORES = np.array([[0.5, 0.7], [0.75, 0.8], [0.85, 0.86]])


def test_display_plot_fill_between(pyplot):
    display = PrivacyUtilityDisplay(
        epsilons=[0.1, 0.5, 1.0],
        scores=SCORES,
        reference_score=0.9,
        estimator_name="SA",
        scoring="accuracy",
    ).plot()
    np.testing.assert_allclose(display.line_.get_ydata(), SCORES.mean(axis=1))
    np.testing.assert_allclose(display.line_.get_xdata(), [0.1, 0.5, 1.0])
    assert display.fill_between_ is not None and display.errorbar_ is None
    ref = display.reference_line_
    assert ref in display.ax_.lines
    assert ref.get_linestyle() == "--" and ref.get_label() == "non-private"
    np.testing.assert_allclose(ref.get_ydata(), [0.9, 0.9])
    assert display.ax_.get_xlabel() == "epsilon"
    assert display.ax_.get_ylabel() == "accuracy"
    assert display.ax_.get_xscale() == "log"
    labels = [t.get_text() for t in display.ax_.get_legend().get_texts()]
    assert "SA" in labels and "non-private" in labels
    assert display.figure_ is display.ax_.figure


def test_display_plot_errorbar_and_options(pyplot):
    _, ax = pyplot.subplots()
    display = PrivacyUtilityDisplay(epsilons=[0.1, 0.5, 1.0], scores=SCORES).plot(
        ax=ax, std_display_style="errorbar", xscale="linear", color="red"
    )
    assert display.ax_ is ax
    assert display.errorbar_ is not None and display.fill_between_ is None
    np.testing.assert_allclose(display.line_.get_ydata(), SCORES.mean(axis=1))
    assert display.line_.get_color() == "red"
    assert display.reference_line_ is None
    assert ax.get_ylabel() == "score" and ax.get_xscale() == "linear"
    display.plot(std_display_style=None)
    assert display.fill_between_ is None and display.errorbar_ is None
    with pytest.raises(ValueError, match="std_display_style"):
        display.plot(std_display_style="band")
    with pytest.raises(ValueError, match="shape"):
        PrivacyUtilityDisplay(epsilons=[0.1, 1.0], scores=SCORES).plot()


def test_display_from_estimator_and_from_curve(pyplot, data):
    X, y = data
    acc = BudgetAccountant(epsilon=5.0)
    display = PrivacyUtilityDisplay.from_estimator(
        private_lr(),
        X,
        y,
        epsilons=[0.5, 1.0],
        n_repeats=2,
        reference_estimator=LogisticRegression(),
        accountant=acc,
        random_state=0,
    )
    assert isinstance(display, PrivacyUtilityDisplay)
    assert display.ax_ is not None and display.reference_line_ is not None
    assert display.estimator_name == "SampleAggregateEstimator"
    assert acc.total() == (3.0, 0.0)
    curve = PrivacyUtilityCurve(epsilons=[0.1, 0.5, 1.0], scores=SCORES)
    again = PrivacyUtilityDisplay.from_curve(curve, std_display_style="errorbar")
    np.testing.assert_allclose(again.line_.get_ydata(), curve.mean_scores)


def test_fixed_random_state_warning_names_the_callers_line(data):
    X, y = data
    with pytest.warns(UserWarning, match="same noise") as caught:
        privacy_utility_curve(
            ProbeClassifier(random_state=0), X, y, epsilons=[1.0], n_repeats=2
        )
    assert [w.filename for w in caught] == [__file__]


def test_reference_pipeline_may_hold_free_skdp_steps(data):
    X, y = data
    scaler = PrivateMinMaxScaler(bounds=(-10, 10))  # public bounds: free
    acc = BudgetAccountant(epsilon=10.0)
    curve = privacy_utility_curve(
        make_pipeline(scaler, ProbeClassifier()),
        X,
        y,
        epsilons=[1.0],
        n_repeats=2,
        param_name="probeclassifier__epsilon",
        reference_estimator=make_pipeline(scaler, LogisticRegression()),
        accountant=acc,
        random_state=0,
    )
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=0.25, random_state=0, stratify=y
    )
    reference = make_pipeline(scaler, LogisticRegression())
    direct = reference.fit(X_tr, y_tr).score(X_te, y_te)
    assert curve.reference_score == direct
    assert acc.total() == (2.0, 0.0)  # the two private fits only


def test_reference_pipeline_with_a_costly_step_is_refused(data):
    X, y = data
    costly = make_pipeline(
        PrivateMinMaxScaler(epsilon=0.5, random_state=0), LogisticRegression()
    )
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(ValueError, match=r"non-private or free.*epsilon=0\.5"):
        privacy_utility_curve(
            ProbeClassifier(),
            X,
            y,
            epsilons=[1.0],
            reference_estimator=costly,
            accountant=acc,
        )
    assert acc.total() == (0.0, 0.0)
