"""Adversarial review of the classifier's ``boosting="auto"`` default (cyclic
boosting below ε = 1000, scikit-learn's trees from it) and of the shrinkage
of its cyclic steps.

What is checked: the releases a default fit actually draws (in memory, on
Dask, for groups, binary and multiclass, on both sides of the switch) are as
many as its resolved plan and compose exactly to the Gaussian it charged; a
plan that forgot a feature per round is caught by the same check; the mode
is read from the public ε only (never from the data); a refusal of the
default names the resolved mode; the shrinkage is finite and never raises at
the ends of the accepted ε range, multiclass.
"""

from fractions import Fraction

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV

from skdp import BudgetAccountant
from skdp.ensemble import PrivateHistGradientBoostingClassifier
from skdp.ensemble._hist_gradient_boosting import (
    binning,
    cyclic,
    gradient_boosting,
    grower,
    histogram,
)
from skdp.ensemble._hist_gradient_boosting import loss as loss_module
from skdp.ensemble._hist_gradient_boosting._plan import release_shares
from skdp.linear_model._release import gaussian_fit_cost
from skdp.mechanisms import _gaussian

pytestmark = pytest.mark.filterwarnings("ignore::skdp.NoiseDominatedWarning")

C = PrivateHistGradientBoostingClassifier
RELEASING = (binning, histogram, grower, cyclic, loss_module)


def _record(monkeypatch):
    """Every Gaussian release the boosting draws: (sensitivity, multiplier)."""
    calls = []
    for module in RELEASING:
        real = module.gaussian_release

        def spy(value, sens, multiplier, *, random_state=None, real=real):
            calls.append(float(multiplier))
            return real(value, sens, multiplier, random_state=random_state)

        monkeypatch.setattr(module, "gaussian_release", spy)
    return calls


def _composed(calls, epsilon, delta, unit_rows=1):
    """``Σ (k / r_i)²`` over the drawn releases (``k`` rows per privacy
    unit), in exact rationals, times the charged ``R²`` and times the
    certified ``R*²`` (before the sampler's margin): the first is 1 when the
    drawn releases are the charged Gaussian (above 1 when they spend more),
    the second must be at most 1."""
    total = sum(Fraction(unit_rows) ** 2 / Fraction(r) ** 2 for r in calls)
    charged = Fraction(gaussian_fit_cost(epsilon, delta).noise_multiplier)
    certified = Fraction(_gaussian._certified_ratio(epsilon, delta))
    return total * charged**2, total * certified**2


def _data(n, d, n_classes, seed=0):
    X, y = make_classification(
        n, d, n_informative=2, n_redundant=0, n_classes=n_classes,
        n_clusters_per_class=1, random_state=seed,
    )  # fmt: skip
    return X, y


@pytest.mark.parametrize(
    ("epsilon", "n_classes", "mode", "rounds"),
    [
        (1.0, 2, "cyclic", 5),  # the default: ε = 1, binary
        (0.5, 3, "cyclic", 3),  # below ε = 1, multiclass
        (1000.0, 2, "trees", 100),  # the switch: scikit-learn's settings
    ],
)
def test_default_fits_draw_their_plan_and_compose_to_the_charge(
    monkeypatch, epsilon, n_classes, mode, rounds
):
    calls = _record(monkeypatch)
    d, delta = 3, 1e-6
    X, y = _data(200, d, n_classes)
    acc = BudgetAccountant(np.inf, 0.5)
    model = C(epsilon, classes=list(range(n_classes)), accountant=acc, random_state=0)
    model.fit(X, y)
    k = 1 if n_classes == 2 else n_classes
    per_round = d * k if mode == "cyclic" else k * (model.max_depth + 1)
    assert model.boosting_ == mode and model.n_iter_ == rounds
    assert len(calls) == 1 + 1 + rounds * per_round  # private bins, baseline
    composed, certified = _composed(calls, epsilon, delta)
    assert abs(float(composed) - 1.0) < 1e-12 and certified <= 1
    assert len(acc.entries) == 1 and acc.total() == pytest.approx((epsilon, delta))


def test_a_plan_that_forgot_a_feature_per_round_is_caught(monkeypatch):
    # the twin: shares for d - 1 cyclic steps a round while d are drawn
    # (d > max_iter, so the rounds still find a multiplier and nothing
    # raises); the drawn releases then spend more than was charged
    def forgot_a_feature(extra, rounds, depth, cyclic_features=None):
        features = None if cyclic_features is None else cyclic_features - 1
        return release_shares(extra, rounds, depth, features)

    calls = _record(monkeypatch)
    monkeypatch.setattr(gradient_boosting, "release_shares", forgot_a_feature)
    X, y = _data(200, 8, 2)
    C(
        1.0, classes=[0, 1], accountant=BudgetAccountant(np.inf, 0.5), random_state=0
    ).fit(X, y)
    assert len(calls) == 1 + 1 + 5 * 8
    composed, certified = _composed(calls, 1.0, 1e-6)
    assert composed > 1.1 and certified > 1  # 40 steps drawn at 35 steps' noise


def test_grouped_default_fits_compose_in_the_groups_units(monkeypatch):
    calls = _record(monkeypatch)
    X, y = _data(240, 3, 2)
    groups = np.arange(240) // 3
    model = C(1.0, classes=[0, 1], max_rows_per_group=3, random_state=0)
    model.set_params(accountant=BudgetAccountant(np.inf, 0.5)).fit(X, y, groups=groups)
    assert model.boosting_ == "cyclic" and len(calls) == 2 + 5 * 3
    composed, certified = _composed(calls, 1.0, 1e-6, unit_rows=3)
    assert abs(float(composed) - 1.0) < 1e-12 and certified <= 1


def test_dask_default_fit_is_the_in_memory_default_fit(monkeypatch):
    da = pytest.importorskip("dask.array")
    X, y = _data(200, 3, 2)
    calls, fits, ends = _record(monkeypatch), [], []
    for X_, y_ in ((X, y), (da.from_array(X, chunks=(70, 3)), da.from_array(y, 70))):
        model = C(1.0, classes=[0, 1], accountant=BudgetAccountant(np.inf, 0.5))
        fits.append(model.set_params(random_state=4).fit(X_, y_))
        ends.append(len(calls))
    memory, dask = fits
    in_memory, on_dask = calls[: ends[0]], calls[ends[0] :]
    assert dask.boosting_ == memory.boosting_ == "cyclic"
    assert on_dask == in_memory and len(on_dask) == 2 + 5 * 3
    np.testing.assert_array_equal(dask.predict_proba(X), memory.predict_proba(X))


def test_the_mode_is_read_from_the_public_epsilon_never_from_the_data():
    # the same ε on very different data, one side of the switch each: the
    # same mode and settings; only the stated ε moves them
    X, y = _data(150, 3, 2)
    wide = np.hstack([X, X**2, -X])  # other width, other values
    for epsilon, mode in ((np.nextafter(1000.0, 0.0), "cyclic"), (1000.0, "trees")):
        seen = set()
        for X_ in (X, wide, X * 1e200):
            model = C(epsilon, classes=[0, 1], accountant=BudgetAccountant(np.inf, 0.5))
            bounds = (-1e300, 1e300)  # public bins: max_bins of them
            model.set_params(random_state=0, max_iter=1, feature_bounds=bounds)
            model.fit(X_, y)
            seen.add((model.boosting_, int(model._bin_mapper.n_bins.max())))
        assert seen == {(mode, 32 if mode == "cyclic" else 255)}


def test_a_refused_default_names_the_mode_auto_chose_and_charges_nothing():
    # classes=None: the plan assumes max_classes=32 trees a round; at ε =
    # 1000 the default's 100 rounds of 255 bins exceed the fit's noise cap
    # with 12 features (ε = 999 and stated trees fit): the refusal must say
    # that boosting="auto" chose them, not only max_iter/max_bins the caller
    # never stated
    X, y = _data(40, 12, 2)
    acc = BudgetAccountant(np.inf, 0.5)
    with pytest.raises(ValueError, match=r"boosting='auto'.*Nothing was charged"):
        C(1000.0, accountant=acc).fit(X, y)
    assert acc.entries == ()


@pytest.mark.parametrize("epsilon", [1e-3, 999.0])
def test_default_multiclass_fits_never_raise_under_errstate_raise(epsilon):
    # both ends of the cyclic range: steps far below and far above their noise
    X, y = _data(300, 3, 3)
    X[0, 0], X[1, 1] = np.finfo(float).max, 5e-324
    with np.errstate(all="raise"):
        model = C(
            epsilon, classes=[0, 1, 2], feature_bounds=(-5.0, 5.0),
            accountant=BudgetAccountant(np.inf, 0.5), random_state=0,
        ).fit(X, y)  # fmt: skip
        proba = model.predict_proba(X)
    assert model.boosting_ == "cyclic" and np.all(np.isfinite(proba))


def test_boosting_searches_clones_and_reports_the_resolved_mode():
    X, y = _data(120, 3, 2)
    model = C(1.0, classes=[0, 1], accountant=BudgetAccountant(np.inf, 0.5))
    assert clone(model).get_params()["boosting"] == "auto"
    grid = {"boosting": ["auto", "trees"]}
    search = GridSearchCV(model.set_params(random_state=0, max_iter=1), grid, cv=2)
    search.fit(X, y)
    assert search.best_estimator_.boosting_ in ("cyclic", "trees")
    assert not hasattr(model, "boosting_")  # the search fitted clones
