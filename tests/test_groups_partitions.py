"""Partitions a group touches: ``max_partitions_per_group`` (p) and
``max_rows_per_partition`` (c) in PrivateHistogram, PrivateJointHistogram
and PrivateOneHotEncoder: refusals before the charge, the stated noise,
the bounded counts, order invariance, and an audit of the grouped
histogram with its twin that skips the partition bound.

The sensitivities and the selection's threshold are brute-forced in
tests/utils/test_partitions.py.
"""

import math

import numpy as np
import pytest

import skdp
from skdp.audit import assert_dp, audit_mechanism
from skdp.mechanisms import analytic_gaussian_sigma, check_random_source
from skdp.mechanisms._additive import additive_release
from skdp.mechanisms._grid import FixedPoint
from skdp.stats import _partition_counts
from skdp.stats._partition_counts import bounded_histogram_counts
from skdp.utils._partitions import partition_contribution, seeds_of
from skdp.utils._privacy_unit import PrivacyUnit

BOUNDS = {"max_partitions_per_group": 3, "max_rows_per_partition": 1}
ESTIMATORS = [
    skdp.PrivateHistogram(4, bounds=(0, 4)),
    skdp.PrivateJointHistogram(4, bounds=(0, 4)),
    skdp.PrivateOneHotEncoder(),
]


def _fit(estimator, X, groups=None, **params):
    accountant = skdp.BudgetAccountant(delta=1.0)
    model = type(estimator)(**{**estimator.get_params(), **params})
    model.set_params(accountant=accountant, random_state=0)
    return model.fit(X, groups=groups), accountant


def _people(seed=0, n=300):
    """1 to 10 rows per person, each person mostly in one or two bins."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 11, n)
    groups = np.repeat(np.arange(n), sizes)
    home = np.repeat(rng.integers(0, 4, n), sizes)
    away = rng.integers(0, 4, groups.size)
    bins = np.where(rng.random(groups.size) < 0.8, home, away)
    return (bins + 0.5)[:, None], groups


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("stated", [BOUNDS, {"max_rows_per_partition": 2}])
def test_a_partition_bound_without_groups_is_refused_before_the_charge(
    estimator, stated
):
    X, _ = _people()
    accountant = skdp.BudgetAccountant(delta=1.0)
    model = type(estimator)(**{**estimator.get_params(), **stated})
    model.set_params(accountant=accountant)
    with pytest.raises(ValueError, match=r"got no groups.*Nothing was charged"):
        model.fit(X)
    assert accountant.entries == ()


def test_the_histograms_noise_follows_the_stated_partitions():
    # k = 10, p = 3, c = 1, two features: a group moves each histogram by 3
    # rows in three bins: L1 = 2 * 3, L2 = sqrt(2 * 3) (k alone: 20, sqrt(200))
    X, groups = _people()
    X = np.hstack([X, X])
    gauss = skdp.PrivateHistogram(
        4, bounds=(0, 4), mechanism="gaussian", delta=1e-6, max_rows_per_group=10
    )
    k_only, _ = _fit(gauss, X, groups)
    bounded, _ = _fit(gauss, X, groups, **BOUNDS)
    sigma = analytic_gaussian_sigma(math.sqrt(6), 1.0, 1e-6)
    assert bounded.noise_std_ == pytest.approx(sigma, rel=1e-12)
    assert k_only.noise_std_ == pytest.approx(
        analytic_gaussian_sigma(math.sqrt(200), 1.0, 1e-6), rel=1e-12
    )
    laplace = skdp.PrivateHistogram(4, bounds=(0, 4), max_rows_per_group=10)
    bounded, _ = _fit(laplace, X, groups, **BOUNDS)
    assert bounded.noise_std_ == pytest.approx(math.sqrt(2) * 6, rel=1e-12)
    joint = skdp.PrivateJointHistogram(
        4, bounds=(0, 4), mechanism="gaussian", delta=1e-6, max_rows_per_group=10
    )
    bounded, _ = _fit(joint, X, groups, max_partitions_per_group=2)
    # p = 2, c = k = 10: one cell of 10 rows is the worst, L2 stays 10
    assert bounded.noise_std_ == pytest.approx(
        analytic_gaussian_sigma(10.0, 1.0, 1e-6), rel=1e-12
    )


def _bounded_truth(X, groups, p, c):
    """Per bin, the rows kept when every person counts at most c rows in a
    bin and every person touches at most p bins (here: at most p bins)."""
    truth = np.zeros(4)
    for g in np.unique(groups):
        bins = np.floor(X[groups == g, 0]).astype(int)
        assert len(set(bins.tolist())) <= p  # the test's people fit p
        truth += np.minimum(np.bincount(bins, minlength=4), c)
    return truth


def test_with_a_large_epsilon_the_counts_are_the_bounded_counts():
    # every person touches at most two bins: with p = 2 no bin is dropped,
    # and c = 1 counts people per bin (numpy's count of distinct pairs)
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 11, 200)
    groups = np.repeat(np.arange(200), sizes)
    bins = (groups + rng.integers(0, 2, groups.size)) % 4  # bins g, g + 1
    X = (bins + 0.5)[:, None]
    truth = _bounded_truth(X, groups, 2, 1)
    stated = {"max_partitions_per_group": 2, "max_rows_per_partition": 1}
    for estimator in ESTIMATORS[:2]:
        model, _ = _fit(
            estimator, X, groups, epsilon=1e6, max_rows_per_group=10, **stated
        )
        np.testing.assert_allclose(model.counts_.ravel(), truth, atol=1e-3)
    rows = rng.permutation(X.shape[0])
    encoder, _ = _fit(
        ESTIMATORS[2],
        X[rows],
        groups[rows],
        epsilon=1e3,
        max_rows_per_group=10,
        **stated,
    )
    kept = [int(v) for v in encoder.categories_[0]]
    np.testing.assert_allclose(encoder.category_counts_[0], truth[kept], atol=0.5)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_the_bounded_release_is_the_same_for_any_row_order(estimator):
    X, groups = _people(1, 60)
    order = np.random.default_rng(0).permutation(X.shape[0])
    params = {"max_rows_per_group": 4, **BOUNDS}
    first, _ = _fit(estimator, X, groups, **params)
    again, _ = _fit(estimator, X[order], groups[order], **params)
    name = "category_counts_" if hasattr(first, "category_counts_") else "counts_"
    np.testing.assert_array_equal(
        np.concatenate([np.ravel(a) for a in getattr(first, name)]),
        np.concatenate([np.ravel(a) for a in getattr(again, name)]),
    )


def test_the_encoders_threshold_and_noise_follow_the_stated_partitions():
    # k = 5, p = 2, c = 1 at eps = 1, delta = 1e-6: tau = 30 (brute-forced
    # in tests/utils/test_partitions.py) and scale t = 2 (L1 = 2), against
    # 78 and t = 5 for k alone (the generic route)
    X, groups = _people()
    encoder = skdp.PrivateOneHotEncoder(max_rows_per_group=5)
    k_only, _ = _fit(encoder, X, groups)
    bounded, _ = _fit(
        encoder, X, groups, max_partitions_per_group=2, max_rows_per_partition=1
    )
    assert (k_only.threshold_, bounded.threshold_) == (78, 30)
    r = math.exp(-1 / 2)
    assert bounded.noise_std_ == pytest.approx(math.sqrt(2 * r) / (1 - r), rel=1e-12)


# The audit: one feature, one bin (the count of kept rows). D0: 30 people
# of one row; D1 adds a person of 3 rows. With k = 3, p = 1, c = 1 the
# person adds 1 row: Laplace of scale 1/eps moves by 1 (eps); with the
# partition bound skipped the person adds 3 at the same scale (3 eps).
EPS, GROUP_K = 1.0, 3
AUDIT = {"n_samples": 20_000, "n_pilot": 4_000, "random_state": 0}
EDGES = [np.array([0.0, 1.0])]
D0 = (np.full((30, 1), 0.5), np.arange(30))
D1 = (np.full((33, 1), 0.5), np.r_[np.arange(30), [99] * 3])


def _released_count(data, seed, n_runs=1):
    """PrivateHistogram.fit's steps after the charge (checked below)."""
    X, groups = data
    source = check_random_source(seed)
    unit = PrivacyUnit(groups, GROUP_K)
    kept = unit.kept(source, X)
    bound = partition_contribution(GROUP_K, 1, 1)
    counts = bounded_histogram_counts(
        X[kept], EDGES, groups[kept], bound, seeds_of(source)
    )
    runs = FixedPoint(counts.numerators * n_runs, 0, (n_runs,))
    return additive_release(runs, bound.l1(), bound.l2(), EPS, 0.0, source)


def test_the_audited_steps_are_the_histograms():
    model, _ = _fit(
        skdp.PrivateHistogram(1, bounds=(0, 1)),
        *D1,
        max_rows_per_group=GROUP_K,
        max_partitions_per_group=1,
        max_rows_per_partition=1,
    )
    assert model.counts_[0, 0] == _released_count(D1, 0)[0]


def test_audit_of_the_bounded_histogram_passes():
    assert_dp(_released_count, D0, D1, EPS, **AUDIT)


def test_audit_catches_a_histogram_that_skips_the_partition_bound(monkeypatch):
    every_row = lambda groups, partitions, bound, seeds, columns: np.arange(  # noqa: E731
        len(groups)
    )
    monkeypatch.setattr(_partition_counts, "partition_rows", every_row)
    mutant = audit_mechanism(_released_count, D0, D1, **AUDIT)
    assert mutant.epsilon_lower_bound > EPS


@pytest.mark.parametrize(
    "estimator, params, refused",
    [
        # the bounds at the ends of their ranges: p = c = 1 under the
        # largest k fits (one row per group and value); p = k = 2**53 with
        # c = 1 is past the selection's 2**20 partitions, refused
        (
            ESTIMATORS[2],
            {"max_partitions_per_group": 1, "max_rows_per_partition": 1},
            False,
        ),
        (ESTIMATORS[2], {"max_rows_per_partition": 1}, True),
        (ESTIMATORS[2], {"max_rows_per_partition": 2, "epsilon": 2.0**-32}, True),
        (ESTIMATORS[0], {"max_rows_per_partition": 2**60}, False),
        (ESTIMATORS[0], {"max_partitions_per_group": 1, "epsilon": 1e-300}, True),
    ],
)
def test_bounds_at_their_extremes_fit_or_are_refused_before_the_charge(
    estimator, params, refused
):
    X, groups = _people(2, 30)
    accountant = skdp.BudgetAccountant(delta=1.0)
    model = type(estimator)(**{**estimator.get_params(), **params})
    model.set_params(max_rows_per_group=2**53, accountant=accountant, random_state=0)
    if refused:
        with pytest.raises(ValueError, match="Nothing was charged"):
            model.fit(X, groups=groups)
        assert accountant.entries == ()
    else:
        model.fit(X, groups=groups)
        assert np.isfinite(model.noise_std_) and len(accountant.entries) == 1
