"""The boosting's other inputs: ``sample_weight`` in [0, 1] (Dask input:
``test_boosting_dask.py``).

Weights: refused outside [0, 1] before the charge; the weighted row terms'
bounds and the releases' sensitivities brute-forced; all ones is the
unweighted fit bit for bit and weight 0 the row removed; as ε grows the fit
is scikit-learn's with the same weights on the same bins; an audit of a
weighted round and its twin that accepts weights above 1.
"""

import itertools
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
from skdp.audit import assert_dp, audit_mechanism
from skdp.ensemble import (
    PrivateHistGradientBoostingClassifier,
    PrivateHistGradientBoostingRegressor,
)
from skdp.ensemble._hist_gradient_boosting import gradient_boosting
from skdp.ensemble._hist_gradient_boosting.grower import (
    exact_leaf_sums,
    leaf_sensitivity,
)
from skdp.ensemble._hist_gradient_boosting.histogram import (
    exact_level_histograms,
    level_sensitivity,
)
from skdp.ensemble._hist_gradient_boosting.loss import (
    GRID_BITS,
    BinaryLogistic,
    RowWeighted,
    SquaredError,
    on_grid,
    weighted_on_grid,
)
from skdp.mechanisms import (
    check_random_source,
    gaussian_noise_multipliers,
    gaussian_release,
)

pytestmark = pytest.mark.filterwarnings("ignore::skdp.NoiseDominatedWarning")

SMALL = {
    "max_iter": 3,
    "max_depth": 2,
    "max_bins": 8,
    "feature_bounds": (-4, 4),
    "boosting": "trees",
}
# weights at both ends of [0, 1]: below the grid 2**-32 (0), the largest
# double below 1, and 1
WEIGHTS = (0.0, 2.0**-40, 0.3, 1 - 2.0**-53, 1.0)


def _data(n=500, seed=0, classes=2):
    X, y = make_classification(
        n, 4, n_informative=3, n_redundant=0, n_classes=classes, random_state=seed
    )
    return X, y, np.random.default_rng(seed).uniform(size=n) ** 2


def _model(kind, **params):
    params = {**SMALL, "random_state": 0, **params}
    params["accountant"] = params.get("accountant", BudgetAccountant(delta=0.5))
    if kind == "classifier":
        return PrivateHistGradientBoostingClassifier(**{"classes": [0, 1], **params})
    return PrivateHistGradientBoostingRegressor(**{"target_bounds": (-1, 2), **params})


def _output(model, X):
    if isinstance(model, PrivateHistGradientBoostingClassifier):
        return model.predict_proba(X)
    return model.predict(X)


# -- refusals ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
@pytest.mark.parametrize("weight, match", [(1.5, "above 1"), (-0.5, "negative")])
def test_weights_outside_the_unit_interval_are_refused_before_the_charge(
    kind, weight, match
):
    X, y, w = _data(100)
    w[3] = weight
    accountant = BudgetAccountant(delta=0.5)
    with pytest.raises(ValueError, match=match):
        _model(kind, accountant=accountant).fit(X, y, sample_weight=w)
    assert accountant.total() == (0.0, 0.0)


# -- sensitivity, brute force -------------------------------------------------


def test_a_weighted_term_stays_on_the_grid_and_within_the_unweighted_one():
    step = 2.0**-GRID_BITS
    values = np.array([-2.0, -1.0, -step, 0.0, step, 0.25, 1 - step, 1.0, 2.0])
    for weight in WEIGHTS:
        out = weighted_on_grid(values, np.full(values.size, weight))
        assert np.all(np.abs(out) <= np.abs(values))
        assert np.all(np.ldexp(out, GRID_BITS) == np.trunc(np.ldexp(out, GRID_BITS)))
        if weight == 1.0:
            np.testing.assert_array_equal(out, values)
    # hand-derived: 0.3 on the grid 2**-32 times 0.25 (2**18 steps),
    # truncated to the grid 2**-20
    grid_03 = math.floor(0.3 * 2**32) / 2**32
    expected = math.floor(grid_03 * 2**18) / 2**20
    assert weighted_on_grid(np.array([0.25]), np.array([0.3]))[0] == expected


OFFSETS = np.array([0, 2, 5])  # feature 0: 2 bins, feature 1: 3 bins


def _releases(rows):
    """Exact level histograms (two nodes), leaf sums and baseline counts of
    (bin0, bin1, node, raw, code, weight) rows through RowWeighted."""
    if not rows:
        return np.zeros(2 * 2 * 5), np.zeros(4), np.zeros(2)
    a = np.array(rows)
    codes = a[:, 4].astype(np.intp)
    loss = RowWeighted(BinaryLogistic(), a[:, 5])
    g, h = (v[:, 0] for v in loss.gradients(a[:, 3:4], codes))
    node = a[:, 2].astype(np.intp)
    level = exact_level_histograms(a[:, :2].astype(np.uint8), OFFSETS, node, 2, g, h)
    leaves = exact_leaf_sums(node, 2, g, h)
    return level.ravel(), leaves.ravel(), loss.baseline_sums(codes, 1)


def test_weighted_rows_move_each_release_by_at_most_its_sensitivity():
    """Every dataset of up to two rows and every added row over two
    features, two nodes, raw scores at both ends (|g| -> 1) and in the
    middle (h = 1/4), both labels and the weights above: the level, leaf and
    baseline releases move by at most the unweighted L2 sensitivities."""
    domain = [
        (b0, b1, node, raw, code, weight)
        for b0, b1, node in ((0, 0, 0), (1, 2, 1))
        for raw, code in ((-40.0, 1), (0.0, 0), (40.0, 0))
        for weight in WEIGHTS
    ]
    bounds = (level_sensitivity(2, 1.0, 0.25), leaf_sensitivity(1.0, 0.25), 1.0)
    worst = [0.0, 0.0, 0.0]
    for size in (0, 1, 2):
        for data in itertools.combinations(domain[::2], size):
            before = _releases(list(data))
            for extra in domain:
                after = _releases([*data, extra])
                for i in range(3):
                    moved = math.sqrt(((after[i] - before[i]) ** 2).sum())
                    assert moved <= bounds[i] * (1 + 1e-12)
                    worst[i] = max(worst[i], moved)
    # the largest moves, by hand: a row of weight 1 at raw = ±40 has
    # |g| = 1 and h = 0 on the grid (p(1 - p) < 2**-21): sqrt(2 * 1) over
    # the two features' histograms, 1 for its leaf and its class count
    assert worst == [math.sqrt(2.0), 1.0, 1.0]


# -- fits ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind, params",
    [
        ("classifier", {}),
        ("classifier", {"boosting": "cyclic"}),
        ("classifier", {"classes": None, "feature_bounds": None, "epsilon": 50.0}),
        ("regressor", {"target_bounds": None, "epsilon": 50.0}),
    ],
)
def test_weights_one_are_the_unweighted_fit_bit_for_bit(kind, params):
    X, y, _ = _data(classes=3 if params.get("classes", 1) is None else 2)
    plain = _model(kind, **params).fit(X, y)
    ones = _model(kind, **params).fit(X, y, sample_weight=np.ones(y.size))
    np.testing.assert_array_equal(_output(plain, X), _output(ones, X))


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_weight_zero_is_the_row_removed_bit_for_bit(kind):
    # public bins, classes and target bounds: nothing else reads the row
    X, y, w = _data()
    w[-1] = 0.0
    weighted = _model(kind, epsilon=20.0).fit(X, y, sample_weight=w)
    removed = _model(kind, epsilon=20.0).fit(X[:-1], y[:-1], sample_weight=w[:-1])
    np.testing.assert_array_equal(_output(weighted, X), _output(removed, X))


LIMIT = {"max_iter": 10, "max_depth": 3, "learning_rate": 0.3, "max_bins": 16}
REFERENCE = {"min_samples_leaf": 1, "early_stopping": False, "max_leaf_nodes": None}


def test_negligible_noise_is_scikit_learns_weighted_boosting_on_the_same_bins():
    X, y, w = _data(3000, seed=3)
    clf = _model(
        "classifier", epsilon=1e7, max_features=1.0, feature_bounds=(-5, 5), **LIMIT
    ).fit(X, y, sample_weight=w)
    binned = clf._bin_mapper.transform(X)
    with threadpool_limits(1):
        ref = HistGradientBoostingClassifier(**LIMIT, **REFERENCE)
        ref.set_params(max_bins=255).fit(binned, y, sample_weight=w)
    ref_proba = ref.predict_proba(binned)
    # scikit-learn sums in float32: near-ties may split elsewhere
    assert np.mean(clf.predict(X) == ref.predict(binned)) >= 0.99
    assert np.median(np.abs(clf.predict_proba(X) - ref_proba)) < 0.01
    # and the weights matter: the unweighted reference is further away
    plain = HistGradientBoostingClassifier(**LIMIT, **REFERENCE).set_params(
        max_bins=255
    )
    with threadpool_limits(1):
        plain.fit(binned, y)
    gap = np.abs(plain.predict_proba(binned) - ref_proba).mean()
    assert np.abs(clf.predict_proba(X) - ref_proba).mean() < gap / 3


def test_negligible_noise_regressor_is_scikit_learns_weighted_on_the_same_bins():
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(2000, 3))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1]
    w = np.where(y > 0.5, 1.0, 0.05) * rng.uniform(0.5, 1, size=y.size)
    reg = _model(
        "regressor",
        epsilon=1e7,
        max_features=1.0,
        feature_bounds=(-3, 3),
        target_bounds=(-3, 3),
        **LIMIT,
    ).fit(X, y, sample_weight=w)
    binned = reg._bin_mapper.transform(X)
    with threadpool_limits(1):
        ref = HistGradientBoostingRegressor(**LIMIT, **REFERENCE)
        ref.set_params(max_bins=255).fit(binned, y, sample_weight=w)
        plain = HistGradientBoostingRegressor(**LIMIT, **REFERENCE)
        plain.set_params(max_bins=255).fit(binned, y)
    # scikit-learn sums in float32: near-ties may split elsewhere
    distance = np.abs(reg.predict(X) - ref.predict(binned))
    assert np.median(distance) < 0.05
    assert abs(reg.score(X, y, w) - ref.score(binned, y, w)) <= 0.005
    # and the weights matter: the unweighted reference is further away
    gap = np.abs(plain.predict(binned) - ref.predict(binned)).mean()
    assert distance.mean() < gap / 2


# -- audit of a weighted round, and its twin ----------------------------------

EPS, DELTA = 1.0, 1e-6
FAST = {"n_samples": 40_000, "n_pilot": 8_000, "random_state": 0}
HIGH = 4.0  # target bounds (-HIGH, HIGH)


def _weights_not_bounded(estimator, sample_weight, X):
    weights = np.asarray(sample_weight, dtype=float)
    assert np.all(weights >= 0)
    return weights


def _round_sums(data):
    """A depth-1 round's exact baseline, root histogram and leaf sums of a
    weighted regressor (public bins, raw scores held at a public 1), after
    the fit's weight check."""
    binned, y, w = data
    estimator = PrivateHistGradientBoostingRegressor()
    weights = gradient_boosting.check_row_weights(estimator, w, binned)
    loss = RowWeighted(SquaredError(), weights)
    z = on_grid(np.clip(y, -HIGH, HIGH) / HIGH, 1.0)
    g, h = (a[:, 0] for a in loss.gradients(np.ones((y.size, 1)), z))
    node = np.zeros(y.size, dtype=np.intp)
    offsets = np.array([0, 2])
    hist = exact_level_histograms(binned, offsets, node, 1, g, h).ravel()
    leaf = exact_leaf_sums(binned[:, 0].astype(np.intp), 2, g, h).ravel()
    return [loss.baseline_sums(z, 1), hist, leaf]


def _weighted_round(added_weight):
    d0 = (np.array([[0], [1]], dtype=np.uint8), np.array([1.0, -1.0]), np.full(2, 0.5))
    d1 = (
        np.vstack([d0[0], [[1]]]).astype(np.uint8),
        np.append(d0[1], -1e3 * HIGH),  # residual 2 = g_max
        np.append(d0[2], added_weight),
    )
    loss = SquaredError()
    sens = [
        loss.baseline_sensitivity,
        level_sensitivity(1, loss.g_max, loss.h_max),
        leaf_sensitivity(loss.g_max, loss.h_max),
    ]
    shares = PrivateHistGradientBoostingRegressor(max_iter=1, max_depth=1)._shares([])
    ratios = gaussian_noise_multipliers(EPS, DELTA, shares)

    def mechanism(data, random_state, n_runs):
        sums = {id(d): _round_sums(d) for d in (d0, d1)}
        source = check_random_source(random_state)
        stat = np.zeros(n_runs)
        for i, ratio in enumerate(ratios):
            a, b = sums[id(d0)][i], sums[id(d1)][i]
            noisy = gaussian_release(
                np.tile(sums[id(data)][i], (n_runs, 1)),
                sens[i],
                ratio,
                random_state=source,
            )
            stat += (noisy - (a + b) / 2) @ (b - a) / (ratio * sens[i]) ** 2
        return stat

    return mechanism, d0, d1


def test_audit_of_a_weighted_round_passes():
    mechanism, d0, d1 = _weighted_round(1.0)
    assert_dp(mechanism, d0, d1, EPS, DELTA, **FAST)


def test_audit_catches_weights_not_bounded(monkeypatch):
    # twin: weights above 1 accepted, a row of weight 8 (a doubled weight
    # is beyond what 40,000 runs resolve at delta = 1e-6: the whole fit's
    # Gaussian parameter is small)
    monkeypatch.setattr(gradient_boosting, "check_row_weights", _weights_not_bounded)
    mechanism, d0, d1 = _weighted_round(8.0)
    bad = audit_mechanism(mechanism, d0, d1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + 0.25, str(bad)


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_extreme_rows_and_weights_fit_without_a_warning(kind):
    big, tiny = np.finfo(float).max, 5e-324
    X = np.array([[big, -big, tiny, 0.0], [-big, tiny, big, 1.0]] * 6)
    y = np.array([0, 1] * 6)
    w = np.array([tiny, 2.0**-40, 1 - 2.0**-53, 1.0] * 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = _model(kind, feature_bounds=(-big, big), epsilon=1e6)
        model.fit(X, y, sample_weight=w)
        assert np.all(np.isfinite(_output(model, X)))


@pytest.mark.parametrize("max_classes", [2, 32])
def test_the_weights_follow_the_rows_the_label_steps_keep(max_classes):
    # a label too rare to be released, and (max_classes=2) a third class
    # beyond the plan: their rows leave the fit with their weights, and the
    # fit is the one without those rows (exact class counts at this epsilon)
    X, y, w = _data(1500, classes=3)
    y = y.astype(str)
    y[0] = "rare"
    params = {"classes": None, "max_classes": max_classes, "epsilon": 1e6}
    model = _model("classifier", **params).fit(X, y, sample_weight=w)
    kept = np.isin(y, model.classes_)
    assert model.classes_.tolist() == ["0", "1", "2"][:max_classes]
    counts = np.bincount(np.searchsorted(model.classes_, y[kept]), weights=w[kept])
    if max_classes == 2:  # log-odds of the weighted counts
        assert model._baseline[0] == pytest.approx(np.log(counts[1] / counts[0]), 1e-3)
    else:
        proba = np.exp(model._baseline) / np.exp(model._baseline).sum()
        np.testing.assert_allclose(proba, counts / counts.sum(), rtol=1e-3)
