"""PrivateStandardScaler: ledger, accuracy, noise level, private bounds, audit."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp import BudgetAccountant, BudgetExceededError, PrivateStandardScaler
from skdp.audit import assert_dp, audit_mechanism
from skdp.sensitivity import _moments

BOUNDS = (0.0, 100.0)


def data(n=50_000, d=2, seed=0):
    return np.random.default_rng(seed).normal(50, 10, size=(n, d))


def test_one_entry_spends_exactly_the_budget():
    acc = BudgetAccountant(epsilon=2.0)
    est = PrivateStandardScaler(1.5, bounds=BOUNDS, accountant=acc, random_state=0).fit(
        data()
    )
    labels = [e.label for e in acc.entries]
    assert labels == ["PrivateStandardScaler: row count, clipped sums and squares"]
    assert acc.total() == (1.5, 0.0)
    assert (est.epsilon_spent_, est.delta_spent_) == (1.5, 0.0)


def test_private_bounds_are_charged_first():
    acc = BudgetAccountant(epsilon=2.0)
    est = PrivateStandardScaler(1.0, accountant=acc, random_state=0).fit(data())
    assert len(acc.entries) > 1
    assert acc.entries[-1].epsilon == pytest.approx(0.7)
    assert acc.total()[0] == pytest.approx(1.0)
    assert np.all(est.lower_ < 30) and np.all(est.upper_ > 70)
    np.testing.assert_allclose(est.mean_, 50, atol=1.0)


def test_close_to_sklearn_on_large_data():
    X = data(200_000)
    est = PrivateStandardScaler(1.0, bounds=BOUNDS, random_state=0).fit(X)
    ref = StandardScaler().fit(X)
    np.testing.assert_allclose(est.mean_, ref.mean_, rtol=2e-3)
    np.testing.assert_allclose(est.scale_, ref.scale_, rtol=1e-2)
    np.testing.assert_allclose(est.transform(X[:5]), (X[:5] - est.mean_) / est.scale_)
    np.testing.assert_allclose(est.inverse_transform(est.transform(X[:5])), X[:5])


def test_with_mean_and_with_std_switch_the_transform_only():
    X = data(5_000)
    kw = {"bounds": BOUNDS, "random_state": 0}
    full = PrivateStandardScaler(**kw).fit(X)
    no_mean = PrivateStandardScaler(with_mean=False, **kw).fit(X)
    no_std = PrivateStandardScaler(with_std=False, **kw).fit(X)
    np.testing.assert_array_equal(full.mean_, no_mean.mean_)
    np.testing.assert_allclose(no_mean.transform(X), X / full.scale_)
    np.testing.assert_allclose(no_std.transform(X), X - full.mean_)


def test_noise_std_matches_the_spread_of_the_count():
    # the count is the total of one triple: three coordinates of noise
    X = data(2_000, d=1)
    counts = [
        PrivateStandardScaler(0.5, bounds=BOUNDS, random_state=s).fit(X)
        for s in range(400)
    ]
    spread = np.std([c.n_samples_seen_ for c in counts])
    expected = np.sqrt(3) * counts[0].noise_std_
    assert counts[0].noise_std_ == pytest.approx(np.sqrt(2) / 0.5)
    assert 0.85 < spread / expected < 1.15


def test_gaussian_noise_is_calibrated_to_sqrt_d():
    est = PrivateStandardScaler(
        1.0, bounds=BOUNDS, mechanism="gaussian", delta=1e-6, random_state=0
    ).fit(data(1_000, d=4))
    one = PrivateStandardScaler(
        1.0, bounds=BOUNDS, mechanism="gaussian", delta=1e-6, random_state=0
    ).fit(data(1_000, d=1))
    assert est.noise_std_ == pytest.approx(2 * one.noise_std_, rel=1e-9)


def test_constant_column_scales_by_one_or_a_tiny_deviation():
    X = np.full((1_000, 1), 40.0)
    est = PrivateStandardScaler(1.0, bounds=BOUNDS, random_state=0).fit(X)
    assert np.all(np.isfinite(est.transform(X)))
    assert est.scale_[0] > 0


@pytest.mark.parametrize(
    "kwargs, X, match",
    [
        ({}, np.array([[np.inf]]), "NaN or inf"),
        ({}, np.empty((0, 1)), "0 sample"),
        ({"bounds": (5, 1)}, np.ones((3, 1)), "lower"),
        ({"mechanism": "gaussian"}, np.ones((3, 1)), "delta > 0"),
        ({"delta": 1e-6}, np.ones((3, 1)), "pure epsilon"),
        ({"epsilon": 5.0}, np.ones((3, 1)), "exceed"),
    ],
)
def test_bad_input_charges_nothing(kwargs, X, match):
    acc = BudgetAccountant(epsilon=1.0)
    params = {"bounds": BOUNDS, **kwargs}
    with pytest.raises((ValueError, BudgetExceededError), match=match):
        PrivateStandardScaler(accountant=acc, **params).fit(X)
    assert acc.total() == (0.0, 0.0)


def test_pandas_names_and_pipeline():
    X = pd.DataFrame(data(2_000), columns=["age", "hours"])
    y = X["age"] * 2.0
    pipe = make_pipeline(
        PrivateStandardScaler(bounds=BOUNDS, random_state=0), LinearRegression()
    ).set_output(transform="pandas")
    pipe.fit(X, y)
    out = pipe[0].transform(X)
    assert list(out.columns) == ["age", "hours"]
    assert list(pipe[0].get_feature_names_out()) == ["age", "hours"]


# -- empirical audit with mutation twins -------------------------------------

EPS = 1.0
AUDIT = {"n_samples": 3_000, "n_pilot": 800, "random_state": 0}
D0 = np.zeros((4, 1))


def fit_moments(data, seed, noise_for=EPS):
    est = PrivateStandardScaler(noise_for, bounds=(0.0, 1.0), random_state=seed)
    est.fit(data)
    return (float(est.mean_[0]), float(est.var_[0]), est.n_samples_seen_)


@pytest.mark.parametrize(
    # 13-16 s each: run with pytest -m slow, not in the CI command (0.5
    # does, and the clipping at 50.0 is checked by the missing-clip twin)
    "row",
    [
        pytest.param(1.0, marks=pytest.mark.slow),
        pytest.param(50.0, marks=pytest.mark.slow),
        0.5,
    ],
)
def test_audit_standard_scaler_passes(row):
    assert_dp(fit_moments, D0, np.vstack([D0, [[row]]]), EPS, **AUDIT)


def test_audit_catches_a_missing_clip(monkeypatch):
    # the twin neither clips x nor keeps the basis in [0, 1] (the clamps of
    # the real terms would bound an unclipped row's contribution on their own)
    def unclipped(block, lower, upper, centre, radius):
        a = (block - lower) / (upper - lower)
        terms = ((1 - a) ** 2, 2 * a * (1 - a), a * a)
        return [np.rint(t * 2.0**32).astype(np.int64) for t in terms]

    monkeypatch.setattr(_moments, "_bernstein_terms", unclipped)
    far = np.vstack([D0, [[50.0]]])
    mutant = audit_mechanism(fit_moments, D0, far, **AUDIT)
    assert mutant.epsilon_lower_bound > 2 * EPS, str(mutant)


def test_audit_catches_three_separate_statistics_at_the_count_sensitivity():
    # the twin releases count, sum and sum of squares each with the noise
    # that suits the whole vector: 3 eps spent, eps claimed
    mutant = audit_mechanism(
        lambda d, s: fit_moments(d, s, noise_for=3 * EPS),
        D0,
        np.vstack([D0, [[1.0]]]),
        **AUDIT,
    )
    assert mutant.epsilon_lower_bound > EPS, str(mutant)


@pytest.mark.parametrize("mechanism, delta", [("laplace", 0.0), ("gaussian", 1e-6)])
def test_confidence_interval_covers_the_clipped_mean(mechanism, delta):
    # coverage over 300 fits at alpha = 0.2: the union bound makes it
    # conservative, so the miss rate must stay below 0.2 (it is near 0)
    X = data(5_000, d=2)
    truth = np.clip(X, *BOUNDS).mean(axis=0)
    misses, widths = 0, []
    for seed in range(300):
        est = PrivateStandardScaler(
            0.5, bounds=BOUNDS, mechanism=mechanism, delta=delta, random_state=seed
        ).fit(X)
        low, high = est.confidence_interval(alpha=0.2)
        assert np.all(low <= est.mean_ + 1e-9) and np.all(est.mean_ <= high + 1e-9)
        misses += int(np.any((truth < low) | (truth > high)))
        widths.append(np.mean(high - low))
    assert misses / 300 < 0.2
    assert np.median(widths) < 5.0  # informative: a few units out of [0, 100]


def test_confidence_interval_is_the_whole_range_when_the_count_may_be_zero():
    est = PrivateStandardScaler(0.01, bounds=BOUNDS, random_state=0).fit(data(3, 1))
    low, high = est.confidence_interval()
    assert low.tolist() == [0.0] and high.tolist() == [100.0]
