"""The statistics of ``skdp.stats`` with ``fit(..., groups=...)``.

PrivateQuantile (all methods, private default bounds), PTRMedian,
SmoothSensitivityMedian, IQRScale (both methods), SVTClipSelector and
PrivateJointHistogram: refusals before the charge, the same release for any
row order, the stated budget charged in the unit, the noise (or the rank
error) ``k`` times the row's (hand-derived values), the sensitivities of
their statistics brute-forced with several rows per group, and an audit of
the quantile selection with its twins (bounding skipped, row budget not
divided by ``k``).
"""

import itertools
import math
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from test_groups_estimators import _people

import skdp
from skdp import BudgetAccountant
from skdp.audit import assert_dp, audit_mechanism
from skdp.mechanisms import check_random_source
from skdp.sensitivity._joint_quantile import (
    grid_rank_counts,
    joint_quantile_utility,
    rank_states,
)
from skdp.sensitivity._quantile import candidate_rank_scores
from skdp.sensitivity._soft_counts import soft_counts_from_tally
from skdp.stats._joint_histogram import exact_joint_counts
from skdp.stats._quantile_release import exponential_release, sorted_clipped_column
from skdp.stats._svt_search import _sign_counts, plan_svt_bounds, svt_bounds_statistic
from skdp.utils._groups import kept_rows
from skdp.utils._privacy_unit import PrivacyUnit

K = 3


def _estimators():
    return [
        skdp.PrivateQuantile((0.25, 0.5), bounds=(0, 10), max_rows_per_group=K),
        skdp.PrivateQuantile(method="exponential", max_rows_per_group=K),
        skdp.PTRMedian(bounds=(0, 10), proposed_sensitivity=0.5, max_rows_per_group=K),
        skdp.SmoothSensitivityMedian(bounds=(0, 10), max_rows_per_group=K),
        skdp.IQRScale(max_rows_per_group=K),
        skdp.IQRScale(method="dwork_lei", bounds=(0, 10), max_rows_per_group=K),
        skdp.SVTClipSelector(max_rows_per_group=K),
        skdp.PrivateJointHistogram(3, bounds=(0, 10), max_rows_per_group=K),
    ]


IDS = [
    "quantile_joint",
    "quantile_private_bounds",
    "ptr",
    "smooth",
    "iqr_joint",
    "iqr_dwork_lei",
    "svt",
    "joint_histogram",
]
RELEASED = ("quantiles_", "median_", "scale_", "lower_", "upper_", "counts_")


def _fit(estimator, X, groups, accountant=None, seed=0):
    model = clone(estimator).set_params(
        accountant=accountant or BudgetAccountant(delta=1.0), random_state=seed
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PTR's refusals, noise-dominated bounds
        return model.fit(X, groups=groups)


@pytest.mark.parametrize("estimator", _estimators(), ids=IDS)
def test_groups_without_a_bound_and_a_bound_without_groups_are_refused(estimator):
    X, _, groups = _people(60)
    accountant = BudgetAccountant(delta=1.0)
    no_bound = clone(estimator).set_params(max_rows_per_group=None)
    with pytest.raises(ValueError, match=r"max_rows_per_group=5\)"):
        _fit(no_bound, X, groups, accountant)
    with pytest.raises(ValueError, match="fit got no groups"):
        _fit(estimator, X, None, accountant)
    with pytest.raises(ValueError, match="one label per row"):
        _fit(estimator, X, groups[:-1], accountant)
    assert len(accountant.entries) == 0


@pytest.mark.parametrize("estimator", _estimators(), ids=IDS)
def test_same_release_for_any_row_order_and_the_stated_budget_in_the_unit(estimator):
    X, _, groups = _people(150)
    order = np.random.default_rng(1).permutation(groups.size)
    accountant = BudgetAccountant(delta=1.0, unit="group")  # counted as stated
    a = _fit(estimator, X, groups, accountant)
    b = _fit(estimator, X[order], groups[order])
    for name in RELEASED:
        if hasattr(a, name):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert all(
        e.label.endswith(f"(unit: group of <= {K} rows)") for e in accountant.entries
    )
    stated = estimator.epsilon, getattr(estimator, "delta", 0.0)
    if isinstance(estimator, skdp.IQRScale) and estimator.method == "joint":
        stated = estimator.epsilon, 0.0  # the joint quartiles spend no delta
    assert accountant.total() == pytest.approx(stated, rel=1e-12)


def test_the_quantiles_rank_error_bound_is_k_times_the_rows():
    # exponential mechanism at eps/k: 2 max(q, 1-q) (ln C + ln(m d/alpha)) k / eps
    X, _, groups = _people(60)
    for method in ("exponential", "permute_and_flip", "joint"):
        est = skdp.PrivateQuantile((0.25, 0.5), bounds=(0, 10), method=method)
        row = _fit(est, X, None).rank_error_bound()
        group = _fit(est.set_params(max_rows_per_group=K), X, groups)
        np.testing.assert_allclose(group.rank_error_bound(), K * row, rtol=1e-12)
    # hand-derived for permute-and-flip: 1000 candidates, 2 levels, 1 feature
    expected = 2 * 0.75 * (math.log(1000) + math.log(2 / 0.05)) * K / 0.5
    assert group.rank_error_bound()[0, 0] != pytest.approx(expected)  # joint
    est = skdp.PrivateQuantile(
        (0.25, 0.5), bounds=(0, 10), method="permute_and_flip", max_rows_per_group=K
    )
    bound = _fit(est, X[:, :1], groups).rank_error_bound()
    assert bound[0, 0] == pytest.approx(expected, rel=1e-12)


def test_the_svt_thresholds_and_the_histograms_noise_grow_k_times():
    X, _, groups = _people(60)
    # public lower: one run per feature at eps/(k d); n_above = 3/(0.8 eps_run)
    svt = _fit(skdp.SVTClipSelector(lower=0.0, max_rows_per_group=K), X, groups)
    assert svt.n_above_ == pytest.approx(3 / (0.8 * 1.0 / (K * 2)), rel=1e-12)
    hist = _fit(skdp.PrivateJointHistogram(3, bounds=(0, 10)), X, None)
    grouped = _fit(hist.set_params(max_rows_per_group=K), X, groups)
    assert grouped.noise_std_ == pytest.approx(math.sqrt(2) * K, rel=1e-12)
    high = grouped.confidence_interval()[1]
    row_high = hist.confidence_interval()[1]
    assert np.all(
        high - grouped.counts_ == pytest.approx(K * (row_high - hist.counts_))
    )


@pytest.mark.parametrize("estimator", _estimators(), ids=IDS)
@pytest.mark.parametrize("k", [1, 2**53])
def test_a_bound_at_either_end_fits_or_is_refused_before_the_charge(estimator, k):
    # at k = 2**53 the row budget eps/k is too small for some noises: refused
    # before the charge (PTR's and Dwork-Lei's Laplace noise raised after it)
    X, _, groups = _people(60)
    accountant = BudgetAccountant(delta=1.0)
    try:
        _fit(clone(estimator).set_params(max_rows_per_group=k), X, groups, accountant)
    except ValueError as exc:
        assert "Nothing was charged" in str(exc) or "epsilon" in str(exc)
        assert len(accountant.entries) == 0
    else:
        assert len(accountant.entries) >= 1


def test_the_generic_route_runs_ptr_and_smooth_at_the_row_budget():
    # (eps_r, delta_r) with k eps_r <= eps and delta_r sum_{i<k} e^{i eps_r} <= delta
    unit = PrivacyUnit(np.zeros(2), K)
    eps_r, delta_r = unit.row_budget(None, 1.0, 1e-6)
    assert eps_r == pytest.approx(1 / K, rel=1e-15) and K * eps_r <= 1.0
    assert delta_r * sum(math.exp(i * eps_r) for i in range(K)) <= 1e-6
    assert delta_r == pytest.approx(1e-6 / (1 + math.exp(1 / 3) + math.exp(2 / 3)))
    for eps, delta in [(5e-324, 0.0), (1.0, 5e-324)]:  # eps_r or delta_r is 0
        with pytest.raises(ValueError, match="max_rows_per_group=3 leaves no"):
            PrivacyUnit(np.zeros(2), K).row_budget(skdp.PTRMedian(), eps, delta)
    accountant = BudgetAccountant(delta=1.0)
    X, _, groups = _people(60)
    smooth = skdp.SmoothSensitivityMedian(bounds=(0, 10), max_rows_per_group=2**40)
    with pytest.raises(ValueError, match="epsilon"):
        _fit(smooth, X, groups, accountant)
    assert len(accountant.entries) == 0


def test_one_row_per_duplicated_person_converges_to_the_quantiles_of_people():
    # each person's rows are copies: k = 1 keeps one, and as epsilon grows
    # the release's rank among the people is q n within one person (numpy's
    # quantile of the de-duplicated table); the rows' quantiles are not
    rng = np.random.default_rng(3)
    people = rng.normal(40, 10, size=(500, 1))
    copies = np.where(people[:, 0] > 40, 6, 1)  # more rows for the larger
    groups = np.repeat(np.arange(500), copies)
    levels = np.array([0.1, 0.5, 0.9])
    est = skdp.PrivateQuantile(levels, epsilon=1e6, bounds=(0, 100))

    def ranks_among_people(model):  # continuous data: between two people
        return (people < model.quantiles_[:, 0]).sum(axis=0)

    fitted = _fit(est.set_params(max_rows_per_group=1), people[groups], groups)
    assert np.abs(ranks_among_people(fitted) - levels * 500).max() <= 1
    rows = _fit(est.set_params(max_rows_per_group=None), people[groups], None)
    assert np.abs(ranks_among_people(rows) - levels * 500).max() > 50


def test_the_quantile_functions_pass_groups_through():
    X, _, groups = _people(60)
    x = X[:, 0]
    est = skdp.PrivateQuantile(0.5, bounds=(0, 10), max_rows_per_group=K)
    expected = _fit(est, x[:, None], groups).quantiles_[0, 0]
    common = {"bounds": (0, 10), "random_state": 0, "max_rows_per_group": K}
    accountant = BudgetAccountant()
    got = [
        skdp.tools.median(x, groups=groups, accountant=accountant, **common),
        skdp.tools.quantile(x, 0.5, groups=groups, **common),
        skdp.tools.percentile(x, 50, groups=groups, **common),
    ]
    assert got == [expected] * 3
    assert accountant.entries[0].label.endswith(f"(unit: group of <= {K} rows)")
    with pytest.raises(ValueError, match="fit got no groups"):
        skdp.tools.median(x, accountant=accountant, **common)
    assert len(accountant.entries) == 1


# --- sensitivities for one whole group, by brute force -------------------
# Base: groups of several rows, one beyond the bound; every group of 1 to
# K + 1 rows over values below, at, inside and beyond the bounds [0, 1] is
# added. Each side keeps at most K rows per group (kept_rows) first.

BASE = np.array([0.5, 0.25, 1.0, 0.0, 0.75, 0.5, -1.0])
BASE_GROUPS = np.array([1, 1, 1, 1, 2, 3, 3])  # group 1 has 4 > K rows
VALUES = [-1.0, 0.0, 0.25, 0.5, 1.0, 2.0]


def _bounded(values, groups, seed, bound):
    if not bound:
        return values
    return values[kept_rows(groups, K, seed, [values])]


def _worst_change(statistic, bound=True, seeds=range(2), largest=K + 1):
    """Largest change of ``statistic(values)`` (a vector), as (max |.|, L1, L2),
    over every added group of at most ``largest`` rows."""
    worst = np.zeros(3)
    for seed in seeds:
        base = statistic(_bounded(BASE, BASE_GROUPS, seed, bound))
        for size in range(1, largest + 1):
            for added in itertools.combinations_with_replacement(VALUES, size):
                values = np.append(BASE, added)
                groups = np.append(BASE_GROUPS, np.full(size, 99))
                diff = statistic(_bounded(values, groups, seed, bound)) - base
                norms = np.abs(diff).max(), np.abs(diff).sum(), np.sqrt(diff @ diff)
                worst = np.maximum(worst, norms)
    return worst


@pytest.mark.parametrize("q", [0.1, 0.5, 0.75])
def test_rank_scores_move_by_k_max_q_one_minus_q(q):
    candidates = np.array([-0.5, 0.0, 0.1, 0.25, 0.5, 0.9, 1.0, 1.5])

    def scores(values):
        return candidate_rank_scores(np.sort(np.clip(values, 0, 1)), candidates, q)

    bound = K * max(q, 1 - q)
    assert _worst_change(scores)[0] == pytest.approx(bound)  # attained
    assert _worst_change(scores, bound=False)[0] > bound  # no bounding: caught


def test_joint_gap_utility_moves_by_2k():
    # every pair of increasing rank states of the grid {j/2} in [0, 1], 3
    # states per point: the utility of each output sequence moves by <= 2k
    levels = np.array([0.25, 0.75])

    def utilities(values):
        _, below, atoms = grid_rank_counts(np.clip(values, 0, 1), 0.0, 1.0, -1)
        ranks = rank_states(below, atoms, split_bits=1)
        n = values.size
        return np.array(
            [
                joint_quantile_utility(ranks[list(pair)], n, levels)
                for pair in itertools.combinations(range(ranks.size), 2)
            ]
        )

    worst = _worst_change(utilities, seeds=[0])[0]
    assert worst <= 2 * K  # 4.5 here: 1.5 per row of the added group
    assert worst > 2 * (K - 1)  # a group needs more than k - 1 rows' noise
    unbounded = _worst_change(utilities, bound=False, seeds=[0], largest=K + 2)
    assert unbounded[0] > 2 * K


def test_svt_soft_counts_and_sign_counts_move_by_k():
    plan = plan_svt_bounds(
        1, 1.0, lower=None, upper_limit=2.0, grid=[0.25, 0.5, 1.0, 2.0], n_above=None
    )

    def counts(values):
        statistic = svt_bounds_statistic(values[:, None], plan)
        above, below = soft_counts_from_tally(statistic, two_sided=True)
        return np.concatenate([above[0], below[0], _sign_counts(statistic)])

    worst = _worst_change(counts)
    assert worst[0] == pytest.approx(K)  # each count: k, one direction per group
    assert _worst_change(counts, bound=False)[0] > K

    def signs(values):  # the sign test's L1 sensitivity is k d (d = 1)
        return _sign_counts(svt_bounds_statistic(values[:, None], plan))

    assert _worst_change(signs)[1] == pytest.approx(K)


def test_joint_histogram_counts_move_by_k_in_l1_and_l2():
    edges = [np.array([0.0, 0.5, 1.0]), np.array([0.0, 0.5, 1.0])]

    def counts(values):  # two features: the value and its mirror 1 - value
        X = np.column_stack([values, 1 - values])
        return np.array(exact_joint_counts(X, edges).numerators, dtype=float)

    worst = _worst_change(counts)
    assert worst[1] == pytest.approx(K) and worst[2] == pytest.approx(K)
    assert _worst_change(counts, bound=False)[2] > K


# --- audit of the quantile selection with groups, and its twins -----------
# D0: n rows at 0 (one per group); D1 adds one group of 3k rows at the upper
# bound 1. Median by the exponential mechanism over the 2**33 + 1 points of
# the grid of [0, 1]: "output 0" has probability 1 / (1 + 2**33 e^{-e n/2})
# at the selection's e, and a kept row at 1 moves its log-odds by e. At
# e = eps/k and n = 92 it is 0.56 on D0 and k kept rows move it by eps;
# without the bounding by 3 eps. A selection run at eps instead of eps/k
# moves it by k eps, seen at n = 46 (0.5 on D0 then).
EPS, GROUP_K = 1.0, 2
AUDIT = {"n_samples": 20_000, "n_pilot": 4_000, "random_state": 0}
LEVELS = np.array([0.5])


def _neighbours(n):
    d0 = (np.zeros((n, 1)), np.arange(n))
    added = 3 * GROUP_K
    return d0, (np.vstack([d0[0], np.ones((added, 1))]), np.append(d0[1], [-1] * added))


D0, D1 = _neighbours(92)


def _median(data, seed, n_runs=1):
    # PrivateQuantile.fit's steps after the charge (method="exponential")
    X, groups = data
    unit = PrivacyUnit(groups, GROUP_K)
    source = check_random_source(seed)
    (X,) = unit.bound(source, X)
    column = sorted_clipped_column(X[:, 0], 0.0, 1.0)
    eps_r = unit.row_budget(None, EPS)[0]
    return exponential_release(column, 0.0, 1.0, LEVELS, eps_r, source, n_runs)


def test_the_audited_steps_are_the_estimators():
    est = skdp.PrivateQuantile(
        0.5, epsilon=EPS, bounds=(0.0, 1.0), method="exponential", max_rows_per_group=2
    )
    fitted = _fit(est, *D1)
    assert fitted.quantiles_[0, 0] == _median(D1, 0)[0, 0]


def test_audit_of_the_grouped_median_passes():
    assert_dp(_median, D0, D1, EPS, **AUDIT)


def test_audit_catches_a_fit_that_skips_the_bounding(monkeypatch):
    monkeypatch.setattr(PrivacyUnit, "bound", lambda self, source, *columns: columns)
    assert audit_mechanism(_median, D0, D1, **AUDIT).epsilon_lower_bound > EPS


def test_audit_catches_a_fit_that_runs_at_the_rows_budget(monkeypatch):
    d0, d1 = _neighbours(46)
    assert_dp(_median, d0, d1, EPS, **AUDIT)  # the estimator's own at n = 46
    monkeypatch.setattr(PrivacyUnit, "row_budget", lambda self, est, e, d=0.0: (e, d))
    assert audit_mechanism(_median, d0, d1, **AUDIT).epsilon_lower_bound > EPS
