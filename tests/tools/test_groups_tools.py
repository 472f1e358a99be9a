"""skdp.tools with ``groups``: a whole group (person) is the privacy unit.

The pass-through functions hand ``groups`` to their estimator (whose own
tests check its sensitivities); the ``nan*`` functions bound each column's
present values per group themselves, so their bounding, sensitivity and
audit are checked here.
"""

import itertools

import numpy as np
import pytest

from skdp import BudgetAccountant, tools
from skdp.audit import assert_dp, audit_mechanism
from skdp.mechanisms import check_random_source
from skdp.stats._mean_release import (
    mean_statistic,
    plan_mean_release,
    release_count_and_sums,
)
from skdp.tools import _nan
from skdp.utils._privacy_unit import PrivacyUnit

pytestmark = pytest.mark.filterwarnings("ignore::skdp.exceptions.NoiseDominatedWarning")

RNG = np.random.default_rng(0)
X = RNG.uniform(0, 10, size=(60, 2))
X[RNG.random(X.shape) < 0.2] = np.nan
GROUPS = RNG.integers(0, 15, size=60)
FULL = np.nan_to_num(X, nan=5.0)
B = (0.0, 10.0)

# every function that takes groups, called on its kind of input
CALLS = {
    "mean": lambda X, FULL, **kw: tools.mean(FULL, 1.0, B, axis=0, **kw),
    "sum": lambda X, FULL, **kw: tools.sum(FULL, 1.0, B, axis=0, **kw),
    "count_nonzero": lambda X, FULL, **kw: tools.count_nonzero(FULL, 1.0, axis=0, **kw),
    "var": lambda X, FULL, **kw: tools.var(FULL, 1.0, B, axis=0, **kw),
    "std": lambda X, FULL, **kw: tools.std(FULL, 1.0, B, axis=0, **kw),
    "histogram": lambda X, FULL, **kw: tools.histogram(FULL[:, 0], 1.0, 3, B, **kw),
    "histogram_edges": lambda X, FULL, **kw: tools.histogram(
        FULL[:, 0], 1.0, [0, 5, 10], **kw
    ),
    "histogramdd": lambda X, FULL, **kw: tools.histogramdd(FULL, 1.0, 2, B, **kw),
    "histogram2d": lambda X, FULL, **kw: tools.histogram2d(
        FULL[:, 0], FULL[:, 1], 1.0, 2, B, **kw
    ),
    "nanmean": lambda X, FULL, **kw: tools.nanmean(X, 1.0, B, axis=0, **kw),
    "nansum": lambda X, FULL, **kw: tools.nansum(X, 1.0, B, axis=0, **kw),
    "nanvar": lambda X, FULL, **kw: tools.nanvar(X, 1.0, B, axis=0, **kw),
    "nanstd": lambda X, FULL, **kw: tools.nanstd(X, 1.0, B, axis=0, **kw),
    "nanquantile": lambda X, FULL, **kw: tools.nanquantile(
        X, 0.5, 1.0, B, axis=0, **kw
    ),
    "nanpercentile": lambda X, FULL, **kw: tools.nanpercentile(
        X, 50, 1.0, B, axis=0, **kw
    ),
    "nanmedian": lambda X, FULL, **kw: tools.nanmedian(X, 1.0, B, axis=0, **kw),
}


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize(
    "unit, match",
    [
        ({"groups": GROUPS}, "max_rows_per_group is None"),
        ({"max_rows_per_group": 3}, "got no groups"),
        ({"groups": GROUPS[:-1], "max_rows_per_group": 3}, "one label per row"),
        ({"groups": GROUPS, "max_rows_per_group": 0}, "max_rows_per_group"),
    ],
)
def test_groups_without_a_bound_and_a_bound_without_groups_are_refused(
    name, unit, match
):
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match=match):
        CALLS[name](X, FULL, accountant=accountant, random_state=0, **unit)
    assert accountant.total() == (0.0, 0.0)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_charge_records_the_group_unit(name):
    accountant = BudgetAccountant()
    CALLS[name](X, FULL, groups=GROUPS, max_rows_per_group=3, accountant=accountant)
    assert accountant.entries
    for entry in accountant.entries:
        assert (entry.unit, entry.group_rows) == ("group", 3), entry
        assert "unit: group of <= 3 rows" in entry.label


@pytest.mark.parametrize(
    "name", ["nanmean", "nanvar", "nanquantile", "mean", "histogramdd"]
)
def test_the_release_does_not_depend_on_the_row_order(name):
    order = RNG.permutation(60)
    kw = {"max_rows_per_group": 2, "random_state": 3}
    first = CALLS[name](X, FULL, groups=GROUPS, accountant=BudgetAccountant(), **kw)
    second = CALLS[name](
        X[order], FULL[order], groups=GROUPS[order], accountant=BudgetAccountant(), **kw
    )
    if name == "histogramdd":  # (counts, edges)
        first, second = first[0], second[0]
    np.testing.assert_array_equal(first, second)


def _kept(column_values, groups, k, seed=7):
    """The present values of a one-column data set that the nan* functions
    keep with groups (their own bounding step, seeded)."""
    X = np.asarray(column_values, dtype=float)[:, None]
    unit = PrivacyUnit(np.asarray(groups), k)
    return np.sort(_nan._column(X, 0, unit, check_random_source(seed))[:, 0])


def test_brute_force_a_whole_group_moves_the_kept_values_by_at_most_k():
    # all data sets of three existing rows (two groups) and an added group of
    # 1..k+1 rows over the domain {NaN, 0, 1}: the kept values of D + G are
    # those of D plus at most k values of G, so a count moves by <= k and a
    # clipped sum by <= k * max|bound| (the sensitivities the release uses).
    k, domain = 2, [np.nan, 0.0, 1.0]
    for base in itertools.product(domain, repeat=3):
        d0 = _kept(base, [0, 0, 1], k)
        for size in range(1, k + 2):
            for added in itertools.product(domain, repeat=size):
                d1 = _kept(base + added, [0, 0, 1] + [9] * size, k)
                assert d1.size - d0.size <= k
                assert d1.size >= d0.size
                extra = list(d1)
                for value in d0:  # d0's kept values are still kept
                    extra.remove(value)
                assert len(extra) <= k and not np.isnan(extra).any()
                assert abs(d1.sum() - d0.sum()) <= k * 1.0


def test_a_group_keeps_at_most_k_present_values_per_column():
    X = np.array([[np.nan, 1.0], [2.0, np.nan], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    groups = np.zeros(5, dtype=int)
    unit = PrivacyUnit(groups, 2)
    source = check_random_source(0)
    assert _nan._column(X, 0, unit, source).shape == (2, 1)
    assert _nan._column(X, 1, unit, source).shape == (2, 1)


# -- audit of nansum with groups, and its twin that skips the bounding --------
EPS, K = 1.0, 2
AUDIT = {"n_samples": 1_200, "n_pilot": 300, "random_state": 0}
D0 = (np.array([[0.0], [np.nan], [0.0], [0.0]]), np.array([0, 0, 1, 2]))
D1 = (np.vstack([D0[0], np.ones((3 * K, 1))]), np.append(D0[1], [9] * (3 * K)))
PLAN = plan_mean_release(EPS, 0.0, 1, "laplace", unit_rows=K)
ZERO, ONE = np.array([0.0]), np.array([1.0])


def _released_nansum(data, seed):
    # nansum's steps after the charge for one column (a whole call costs 10
    # ms; test_the_audited_steps_are_nansums checks these are its steps)
    X, groups = data
    source = check_random_source(seed)
    column = _nan._column(X, 0, PrivacyUnit(groups, K), source)
    statistic = mean_statistic(column, ZERO, ONE, PLAN.paired)
    count, sums = release_count_and_sums(statistic, PLAN, source)
    return float(0.5 * count + 0.5 * sums[0])


def test_the_audited_steps_are_nansums():
    got = tools.nansum(
        D1[0], EPS, (0.0, 1.0), groups=D1[1], max_rows_per_group=K,
        accountant=BudgetAccountant(), random_state=5,
    )  # fmt: skip
    assert got == _released_nansum(D1, 5)


def test_audit_of_nansum_with_groups_passes():
    assert_dp(_released_nansum, D0, D1, EPS, **AUDIT)


def test_audit_catches_a_nansum_that_skips_the_bounding(monkeypatch):
    monkeypatch.setattr(PrivacyUnit, "bound", lambda self, source, *columns: columns)
    mutant = audit_mechanism(_released_nansum, D0, D1, **AUDIT)
    assert mutant.epsilon_lower_bound > EPS


def test_nanvar_with_groups_releases_the_bounded_sums_at_k_times_the_noise():
    from skdp.preprocessing._standard import release_moment_sums
    from skdp.sensitivity import moments_from_sums

    got = tools.nanvar(
        D1[0], EPS, (0.0, 1.0), groups=D1[1], max_rows_per_group=K,
        accountant=BudgetAccountant(), random_state=5,
    )  # fmt: skip
    source = check_random_source(5)
    column = _nan._column(D1[0], 0, PrivacyUnit(D1[1], K), source)
    noisy, _ = release_moment_sums(column, ZERO, ONE, EPS, 0.0, source, unit_rows=K)
    assert got == moments_from_sums(noisy, ZERO, ONE)[2][0, 0]
