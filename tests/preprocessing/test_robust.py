"""PrivateRobustScaler: composition, ledger, wiring to the parts, behaviour."""

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant
from skdp.preprocessing._robust import PrivateRobustScaler
from skdp.stats._iqr import IQRScale
from skdp.stats._ptr import PTRMedian, PTRRefusedError, PTRRefusedWarning
from skdp.stats._smooth import SmoothSensitivityMedian

BOUNDS = (0.0, 100.0)


def data(n=50_000, d=2, seed=0):
    return np.random.default_rng(seed).normal(50, 10, size=(n, d))


def test_ledger_with_a_proposal_spends_exactly_the_budget():
    acc = BudgetAccountant(epsilon=3.0, delta=1e-5)
    est = PrivateRobustScaler(
        2.0,
        1e-6,
        bounds=BOUNDS,
        proposed_sensitivity=2.0,
        median_share=0.25,
        scale_method="dwork_lei",
        accountant=acc,
        random_state=0,
    ).fit(data())
    assert not (est.median_refused_.any() or est.scale_refused_.any())
    entries = [(e.label.split(": ")[1], e.epsilon, e.delta) for e in acc.entries]
    assert entries == [
        ("median stability tests", pytest.approx(0.25), pytest.approx(5e-7)),
        ("median releases", pytest.approx(0.25), 0.0),
        ("scale stability tests", pytest.approx(0.75), pytest.approx(5e-7)),
        ("scale releases", pytest.approx(0.75), 0.0),
    ]
    assert acc.total() == pytest.approx((2.0, 1e-6))
    assert (est.epsilon_spent_, est.delta_spent_) == pytest.approx(acc.total())


def test_ledger_without_a_proposal_uses_the_smooth_median():
    acc = BudgetAccountant(epsilon=10.0, delta=1e-5)
    est = PrivateRobustScaler(
        6.0,
        1e-6,
        bounds=BOUNDS,
        scale_method="dwork_lei",
        accountant=acc,
        random_state=0,
    ).fit(data(d=1))
    # the smooth median spends its whole share (it was capped at eps = 1)
    labels = [e.label.split(": ")[1] for e in acc.entries]
    assert labels == [
        "smooth median releases",
        "scale stability tests",
        "scale releases",
    ]
    assert acc.total() == pytest.approx((3.0 + 3.0, 1e-6))
    assert est.epsilon_spent_ == pytest.approx(6.0)
    assert not est.median_refused_.any()


@pytest.mark.parametrize(
    "scale_method, median_delta", [("quantile", 1e-6), ("dwork_lei", 5e-7)]
)
def test_median_part_is_exactly_the_stand_alone_estimator(scale_method, median_delta):
    # same seed, same stream: the median draws come first, so the composed
    # estimator's medians equal PTRMedian / SmoothSensitivityMedian fitted
    # with the median's share of the budget (all of delta when the scales
    # spend none)
    X = data(50_000)
    params = {"bounds": BOUNDS, "scale_method": scale_method}
    for seed in range(5):
        composed = PrivateRobustScaler(
            1.0, 1e-6, proposed_sensitivity=2.0, random_state=seed, **params
        ).fit(X)
        alone = PTRMedian(
            0.5,
            median_delta,
            bounds=BOUNDS,
            proposed_sensitivity=2.0,
            random_state=seed,
        ).fit(X)
        assert not alone.refused_.any()
        np.testing.assert_array_equal(composed.median_, alone.median_)
        composed = PrivateRobustScaler(1.0, 1e-6, random_state=seed, **params)
        alone = SmoothSensitivityMedian(
            0.5, median_delta, bounds=BOUNDS, random_state=seed
        )
        np.testing.assert_array_equal(composed.fit(X).median_, alone.fit(X).median_)


def test_scale_part_matches_the_stand_alone_distribution():
    # the scale draws follow the median draws, so compare distributions: the
    # log2 error of both is Lap(w/eps') = Lap(1/2) (eps' = 1/4, w = 1/8); the
    # two medians of 201 |errors| agree within a factor 2 (fails w.p. < 1e-6)
    X = data(20_000, d=1)
    ordered = np.sort(X[:, 0])
    truth = ordered[(3 * 20_000 + 3) // 4 - 1] - ordered[(20_000 + 3) // 4 - 1]
    composed = [
        PrivateRobustScaler(
            2.0,
            1e-6,
            bounds=BOUNDS,
            proposed_sensitivity=2.0,
            scale_method="dwork_lei",
            random_state=s,
        )
        .fit(X)
        .scale_[0]
        for s in range(201)
    ]
    alone = [
        IQRScale(1.0, 5e-7, method="dwork_lei", bounds=BOUNDS, random_state=10_000 + s)
        .fit(X)
        .scale_[0]
        for s in range(201)
    ]
    a = np.median(np.abs(np.log2(np.array(composed) / truth)))
    b = np.median(np.abs(np.log2(np.array(alone) / truth)))
    assert 0.5 < a / b < 2.0
    # median |Lap(1/2)| = ln(2)/2
    assert 0.5 * math.log(2) / 2 < a < 2 * math.log(2) / 2


def test_transform_and_inverse():
    X = data(20_000)
    est = PrivateRobustScaler(bounds=BOUNDS, proposed_sensitivity=2.0, random_state=1)
    Xt = est.fit_transform(X)
    assert not (est.median_refused_.any() or est.scale_refused_.any())
    np.testing.assert_allclose(Xt, (X - est.median_) / est.scale_)
    np.testing.assert_allclose(est.inverse_transform(Xt), X)


def test_refusals_give_nan_columns_or_raise_after_spending():
    X = pd.DataFrame({"x": [10.0, 90.0, 90.0]})
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    with pytest.warns(PTRRefusedWarning, match="median or IQR"):
        est = PrivateRobustScaler(
            bounds=BOUNDS,
            proposed_sensitivity=1.0,
            scale_method="dwork_lei",
            accountant=acc,
            random_state=0,
        ).fit(X)
    assert est.median_refused_[0] and est.scale_refused_[0]
    with pytest.warns(PTRRefusedWarning, match="refused at fit"):
        assert np.isnan(est.transform(X)).all()
    with pytest.raises(PTRRefusedError, match="'x'"):
        PrivateRobustScaler(
            bounds=BOUNDS,
            on_refuse="raise",
            scale_method="dwork_lei",
            accountant=acc,
            random_state=0,
        ).fit(X)
    assert acc.total() == pytest.approx((2.0, 2e-6))


@pytest.mark.parametrize(
    "kwargs, X, match",
    [
        ({}, np.array([[np.inf]]), "NaN or inf"),
        ({}, np.empty((0, 1)), "0 sample"),
        ({"bounds": None}, np.ones((3, 1)), "needs public bounds"),
        ({"median_share": 1.0}, np.ones((3, 1)), "median_share"),
        ({"proposed_sensitivity": 0.0}, np.ones((3, 1)), "proposed_sensitivity"),
        ({"width": -1.0}, np.ones((3, 1)), "width"),
        ({"epsilon": 5.0}, np.ones((3, 1)), "exceed"),
        ({"epsilon": 1e-12}, np.ones((3, 1)), "too small"),
        ({"bounds": (0, 1e-310)}, np.ones((3, 1)), "too narrow"),
    ],
)
def test_bad_input_charges_nothing(kwargs, X, match):
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    params = {"bounds": BOUNDS, **kwargs}
    with pytest.raises(Exception, match=match):
        PrivateRobustScaler(accountant=acc, **params).fit(X)
    assert acc.entries == ()


def test_pandas_pipeline():
    X = pd.DataFrame(data(20_000), columns=["age", "hours"])
    y = X["age"] * 2.0
    pipe = make_pipeline(
        PrivateRobustScaler(bounds=BOUNDS, proposed_sensitivity=2.0, random_state=0),
        LinearRegression(),
    )
    pipe[0].set_output(transform="pandas")
    pipe.fit(X, y)
    assert list(pipe[0].get_feature_names_out()) == ["age", "hours"]
    assert pipe.score(X, y) > 0.999


ADULT = Path(__file__).resolve().parents[2] / "examples" / "data" / "adult.csv.gz"


def test_default_quartile_scale_never_refuses_on_adult_age():
    # integers 17..90, heavily tied: the Dwork-Lei test refuses there at eps=1
    age = pd.read_csv(ADULT, usecols=["age"]).to_numpy(dtype=float)
    truth = np.percentile(age, 75) - np.percentile(age, 25)
    acc = BudgetAccountant(epsilon=100.0, delta=1e-3)
    errors, lei_refusals = [], 0
    for seed in range(5):
        est = PrivateRobustScaler(
            1.0, 1e-6, bounds=BOUNDS, accountant=acc, random_state=seed
        ).fit(age)
        assert not (est.median_refused_.any() or est.scale_refused_.any())
        errors.append(abs(math.log(est.scale_[0] / truth)))
        lei = PrivateRobustScaler(
            1.0,
            1e-6,
            bounds=BOUNDS,
            scale_method="dwork_lei",
            accountant=acc,
            random_state=seed,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PTRRefusedWarning)
            lei_refusals += int(lei.fit(age).scale_refused_[0])
    assert np.median(errors) <= 0.1
    assert lei_refusals >= 3  # the failure the default avoids


def test_quartile_ledger_spends_delta_on_the_medians_only():
    acc = BudgetAccountant(epsilon=3.0, delta=1e-5)
    PrivateRobustScaler(
        2.0,
        1e-6,
        bounds=BOUNDS,
        proposed_sensitivity=2.0,
        median_share=0.25,
        accountant=acc,
        random_state=0,
    ).fit(data())
    entries = [(e.label.split(": ")[1], e.epsilon, e.delta) for e in acc.entries]
    assert entries == [
        ("median stability tests", pytest.approx(0.25), pytest.approx(1e-6)),
        ("median releases", pytest.approx(0.25), 0.0),
        ("scale quartiles (0.25, 0.75)", pytest.approx(1.5), 0.0),
    ]


def test_a_dwork_lei_scale_noise_out_of_range_is_refused_before_the_charge():
    # the plan checked the medians' PTR noise but not the scales' Dwork-Lei
    # tests (2d values): at epsilon = 8e-13 the fit charged its four items,
    # then the Laplace release of the tests raised
    accountant = BudgetAccountant(delta=1.0)
    model = PrivateRobustScaler(
        bounds=(0, 10),
        proposed_sensitivity=0.5,
        epsilon=8e-13,
        scale_method="dwork_lei",
        accountant=accountant,
    )
    X = np.random.default_rng(0).uniform(0, 10, (40, 2))
    with pytest.raises(ValueError, match="epsilon of each test and release"):
        model.fit(X)
    assert accountant.entries == ()


def _zcdp():
    return BudgetAccountant(1000.0, 1e-2, slack=5e-3, composition="zcdp")


@pytest.mark.parametrize(
    "params",
    [
        {"proposed_sensitivity": 2.0, "scale_method": "dwork_lei"},
        {"proposed_sensitivity": 2.0},
        {"scale_method": "dwork_lei"},
        {},
    ],
    ids=["ptr+dwork_lei", "ptr+quantile", "smooth+dwork_lei", "smooth+quantile"],
)
def test_planned_cost_of_a_grouped_fit_is_what_a_zcdp_accountant_records(params):
    # _fit_cost was the (epsilon, delta) atom while fit records two to four
    # parts: converted for one row of a zCDP accountant the atom counted
    # more than the parts (check_budget could refuse a fit that fits)
    from skdp.model_selection import fit_cost

    model = PrivateRobustScaler(
        2.0, 1e-6, bounds=BOUNDS, max_rows_per_group=3, random_state=0, **params
    )
    recorded = _zcdp()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.set_params(accountant=recorded).fit(
            data(n=600, d=1), groups=np.arange(600) // 3
        )
    planned = _zcdp()
    planned.spend(fit_cost(model), label="plan")
    assert planned.total() == recorded.total()
