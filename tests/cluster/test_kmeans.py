"""PrivateKMeans: sensitivity by brute force, utility against scikit-learn,
the charge, refusals before it, and an audit with a mutation twin."""

import itertools
import warnings

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.utils._param_validation import InvalidParameterError

from skdp import BudgetAccountant, PrivateKMeans
from skdp.audit import audit_mechanism
from skdp.cluster import _kmeans
from skdp.cluster._kmeans import cluster_split_sums
from skdp.mechanisms import gaussian_release
from skdp.mechanisms._grid import FixedPoint


def _as_exact(statistic):
    return np.array(statistic.numerators, dtype=object).reshape(statistic.shape)


def test_one_row_moves_one_clusters_sums_by_at_most_sqrt_d_brute_force():
    lower, upper = np.array([0.0, -1.0, 0.0]), np.array([1.0, 1.0, 4.0])
    centres = np.array([[0.2, 0.0, 1.0], [0.8, 0.5, 3.0], [0.5, -0.5, 0.0]])
    values = [-3.0, 0.0, 0.3, 1.0, 9.0]  # outside, on and inside the bounds
    pool = np.array(list(itertools.product(values, [-2.0, 0.1, 1.0], [0.0, 2.5, 7.0])))
    rng = np.random.default_rng(0)
    for _ in range(100):
        data = pool[rng.choice(len(pool), size=rng.integers(1, 6))]
        full = _as_exact(cluster_split_sums(data, centres, lower, upper))
        for i in range(len(data)):
            less = np.delete(data, i, axis=0)
            change = full - _as_exact(cluster_split_sums(less, centres, lower, upper))
            changed = [k for k in range(3) if np.any(change[k] != 0)]
            assert len(changed) == 1  # a row is in one cluster
            # exact squared L2 norm on the 2**-33 grid, against d = 3
            norm2 = sum(int(v) ** 2 for v in change.ravel())
            assert norm2 <= 3 * 4**33
            # the pair of each feature adds up to exactly one row
            assert np.all(change[changed[0]].sum(axis=0) == 2**33)


def test_cost_on_blobs_is_close_to_sklearns():
    X, _ = make_blobs(20_000, n_features=5, centers=4, random_state=1)
    reference = -KMeans(4, n_init=10, random_state=0).fit(X).score(X)
    costs = [
        -PrivateKMeans(4, epsilon=1.0, bounds=(-15, 15), random_state=seed)
        .fit(X)
        .score(X)
        for seed in range(2)
    ]
    assert max(costs) <= 1.05 * reference


def test_predict_transform_and_fit_predict_agree_with_the_centres():
    X, _ = make_blobs(2_000, centers=3, random_state=0)
    km = PrivateKMeans(3, epsilon=10.0, bounds=(-15, 15), random_state=0).fit(X)
    distances = np.linalg.norm(X[:, None, :] - km.cluster_centers_[None], axis=2)
    np.testing.assert_allclose(km.transform(X), distances)
    np.testing.assert_array_equal(km.predict(X), distances.argmin(axis=1))
    assert km.score(X) == pytest.approx(-(distances.min(axis=1) ** 2).sum())
    again = PrivateKMeans(3, epsilon=10.0, bounds=(-15, 15), random_state=0)
    np.testing.assert_array_equal(again.fit_predict(X), km.predict(X))
    assert not hasattr(km, "labels_")  # its length would be the row count


def test_one_charge_of_the_whole_fit_with_its_gaussian_cost():
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    X, _ = make_blobs(500, centers=2, random_state=0)
    PrivateKMeans(2, epsilon=1.5, delta=1e-6, bounds=(-15, 15), accountant=acc).fit(X)
    (entry,) = acc.entries
    assert (entry.epsilon, entry.delta) == (1.5, 1e-6)
    assert acc.total() == (1.5, 1e-6)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({}, ValueError, "bounds"),
        ({"bounds": (0, 1), "init_clusters": 2}, ValueError, "init_clusters"),
        (
            {"bounds": (0, 1), "epsilon": 1e-12, "delta": 1e-300},
            ValueError,
            "Nothing was charged",
        ),
        ({"bounds": (0, 1), "delta": 0.0}, InvalidParameterError, "delta"),
        ({"bounds": (0, 1), "init": "k-means++"}, InvalidParameterError, "init"),
    ],
)
def test_refusals_before_the_charge(kwargs, error, match):
    acc = BudgetAccountant(epsilon=1.0, delta=0.5)
    with pytest.raises(error, match=match):
        PrivateKMeans(3, accountant=acc, **kwargs).fit(np.zeros((10, 2)))
    assert acc.total() == (0.0, 0.0)


# -- audit ---------------------------------------------------------------------
# One noisy step with one cluster, vectorised: the step's statistic and its
# release plan are the estimator's own functions (the twin patches the plan).

D = 16
LOWER, UPPER = np.zeros(D), np.ones(D)
D0 = np.full((2, D), 0.5)
D1 = np.vstack([D0, np.ones((1, D))])  # the added row at the upper corner


def released_u_total(data, seed, n_runs):
    sensitivity, (multiplier,) = _kmeans.lloyd_release_plan(D, 1, 1.0, 1e-6)
    statistic = cluster_split_sums(data, np.full((1, D), 0.5), LOWER, UPPER)
    batch = FixedPoint(
        statistic.numerators * n_runs, statistic.exponent, (n_runs, 2, D)
    )
    noisy = gaussian_release(batch, sensitivity, multiplier, random_state=seed)
    return np.asarray(noisy)[:, 0, :].sum(axis=1)  # post-processing


AUDIT = {"n_samples": 50_000, "n_pilot": 10_000, "delta": 1e-6, "random_state": 0}


def test_audit_passes_and_a_twin_calibrated_to_one_feature_is_caught(monkeypatch):
    honest = audit_mechanism(released_u_total, D0, D1, **AUDIT)
    assert honest.epsilon_lower_bound <= 1.0, str(honest)
    plan = _kmeans.lloyd_release_plan

    def one_feature(n_features, n_steps, epsilon, delta):
        return 1.0, plan(n_features, n_steps, epsilon, delta)[1]

    monkeypatch.setattr(_kmeans, "lloyd_release_plan", one_feature)
    mutant = audit_mechanism(released_u_total, D0, D1, **AUDIT)
    assert mutant.epsilon_lower_bound > 1.0, str(mutant)


@pytest.mark.parametrize("bounds", [(-8e307, 8e307), (0.0, 5e-323), (-1e-300, 1e-300)])
def test_fit_at_the_ends_of_the_float_range_is_silent_and_inside_the_bounds(bounds):
    X = np.array([[1e308, -1e308], [5e-324, 0.0], [-1.7e308, 1.7e308], [0.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        km = PrivateKMeans(2, bounds=bounds, random_state=0).fit(np.tile(X, (20, 1)))
    assert np.all(np.isfinite(km.cluster_centers_))
    assert np.all(
        (bounds[0] <= km.cluster_centers_) & (km.cluster_centers_ <= bounds[1])
    )


@pytest.mark.parametrize("chunks", [(600,), (0, 1, 250, 349)])
def test_dask_input_gives_the_in_memory_release_bit_for_bit(chunks):
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    X, _ = make_blobs(600, n_features=3, centers=3, random_state=0)
    fits = []
    for data in (X, da.from_array(X, chunks=(chunks, (3,)))):
        acc = BudgetAccountant(delta=0.5)
        with dask.config.set(scheduler="threads"):
            fits.append(
                PrivateKMeans(3, bounds=(-15, 15), accountant=acc, random_state=4).fit(
                    data
                )
            )
        assert acc.total() == (1.0, 1e-6)
    np.testing.assert_array_equal(fits[0].cluster_centers_, fits[1].cluster_centers_)
    np.testing.assert_array_equal(fits[0].counts_, fits[1].counts_)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_clusters": 2, "init_clusters": 2**25},  # 2**25 centres in a step
        {"n_clusters": 2**23, "init": "uniform"},  # 2**23 x 2 x 2 values
    ],
)
def test_a_step_too_large_to_release_is_refused_before_the_charge(kwargs, monkeypatch):
    # every centre of a step gets 2 d noisy values and every row a distance
    # to each: a step of 2**25 centres was charged and then ran out of memory
    # (or time) on the data; steps are capped as PrivateJointHistogram's
    # grid is (2**24 released values)
    def reached_the_data(*args):
        raise AssertionError("the data was read: the fit was charged")

    monkeypatch.setattr(_kmeans, "row_statistic", reached_the_data)
    acc = BudgetAccountant(epsilon=1.0, delta=0.5)
    with pytest.raises(ValueError, match="Nothing was charged"):
        PrivateKMeans(bounds=(0, 1), accountant=acc, **kwargs).fit(np.zeros((10, 2)))
    assert acc.total() == (0.0, 0.0)
