"""Bernstein moment sums and histogram counts: exact sensitivities by brute force.

The oracle is the definition: for every small dataset over a domain that
includes the bounds, values far outside them, subnormal and huge values,
add each possible row and measure how far the exact sums move (as
fractions). Nothing here uses the sensitivity the code states.
"""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from skdp.sensitivity import (
    exact_histogram_counts,
    exact_moment_sums,
    moments_from_sums,
)

LOWER, UPPER = np.array([-3.0, 0.0]), np.array([7.0, 1e-300])
DOMAIN = [-3.0, 7.0, 2.0, 2.0000000000000004, -1e308, 1e308, 5e-324, 0.1, 6.999]


def fractions(value):
    scale = Fraction(2) ** value.exponent
    return np.array([Fraction(n) * scale for n in value.numerators]).reshape(
        value.shape
    )


def rows():
    return [np.array(r) for r in itertools.product(DOMAIN, repeat=2)]


@pytest.mark.parametrize("n_groups", [1, 3])
def test_one_row_moves_the_sums_by_d_in_l1_and_at_most_sqrt_d_in_l2(n_groups):
    rng = np.random.default_rng(0)
    all_rows = rows()
    for size in range(4):
        for _ in range(12):
            picks = rng.integers(0, len(all_rows), size)
            X = np.array([all_rows[i] for i in picks]).reshape(size, 2)
            codes = rng.integers(0, n_groups, size)
            base = fractions(exact_moment_sums(X, LOWER, UPPER, codes, n_groups))
            for row, group in itertools.product(all_rows, range(n_groups)):
                grown = exact_moment_sums(
                    np.vstack([X, row]), LOWER, UPPER, np.append(codes, group), n_groups
                )
                change = fractions(grown) - base
                assert all(c >= 0 for c in change.ravel())
                assert sum(change.ravel()) == 2  # L1: exactly d
                assert sum(c * c for c in change.ravel()) <= 2  # L2² <= d
                others = np.delete(change, group, axis=0)
                assert all(c == 0 for c in others.ravel())
                # each triple of the new row adds exactly one row
                assert all(sum(change[group, :, j]) == 1 for j in range(2))


def test_triples_add_up_to_the_exact_count_beyond_one_block():
    rng = np.random.default_rng(1)
    n = (1 << 16) + 5
    X = rng.uniform(-5, 9, size=(n, 2)) * rng.choice([1.0, 1e-300, 1e300], (n, 2))
    sums = fractions(exact_moment_sums(X, LOWER, UPPER))
    assert [sum(sums[0, :, j]) for j in range(2)] == [n, n]


def test_moments_match_numpy_on_the_clipped_data():
    rng = np.random.default_rng(2)
    X = rng.normal(3.0, 4.0, size=(5_000, 2))
    lower, upper = np.array([-3.0, 0.0]), np.array([7.0, 20.0])
    sums = exact_moment_sums(X, lower, upper).as_float()
    counts, means, variances = moments_from_sums(sums, lower, upper)
    clipped = np.clip(X, lower, upper)
    assert counts[0] == 5_000
    np.testing.assert_allclose(means[0], clipped.mean(axis=0), rtol=1e-9)
    np.testing.assert_allclose(variances[0], clipped.var(axis=0), rtol=1e-8)


def test_moments_from_noisy_sums_stay_in_range():
    rng = np.random.default_rng(3)
    lower, upper = np.array([0.0]), np.array([10.0])
    noisy = rng.normal(0, 50, size=(500, 1, 3, 1))
    for sums in noisy:
        counts, means, variances = moments_from_sums(sums, lower, upper)
        assert counts[0] >= 1
        assert 0 <= means[0, 0] <= 10 and 0 <= variances[0, 0] <= 25


def test_histogram_row_moves_one_bin_per_feature():
    edges = [np.array([-3.0, 0.0, 2.0, 7.0]), np.array([0.0, 1e-300])]
    all_rows = rows()
    rng = np.random.default_rng(4)
    for size in range(4):
        picks = rng.integers(0, len(all_rows), size)
        X = np.array([all_rows[i] for i in picks]).reshape(size, 2)
        base = np.array(exact_histogram_counts(X, edges).numerators)
        assert base.sum() == 2 * size
        for row in all_rows:
            grown = exact_histogram_counts(np.vstack([X, row]), edges)
            change = np.array(grown.numerators) - base
            assert change.min() == 0 and change.sum() == 2
            assert change[:3].sum() == 1 and change[3:].sum() == 1


def test_histogram_matches_numpy_inside_the_edges():
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 10, size=(10_000, 1))
    edges = np.linspace(0, 10, 11)
    got = exact_histogram_counts(x, [edges]).numerators
    assert list(got) == np.histogram(x[:, 0], edges)[0].tolist()


@pytest.mark.parametrize(
    "edges", [np.linspace(-3.3, 7.7, 12), np.array([-3.3, -1.0, 0.0, 0.5, 7.7])]
)
def test_histogram_bins_at_and_next_to_every_edge(edges):
    # the multiplication path (even edges) and binary search (uneven) agree
    # with the definition e_k <= x < e_{k+1}, clipped to the end bins
    values = np.concatenate(
        [
            edges,
            np.nextafter(edges, -np.inf),
            np.nextafter(edges, np.inf),
            [-1e308, 1e308],
        ]
    )
    got = np.array(exact_histogram_counts(values[:, None], [edges]).numerators)
    inner = [sum(e <= v for e in edges[1:-1]) for v in values]  # by definition
    assert got.tolist() == np.bincount(inner, minlength=edges.size - 1).tolist()
