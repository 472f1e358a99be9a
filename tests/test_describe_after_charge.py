"""describe after its charge: no warning, whatever the data or public bounds.

Found by the adversarial review of the describe path: with public bounds at
the float limit the default candidate grid overflowed (a ``RuntimeWarning``
after the charge) and quartiles released near ``±1.8e308`` overflowed when
the IQR was formed (a second one, whose occurrence depends on the release).
"""

import warnings

import numpy as np
import pytest

from skdp import BudgetAccountant, PrivateQuantile
from skdp._describe import describe
from skdp.stats._quantile_release import candidate_grid

BIG = np.finfo(np.float64).max


def described(values, bounds, epsilon, seed):
    accountant = BudgetAccountant(epsilon=epsilon)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = describe(
            {"c": values},
            epsilon=epsilon,
            bounds=bounds,
            accountant=accountant,
            random_state=seed,
        )
    assert accountant.total() == (epsilon, 0.0)
    return rows["c"]


@pytest.mark.parametrize("bounds", [(-BIG, BIG), (-1e308, BIG), (-BIG, 0.0)])
def test_default_grid_at_the_float_limit_is_finite_and_does_not_warn(bounds):
    lower, upper = np.array([bounds[0]]), np.array([bounds[1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grid = candidate_grid(None, lower, upper)[:, 0]
    assert grid[0] == bounds[0] and grid[-1] == bounds[1]
    assert np.all(np.isfinite(grid)) and np.all(np.diff(grid / 2) >= 0)


@pytest.mark.parametrize("seed", range(4))
def test_describe_with_public_bounds_at_the_float_limit_does_not_warn(seed):
    values = np.array([BIG, -BIG, 0.0, 1e308, -1e308, 1.0])
    row = described(values, {"c": (-BIG, BIG)}, 50.0, seed)
    assert row["lower"] == -BIG and row["upper"] == BIG
    # the difference of two released quartiles may exceed the float range
    assert row["iqr"] >= 0


def test_private_quantile_fit_at_the_float_limit_does_not_warn():
    X = np.array([[BIG], [-BIG], [0.0], [3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PrivateQuantile(
            [0.25, 0.75],
            epsilon=1.0,
            bounds=(-BIG, BIG),
            method="permute_and_flip",
            accountant=BudgetAccountant(),
            random_state=0,
        ).fit(X)


@pytest.mark.parametrize("epsilon", [5e-324, 1e-323])
def test_a_share_of_a_subnormal_epsilon_is_refused_before_the_charge(epsilon):
    # the count's share of the mean's epsilon rounds to 0: a ValueError that
    # says so (the command line reports it), not a ZeroDivisionError
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match="Nothing was charged"):
        describe(
            {"a": np.ones(5), "b": np.ones(5)},
            epsilon=epsilon,
            bounds={"a": (0.0, 1.0), "b": (0.0, 1.0)},
            accountant=accountant,
        )
    from skdp import PrivateMean

    with pytest.raises(ValueError, match="Nothing was charged"):
        PrivateMean(epsilon=epsilon, bounds=(0, 1), accountant=accountant).fit(
            np.ones((5, 1))
        )
    assert accountant.total() == (0.0, 0.0)


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_a_warning_of_the_work_after_the_charge_is_not_shown(monkeypatch, n_jobs):
    # a stand-in for any warning the releases might raise on some data: a
    # numpy floating-point error and a warnings.warn, in the column's thread
    from skdp import _describe

    release = _describe._private_mean

    def warning_mean(values, *args):
        np.float64(BIG) * 2.0
        warnings.warn("data-dependent", RuntimeWarning, stacklevel=1)
        return release(values, *args)

    monkeypatch.setattr(_describe, "_private_mean", warning_mean)
    accountant = BudgetAccountant(epsilon=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        describe(
            {"a": np.arange(5.0), "b": np.arange(5.0)},
            bounds={"a": (0.0, 5.0), "b": (0.0, 5.0)},
            accountant=accountant,
            random_state=0,
            n_jobs=n_jobs,
        )
    assert accountant.total() == (1.0, 0.0)
