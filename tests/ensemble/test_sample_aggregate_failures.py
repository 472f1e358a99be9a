"""SampleAggregateEstimator after the charge: block failures are public-rule inputs.

Issue 13 items 6 and 7. Each attack pairs a dataset D with a neighbour D'
(one row added or removed) on which a block fails, warns or overflows. The
fitted output, exception and warning behaviour must be the same in kind on
both; parameter-only infeasibility must raise before anything is charged.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeRegressor

from skdp import BudgetAccountant, NoiseDominatedWarning
from skdp.ensemble import SampleAggregateEstimator, _blocks, _output_space

# small n_blocks on purpose (fast, exact sensitivity checks): the public
# noise-dominated warning is tested in test_n_blocks_auto.py
pytestmark = pytest.mark.filterwarnings("ignore::skdp.NoiseDominatedWarning")


def _behaviour(run):
    """``("ok" | exception name, warning categories)`` of ``run()``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # raised from public parameters only, before the charge: the same on
        # both neighbours (these tests use small n_blocks on purpose)
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        try:
            run()
            outcome = "ok"
        except Exception as exc:  # recorded, compared below
            outcome = type(exc).__name__
    return outcome, sorted({w.category.__name__ for w in caught})


def _same_behaviour_on_neighbours(make_run, D, D1, n_runs=3):
    """Run on D and D' with fresh noise; both must succeed without warnings."""
    for data in (D, D1):
        for _ in range(n_runs):
            assert _behaviour(lambda data=data: make_run(*data)) == ("ok", [])


@pytest.fixture(scope="module")
def reg_data():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 2))
    return X, X @ [1.0, -1.0] + 0.1 * rng.normal(size=200)


@pytest.mark.parametrize("outlier", [1e200, 1e308, -1.7e308])
def test_block_fit_that_raises_on_a_huge_row_outputs_the_centre(reg_data, outlier):
    # main: Ridge raises on the block holding the row (50/50 runs vs 0/50)
    X, y = reg_data
    X1, y1 = np.vstack([X, [[outlier, outlier]]]), np.append(y, outlier)

    def run(X, y):
        acc = BudgetAccountant(epsilon=10.0)
        est = SampleAggregateEstimator(
            Ridge(), n_blocks=10, output_bounds=(-5, 5), accountant=acc
        ).fit(X, y)
        assert len(acc.entries) == 1
        params = np.append(est.estimator_.coef_, est.estimator_.intercept_)
        assert np.all((params >= -5) & (params <= 5))

    _same_behaviour_on_neighbours(run, (X, y), (X1, y1))


def test_mean_mode_predicts_through_a_block_that_cannot_fit(reg_data):
    X, y = reg_data
    X1, y1 = np.vstack([X, [[1e308, -1e308]]]), np.append(y, 1e308)

    def run(X, y):
        est = SampleAggregateEstimator(
            Ridge(), n_blocks=2, aggregate="mean", output_bounds=(-5, 5)
        ).fit(X, y)
        pred = est.predict(X[:3])
        assert pred.shape == (3,) and np.all(np.abs(pred) <= 5)

    _same_behaviour_on_neighbours(run, (X, y), (X1, y1))


def test_vote_with_a_block_smaller_than_n_neighbors_abstains():
    # main: KNeighborsClassifier.predict raises when the block has 4 < 5 rows
    X = np.arange(5.0).reshape(-1, 1)
    y = np.array([0, 0, 1, 1, 1])

    def run(X, y):
        est = SampleAggregateEstimator(
            KNeighborsClassifier(5), n_blocks=1, aggregate="vote", classes=[0, 1]
        ).fit(X, y)
        assert set(est.predict(np.arange(5.0).reshape(-1, 1))) <= {0, 1}

    _same_behaviour_on_neighbours(run, (X, y), (X[:4], y[:4]))


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_convergence_warnings_of_block_fits_are_not_shown(n_jobs):
    # main: ConvergenceWarning on D' (the row at 1e3), none on D
    rng = np.random.RandomState(0)
    X = rng.normal(size=(100, 2))
    y = (X[:, 0] > 0).astype(int)
    X1, y1 = np.vstack([X, [[1e3, -1e3]]]), np.append(y, 0)

    def run(X, y):
        SampleAggregateEstimator(
            LogisticRegression(max_iter=20),
            classes=[0, 1],
            n_blocks=2 if n_jobs else 1,
            output_bounds=(-5, 5),
            n_jobs=n_jobs,
        ).fit(X, y)

    _same_behaviour_on_neighbours(run, (X, y), (X1, y1), n_runs=2)


def test_warnings_as_errors_do_not_turn_a_block_warning_into_a_raise():
    rng = np.random.RandomState(0)
    X = np.vstack([rng.normal(size=(100, 2)), [[1e3, -1e3]]])
    y = np.append((X[:100, 0] > 0).astype(int), 0)
    acc = BudgetAccountant()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as under pytest -W error
        SampleAggregateEstimator(
            LogisticRegression(max_iter=20),
            classes=[0, 1],
            epsilon=1e3,  # one block is not noise-dominated at this epsilon
            n_blocks=1,
            output_bounds=(-5, 5),
            accountant=acc,
        ).fit(X, y)
    assert len(acc.entries) == 1


class OddPredictions(ClassifierMixin, BaseEstimator):
    """Fits anything; predicts unknown labels, the wrong shape, or raises."""

    def __init__(self, kind="unknown"):
        self.kind = kind

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        if self.kind == "unknown":
            return np.full(X.shape[0], 7)
        if self.kind == "shape":
            return np.zeros((X.shape[0], 2), dtype=int)
        if self.kind == "strings":
            return np.array(["a"] * X.shape[0])
        raise MemoryError("predict failed")


@pytest.mark.parametrize("kind", ["unknown", "shape", "strings", "raise"])
def test_block_votes_of_a_misbehaving_block_are_abstentions(kind):
    X = np.zeros((3, 1))
    model = OddPredictions(kind).fit(X, [0, 1, 1])
    codes = _blocks._block_votes(model, X, np.array([0, 1]))
    np.testing.assert_array_equal(codes, [-1, -1, -1])
    votes = _blocks._vote_histogram([model, 1, None], X, np.array([0, 1]))
    np.testing.assert_array_equal(votes, [[0, 1]] * 3)  # only the int block


class OddRegressor(RegressorMixin, BaseEstimator):
    def __init__(self, kind="nan"):
        self.kind = kind

    def fit(self, X, y):
        return self

    def predict(self, X):
        if self.kind == "nan":
            return np.full(X.shape[0], np.nan)
        if self.kind == "shape":
            return np.zeros(X.shape[0] + 1)
        raise ArithmeticError("predict failed")


@pytest.mark.parametrize("kind", ["nan", "shape", "raise"])
def test_block_predictions_of_a_misbehaving_block_are_the_centre(kind):
    X = np.zeros((4, 1))
    box = _output_space._Box(np.array([0.0]), np.array([2.0]))
    preds = _blocks._block_predictions([OddRegressor(kind), None], X, box, 1)
    np.testing.assert_array_equal(preds, np.ones((2, 4, 1)))


def test_ball_projection_of_a_huge_vector_keeps_its_direction_silently():
    ball = _output_space._Ball(2.0, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = ball.project(np.array([[1e300, 1e300], [0.5, 0.5], [0.0, 0.0]]))
    np.testing.assert_allclose(out[0], [np.sqrt(2.0)] * 2)
    np.testing.assert_array_equal(out[1:], [[0.5, 0.5], [0.0, 0.0]])


@pytest.mark.parametrize(
    "estimator, kwargs, predict",
    [
        (Ridge(), {"epsilon": 1e-300, "output_bounds": (-5, 5)}, False),
        (Ridge(), {"output_bounds": (-1e308, 1e308)}, False),
        (Ridge(), {"output_bounds": ("l2", 1e308)}, False),
        (Ridge(), {"n_blocks": 10, "output_bounds": (1e307, 1.5e307)}, False),
        (
            DecisionTreeRegressor(),
            {"epsilon": 1e-300, "output_bounds": (-5, 5)},
            True,
        ),
        (DecisionTreeRegressor(), {"output_bounds": (-1e308, 1e308)}, True),
    ],
)
def test_infeasible_release_raises_before_any_charge(
    reg_data, estimator, kwargs, predict
):
    # main: the ledger holds the charge, then the noise raises
    X, y = reg_data
    acc = BudgetAccountant(epsilon=1e9)
    est = SampleAggregateEstimator(estimator, accountant=acc, **kwargs)
    with pytest.raises(ValueError, match="Nothing was charged"):
        est.fit(X, y)
        if predict:
            est.predict(X[:3])
    assert acc.entries == ()


def test_the_average_rounding_bound_covers_float_averages():
    # the float average of n block outputs is within float_average_error of
    # the exact (Fraction) average, on values that make rounding large
    from fractions import Fraction

    from skdp.sensitivity import float_average_error

    rng = np.random.default_rng(0)
    for n in (2, 7, 100, 1000):
        outputs = rng.uniform(-1, 1, (n, 3)) * np.array([1.0, 1e-9, 1e8])
        outputs[::3] = np.array([1.0, 1e-9, 1e8]) * (1 - 2.0**-52)
        bound = float_average_error(n, np.array([1.0, 1e-9, 1e8]))
        computed = outputs.sum(axis=0) / n
        for j in range(3):
            exact = sum(Fraction(v) for v in outputs[:, j]) / n
            assert abs(Fraction(computed[j]) - exact) <= Fraction(bound[j])
