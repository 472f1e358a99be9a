"""The boosting estimators: cost, composition, refusals, limit, API."""

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)
from threadpoolctl import threadpool_limits

from skdp import BudgetAccountant
from skdp.ensemble import (
    PrivateHistGradientBoostingClassifier,
    PrivateHistGradientBoostingRegressor,
)
from skdp.ensemble._hist_gradient_boosting import binning, grower, histogram, loss
from skdp.linear_model._release import gaussian_fit_cost
from skdp.mechanisms._labels import LabelPlan
from skdp.model_selection import fit_cost

# small fits at ε = 1 lose their private bins in noise and say so; the tests
# of that warning and of its absence set their own filters
pytestmark = pytest.mark.filterwarnings("ignore::skdp.NoiseDominatedWarning")

BIG = np.finfo(float).max
SMALL = {"max_iter": 3, "max_depth": 2, "max_bins": 8, "boosting": "trees"}


def accountant():
    return BudgetAccountant(epsilon=100.0, delta=0.5)


def data(n=400, seed=0, classes=2):
    X, y = make_classification(
        n, 4, n_informative=3, n_redundant=0, n_classes=classes, random_state=seed
    )
    return X, y


@pytest.mark.parametrize("classes", [None, [0, 1]])
def test_fit_charges_exactly_its_fit_cost(classes):
    X, y = data(2000)
    acc = accountant()
    clf = PrivateHistGradientBoostingClassifier(
        classes=classes, accountant=acc, random_state=0, **SMALL
    )
    cost = fit_cost(clf)
    clf.fit(X, y)
    entries = [(e.epsilon, e.delta) for e in acc.entries]
    assert entries == [(c.epsilon, c.delta) for c in cost.parts or (cost,)]
    assert tuple(acc.total()) == pytest.approx((1.0, 1e-6), rel=1e-15)


def record_releases(monkeypatch):
    """Every Gaussian release of a fit: (l2 sensitivity, noise multiplier)."""
    calls = []
    for module in (binning, histogram, grower, loss):
        real = module.gaussian_release

        def spy(value, sens, multiplier, *, random_state=None, real=real):
            calls.append((sens, multiplier))
            return real(value, sens, multiplier, random_state=random_state)

        monkeypatch.setattr(module, "gaussian_release", spy)
    return calls


@pytest.mark.parametrize(
    "n_classes,bounds", [(2, None), (3, None), (2, (-5.0, 5.0)), (3, (-5.0, 5.0))]
)
def test_releases_compose_to_the_charged_gaussian(monkeypatch, n_classes, bounds):
    """Gaussian DP: the fit's releases satisfy sum 1/r_i² = 1/R² for the R
    that was charged; a round's levels or trees not composed would exceed it."""
    calls = record_releases(monkeypatch)
    X, y = data(600, classes=n_classes)
    params = {**SMALL, "max_depth": 3, "max_features": 1.0}
    clf = PrivateHistGradientBoostingClassifier(
        classes=list(range(n_classes)),
        feature_bounds=bounds,
        accountant=accountant(),
        random_state=0,
        **params,
    ).fit(X, y)
    trees = params["max_iter"] * (1 if n_classes == 2 else n_classes)
    assert len(calls) == (bounds is None) + 1 + trees * (params["max_depth"] + 1)
    charged = gaussian_fit_cost(1.0, 1e-6).noise_multiplier
    assert sum(1 / r**2 for _, r in calls) == pytest.approx(1 / charged**2, rel=1e-9)
    d = X.shape[1]
    level = [s for s, _ in calls if s == pytest.approx(math.sqrt(d * (1 + 1 / 16)))]
    assert len(level) == trees * params["max_depth"]
    assert clf.n_trees_per_iteration_ == (1 if n_classes == 2 else n_classes)


def test_bin_share_moves_budget_from_the_trees_to_the_bins_not_the_charge(
    monkeypatch,
):
    """bin_share=0.3: the private bins (sensitivity sqrt(d)) are released at
    R / sqrt(0.3) for the charged R, the releases still compose to it, and
    fit_cost and the accountant's total are unchanged; a share above 0.5 is
    refused before anything is charged."""
    calls = record_releases(monkeypatch)
    X, y = data(600)
    acc = accountant()
    clf = PrivateHistGradientBoostingClassifier(
        classes=[0, 1], bin_share=0.3, accountant=acc, random_state=0, **SMALL
    )
    assert fit_cost(clf) == fit_cost(clf.set_params(bin_share=0.1))
    clf.set_params(bin_share=0.3).fit(X, y)
    charged = gaussian_fit_cost(1.0, 1e-6).noise_multiplier
    (bins,) = [r for s, r in calls if s == pytest.approx(math.sqrt(X.shape[1]))]
    assert bins == pytest.approx(charged / math.sqrt(0.3), rel=1e-12)
    assert sum(1 / r**2 for _, r in calls) == pytest.approx(1 / charged**2, rel=1e-9)
    assert tuple(acc.total()) == pytest.approx((1.0, 1e-6), rel=1e-15)
    with pytest.raises(ValueError, match="bin_share"):
        clf.set_params(bin_share=0.6).fit(X, y)
    assert tuple(acc.total()) == pytest.approx((1.0, 1e-6), rel=1e-15)


def test_sampled_features_lower_the_level_sensitivity_not_the_charge(monkeypatch):
    """max_features=0.5 of 4 features: every level is released at
    sqrt(2 (1 + 1/16)) (two features per node), the releases still compose
    to the charged Gaussian, and fit_cost is unchanged."""
    calls = record_releases(monkeypatch)
    X, y = data(600)
    acc = accountant()
    clf = PrivateHistGradientBoostingClassifier(
        classes=[0, 1], max_features=0.5, accountant=acc, random_state=0, **SMALL
    )
    assert fit_cost(clf) == fit_cost(clf.set_params(max_features=1.0))
    clf.set_params(max_features=0.5).fit(X, y)
    level = [s for s, _ in calls if s == pytest.approx(math.sqrt(2 * (1 + 1 / 16)))]
    assert len(level) == SMALL["max_iter"] * SMALL["max_depth"]
    assert not [s for s, _ in calls if s == pytest.approx(math.sqrt(4 * 17 / 16))]
    charged = gaussian_fit_cost(1.0, 1e-6).noise_multiplier
    assert sum(1 / r**2 for _, r in calls) == pytest.approx(1 / charged**2, rel=1e-9)
    assert tuple(acc.total()) == pytest.approx((1.0, 1e-6), rel=1e-15)


def test_regressor_releases_compose_with_a_private_target_range(monkeypatch):
    from skdp.linear_model import _scaling

    calls = record_releases(monkeypatch)
    real = _scaling.gaussian_release

    def spy(value, sens, multiplier, *, random_state=None):
        calls.append((sens, multiplier))
        return real(value, sens, multiplier, random_state=random_state)

    monkeypatch.setattr(_scaling, "gaussian_release", spy)
    X, _ = data(600)
    reg = PrivateHistGradientBoostingRegressor(
        epsilon=50.0, accountant=accountant(), random_state=0, **SMALL
    ).fit(X, X[:, 0] * 10)
    assert len(calls) == 3 + 3 * 3
    charged = gaussian_fit_cost(50.0, 1e-6).noise_multiplier
    assert sum(1 / r**2 for _, r in calls) == pytest.approx(1 / charged**2, rel=1e-9)
    assert reg.target_range_[0] < -10 and reg.target_range_[1] > 10


@pytest.mark.parametrize(
    "change,match",
    [
        (
            lambda X, y: (
                np.where(np.arange(X.size).reshape(X.shape) == 5, np.nan, X),
                y,
            ),
            "NaN",
        ),
        (
            lambda X, y: (
                np.where(np.arange(X.size).reshape(X.shape) == 5, np.inf, X),
                y,
            ),
            "inf",
        ),
        (lambda X, y: (X, np.where(np.arange(y.size) == 0, 7, y)), "not in the public"),
    ],
)
def test_invalid_input_is_refused_before_the_charge(change, match):
    X, y = change(*data())
    acc = accountant()
    clf = PrivateHistGradientBoostingClassifier(classes=[0, 1], accountant=acc, **SMALL)
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y)
    assert acc.total() == (0.0, 0.0) and not acc.entries


@pytest.mark.parametrize(
    "params",
    [
        {"feature_bounds": (1.0, 0.0)},
        {"feature_bounds": (0.0, np.inf)},
        {"target_bounds": (1.0, 1.0)},
        {"target_bounds": (-BIG, BIG)},
    ],
)
def test_invalid_bounds_are_refused_before_the_charge(params):
    X, y = data()
    acc = accountant()
    with pytest.raises(ValueError):
        PrivateHistGradientBoostingRegressor(accountant=acc, **params, **SMALL).fit(
            X, y
        )
    assert not acc.entries


def test_extreme_doubles_fit_without_a_warning():
    X, y = data(300)
    X[0] = BIG
    X[1] = -BIG
    X[2] = 5e-324
    X[3, :2] = [-1e-310, 0.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = PrivateHistGradientBoostingClassifier(
            epsilon=50.0,
            classes=[0, 1],
            accountant=accountant(),
            random_state=0,
            **SMALL,
        ).fit(X, y)
        proba = clf.predict_proba(X)
        reg = PrivateHistGradientBoostingRegressor(
            epsilon=50.0,
            target_bounds=(-BIG, 0.0),
            accountant=accountant(),
            random_state=0,
            **SMALL,
        ).fit(X, np.where(y == 1, -BIG, -5e-324))
        pred = reg.predict(X)
    assert np.all(np.isfinite(proba)) and np.all(np.isfinite(pred))


def test_random_bit_patterns_fit_without_a_warning():
    """Fuzz: every finite double (random bit patterns, all magnitudes and
    subnormals) is binned and fitted; the outputs stay finite."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2**64, size=(400, 3), dtype=np.uint64).view(np.float64)
    X[~np.isfinite(X)] = 0.0
    y = (rng.random(400) < 0.5).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = PrivateHistGradientBoostingClassifier(
            epsilon=50.0,
            classes=[0, 1],
            accountant=accountant(),
            random_state=0,
            **SMALL,
        ).fit(X, y)
        assert np.all(np.isfinite(clf.predict_proba(X)))
    assert clf._bin_mapper.n_bins.min() >= 2  # the released mass is split


def test_negligible_noise_is_scikit_learns_boosting_on_the_same_bins():
    """Accuracy within 0.5 points of HistGradientBoostingClassifier fitted on
    the private model's own bins (same depth, rounds, learning rate)."""
    X, y = data(6000, seed=3)
    train, test = slice(0, 4000), slice(4000, None)
    params = {"max_iter": 20, "max_depth": 3, "learning_rate": 0.3, "max_bins": 16}
    params["max_features"] = 1.0  # scikit-learn's default (no sampling)
    clf = PrivateHistGradientBoostingClassifier(
        epsilon=1e7,
        classes=[0, 1],
        accountant=BudgetAccountant(delta=0.5),
        random_state=0,
        **params,
    ).fit(X[train], y[train])
    binned = clf._bin_mapper.transform(X)
    with threadpool_limits(1):  # threads of a loaded machine: minutes
        ref = HistGradientBoostingClassifier(
            max_iter=20,
            max_depth=3,
            learning_rate=0.3,
            min_samples_leaf=1,
            early_stopping=False,
            max_leaf_nodes=None,
        ).fit(binned[train], y[train])
    ours = clf.score(X[test], y[test])
    assert abs(ours - ref.score(binned[test], y[test])) <= 0.005
    assert clf._bin_mapper.n_bins.min() >= 8  # private bins resolved


def test_negligible_noise_regressor_is_scikit_learns_on_the_same_bins():
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(3000, 3))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1]
    params = {"max_iter": 30, "max_depth": 3, "learning_rate": 0.3, "max_bins": 16}
    params["max_features"] = 1.0  # scikit-learn's default (no sampling)
    reg = PrivateHistGradientBoostingRegressor(
        epsilon=1e7,
        target_bounds=(-3, 3),
        accountant=BudgetAccountant(delta=0.5),
        random_state=0,
        **params,
    ).fit(X, y)
    binned = reg._bin_mapper.transform(X)
    with threadpool_limits(1):
        ref = HistGradientBoostingRegressor(
            max_iter=30,
            max_depth=3,
            learning_rate=0.3,
            min_samples_leaf=1,
            early_stopping=False,
            max_leaf_nodes=None,
        ).fit(binned, y)
    # scikit-learn sums gradients in float32: near-ties may split elsewhere
    assert abs(reg.score(X, y) - ref.score(binned, y)) <= 0.005
    np.testing.assert_allclose(reg.predict(X), ref.predict(binned), atol=0.1)


def test_staged_outputs_end_at_the_model_and_probabilities_sum_to_one():
    X, y = data(500, classes=3)
    clf = PrivateHistGradientBoostingClassifier(
        classes=[0, 1, 2], accountant=accountant(), random_state=0, **SMALL
    ).fit(X, y)
    stages = list(clf.staged_predict_proba(X))
    assert len(stages) == SMALL["max_iter"]
    np.testing.assert_allclose(stages[-1], clf.predict_proba(X))
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    assert clf.decision_function(X).shape == (500, 3)
    np.testing.assert_array_equal(list(clf.staged_predict(X))[-1], clf.predict(X))
    decisions = list(clf.staged_decision_function(X))
    np.testing.assert_allclose(decisions[-1], clf.decision_function(X))
    reg = PrivateHistGradientBoostingRegressor(
        target_bounds=(-1, 1), accountant=accountant(), random_state=0, **SMALL
    ).fit(X, X[:, 0] / 10)
    np.testing.assert_allclose(list(reg.staged_predict(X))[-1], reg.predict(X))


def test_binary_decision_is_the_log_odds_of_the_second_class():
    X, y = data(500)
    labels = np.array(["no", "yes"])[y]
    clf = PrivateHistGradientBoostingClassifier(
        classes=["no", "yes"], accountant=accountant(), random_state=0, **SMALL
    ).fit(X, labels)
    decision = clf.decision_function(X)
    assert decision.shape == (500,)
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], 1 / (1 + np.exp(-decision)))
    assert set(clf.predict(X)) <= {"no", "yes"}


def test_pandas_input_keeps_the_feature_names():
    pd = pytest.importorskip("pandas")
    X, y = data(300)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    clf = PrivateHistGradientBoostingClassifier(
        classes=[0, 1], accountant=accountant(), random_state=0, **SMALL
    ).fit(frame, pd.Series(y))
    assert clf.feature_names_in_.tolist() == ["a", "b", "c", "d"]
    same = PrivateHistGradientBoostingClassifier(
        classes=[0, 1], accountant=accountant(), random_state=0, **SMALL
    ).fit(X, y)
    np.testing.assert_array_equal(clf.predict_proba(frame), same.predict_proba(X))


def test_private_label_set_costs_its_share():
    X, y = data(3000)
    acc = accountant()
    clf = PrivateHistGradientBoostingClassifier(accountant=acc, random_state=0, **SMALL)
    clf.fit(X, y)
    (selection, _) = LabelPlan.split(None, 1.0, 1e-6)
    assert len(acc.entries) == 2 and acc.entries[0].epsilon == selection[0]
    assert clf.classes_.tolist() == [0, 1]


def test_bins_lost_in_noise_are_reported_from_the_release():
    """A few hundred rows of 30 features at ε = 1: no private bin stands out
    of its noise, the trees cannot split, and a NoiseDominatedWarning says so."""
    from sklearn.datasets import load_breast_cancer

    from skdp import NoiseDominatedWarning

    X, y = load_breast_cancer(return_X_y=True)
    clf = PrivateHistGradientBoostingClassifier(
        classes=[0, 1], accountant=accountant(), random_state=0, **SMALL
    )
    with pytest.warns(NoiseDominatedWarning, match="one bin"):
        clf.fit(X, y)
    assert clf._bin_mapper.n_bins.max() == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf.set_params(epsilon=90.0).fit(X, y)  # resolved: no warning


@pytest.mark.parametrize("bounds", [None, (-5.0, 5.0)])
def test_noise_beyond_the_sampler_is_refused_before_the_charge(bounds):
    X, y = data()
    acc = BudgetAccountant(epsilon=1.0, delta=0.5)
    clf = PrivateHistGradientBoostingClassifier(
        boosting="trees",
        epsilon=1e-9,
        classes=[0, 1],
        feature_bounds=bounds,
        accountant=acc,
    )
    with pytest.raises(ValueError, match="Nothing was charged"):
        clf.fit(X, y)
    assert not acc.entries


@pytest.mark.parametrize(
    "params,groups,match",
    [
        ({"classes": [0, 1]}, True, "max_rows_per_group is None"),
        ({"classes": [0, 1], "max_rows_per_group": 2}, False, "got no groups"),
        ({"max_rows_per_group": 2}, True, "label set must be public"),
    ],
)
def test_groups_are_refused_before_the_charge(params, groups, match):
    X, y = data()
    acc = accountant()
    clf = PrivateHistGradientBoostingClassifier(accountant=acc, **SMALL, **params)
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y, groups=np.arange(y.size) // 3 if groups else None)
    assert not acc.entries


@pytest.mark.parametrize("cls", ["classifier", "regressor"])
def test_groups_scale_every_release_by_k_and_ignore_the_row_order(monkeypatch, cls):
    """Every release's noise multiplier is k = 3 times the row-level fit's
    (Σ 1/r² = 1/(k R)²), the ledger names the unit, and the fit is the same
    for the rows in another order (the bounding is order-invariant)."""
    from skdp.linear_model import _scaling

    calls = record_releases(monkeypatch)
    real = _scaling.gaussian_release

    def spy(value, sens, multiplier, *, random_state=None):  # the target range
        calls.append((sens, multiplier))
        return real(value, sens, multiplier, random_state=random_state)

    monkeypatch.setattr(_scaling, "gaussian_release", spy)
    X, y = data(900)
    groups = np.arange(y.size) % 150  # 6 rows each, 3 kept
    make = {
        "classifier": lambda: PrivateHistGradientBoostingClassifier(
            classes=[0, 1], **SMALL
        ),
        "regressor": lambda: PrivateHistGradientBoostingRegressor(**SMALL),
    }[cls]
    acc = accountant()
    common = {"max_rows_per_group": 3, "random_state": 0, "accountant": acc}
    est = make().set_params(**common).fit(X, y, groups=groups)
    charged = gaussian_fit_cost(1.0, 1e-6).noise_multiplier
    inverse = sum(1 / r**2 for _, r in calls)
    assert inverse == pytest.approx(1 / (3 * charged) ** 2, rel=1e-9)
    assert "group of <= 3 rows" in acc.entries[-1].label
    order = np.random.default_rng(1).permutation(y.size)
    again = make().set_params(**common).fit(X[order], y[order], groups=groups[order])
    predict = "decision_function" if cls == "classifier" else "predict"
    np.testing.assert_array_equal(getattr(est, predict)(X), getattr(again, predict)(X))
