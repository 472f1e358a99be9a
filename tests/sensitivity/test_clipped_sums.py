"""Clipped sums and the normalised SVT queries (ALGORITHMS.md §4.4)."""

from fractions import Fraction

import numpy as np
import pytest

from skdp.sensitivity import (
    lower_clipped_sums,
    soft_counts_above,
    soft_counts_below,
    upper_clipped_sums,
)

from . import bruteforce as bf

GRIDS = {
    "geometric": np.geomspace(0.25, 64.0, 9),
    "irregular": np.array([-3.0, 0.0, 0.5, 1.2, 4.1, 4.15, 20.0]),
    "tiny steps": np.array([1.0, 1.0 + 2**-40, 1.0 + 2**-39, 2.0]),
    "huge steps": np.array([-1e300, 0.0, 1e-300, 1e300]),
}


def direct_soft_counts(x, grid):
    x = np.asarray(x, dtype=float)[:, None]
    left, right = grid[:-1], grid[1:]
    with np.errstate(over="ignore"):  # a ramp of +-inf clips to 0 or 1
        return np.clip((x - left) / (right - left), 0, 1).sum(axis=0)


def random_column(rng, n):
    kind = rng.integers(3)
    if kind == 0:
        return rng.integers(-5, 30, n).astype(float)
    if kind == 1:
        return rng.lognormal(1.0, 1.5, n)
    return rng.standard_t(1, n) * 10


@pytest.mark.parametrize("name", list(GRIDS))
def test_sums_match_direct_clipping(name):
    grid = GRIDS[name]
    rng = np.random.default_rng(0)
    for _ in range(50):
        x = random_column(rng, int(rng.integers(0, 300)))
        for lower in (None, -2.0):
            clipped = x if lower is None else np.maximum(x, lower)
            direct = np.array([np.minimum(clipped, b).sum() for b in grid])
            got = upper_clipped_sums(x, grid, lower=lower)
            scale = np.abs(clipped).sum() + np.abs(grid).max() * x.size + 1
            np.testing.assert_allclose(got, direct, rtol=0, atol=1e-12 * scale)
        upper = 25.0
        capped = np.minimum(x, upper)
        direct = np.array([np.maximum(capped, a).sum() for a in grid])
        got = lower_clipped_sums(x, grid, upper=upper)
        scale = np.abs(capped).sum() + np.abs(grid).max() * x.size + 1
        np.testing.assert_allclose(got, direct, rtol=0, atol=1e-12 * scale)


@pytest.mark.parametrize("name", list(GRIDS))
def test_soft_counts_match_direct_ramps(name):
    grid = GRIDS[name]
    rng = np.random.default_rng(1)
    for _ in range(50):
        x = random_column(rng, int(rng.integers(0, 300)))
        x = np.concatenate([x, rng.choice(grid, 5)])  # values exactly on edges
        # each row's ramp is rounded to a multiple of 2**-20
        atol = x.size * 2.0**-21 + 1e-9
        np.testing.assert_allclose(
            soft_counts_above(x, grid), direct_soft_counts(x, grid), atol=atol
        )
        below = direct_soft_counts(-x, -grid[::-1])[::-1]
        np.testing.assert_allclose(soft_counts_below(x, grid), below, atol=atol)


def test_soft_counts_are_normalised_sum_differences_exactly():
    """q_j = (S_{j+1} - S_j) / (b_{j+1} - b_j), checked against exact rationals
    (up to the rounding of each ramp to a multiple of 2**-20)."""
    rng = np.random.default_rng(2)
    grid = np.array([0.0, 0.5, 2.0, 3.0, 7.5, 40.0])
    for _ in range(30):
        x = rng.integers(-3, 50, int(rng.integers(0, 40))) / 4
        exact = [sum(Fraction(min(v, b)) for v in x) for b in grid]
        for j in range(grid.size - 1):
            q = (exact[j + 1] - exact[j]) / (Fraction(grid[j + 1]) - Fraction(grid[j]))
            tolerance = x.size * 2.0**-21 + 1e-12
            assert soft_counts_above(x, grid)[j] == pytest.approx(
                float(q), abs=tolerance
            )
            # the count is an exact multiple of 2**-20
            assert (soft_counts_above(x, grid)[j] * 2**20) % 1 == 0


@pytest.mark.parametrize("name", ["irregular", "geometric", "tiny steps"])
def test_query_sensitivity_is_one_under_add_remove(name):
    """Brute force over the add/remove graph: every query moves by <= 1, all
    in the direction of the change, and some move by exactly 1."""
    grid = GRIDS[name]
    domain = tuple(sorted({*np.round(np.linspace(-4, 30, 6), 3), *grid[1:-1]}))
    g = bf.graph(domain, 6)
    nodes = np.flatnonzero(g.sizes <= 5)
    queries = np.full((len(g) + 1, grid.size - 1), np.nan)
    for node in range(len(g)):
        queries[node] = soft_counts_above(g.sorted_values(node), grid)
    largest = 0.0
    for column, added in enumerate(np.arange(g.neighbours.shape[1]) % 2 == 0):
        neighbour = g.neighbours[nodes, column]
        change = queries[neighbour] - queries[nodes]
        change = change[neighbour >= 0]
        signed = change if added else -change
        assert np.all(signed >= 0)  # monotone: adding never decreases
        assert np.all(signed <= 1)  # exactly: the counts are exact
        largest = max(largest, float(np.max(signed, initial=0.0)))
    assert largest == pytest.approx(1.0)


def test_unnormalised_differences_have_sensitivity_of_the_spacing():
    """The check above is not vacuous: S_{j+1} - S_j moves by up to b_{j+1} - b_j."""
    grid = GRIDS["irregular"]
    x = np.array([0.2, 3.0])
    sums = upper_clipped_sums(x, grid)
    with_top = upper_clipped_sums(np.append(x, 100.0), grid)
    change = np.diff(with_top) - np.diff(sums)
    np.testing.assert_allclose(change, np.diff(grid))
    assert change.max() > 1


def test_empty_column():
    grid = GRIDS["irregular"]
    np.testing.assert_array_equal(upper_clipped_sums([], grid), np.zeros(grid.size))
    np.testing.assert_array_equal(upper_clipped_sums([], grid, lower=1.0), np.zeros(7))
    np.testing.assert_array_equal(soft_counts_above([], grid), np.zeros(grid.size - 1))
    assert soft_counts_above([1.0], [2.0]).size == 0


def test_huge_values_never_overflow():
    x = np.array([1e308, 1e308, -1e308, 1e308, 5.0])
    grid = np.array([-1e308, 0.0, 1e308])
    sensitivity = np.maximum(np.abs(grid), 1.0)
    sums = upper_clipped_sums(x, grid, scale=sensitivity)
    assert np.all(np.isfinite(sums))
    np.testing.assert_allclose(sums, [-5.0, -1e308, 2.0], rtol=1e-12)
    counts = soft_counts_above(x, grid)
    assert np.all(np.isfinite(counts))
    np.testing.assert_allclose(counts, [4.0, 3.0], rtol=1e-12)
    np.testing.assert_allclose(soft_counts_below(x, grid), [1.0, 2.0], rtol=1e-12)
    many = np.full(10_000, 1.7e308)
    scaled = upper_clipped_sums(many, [1.7e308], scale=1.7e308)
    assert scaled[0] == pytest.approx(10_000.0)
    lower = lower_clipped_sums(-many, [-1.7e308], scale=1.7e308)
    assert lower[0] == pytest.approx(-10_000.0)


def test_ramps_stay_in_unit_interval_in_floating_point():
    rng = np.random.default_rng(3)
    grid = np.array([0.1, 0.1 + 1e-15, 0.3, 0.7])
    x = np.concatenate([rng.uniform(0.0, 0.8, 2000), grid])
    for value in x:
        counts = soft_counts_above([value], grid)
        assert np.all((counts >= 0) & (counts <= 1))


def test_a_row_moves_every_soft_count_by_at_most_one_exactly():
    # main summed the ramps in floating point: adding one row could move a
    # count by 1 plus rounding; now the counts are exact multiples of 2**-20
    rng = np.random.default_rng(5)
    grid = np.array([0.0, 1.0, 3.0, 10.0, 1000.0])
    for _ in range(200):
        x = np.sort(rng.uniform(0, 30, 3000) * rng.choice([1.0, 1e-7], 3000))
        grown = np.sort(np.append(x, 2.9999999))
        change = soft_counts_above(grown, grid) - soft_counts_above(x, grid)
        assert np.all((change >= 0) & (change <= 1))
