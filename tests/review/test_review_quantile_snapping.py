"""Adversarial review of the joint quantiles' snapping on the finest grid
(ε per feature >= 1024: rows moved to their nearest grid point, adjacent
blocks of equal rank sampled as one): each test is a reproducer of a finding
(it failed before its fix) or an attack that held (named so in its
comment)."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

import skdp
import skdp.mechanisms._joint_quantile as mechanism
from skdp.mechanisms._joint_quantile import joint_quantile_blocks
from skdp.mechanisms._random import check_random_source
from skdp.sensitivity._joint_quantile import (
    joint_quantile_utility,
    rank_blocks,
    refined_split_bits,
    relative_grid_counts,
    sparse_rank_blocks,
)
from skdp.sensitivity._quantile_grid import MAX_REFINEMENT, RelativeGrid
from skdp.stats._quantile_joint import DENSE_POINTS, _merged_sample, joint_release
from tests.sensitivity._nearest_point import nearest_grid_index

BIG = float(np.finfo(np.float64).max)

# -- claim 1: the merged sampler has the law of the unmerged one --------------


class _Branch(Exception):
    """Raised by a scripted choice that has no recorded value yet."""

    def __init__(self, options):
        self.options = options


def _exact_law(run, monkeypatch):
    """Exact law of ``run()``'s output: every path of the sampler's random
    choices (weighted draws and uniform subsets of offsets), depth first."""
    law, pending = {}, [((), 1.0)]
    while pending:
        script, probability = pending.pop()
        taken = []

        def choose(options, script=script, taken=taken):
            if len(taken) < len(script):
                taken.append(script[len(taken)])
                return taken[-1]
            raise _Branch(options)

        def draw(log_weights, *, random_state=None):
            w = np.exp(np.asarray(log_weights, float) - np.max(log_weights))
            return choose(list(enumerate(w / w.sum())))

        def subset(size, k, source):
            subsets = list(itertools.combinations(range(int(size)), k))
            return list(choose([(s, 1.0 / len(subsets)) for s in subsets]))

        monkeypatch.setattr(mechanism, "sample_log_weights", draw)
        monkeypatch.setattr(mechanism, "_distinct_offsets", subset)
        try:
            out = run()
        except _Branch as branch:
            pending += [((*script, v), probability * p) for v, p in branch.options if p]
            continue
        finally:
            monkeypatch.undo()
        law[out] = law.get(out, 0.0) + probability
    return law


def _states(blocks, offsets, sizes):
    first = np.cumsum(sizes) - sizes
    return tuple(int(first[b]) + int(o) for b, o in zip(blocks, offsets, strict=True))


def _brute_force_law(ranks, sizes, n, levels, epsilon):
    """exp(ε u / 4) over strictly increasing tuples of the expanded states."""
    expanded = np.repeat(ranks, sizes.astype(np.int64))
    weights = {
        c: math.exp(epsilon / 4 * joint_quantile_utility(expanded[list(c)], n, levels))
        for c in itertools.combinations(range(expanded.size), len(levels))
    }
    total = sum(weights.values())
    return {c: w / total for c, w in weights.items()}


@pytest.mark.parametrize(
    "below, atoms, multiplicity, levels, epsilon",
    [
        # snapped rows: atoms only; adjacent atoms chain runs of equal rank
        ([0, 0, 2, 2, 3], [0, 2, 0, 1, 0], [1, 2, 1, 2, 1], [0.3, 0.7], 3.0),
        # an atom larger than 2**split (spread states), three levels in a run
        ([0, 3, 4], [3, 1, 0], [2, 1, 1], [0.2, 0.5, 0.9], 2.0),
        # levels 0 and 1 (DPClipper's quantile method allows them)
        ([0, 0, 1, 1], [0, 1, 0, 0], [1, 1, 2, 1], [0.0, 1.0], 5.0),
    ],
)
def test_merged_sampler_has_the_exact_law_of_the_unmerged_states(
    below, atoms, multiplicity, levels, epsilon, monkeypatch
):
    # held: with every random choice of the sampler enumerated, merging
    # adjacent blocks of equal rank gives the law of the unmerged sampler,
    # and both the exponential mechanism's law over the expanded states
    ranks, sizes, _, _ = rank_blocks(
        np.array(below), np.array(atoms), 1, np.array(multiplicity)
    )
    assert np.any(ranks[1:] == ranks[:-1])  # something to merge
    n, levels = int(below[-1] + atoms[-1]), np.array(levels)
    merged = _exact_law(
        lambda: _states(*_merged_sample(ranks, sizes, n, levels, epsilon, 0), sizes),
        monkeypatch,
    )
    unmerged = _exact_law(
        lambda: _states(
            *joint_quantile_blocks(ranks, sizes, n, levels, epsilon, random_state=0),
            sizes,
        ),
        monkeypatch,
    )
    exact = _brute_force_law(ranks, sizes, n, levels, epsilon)
    for law in (merged, unmerged):
        assert set(law) <= set(exact)
        assert max(abs(law.get(c, 0.0) - p) for c, p in exact.items()) < 1e-12


# -- finding: a dense grid of more than 2**63 states ---------------------------

#: 2**17 doubles 1 apart: the finest grid is every double, counted densely
#: (131,072 points), each with 4097 states of 2**34 copies, 2**63.0003 states.
SPARSE_DOUBLES = (2.0**52, 2.0**52 + 131071)


def test_a_gap_of_more_than_int64_states_on_a_dense_grid_keeps_its_weight():
    # finding: the merge cast the dense counts' float sizes to int64, which
    # wrapped the run (the atom's top states + the gap above it) to a
    # negative size, weight 0: with one row at the lower bound the median was
    # never above it (P = 1 - 2e-9 it is), while with a second row in the
    # middle it always was: infinite privacy loss between neighbours
    lower, upper = SPARSE_DOUBLES
    grid = RelativeGrid(lower, upper, MAX_REFINEMENT)
    assert grid.size <= DENSE_POINTS
    for seed in range(3):
        with np.errstate(all="ignore"):  # as the estimators release
            out = joint_release(
                np.array([lower]),
                lower,
                upper,
                np.array([0.5]),
                1024.0,
                check_random_source(seed),
            )
        assert out[0] > lower


def test_an_all_missing_column_on_such_bounds_does_not_raise_after_the_charge():
    # finding: zero present rows make the whole grid one gap block, wrapped
    # to weight 0: nanquantile charged ε and then raised "every weight is zero"
    accountant = skdp.BudgetAccountant()
    X = np.array([[np.nan], [np.nan]])
    out = skdp.tools.nanquantile(
        X, [0.5], epsilon=1e5, bounds=SPARSE_DOUBLES, axis=0, accountant=accountant
    )
    assert SPARSE_DOUBLES[0] <= out[0, 0] <= SPARSE_DOUBLES[1]
    assert accountant.total()[0] == 1e5


# -- claim 2: snapping is the exact nearest point, the same on both paths -----


def _values_at_the_transitions(grid):
    """Points, their neighbouring doubles, cell midpoints and their
    neighbours around every place the index formula changes (0, T1, the
    binade starts, T2, the bounds)."""
    b = grid.bits
    keys = [grid.first, grid.last, 0, 1 << (b + 1), grid._index_t2]
    keys += [(1 << (b + 1)) + k * (1 << b) for k in (1, 2, 17, 33)]
    keys += [-k for k in keys]
    index = np.array([i + d for i in keys for d in (-1, 0, 1)], dtype=np.int64)
    index = np.clip(index, grid.first, grid.last - 1)
    below, above = grid.points(index), grid.points(index + 1)
    middle = below / 2 + above / 2
    values = np.concatenate(
        [
            below,
            np.nextafter(below, np.inf),
            np.nextafter(above, -np.inf),
            middle,
            np.nextafter(middle, np.inf),
            np.nextafter(middle, -np.inf),
        ]
    )
    low, high = grid.points(np.array([grid.first, grid.last]))
    return np.clip(values, low, high)


@pytest.mark.parametrize(
    "lower, upper",
    [
        (-1e-300, 1e300),  # straddles 0, lopsided
        (-BIG, -1e300),  # negative only, near the largest double
        (-1e-320, 1e-320),  # subnormal width: the generic path
        (2.0**-1030, 2.0**-1020),  # subnormal to normal
        SPARSE_DOUBLES,  # every double a point: dense counts
        (-3.0, 1e-5),
    ],
)
def test_nearest_index_at_the_transitions_is_the_exact_nearest_point(lower, upper):
    # held: against exact rational distances, symmetric, inside the bounds,
    # and the dense and sparse counts of the snapped rows give the same blocks
    grid = RelativeGrid(lower, upper, MAX_REFINEMENT)
    values = _values_at_the_transitions(grid)
    index = grid.nearest_index(values)
    np.testing.assert_array_equal(index, nearest_grid_index(grid, values))
    if grid.first == -grid.last:
        np.testing.assert_array_equal(grid.nearest_index(-values), -index)
    assert np.all((grid.first <= index) & (index <= grid.last))
    snapped = grid.snap(values)
    if grid.size <= 1 << 21:
        split = refined_split_bits(MAX_REFINEMENT)
        below, atoms = relative_grid_counts(snapped, grid)
        multiplicity = grid.multiplicity(np.arange(grid.first, grid.last + 1))
        dense = rank_blocks(below, atoms, split, multiplicity)
        sparse = sparse_rank_blocks(snapped, grid, split)
        for a, b in zip(dense[:1] + dense[2:], sparse[:1] + sparse[2:], strict=True):
            np.testing.assert_array_equal(a, b)
        exact = [int(s) for s in sparse[1]]
        assert [Fraction(float(s)) for s in dense[1]] == exact


def test_a_snapped_release_reads_each_row_alone():
    # held: a row's snapped value does not depend on the other rows (no
    # sort, unique or rounding across rows), here at half-way points
    grid = RelativeGrid(0.0, 1.0, MAX_REFINEMENT)
    rng = np.random.default_rng(0)
    column = np.r_[_values_at_the_transitions(grid), rng.uniform(0, 1, 200)]
    alone = np.array([grid.snap(np.array([v]))[0] for v in column])
    np.testing.assert_array_equal(grid.snap(column), alone)
    np.testing.assert_array_equal(grid.snap(column[::-1])[::-1], alone)


# -- claim 3: the snap decision is the public ε per feature (and row) ---------


@pytest.mark.parametrize("epsilon, snaps", [(4096.0, True), (4095.0, False)])
def test_grouped_fits_snap_from_a_row_level_epsilon_per_feature_of_1024(epsilon, snaps):
    # held: 2 features and groups of up to 2 rows: ε_r / d = ε / 4 decides,
    # read from the public parameters only (the fit on the raw rows is the fit
    # on the snapped rows exactly when it snaps)
    rng = np.random.default_rng(0)
    x = np.where(rng.random(200) < 0.3, 0.3485, np.round(rng.uniform(0, 1, 200), 4))
    X = np.c_[x, x[::-1]]
    groups = np.repeat(np.arange(100), 2)
    fits = [
        skdp.PrivateQuantile(
            [0.1, 0.3, 0.5],
            epsilon=epsilon,
            bounds=(0, 1),
            max_rows_per_group=2,
            random_state=0,
            accountant=skdp.BudgetAccountant(),
        )
        .fit(data, groups=groups)
        .quantiles_
        for data in (X, RelativeGrid(0.0, 1.0, MAX_REFINEMENT).snap(X))
    ]
    assert np.array_equal(*fits) == snaps
