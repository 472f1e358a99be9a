"""PrivateJointHistogram: exact cell counts, sensitivity 1, public grid."""

import itertools

import numpy as np
import pytest

from skdp import BudgetAccountant, PrivateHistogram, PrivateJointHistogram
from skdp.audit import audit_mechanism
from skdp.stats import _joint_histogram
from skdp.stats._joint_histogram import exact_joint_counts, grid_edges


def _clipped_numpy_counts(X, edges):
    """numpy.histogramdd after clipping each feature into its grid (the
    public out-of-range rule), as an independent reference."""
    clipped = np.column_stack(
        [np.clip(X[:, j], e[0], e[-1]) for j, e in enumerate(edges)]
    )
    return np.histogramdd(clipped, bins=edges)[0]


def test_exact_counts_match_numpy_with_out_of_range_rows_in_the_edge_bins():
    rng = np.random.default_rng(0)
    X = rng.normal(0.5, 0.6, size=(5_000, 3))  # many rows outside [0, 1]
    edges = grid_edges([4, np.array([0.0, 0.1, 0.7, 1.0]), 2], (0, 1), 3, "t")
    counts = exact_joint_counts(X, edges)
    assert counts.shape == (4, 3, 2)
    np.testing.assert_array_equal(counts.as_float(), _clipped_numpy_counts(X, edges))
    assert sum(counts.numerators) == X.shape[0]  # nothing dropped


def test_one_row_changes_exactly_one_cell_by_one_brute_force():
    # every add/remove neighbour of small datasets on a 3 x 2 grid, with
    # values on the edges, outside the grid and in between
    edges = [np.array([0.0, 1.0, 2.0, 3.0]), np.array([-1.0, 0.0, 1.0])]
    values = [-5.0, 0.0, 0.5, 1.0, 3.0, 7.0]
    pool = np.array(list(itertools.product(values, [-2.0, -1.0, 0.0, 1.0, 4.0])))
    rng = np.random.default_rng(1)
    for _ in range(200):
        data = pool[rng.choice(len(pool), size=rng.integers(1, 6))]
        full = np.array(exact_joint_counts(data, edges).numerators)
        for i in range(len(data)):
            smaller = np.delete(data, i, axis=0)
            less = np.array(exact_joint_counts(smaller, edges).numerators)
            change = full - less
            assert np.abs(change).sum() == 1  # L1 = L2 = 1
            assert change.max() == 1


def test_one_feature_grid_gives_the_per_feature_histogram():
    X = np.random.default_rng(2).uniform(-1, 11, size=(2_000, 1))
    joint = PrivateJointHistogram(5, bounds=(0, 10), epsilon=1e9, random_state=0)
    single = PrivateHistogram(5, bounds=(0, 10), epsilon=1e9, random_state=0)
    np.testing.assert_allclose(joint.fit(X).counts_, single.fit(X).counts_[0])


def test_noise_level_and_unbiasedness_against_numpy():
    X = np.random.default_rng(3).uniform(0, 1, size=(3_000, 2))
    exact = np.histogramdd(X, bins=[np.linspace(0, 1, 4)] * 2)[0]
    acc = BudgetAccountant()
    errors = np.stack(
        [
            PrivateJointHistogram(3, bounds=(0, 1), accountant=acc, random_state=s)
            .fit(X)
            .counts_
            - exact
            for s in range(300)
        ]
    )
    # Laplace(1/eps) per cell: std sqrt(2) whatever the number of features
    assert errors.std() == pytest.approx(np.sqrt(2), rel=0.05)
    assert abs(errors.mean()) < 4 * np.sqrt(2) / np.sqrt(errors.size)
    assert acc.total() == (300.0, 0.0)


def test_gaussian_release_and_confidence_interval_cover():
    X = np.random.default_rng(4).uniform(0, 1, size=(1_000, 2))
    exact = np.histogramdd(X, bins=[np.linspace(0, 1, 3)] * 2)[0]
    hist = PrivateJointHistogram(
        2, bounds=(0, 1), mechanism="gaussian", delta=1e-6, random_state=0
    ).fit(X)
    low, high = hist.confidence_interval(alpha=1e-3)
    assert np.all((low <= exact) & (exact <= high))
    assert hist.delta_spent_ == 1e-6


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({}, "bounds"),
        ({"bins": [2], "bounds": (0, 1)}, "1 entries for 2 features"),
        ({"bins": [[0.0, 0.0], 2], "bounds": (0, 1)}, "strictly increasing"),
        ({"bins": [[0.0, np.inf], 2], "bounds": (0, 1)}, "finite"),
        ({"bins": 5_000, "bounds": (0, 1)}, "cells"),
        ({"bounds": (0, 1), "mechanism": "gaussian"}, "delta > 0"),
    ],
)
def test_bad_grid_or_parameters_raise_before_the_charge(kwargs, match):
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError, match=match):
        PrivateJointHistogram(accountant=acc, **kwargs).fit(np.zeros((3, 2)))
    assert acc.total() == (0.0, 0.0)


def test_edges_given_for_every_feature_need_no_bounds():
    X = np.array([[0.2, 5.0], [0.7, 50.0]])
    hist = PrivateJointHistogram(
        [[0.0, 0.5, 1.0], [1.0, 10.0, 100.0]], epsilon=1e9, random_state=0
    ).fit(X)
    np.testing.assert_allclose(hist.counts_, [[1, 0], [0, 1]], atol=1e-6)


# -- audit ---------------------------------------------------------------------

AUDIT = {"n_samples": 2_000, "n_pilot": 500, "random_state": 0}
D0 = np.full((3, 3), 0.25)  # three features, every row in cell (0, 0, 0)
D1 = np.vstack([D0, np.full((1, 3), 0.25)])


def released_cell(data, seed):
    hist = PrivateJointHistogram(2, bounds=(0, 1), random_state=seed).fit(data)
    return float(hist.counts_[0, 0, 0])


def test_audit_passes_and_a_twin_with_a_quarter_of_the_noise_is_caught(
    monkeypatch,
):
    honest = audit_mechanism(released_cell, D0, D1, **AUDIT)
    assert honest.epsilon_lower_bound <= 1.0, str(honest)
    release = _joint_histogram.additive_release

    def quarter_noise(value, l1, l2, epsilon, delta, source):
        return release(value, l1 / 4, l2 / 4, epsilon, delta, source)

    monkeypatch.setattr(_joint_histogram, "additive_release", quarter_noise)
    mutant = audit_mechanism(released_cell, D0, D1, **AUDIT)
    assert mutant.epsilon_lower_bound > 1.0, str(mutant)


def test_dask_input_gives_the_in_memory_counts_bit_for_bit():
    da = pytest.importorskip("dask.array")
    X = np.random.default_rng(5).normal(0.5, 0.5, size=(500, 2))
    fits = [
        PrivateJointHistogram(3, bounds=(0, 1), random_state=2).fit(data).counts_
        for data in (X, da.from_array(X, chunks=((0, 1, 200, 299), (2,))))
    ]
    np.testing.assert_array_equal(*fits)
