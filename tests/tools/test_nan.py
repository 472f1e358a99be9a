"""skdp.tools' nan* functions: NaN is missing, its count stays private."""

import math

import numpy as np
import pytest

from skdp import BudgetAccountant, PrivateMean, tools
from skdp.audit import audit_mechanism
from skdp.exceptions import BudgetExceededError
from skdp.tools import _nan
from skdp.tools._arrays import equal_shares

BIG = 1e7
RNG = np.random.default_rng(0)
X = RNG.uniform(-3, 9, size=(3_000, 3))
X[RNG.random(X.shape) < 0.3] = np.nan
BOUNDS = (-5.0, 10.0)


@pytest.mark.parametrize(
    "function, reference",
    [
        (tools.nanmean, np.nanmean),
        (tools.nansum, np.nansum),
        (tools.nanvar, np.nanvar),
        (tools.nanstd, np.nanstd),
    ],
)
@pytest.mark.parametrize("axis", [None, 0])
def test_nan_functions_converge_to_numpy(function, reference, axis):
    data = X if axis == 0 else X[:, 1]
    got = function(data, BIG, BOUNDS, axis, random_state=0)
    np.testing.assert_allclose(got, reference(data, axis=axis), rtol=1e-4)
    assert np.shape(got) == np.shape(reference(data, axis=axis))


def test_one_column_nanmean_is_private_mean_of_the_present_values():
    # the count of present values is released with noise, as PrivateMean
    # releases a row count: same seed, same release, same ledger cost
    column = X[:, 0]
    acc = BudgetAccountant()
    got = tools.nanmean(column, 0.7, BOUNDS, accountant=acc, random_state=5)
    present = column[~np.isnan(column)][:, None]
    expected = PrivateMean(0.7, bounds=BOUNDS, random_state=5).fit(present).mean_
    assert got == expected[0]
    assert acc.total() == (0.7, 0.0)


def test_an_all_missing_column_is_released_like_any_other():
    data = X.copy()
    data[:, 2] = np.nan
    acc = BudgetAccountant()
    for function in (tools.nanmean, tools.nanvar, tools.nansum):
        got = function(data, 1.0, BOUNDS, 0, accountant=acc, random_state=0)
        assert np.all(np.isfinite(got))
    mean = tools.nanmean(data, 1.0, BOUNDS, 0, random_state=0)
    assert BOUNDS[0] <= mean[2] <= BOUNDS[1]  # the public rule of PrivateMean
    assert acc.total() == (3.0, 0.0)
    assert len(acc.entries) == 3 * 3  # one entry per column and function


def test_columns_share_the_budget_and_the_charge_is_atomic():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    tools.nanvar(X, 1.0, BOUNDS, 0, delta=1e-6, accountant=acc, random_state=0)
    assert acc.total()[0] <= 1.0 and acc.total()[0] == pytest.approx(1.0)
    assert acc.total()[1] <= 1e-6
    small = BudgetAccountant(epsilon=0.5)
    with pytest.raises(BudgetExceededError):
        tools.nanmean(X, 1.0, BOUNDS, 0, accountant=small)
    assert small.total() == (0.0, 0.0)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda acc: tools.nanmean(X[:, 0], accountant=acc), "bounds"),
        (lambda acc: tools.nanstd(X, 1.0, BOUNDS, None, accountant=acc), "axis=0"),
        (lambda acc: tools.nansum(X, 1.0, BOUNDS, 1, accountant=acc), "not public"),
        (
            lambda acc: tools.nanvar(np.r_[1.0, np.inf], 1.0, BOUNDS, accountant=acc),
            "inf",
        ),
        (lambda acc: tools.nanmean(X, 0.0, BOUNDS, 0, accountant=acc), "epsilon"),
        (
            lambda acc: tools.nanmean(X, 1.0, BOUNDS, 0, delta=1.0, accountant=acc),
            "delta",
        ),
    ],
)
def test_refusals_charge_nothing(call, match):
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError, match=match):
        call(acc)
    assert acc.total() == (0.0, 0.0)


# -- audit ---------------------------------------------------------------------

AUDIT = {"n_samples": 1_000, "n_pilot": 300, "random_state": 0}
D0 = np.array([[np.nan] * 4, [0.0, np.nan, 0.0, np.nan]])
D1 = np.vstack([D0, np.ones((1, 4))])  # one more present value in every column


def released_total(data, seed):
    """Sum of the four columns' nansums (bounds (0, 1): each is U u + L v)."""
    return float(tools.nansum(data, 1.0, (0, 1), 0, random_state=seed).sum())


def test_audit_passes_and_a_twin_without_the_split_over_columns_is_caught(
    monkeypatch,
):
    honest = audit_mechanism(released_total, D0, D1, **AUDIT)
    assert honest.epsilon_lower_bound <= 1.0, str(honest)
    # the twin gives every column the whole budget: a row adds a value to
    # four columns, so it spends 4 epsilon while claiming 1
    monkeypatch.setattr(_nan, "equal_shares", lambda total, n: total)
    mutant = audit_mechanism(released_total, D0, D1, **AUDIT)
    assert mutant.epsilon_lower_bound > 1.0, str(mutant)


@pytest.mark.parametrize("total", [0.3, 1.0, 1e-6, 5e-324, 1.7e308, 0.1 + 0.2])
@pytest.mark.parametrize("n", [1, 3, 7, 10, 1000])
def test_equal_shares_never_sum_above_the_budget(total, n):
    share = equal_shares(total, n)
    assert math.fsum([share] * n) <= total
    assert share >= total / n * (1 - 1e-12) or total / n < 1e-300


@pytest.mark.parametrize("total", [1.0, 0.1, 0.3, 0.7, 2.0, 1e-3])
@pytest.mark.parametrize("n", [5, 10, 11, 13, 15, 22, 33, 97])
def test_equal_shares_fit_a_budget_of_exactly_the_total(total, n):
    # the accountant adds the shares' shortest decimals exactly and the
    # noise is calibrated to their binary values: both sums must stay within
    # the total (fsum alone let e.g. 11 shares of 1.0 exceed it, and
    # nanmean(..., epsilon=1.0) over 11 columns was refused by an
    # accountant holding exactly epsilon=1.0)
    from fractions import Fraction

    share = equal_shares(total, n)
    assert Fraction(share) * n <= Fraction(total)
    acc = BudgetAccountant(epsilon=total)
    acc.spend_many([(f"share {i}", share, 0.0) for i in range(n)])
    assert acc.total()[0] <= total


def test_nanmean_over_eleven_columns_spends_a_budget_of_exactly_its_epsilon():
    data = np.random.default_rng(1).uniform(0, 1, size=(200, 11))
    acc = BudgetAccountant(epsilon=1.0)
    means = tools.nanmean(data, bounds=(0, 1), axis=0, accountant=acc, random_state=0)
    assert means.shape == (11,)
    assert 0.999 < acc.total()[0] <= 1.0
