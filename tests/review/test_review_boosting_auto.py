"""Adversarial review of the boosting estimators' ``"auto"`` settings and of
the regressor's leaf shrinkage (``G̃ · G̃² / (G̃² + k σ²)``).

What is checked: ``"auto"`` is resolved at fit time from the fit's public ε
(also after ``set_params``), costs exactly what the planner says on both
sides of ε = 1, survives clone / pickle / searches, and other strings are
refused before the charge; the shrinkage's ``σ`` is the deviation the
releases actually draw (alone and for groups), the classifier is the code
before both commits bit for bit, and the Dask regressor gets the same
shrinkage as the in-memory one.
"""

import hashlib
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import GridSearchCV

from skdp import BudgetAccountant
from skdp.ensemble import (
    PrivateHistGradientBoostingClassifier,
    PrivateHistGradientBoostingRegressor,
)
from skdp.ensemble._hist_gradient_boosting import cyclic, grower
from skdp.mechanisms import check_random_source
from skdp.model_selection import fit_cost

pytestmark = pytest.mark.filterwarnings("ignore::skdp.NoiseDominatedWarning")

C = PrivateHistGradientBoostingClassifier
R = PrivateHistGradientBoostingRegressor


def _acc():
    return BudgetAccountant(100.0, 0.5)


@pytest.mark.parametrize(("epsilon", "rounds"), [(np.nextafter(1.0, 0.0), 3), (1.0, 5)])
def test_auto_at_both_sides_of_one_costs_what_the_plan_says(epsilon, rounds):
    X, y = make_classification(120, 3, n_informative=2, n_redundant=0, random_state=0)
    acc = _acc()
    model = C(
        epsilon, boosting="cyclic", classes=[0, 1], accountant=acc, random_state=0
    )
    planned = fit_cost(model, X)
    model.fit(X, y)
    assert model.n_iter_ == rounds
    assert acc.total() == (planned.epsilon, planned.delta)


def test_set_params_epsilon_after_construction_moves_the_auto_settings():
    X, y = make_classification(120, 3, n_informative=2, n_redundant=0, random_state=0)
    model = C(5.0, boosting="cyclic", classes=[0, 1], accountant=_acc(), random_state=0)
    model.set_params(epsilon=0.5).fit(X, y)
    assert model.n_iter_ == 3  # the ε of the fit, not of the constructor
    assert len(list(model.staged_predict_proba(X))) == 3
    assert len(model._bin_mapper.n_bins) == 3 and model._bin_mapper.n_bins.max() <= 16


def test_auto_survives_clone_pickle_and_get_params():
    model = C(0.5, boosting="cyclic", classes=[0, 1])
    for copy in (clone(model), pickle.loads(pickle.dumps(model))):
        params = copy.get_params()
        assert [params[k] for k in ("max_iter", "max_bins", "learning_rate")] == [
            "auto"
        ] * 3
        assert params["bin_share"] == "auto"
    assert "auto" not in repr(model)  # defaults are not shown


@pytest.mark.parametrize("name", ["max_iter", "max_bins", "learning_rate", "bin_share"])
@pytest.mark.parametrize("bad", ["Auto", "none", ""])
def test_other_strings_are_refused_before_the_charge(name, bad):
    X, y = make_classification(60, 2, n_informative=2, n_redundant=0, random_state=0)
    acc = _acc()
    with pytest.raises(ValueError, match=name):
        C(1.0, classes=[0, 1], accountant=acc, **{name: bad}).fit(X, y)
    assert acc.total() == (0.0, 0.0)


def test_a_search_over_max_iter_with_auto_fits_each_candidate_as_stated():
    X, y = make_classification(120, 3, n_informative=2, n_redundant=0, random_state=0)
    model = C(0.5, boosting="cyclic", classes=[0, 1], accountant=_acc(), random_state=0)
    search = GridSearchCV(model, {"max_iter": ["auto", 1]}, cv=2).fit(X, y)
    assert search.best_estimator_.n_iter_ in (3, 1)
    assert search.cv_results_["param_max_iter"].tolist() == ["auto", 1]


# --- the shrinkage's σ is the released sums' actual noise deviation ---------


def _measured_sd(release, plan, n=4000):
    sums = np.zeros((2, n))
    noisy = release(sums, plan, check_random_source(11))
    return noisy[0].std(), plan.leaf_multiplier * grower.leaf_sensitivity(
        plan.g_max, plan.h_max
    )


@pytest.mark.parametrize("release", [grower.release_leaf_sums, cyclic.release_bin_sums])
def test_sigma_of_the_shrinkage_is_the_drawn_deviation(release):
    plan = grower.TreePlan(2, 0.7, 0.7, 2.0, 1.0, 0.0, 0.3, None, 4.0)
    measured, stated = _measured_sd(release, plan)
    # 4000 draws: the sample sd is within 5 % of the true one (≈ 4.5 se)
    assert abs(measured / stated - 1.0) < 0.05


@pytest.mark.parametrize("boosting", ["trees", "cyclic"])
def test_groups_scale_the_shrinkages_sigma_with_the_noise(boosting, monkeypatch):
    X, y = make_regression(80, 2, noise=1.0, random_state=0)
    seen = []

    def spy(sums, plan):
        seen.append(plan.leaf_multiplier)
        return sums

    monkeypatch.setattr(grower, "shrunk_gradient_sums", spy)
    monkeypatch.setattr(cyclic, "shrunk_gradient_sums", spy)
    common = dict(boosting=boosting, max_iter=1, target_bounds=(-300, 300))
    R(1.0, random_state=0, accountant=_acc(), **common).fit(X, y)
    alone = seen.pop()
    R(1.0, random_state=0, accountant=_acc(), max_rows_per_group=3, **common).fit(
        X, y, groups=np.arange(80) // 3
    )
    assert seen[-1] == pytest.approx(3 * alone, rel=1e-12)


# --- unchanged where claimed ------------------------------------------------


def _digest(a):
    data = np.ascontiguousarray(a, dtype=float).tobytes()
    return hashlib.sha256(data).hexdigest()[:16]


def test_the_classifier_is_the_code_before_both_commits_bit_for_bit(monkeypatch):
    # digests computed on `git show a05642d` (before "auto" and the
    # shrinkage) with the old defaults written out for cyclic boosting; the
    # trees stated (the default is "auto" since), and the cyclic steps'
    # shrinkage (post-processing, added later) off: the pin is of the releases
    monkeypatch.setattr(cyclic, "shrunk_feature_step", lambda sums, plan: sums)
    X, y = make_classification(200, 4, random_state=0)
    y3 = (X[:, 0] > 0).astype(int) + (X[:, 1] > 1)
    old = dict(max_iter=4, max_bins=8, learning_rate=0.3, bin_share=0.1)
    common = dict(max_depth=2, random_state=3, accountant=_acc())
    fits = [
        C(1.0, classes=[0, 1], boosting="trees", **common).fit(X, y),
        C(1.0, classes=[0, 1, 2], boosting="cyclic", **common, **old).fit(X, y3),
    ]
    got = [_digest(m.predict_proba(X)) for m in fits]
    assert got == EXPECTED_CLASSIFIER_DIGESTS


EXPECTED_CLASSIFIER_DIGESTS = ["7e184bc4ba5a609c", "ace394647ba97e5b"]


@pytest.mark.parametrize("boosting", ["trees", "cyclic"])
def test_the_dask_regressor_shrinks_as_in_memory(boosting):
    da = pytest.importorskip("dask.array")
    X, y = make_regression(120, 3, noise=1.0, random_state=0)

    def fit(X, y):
        model = R(
            1.0,
            max_depth=2,
            max_iter=4,
            boosting=boosting,
            random_state=3,
            target_bounds=(-300, 300),
            accountant=_acc(),
        )
        return model.fit(X, y).predict(X_np)

    X_np = X
    memory = fit(X, y)
    lazy = fit(da.from_array(X, chunks=(40, 3)), da.from_array(y, chunks=40))
    np.testing.assert_array_equal(memory, lazy)


def test_the_regressor_fit_never_raises_under_a_strict_errstate_at_extremes():
    X, y = make_regression(60, 2, noise=1.0, random_state=0)
    for eps, bounds in [(1e-3, (-8.9e307, 8.9e307)), (1e6, (-1e-307, 1e-307))]:
        with np.errstate(all="raise"):
            model = R(
                eps,
                max_iter=2,
                max_depth=2,
                target_bounds=bounds,
                accountant=BudgetAccountant(1e7, 0.5),
                random_state=0,
            )
            pred = model.fit(X * 1e300, y * 1e300).predict(X)
        assert np.all(np.isfinite(pred))


# --- found on the way (before both commits): a strict caller's errstate ----


def test_subnormal_bounds_are_refused_by_name_under_a_strict_errstate():
    from skdp.utils import check_bounds

    with np.errstate(all="raise"), pytest.raises(ValueError, match="too narrow"):
        check_bounds((-5e-324, 5e-324), 1)


def test_a_large_epsilon_calibrates_under_a_strict_errstate():
    from skdp.mechanisms import gaussian_noise_multipliers

    expected = gaussian_noise_multipliers(1e6, 1e-6, [1.0])
    with np.errstate(all="raise"):
        got = gaussian_noise_multipliers(1e6, 1e-6, [1.0])
    np.testing.assert_array_equal(got, expected)


def test_the_dask_classifier_resolves_auto_as_in_memory():
    da = pytest.importorskip("dask.array")
    X, y = make_classification(120, 3, n_informative=2, n_redundant=0, random_state=0)

    def fit(X, y):
        model = C(0.5, boosting="cyclic", classes=[0, 1], feature_bounds=(-5, 5))
        return model.set_params(random_state=1, accountant=_acc()).fit(X, y)

    memory = fit(X, y)
    lazy = fit(da.from_array(X, chunks=(40, 3)), da.from_array(y, chunks=40))
    assert lazy.n_iter_ == 3 and lazy._bin_mapper.n_bins.tolist() == [16] * 3
    np.testing.assert_array_equal(memory.predict_proba(X), lazy.predict_proba(X))
