"""``"auto"`` settings and mode of the boosting estimators: the stated
values, by ``boosting`` and ε (public), and nothing else; and the
classifier's shrinkage of its cyclic steps (post-processing), against its
formula computed exactly and at extreme doubles.

The cyclic classifier's values come from a measurement on Adult
(``benchmarks/bench_cyclic_boosting.py``); here they are checked to be
what ``"auto"`` fits, bit for bit, against the same fit with the values
written out, and that the plan (``fit_cost``) and ``n_iter_`` agree.
"""

from fractions import Fraction

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from skdp import BudgetAccountant
from skdp.ensemble import (
    PrivateHistGradientBoostingClassifier,
    PrivateHistGradientBoostingRegressor,
)
from skdp.ensemble._hist_gradient_boosting.cyclic import shrunk_feature_step
from skdp.ensemble._hist_gradient_boosting.grower import TreePlan
from skdp.model_selection import fit_cost

pytestmark = pytest.mark.filterwarnings("ignore::skdp.NoiseDominatedWarning")

TREES = {"max_iter": 30, "max_bins": 8, "learning_rate": 0.3, "bin_share": 0.1}
CYCLIC_LOW = {"max_iter": 3, "max_bins": 16, "learning_rate": 0.5, "bin_share": 0.4}
CYCLIC = {"max_iter": 5, "max_bins": 32, "learning_rate": 0.5, "bin_share": 0.2}
LARGE_TREES = {"max_iter": 100, "max_bins": 255, "learning_rate": 0.1}


def _fit(cls, X, y, epsilon, **params):
    extra = {"classes": [0, 1]} if cls is PrivateHistGradientBoostingClassifier else {}
    model = cls(
        epsilon,
        max_depth=2,
        random_state=3,
        accountant=BudgetAccountant(np.inf, 0.5),
        **extra,
        **params,
    )
    return model.fit(X, y)


@pytest.mark.parametrize(
    ("boosting", "epsilon", "stated"),
    [
        ("trees", 1.0, TREES),
        ("cyclic", 0.3, CYCLIC_LOW),
        ("cyclic", 0.999, CYCLIC_LOW),
        ("cyclic", 1.0, CYCLIC),
        ("cyclic", 7.0, CYCLIC),
    ],
)
def test_the_classifiers_auto_is_the_stated_setting(boosting, epsilon, stated):
    X, y = make_classification(300, 4, random_state=0)
    cls = PrivateHistGradientBoostingClassifier
    auto = _fit(cls, X, y, epsilon, boosting=boosting)
    written = _fit(cls, X, y, epsilon, boosting=boosting, **stated)
    np.testing.assert_array_equal(auto.predict_proba(X), written.predict_proba(X))
    assert auto.n_iter_ == stated["max_iter"]
    assert fit_cost(auto, X) == fit_cost(written, X)


@pytest.mark.parametrize("boosting", ["trees", "cyclic"])
def test_the_regressors_auto_is_the_trees_setting_in_either_mode(boosting):
    X, y = make_regression(300, 3, noise=1.0, random_state=0)
    cls = PrivateHistGradientBoostingRegressor
    auto = _fit(cls, X, y, 0.5, boosting=boosting, target_bounds=(-300, 300))
    written = _fit(
        cls, X, y, 0.5, boosting=boosting, target_bounds=(-300, 300), **TREES
    )
    np.testing.assert_array_equal(auto.predict(X), written.predict(X))
    assert auto.n_iter_ == 30


def test_a_stated_value_overrides_auto_alone():
    X, y = make_classification(300, 4, random_state=0)
    cls = PrivateHistGradientBoostingClassifier
    mixed = _fit(cls, X, y, 2.0, boosting="cyclic", max_iter=2)
    written = _fit(cls, X, y, 2.0, boosting="cyclic", **{**CYCLIC, "max_iter": 2})
    np.testing.assert_array_equal(mixed.predict_proba(X), written.predict_proba(X))
    assert mixed.n_iter_ == 2


@pytest.mark.parametrize(
    ("epsilon", "mode", "stated"),
    [
        (0.3, "cyclic", {}),
        (1.0, "cyclic", {}),
        (np.nextafter(1000.0, 0.0), "cyclic", {}),
        (1000.0, "trees", LARGE_TREES),
        (1e6, "trees", LARGE_TREES),
    ],
)
def test_the_classifiers_auto_mode_is_the_stated_mode(epsilon, mode, stated):
    X, y = make_classification(300, 4, random_state=0)
    cls = PrivateHistGradientBoostingClassifier
    auto = _fit(cls, X, y, epsilon)
    written = _fit(cls, X, y, epsilon, boosting=mode, **stated)
    np.testing.assert_array_equal(auto.predict_proba(X), written.predict_proba(X))
    assert auto.boosting_ == written.boosting_ == mode
    assert fit_cost(auto, X) == fit_cost(written, X)


def test_stated_trees_keep_their_settings_at_a_large_epsilon():
    X, y = make_classification(300, 4, random_state=0)
    cls = PrivateHistGradientBoostingClassifier
    stated = _fit(cls, X, y, 1e6, boosting="trees")
    assert stated.n_iter_ == 30 and stated._bin_mapper.n_bins.max() <= 8


def test_the_regressors_auto_is_its_trees_at_every_epsilon():
    X, y = make_regression(300, 3, noise=1.0, random_state=0)
    cls = PrivateHistGradientBoostingRegressor
    for epsilon in (1.0, 1e6):
        auto = _fit(cls, X, y, epsilon, target_bounds=(-300, 300))
        trees = _fit(cls, X, y, epsilon, target_bounds=(-300, 300), boosting="trees")
        np.testing.assert_array_equal(auto.predict(X), trees.predict(X))
        assert auto.boosting_ == "trees"


def _plan(multiplier=1.0, classifier=True):
    return TreePlan(1, None, multiplier, 1.0, 0.25, 0.0, 0.5, None, 0.0, classifier)


def _exact_factor(g, sd):
    energy = sum(Fraction(v) ** 2 for v in g) / Fraction(sd) ** 2
    return max(Fraction(0), 1 - Fraction(len(g)) / energy) if energy else 0


@pytest.mark.parametrize("seed", range(5))
def test_the_step_factor_is_the_estimated_share_of_signal(seed):
    rng = np.random.default_rng(seed)
    plan = _plan(multiplier=rng.uniform(0.5, 5))
    sd = plan.leaf_noise_sd()
    g = rng.normal(scale=sd * rng.uniform(0.3, 4), size=int(rng.integers(2, 40)))
    sums = np.stack([g, rng.uniform(0, 100, size=g.size)])
    out = shrunk_feature_step(sums, plan)
    factor = float(_exact_factor(g, sd))
    np.testing.assert_allclose(out[0], g * factor, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(out[1], sums[1])  # hessians untouched


def test_a_step_below_its_noise_moves_nothing_and_a_strong_one_little():
    plan = _plan()
    sd = plan.leaf_noise_sd()
    weak = np.stack([np.full(8, 0.9 * sd), np.ones(8)])  # energy 6.5 σ² < 8 σ²
    assert not np.any(shrunk_feature_step(weak, plan)[0])
    strong = np.stack([np.full(8, 100 * sd), np.ones(8)])
    assert shrunk_feature_step(strong, plan)[0][0] == pytest.approx(100 * sd * 0.9999)


@pytest.mark.parametrize(
    ("multiplier", "g", "factor"),
    [
        (1.0, [0.0, 0.0, 0.0], 0.0),  # no energy at all
        (1.0, [np.finfo(float).max, -np.finfo(float).max], 1.0),  # squares overflow
        (5e-324, [1.0, -2.0], 1.0),  # subnormal noise: G̃ / σ overflows
        (1e300, [1e-300, 5e-324], 0.0),  # all noise, squares underflow
        (1.0, [5e-324, 5e-324], 0.0),
    ],
)
def test_the_step_factor_at_extreme_doubles_is_finite_and_never_raises(
    multiplier, g, factor
):
    plan = _plan(multiplier)
    sums = np.stack([np.asarray(g), np.ones(len(g))])
    with np.errstate(all="raise"):
        out = shrunk_feature_step(sums, plan)
    assert np.all(np.isfinite(out))
    np.testing.assert_array_equal(out[0], np.asarray(g) * factor)


def test_without_noise_or_for_the_regressor_the_sums_are_unchanged():
    sums = np.stack([np.array([0.1, -0.2, 0.3]), np.ones(3)])
    for plan in (_plan(multiplier=None), _plan(classifier=False)):
        assert shrunk_feature_step(sums, plan) is sums
