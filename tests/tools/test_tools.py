"""skdp.tools: numpy's answers at large epsilon, the estimators' releases,
the charge, and refusals before it."""

import numpy as np
import pytest

import skdp
from skdp import (
    BudgetAccountant,
    PrivateHistogram,
    PrivateJointHistogram,
    PrivateMean,
    PrivateQuantile,
    PrivateStandardScaler,
    tools,
)
from skdp.exceptions import BudgetExceededError

BIG = 1e7  # noise far below the tolerances
RNG = np.random.default_rng(0)
X = RNG.uniform(-3, 9, size=(2_000, 3))
BOUNDS = (-5.0, 10.0)


@pytest.mark.parametrize(
    "function, reference",
    [
        (tools.mean, np.mean),
        (tools.sum, np.sum),
        (tools.var, np.var),
        (tools.std, np.std),
    ],
)
@pytest.mark.parametrize("axis", [None, 0])
def test_moments_converge_to_numpy(function, reference, axis):
    data = X if axis == 0 else X[:, 0]
    got = function(data, BIG, BOUNDS, axis, random_state=0)
    np.testing.assert_allclose(got, reference(data, axis=axis), rtol=1e-4)
    assert np.shape(got) == np.shape(reference(data, axis=axis))


@pytest.mark.parametrize(
    "function, reference", [(tools.mean, np.mean), (tools.sum, np.sum)]
)
def test_whole_array_over_several_columns_is_a_statistic_of_the_rows(
    function, reference
):
    # values outside the bounds are clipped per column first (a per-row map)
    wide = X * 2
    got = function(wide, BIG, BOUNDS, random_state=0)
    assert got == pytest.approx(reference(np.clip(wide, *BOUNDS)), rel=1e-4)


def test_count_nonzero_matches_numpy_and_counts_nan_as_numpy_does():
    data = np.where(X > 2, X, 0.0)
    data[:7, 1] = np.nan
    np.testing.assert_allclose(
        tools.count_nonzero(data, BIG, axis=0, random_state=0),
        np.count_nonzero(data, axis=0),
        atol=1e-3,
    )
    assert tools.count_nonzero(data, BIG, random_state=0) == pytest.approx(
        np.count_nonzero(data), abs=1e-3
    )


def test_quantiles_converge_to_numpy():
    levels = [0.1, 0.5, 0.9]
    got = tools.quantile(X, levels, BIG, BOUNDS, axis=0, random_state=0)
    np.testing.assert_allclose(got, np.quantile(X, levels, axis=0), atol=0.05)
    assert got.shape == (3, 3)
    assert tools.median(X[:, 0], BIG, BOUNDS, random_state=0) == pytest.approx(
        np.median(X[:, 0]), abs=0.05
    )
    percentiles = tools.percentile(X, 50, BIG, BOUNDS, axis=0, random_state=0)
    np.testing.assert_allclose(percentiles, np.median(X, axis=0), atol=0.05)


def test_histograms_converge_to_numpy():
    edges = np.linspace(-5, 10, 6)
    counts, got_edges = tools.histogram(X[:, 0], BIG, 5, BOUNDS, random_state=0)
    np.testing.assert_allclose(counts, np.histogram(X[:, 0], edges)[0], atol=1e-3)
    np.testing.assert_array_equal(got_edges, edges)
    counts, _ = tools.histogram(X[:, 0], BIG, [-5, 0, 10], random_state=0)
    np.testing.assert_allclose(counts, np.histogram(X[:, 0], [-5, 0, 10])[0], atol=1e-3)
    counts, x_edges, y_edges = tools.histogram2d(
        X[:, 0], X[:, 1], BIG, [3, 4], BOUNDS, random_state=0
    )
    expected = np.histogram2d(X[:, 0], X[:, 1], [x_edges, y_edges])[0]
    np.testing.assert_allclose(counts, expected, atol=1e-3)
    counts, edges_dd = tools.histogramdd(X, BIG, 2, BOUNDS, random_state=0)
    np.testing.assert_allclose(counts, np.histogramdd(X, edges_dd)[0], atol=1e-3)


@pytest.mark.parametrize(
    "call, estimator, attribute",
    [
        (
            lambda acc: tools.mean(X, 1.0, BOUNDS, 0, accountant=acc, random_state=3),
            lambda acc: PrivateMean(1.0, bounds=BOUNDS, accountant=acc, random_state=3),
            "mean_",
        ),
        (
            lambda acc: tools.var(X, 1.0, BOUNDS, 0, accountant=acc, random_state=3),
            lambda acc: PrivateStandardScaler(
                1.0, bounds=BOUNDS, accountant=acc, random_state=3
            ),
            "var_",
        ),
        (
            lambda acc: tools.quantile(
                X, 0.3, 1.0, BOUNDS, 0, accountant=acc, random_state=3
            ),
            lambda acc: PrivateQuantile(
                0.3, bounds=BOUNDS, accountant=acc, random_state=3
            ),
            "quantiles_",
        ),
        (
            lambda acc: tools.histogram(
                X[:, 0], 1.0, 4, BOUNDS, accountant=acc, random_state=3
            )[0],
            lambda acc: PrivateHistogram(
                4, bounds=BOUNDS, accountant=acc, random_state=3
            ),
            "counts_",
        ),
        (
            lambda acc: tools.histogramdd(
                X, 1.0, 2, BOUNDS, accountant=acc, random_state=3
            )[0],
            lambda acc: PrivateJointHistogram(
                2, bounds=BOUNDS, accountant=acc, random_state=3
            ),
            "counts_",
        ),
    ],
)
def test_each_function_is_its_estimators_release_with_its_ledger(
    call, estimator, attribute
):
    by_function, by_estimator = BudgetAccountant(), BudgetAccountant()
    got = call(by_function)
    data = X[:, :1] if attribute == "counts_" and np.ndim(got) == 1 else X
    fitted = estimator(by_estimator).fit(data)
    np.testing.assert_array_equal(np.ravel(got), np.ravel(getattr(fitted, attribute)))
    assert [e.label for e in by_function.entries] == [
        e.label for e in by_estimator.entries
    ]
    assert by_function.total() == by_estimator.total() == (1.0, 0.0)


def test_sum_noise_is_the_hand_derived_one():
    # bounds (0, U): c n + r S = U u, Laplace(U/eps) on one split sum, var 2 U²/ε²;
    # symmetric bounds (-U, U): U (u - v), twice that
    data = np.full(50, 0.5)
    exact = data.sum()
    for bounds, variance in [((0.0, 1.0), 2.0), ((-1.0, 1.0), 4.0)]:
        errors = [
            tools.sum(data, 1.0, bounds, random_state=seed) - exact
            for seed in range(1_000)
        ]
        assert np.var(errors) == pytest.approx(variance, rel=0.25)
        assert abs(np.mean(errors)) < 4 * np.sqrt(variance / 1_000)


def test_gaussian_delta_is_charged():
    acc = BudgetAccountant(delta=1.0)
    tools.mean(X, 1.0, BOUNDS, 0, delta=1e-6, accountant=acc, random_state=0)
    assert acc.total() == (1.0, 1e-6)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda acc: tools.mean(X, 1.0, BOUNDS, 1, accountant=acc), "not public"),
        (lambda acc: tools.var(X, 1.0, BOUNDS, None, accountant=acc), "axis=0"),
        (lambda acc: tools.histogram(X[:, 0], accountant=acc), "bounds"),
        (lambda acc: tools.histogram(X, bounds=BOUNDS, accountant=acc), "1-D"),
        (
            lambda acc: tools.histogram2d(X[:, 0], X[:5, 1], accountant=acc),
            "same length",
        ),
        (
            lambda acc: tools.mean(np.zeros((2, 2, 2)), bounds=BOUNDS, accountant=acc),
            "dimension",
        ),
        (
            lambda acc: tools.mean(np.r_[1.0, np.nan], bounds=BOUNDS, accountant=acc),
            "NaN",
        ),
        (lambda acc: tools.sum(["a"], bounds=BOUNDS, accountant=acc), "numbers"),
    ],
)
def test_refusals_name_the_fix_and_charge_nothing(call, match):
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError, match=match):
        call(acc)
    assert acc.total() == (0.0, 0.0)


def test_a_function_over_budget_charges_nothing():
    acc = BudgetAccountant(epsilon=0.5)
    with pytest.raises(BudgetExceededError):
        tools.std(X, 1.0, BOUNDS, 0, accountant=acc)
    assert acc.total() == (0.0, 0.0)


def test_without_bounds_the_mean_uses_the_estimators_private_bounds():
    acc = BudgetAccountant()
    data = RNG.uniform(0, 50, size=20_000)
    got = tools.mean(data, 1.0, (0, None), accountant=acc, random_state=0)
    assert got == pytest.approx(25, abs=1.5)
    assert any("bound" in e.label for e in acc.entries)  # the SVT search's
    assert acc.total()[0] == pytest.approx(1.0)


def test_quantiles_without_bounds_choose_them_privately_like_the_estimator():
    # the functional median is PrivateQuantile's default release: the same
    # ledger (bounds search, then quantiles) and the same value under a seed
    column = np.random.default_rng(5).lognormal(3, 1, 2000)
    acc_f, acc_e = BudgetAccountant(), BudgetAccountant()
    got = tools.median(column, accountant=acc_f, random_state=4)
    want = skdp.PrivateQuantile(accountant=acc_e, random_state=4).fit(column[:, None])
    assert got == want.quantiles_[0, 0]
    assert [e.label for e in acc_f.entries] == [e.label for e in acc_e.entries]
    assert len(acc_f.entries) >= 2 and acc_f.total()[0] == 1.0
    assert abs(np.mean(column < got) - 0.5) < 0.05
