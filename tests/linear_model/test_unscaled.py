"""Issue 27: the linear models need no hand scaling (private or stated scales)."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression

from skdp import BudgetAccountant
from skdp.exceptions import NoiseDominatedWarning
from skdp.linear_model import (
    PrivateLinearRegression,
    PrivateLogisticRegression,
    _scaling,
)
from skdp.linear_model._release import sum_noise_dominated
from skdp.model_selection import fit_cost


def _accountant():
    return BudgetAccountant(1e12, 0.5)


def _mean_score(X, y, epsilon, seeds=5, **params):
    scores = [
        PrivateLogisticRegression(
            epsilon=epsilon,
            classes=[0, 1],
            random_state=k,
            accountant=_accountant(),
            **params,
        )
        .fit(X, y)
        .score(X, y)
        for k in range(seeds)
    ]
    return float(np.mean(scores))


@pytest.fixture(scope="module")
def cancer():
    return load_breast_cancer(return_X_y=True)


def test_unscaled_features_converge_to_sklearn(cancer):
    # before: 0.373 at eps = 1e6 (rows of norm ~2500 clipped to 1)
    X, y = cancer
    reference = LogisticRegression(max_iter=10_000).fit(X, y).score(X, y)
    assert _mean_score(X, y, 1e6, seeds=3) >= reference - 0.005


def test_unscaled_features_as_good_as_prescaled_at_epsilon_one(cancer):
    # before: 0.373 unscaled against 0.932 on [0, 1]-scaled features
    X, y = cancer
    low, high = X.min(axis=0), X.max(axis=0)
    prescaled = _mean_score((X - low) / (high - low), y, 1.0, feature_bounds="scaled")
    assert _mean_score(X, y, 1.0) >= prescaled - 0.01


def test_stating_the_true_row_bound_is_not_punished(cancer):
    # before: max_norm = sqrt(d) on [0, 1] features 0.710 against 0.932
    X, y = cancer
    Z = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    default = _mean_score(Z, y, 1.0, feature_bounds="scaled")
    true_bound = _mean_score(
        Z, y, 1.0, feature_bounds="scaled", max_norm=np.sqrt(X.shape[1])
    )
    assert true_bound >= default - 0.01


def test_coefficients_are_in_the_users_units(cancer):
    # stated bounds: the same noise as the model fitted on the mapped features
    X, y = cancer
    low, high = X.min(axis=0), X.max(axis=0)
    centre, half = (low + high) / 2, (high - low) / 2
    params = dict(epsilon=3.0, classes=[0, 1], random_state=0)
    raw = PrivateLogisticRegression(
        feature_bounds=(low, high), accountant=_accountant(), **params
    ).fit(X, y)
    mapped = PrivateLogisticRegression(
        feature_bounds="scaled", accountant=_accountant(), **params
    ).fit((X - centre) / half, y)
    np.testing.assert_allclose(raw.coef_, mapped.coef_ / half, rtol=1e-9)
    np.testing.assert_allclose(
        raw.decision_function(X),
        mapped.decision_function((X - centre) / half),
        rtol=1e-7,
        atol=1e-7,
    )


def test_atoms_get_the_scale_of_their_nonzero_mass():
    # a one-hot column with 5 % ones and a column of 90 % zeros: never scale 0
    rng = np.random.default_rng(0)
    n = 30_000
    one_hot = (rng.random(n) < 0.05).astype(float)
    zero_inflated = np.where(rng.random(n) < 0.9, 0.0, rng.lognormal(7, 1, n))
    X = np.column_stack([one_hot, zero_inflated, rng.normal(500, 50, n)])
    y = (rng.random(n) < 0.5).astype(int)
    clf = PrivateLogisticRegression(
        classes=[0, 1], random_state=0, accountant=_accountant()
    ).fit(X, y)
    assert clf.feature_scale_[0] == 2.0  # values 1 are in [2**0, 2**1)
    assert 2.0**9 <= clf.feature_scale_[1] <= 2.0**14  # lognormal(7, 1)
    assert 2.0**8 <= clf.feature_scale_[2] <= 2.0**10
    assert clf.feature_location_[0] == 0.0 and clf.feature_location_[1] == 0.0


def test_private_scales_are_part_of_the_exact_cost(cancer):
    X, y = cancer
    for classes in ([0, 1], None):
        accountant = _accountant()
        clf = PrivateLogisticRegression(
            classes=classes, accountant=accountant, random_state=0
        )
        expected = fit_cost(clf, X.shape[1])
        clf.fit(X, y)
        assert accountant.total() == (expected.epsilon, expected.delta)


def test_dask_input_releases_the_same_private_scales_as_in_memory():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2_000, 3)) * [1.0, 1e3, 1e-3]
    y = (X @ [1.0, 1e-3, 1e3] > 0).astype(int)
    params = dict(classes=[0, 1], random_state=0)
    lazy = PrivateLogisticRegression(accountant=_accountant(), **params).fit(
        da.from_array(X, chunks=700), da.from_array(y, chunks=700)
    )
    eager = PrivateLogisticRegression(accountant=_accountant(), **params).fit(X, y)
    assert np.array_equal(lazy.feature_scale_, eager.feature_scale_)
    assert np.array_equal(lazy.feature_location_, eager.feature_location_)
    np.testing.assert_allclose(lazy.coef_, eager.coef_, rtol=1e-9)


def test_invalid_feature_bounds_string_is_refused_before_the_charge(cancer):
    X, y = cancer
    accountant = _accountant()
    with pytest.raises(ValueError, match="feature_bounds"):
        PrivateLogisticRegression(
            classes=[0, 1], feature_bounds="unit", accountant=accountant
        ).fit(X, y)
    assert accountant.total() == (0.0, 0.0)


def test_collapsed_scales_warn_from_the_released_histogram_only(monkeypatch):
    # two different data sets whose released histogram is the same give the
    # same scales and the same warning: the data enter only through it
    rng = np.random.default_rng(0)
    y = np.tile([0, 1], 50)
    released = []

    def fixed_histogram(X):
        counts = np.zeros((X.shape[1], _scaling.N_BINS), dtype=np.int64)
        counts[:, _scaling._ZERO_BIN] = X.shape[0]  # all zeros: nothing else
        released.append(counts)
        return counts

    monkeypatch.setattr(_scaling, "exponent_histogram", fixed_histogram)
    fits = []
    for X in (rng.normal(size=(100, 2)), 1e6 * rng.lognormal(size=(100, 2))):
        with pytest.warns(NoiseDominatedWarning, match="could not be told"):
            fits.append(
                PrivateLogisticRegression(
                    classes=[0, 1], random_state=0, accountant=_accountant()
                ).fit(X, y)
            )
    assert np.array_equal(fits[0].feature_scale_, fits[1].feature_scale_)
    assert np.all(fits[0].feature_scale_ == _scaling.DROPPED_SCALE)


def test_scales_from_histogram_rules():
    noisy = np.zeros((3, _scaling.N_BINS))
    zero = _scaling._ZERO_BIN
    noisy[0, zero] = 950.0  # 95 % zeros
    noisy[0, zero + 1 + 0 + _scaling.EXPONENT_LIMIT] = 50.0  # ones
    noisy[1, zero + 1 + 3 + _scaling.EXPONENT_LIMIT] = 600.0  # +[8, 16)
    noisy[1, zero - 1 - 3 - _scaling.EXPONENT_LIMIT] = 400.0  # -[8, 16)
    noisy[2, zero + 1 + 5 + _scaling.EXPONENT_LIMIT] = 3.0  # below the noise
    location, scale, dropped = _scaling.scales_from_histogram(noisy, 1.0)
    assert scale[0] == 2.0 and location[0] == 0.0
    assert scale[1] == 16.0 and location[1] == 12.0  # median in +[8, 16)
    assert dropped.tolist() == [False, False, True]


def test_exponent_bins_are_exact_at_the_extremes():
    values = np.array([0.0, -0.0, 1.0, 1.5, 2.0, -2.0, 5e-324, 1.7e308, -1.7e308])
    bins = _scaling.exponent_bins(values)
    zero, limit = _scaling._ZERO_BIN, _scaling.EXPONENT_LIMIT
    assert bins[:2].tolist() == [zero, zero]
    assert bins[2] == bins[3] == zero + 1 + limit
    assert bins[4] == zero + 2 + limit and bins[5] == zero - 2 - limit
    assert bins[6] == zero + 1  # clamped to the smallest exponent
    assert bins[7] == 2 * zero and bins[8] == 0  # clamped to the largest


def test_noise_dominated_gradient_is_decided_from_released_values():
    assert sum_noise_dominated(np.full(4, 1.0), 1.0)  # |S~|^2 = 4 < 2 * 4
    assert not sum_noise_dominated(np.full(4, 3.0), 1.0)


def test_noise_dominated_fit_warns_and_a_good_one_does_not(cancer):
    X, y = cancer
    with pytest.warns(NoiseDominatedWarning, match="noise of the released"):
        PrivateLogisticRegression(
            epsilon=0.01, classes=[0, 1], random_state=0, accountant=_accountant()
        ).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PrivateLogisticRegression(
            epsilon=10.0, classes=[0, 1], random_state=0, accountant=_accountant()
        ).fit(X, y)


# PrivateLinearRegression


def _regression(X, y, epsilon=1e6, seed=0, **params):
    from skdp.linear_model import PrivateLinearRegression

    return PrivateLinearRegression(
        epsilon=epsilon, random_state=seed, accountant=_accountant(), **params
    ).fit(X, y)


def test_regression_without_data_norm_converges_to_least_squares():
    # before: ValueError (data_norm required); with data_norm=1 on these
    # unscaled rows R2 was about 0
    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import LinearRegression

    X, y = load_diabetes(return_X_y=True, scaled=False)
    reference = LinearRegression().fit(X, y).score(X, y)
    private = _regression(X, y, target_bounds=(0, 400)).score(X, y)
    stated = _regression(
        X, y, target_bounds=(0, 400), feature_bounds=(X.min(0), X.max(0))
    ).score(X, y)
    assert private >= reference - 0.01
    assert stated >= reference - 0.01


def test_regression_norm_rule_keeps_a_small_spread_column_above_the_noise():
    # the consistency tests' synthetic table: a lognormal column reaches
    # |z| = 38 while the 1e-3 column has E z² = 0.016. The rule B = τ Ñ /
    # (r sqrt(D)) chose B = 66 at eps = 1e6 (R² 0.753) and B = 18 at eps =
    # 100 (R² 0.39): that column's Gram eigenvalue fell below the noise
    # floor. B² = τ Ñ / (r sqrt(D)) keeps the Gram's relative noise at τ.
    from _consistency_data import reference_r2, synthetic_regression

    X, y = synthetic_regression()
    reference = reference_r2(X, y)  # exact least squares, 0.903
    for seed in range(2):
        at_100 = _regression(X, y, epsilon=100.0, seed=seed).score(X, y)
        at_1e6 = _regression(X, y, epsilon=1e6, seed=seed).score(X, y)
        assert at_100 >= reference - 0.08, at_100
        assert at_1e6 >= reference - 0.01, at_1e6


def test_regression_coefficients_are_in_the_users_units():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(20_000, 3)) * [1.0, 1e3, 1e6] + [0.0, 5e3, 0.0]
    y = X @ [2.0, -1e-3, 3e-6] + 1.0 + rng.normal(scale=0.1, size=20_000)
    reg = _regression(X, y, target_bounds=(-10, 10))
    np.testing.assert_allclose(reg.coef_, [2.0, -1e-3, 3e-6], rtol=0.05)
    assert abs(reg.intercept_ - 1.0) < 0.5


def test_regression_stated_data_norm_keeps_the_rows_as_given():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(5_000, 2))
    y = X @ [1.5, -2.0] + 0.5
    reg = _regression(X, y, target_bounds=(-4, 5), data_norm=1.5)
    assert np.all(reg.feature_scale_ == 1.0) and np.all(reg.feature_location_ == 0)


def test_regression_private_scales_cost_exactly_and_work_on_dask():
    from skdp.linear_model import PrivateLinearRegression

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(500, 3)) * [1.0, 1e3, 1.0], rng.normal(size=500)
    accountant = _accountant()
    reg = PrivateLinearRegression(
        target_bounds=(-3, 3), accountant=accountant, random_state=0
    )
    expected = fit_cost(reg, 3)
    reg.fit(X, y)
    assert accountant.total() == (expected.epsilon, expected.delta)
    da = pytest.importorskip("dask.array")
    lazy = PrivateLinearRegression(
        target_bounds=(-3, 3), accountant=_accountant(), random_state=0
    ).fit(da.from_array(X, chunks=200), da.from_array(y, chunks=200))
    assert np.array_equal(lazy.feature_scale_, reg.feature_scale_)
    np.testing.assert_allclose(lazy.coef_, reg.coef_, rtol=1e-9)


@pytest.mark.parametrize(
    "bounds",
    [
        (0.0, 1e-322),
        (-8e307, 8e307),
        (np.array([0.0, -1.0]), np.array([1e-300, 1.0])),
    ],
)
def test_extreme_stated_bounds_and_rows_give_finite_models(bounds):
    from skdp.linear_model import PrivateLinearRegression

    X = np.array([[1e300, -1e300], [5e-324, 0.0], [0.0, 0.0], [1.0, -1.0]] * 5)
    y = np.tile([0, 1], 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        clf = PrivateLogisticRegression(
            classes=[0, 1], feature_bounds=bounds, random_state=0
        ).fit(X, y)
        reg = PrivateLinearRegression(
            target_bounds=(0, 1), feature_bounds=bounds, random_state=0
        ).fit(X, y)
    for model in (clf, reg):
        assert np.all(np.isfinite(model.coef_))
        assert np.all(np.isfinite(model.intercept_))


def test_exponent_histogram_sensitivity_is_sqrt_d_by_brute_force():
    # removing any one row changes d counts by exactly 1: L2 norm sqrt(d)
    rng = np.random.default_rng(1)
    X = np.column_stack(
        [
            rng.normal(size=12) * 1e3,
            (rng.random(12) < 0.3).astype(float),
            np.array([0.0, -0.0, 5e-324, -5e-324, 1e308, -1e308] * 2),
        ]
    )
    full = _scaling.exponent_histogram(X)
    assert np.all(full.sum(axis=1) == X.shape[0])
    for i in range(X.shape[0]):
        change = full - _scaling.exponent_histogram(np.delete(X, i, axis=0))
        assert np.sum(change**2) == X.shape[1] and change.min() == 0
    from scipy import sparse

    assert np.array_equal(_scaling.exponent_histogram(sparse.csr_matrix(X)), full)


def test_clip_norm_rule():
    from skdp.linear_model._logistic import clip_norm

    assert clip_norm(None, 100.0, 50.0, 10) == 1.0  # noisy: at least 1
    assert clip_norm(None, 1e9, 0.01, 10) == 2.0  # ample: at most 2
    assert clip_norm(np.sqrt(30), 1e9, 0.01, 31) == 2.0  # true bound: rule
    assert clip_norm(0.5, 1e9, 0.01, 31) == 0.5  # a smaller norm is kept


def test_released_reach_is_the_hull_of_the_bins_above_the_noise():
    noisy = np.zeros((2, _scaling.N_BINS))
    zero, limit = _scaling._ZERO_BIN, _scaling.EXPONENT_LIMIT
    noisy[0, zero + 1 + 6 + limit] = 100.0  # [64, 128)
    noisy[0, zero + 1 + 8 + limit] = 100.0  # [256, 512)
    location, scale = np.array([192.0, 0.0]), np.array([256.0, 1.0])
    reach, count = _scaling.released_reach(noisy, 1.0, location, scale)
    # hull [64, 512] about 192: (512 - 192) / 256; no bin kept: 1
    assert reach.tolist() == [1.25, 1.0] and count == 100.0


def test_an_extreme_target_gives_a_finite_intercept_without_warning():
    # the intercept was centre + theta * half * norm / scale: with a target
    # range near the float limit (one row (max, -max) added to 1000 ordinary
    # rows) theta * half overflowed, a RuntimeWarning after the charge on one
    # neighbour only and intercept_ = inf, where the value is -2.5e305
    big = np.finfo(float).max
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 1, (1000, 1)), [[big]]]
    y = np.r_[X[:-1, 0] + rng.normal(0, 0.1, 1000), -big]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        est = PrivateLinearRegression(
            epsilon=1e6,
            delta=1e-6,
            accountant=BudgetAccountant(np.inf, 1.0),
            random_state=0,
        ).fit(X, y)
    assert np.isfinite(est.intercept_) and np.all(np.isfinite(est.coef_))


def test_coefficients_beyond_the_float_range_do_not_warn_after_the_charge():
    # three rows, one at the float limit, at eps = 1e100: the released
    # coefficients in the user's units exceed the largest double; mapping
    # them back (post-processing) warned of an overflow after the charge
    big = np.finfo(float).max
    X = np.array([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5], [big, big, big]])
    y = np.array([1.0, -2.0, -big])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        PrivateLinearRegression(
            epsilon=1e100,
            delta=1e-6,
            accountant=BudgetAccountant(np.inf, 1.0),
            random_state=0,
        ).fit(X, y)
