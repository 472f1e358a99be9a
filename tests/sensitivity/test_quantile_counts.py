"""Candidate rank scores from cell counts (no sort) against the sorted path."""

import itertools

import numpy as np
import pytest

from skdp.mechanisms import check_random_source, permute_and_flip
from skdp.preprocessing import PrivateQuantile
from skdp.sensitivity import _quantile as quantile_counts
from skdp.sensitivity._quantile import (
    candidate_cell_counts,
    candidate_rank_scores,
    quantile_score_sensitivity,
    scores_from_cell_counts,
)
from skdp.stats._quantile import candidate_grid, sorted_clipped_column

LEVELS = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)
TINY = 5e-324


def default_grid(lower, upper, m=None):
    return candidate_grid(m, np.array([lower]), np.array([upper]))[:, 0]


def dataset(kind, rng):
    """``(values, candidates, lower, upper)`` of one hard case."""
    if kind == "continuous":
        return rng.normal(5, 2, 3000), default_grid(0.0, 10.0), 0.0, 10.0
    if kind == "ties on candidates":  # every value is a candidate or a bound
        grid = default_grid(0.0, 10.0, 11)
        return rng.choice(grid, 5000), grid, 0.0, 10.0
    if kind == "92% zeros":
        x = np.where(rng.random(4000) < 0.92, 0.0, rng.lognormal(8, 1, 4000))
        return x, default_grid(0.0, 1e5), 0.0, 1e5
    if kind == "out of bounds":  # clipped rows tie with the end candidates
        return rng.uniform(-50, 60, 2000), default_grid(-1.0, 2.0, 7), -1.0, 2.0
    if kind == "candidates beyond the bounds":  # clipping decides the ties
        grid = np.array([-10.0, -1.0, 0.0, 0.5, 2.0, 7.0])
        return rng.uniform(-5, 5, 500), grid, -1.0, 2.0
    if kind == "uneven candidates":  # the interpolation guesses wrong
        grid = np.array([0.0, 1e-9, 1e-3, 0.5, 0.999, 1.0])
        x = np.concatenate([rng.random(300), rng.random(300) * 1e-8, grid])
        return x, grid, 0.0, 1.0
    if kind == "duplicated candidates":
        grid = np.array([0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 3.0])
        return rng.integers(-1, 5, 400).astype(float), grid, 0.0, 3.0
    if kind == "extreme magnitudes":
        big = np.finfo(float).max
        x = np.concatenate([[-big, big, 0.0, -0.0], rng.normal(0, 1e307, 500)])
        return x, default_grid(-big, big), -big, big
    if kind == "subnormal bounds":  # linspace repeats points this fine
        grid = default_grid(0.0, 300 * TINY)
        x = rng.integers(-5, 305, 1000) * TINY
        return x, grid, 0.0, 300 * TINY
    if kind == "several blocks":  # more rows than one counting block
        n = 2 * quantile_counts.COUNT_BLOCK_ROWS + 17
        return rng.normal(0, 1, n).round(2), default_grid(-3.0, 3.0), -3.0, 3.0
    raise ValueError(kind)


KINDS = [
    "continuous",
    "ties on candidates",
    "92% zeros",
    "out of bounds",
    "candidates beyond the bounds",
    "uneven candidates",
    "duplicated candidates",
    "extreme magnitudes",
    "subnormal bounds",
    "several blocks",
]


@pytest.mark.parametrize("kind", KINDS)
def test_scores_from_counts_equal_the_sorted_scores_bit_for_bit(kind):
    x, grid, lower, upper = dataset(kind, np.random.default_rng(KINDS.index(kind)))
    column = sorted_clipped_column(x, lower, upper)
    counts = candidate_cell_counts(x, grid, lower, upper)
    assert counts.dtype == np.int64 and counts.sum() == x.size
    for q in LEVELS:
        expected = candidate_rank_scores(column, grid, q)
        got = scores_from_cell_counts(counts, grid, q)
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


def test_the_hard_cases_are_hard():
    # the cases above do reach what they are named for
    rng = np.random.default_rng(0)
    grid = dataset("subnormal bounds", rng)[1]
    assert np.any(np.diff(grid) == 0)  # repeated candidates
    x, grid, lower, upper = dataset("uneven candidates", rng)
    clipped = np.clip(x, lower, upper)
    guess = np.clip(np.ceil((clipped - grid[0]) / 0.2), 0, grid.size).astype(int)
    assert np.any(guess != np.searchsorted(grid, clipped))  # the fallback is used


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_tiny_columns(n):
    x = np.array([0.3, 0.3, 7.0])[:n]
    grid = default_grid(0.0, 1.0, 11)
    counts = candidate_cell_counts(x, grid, 0.0, 1.0)
    column = sorted_clipped_column(x, 0.0, 1.0)
    for q in LEVELS:
        np.testing.assert_array_equal(
            scores_from_cell_counts(counts, grid, q),
            candidate_rank_scores(column, grid, q),
        )


def test_counts_of_blocks_add_up():
    # the chunked use (e.g. one count per Dask chunk): empty chunks included
    rng = np.random.default_rng(1)
    x = np.where(rng.random(10_000) < 0.5, 2.0, rng.normal(2, 3, 10_000))
    grid = default_grid(-1.0, 6.0, 50)
    whole = candidate_cell_counts(x, grid, -1.0, 6.0)
    cuts = [0, 0, 17, 4000, 4000, 9999, 10_000]
    parts = [
        candidate_cell_counts(x[a:b], grid, -1.0, 6.0)
        for a, b in itertools.pairwise(cuts)
    ]
    np.testing.assert_array_equal(sum(parts), whole)


def test_cells_by_direct_counting():
    # each cell by its definition: gaps between candidates, then candidates
    rng = np.random.default_rng(2)
    grid = np.array([0.0, 0.25, 0.5, 1.0])
    x = np.concatenate([rng.choice(grid, 200), rng.uniform(-0.5, 1.5, 200)])
    counts = candidate_cell_counts(x, grid, 0.0, 1.0)
    clipped = np.clip(x, 0.0, 1.0)
    edges = np.concatenate([[-np.inf], grid, [np.inf]])
    for j in range(grid.size + 1):
        inside = (clipped > edges[j]) & (clipped < edges[j + 1])
        assert counts[2 * j] == inside.sum()
    for j, c in enumerate(grid):
        assert counts[2 * j + 1] == (clipped == c).sum()


def test_nan_counts_above_every_candidate_as_in_a_sorted_column():
    x = np.array([np.nan, 0.2, 0.7, np.nan])
    grid = default_grid(0.0, 1.0, 5)
    counts = candidate_cell_counts(x, grid, 0.0, 1.0)
    assert counts[-1] == 2
    column = sorted_clipped_column(x, 0.0, 1.0)
    np.testing.assert_array_equal(
        scores_from_cell_counts(counts, grid, 0.5),
        candidate_rank_scores(column, grid, 0.5),
    )


def sort_based_release(X, bounds, levels, epsilon, seed, candidates=None):
    """The permute-and-flip release as it was before the counts (reference)."""
    source = check_random_source(seed)
    lower = np.full(X.shape[1], float(bounds[0]))
    upper = np.full(X.shape[1], float(bounds[1]))
    grid = candidate_grid(candidates, lower, upper)
    each = epsilon / (len(levels) * X.shape[1])
    out = np.empty((len(levels), X.shape[1]))
    for j in range(X.shape[1]):
        column = sorted_clipped_column(X[:, j], lower[j], upper[j])
        for k, q in enumerate(levels):
            scores = candidate_rank_scores(column, grid[:, j], q)
            sensitivity = float(quantile_score_sensitivity(q))
            index = permute_and_flip(
                scores, each, sensitivity, monotonic=False, random_state=source
            )
            out[k, j] = grid[index, j]
    return out


@pytest.mark.parametrize(
    "bounds, candidates",
    [((0.0, 100.0), None), ((-5.0, 5.0), 7), ((0.0, 3.0), [0.5, 1.0, 2.0, 9.0])],
)
def test_fit_releases_what_the_sort_based_release_did(bounds, candidates):
    rng = np.random.default_rng(4)
    X = np.column_stack(
        [
            rng.normal(40, 13, 2000).round(),
            np.where(rng.random(2000) < 0.9, 0.0, rng.lognormal(2, 1, 2000)),
        ]
    )
    levels = (0.25, 0.5, 0.75)
    for seed in range(20):
        est = PrivateQuantile(
            levels,
            epsilon=0.3,
            bounds=bounds,
            method="permute_and_flip",
            candidates=candidates,
            random_state=seed,
        ).fit(X)
        expected = sort_based_release(X, bounds, levels, 0.3, seed, candidates)
        np.testing.assert_array_equal(est.quantiles_, expected)
