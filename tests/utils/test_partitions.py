"""Bounds on the partitions a group touches: the sensitivities, the kept
rows and the selection's threshold, each against brute force."""

import itertools
import math

import numpy as np
import pytest

from skdp.mechanisms._partition import _scale, partition_threshold
from skdp.stats._partition_counts import bounded_histogram_counts, bounded_joint_counts
from skdp.utils._partitions import partition_contribution, partition_rows, sqrt_up


def _moves(k, p, c):
    """Every vector of a group's moves: at most p partitions, 1..c rows
    each, at most k rows in all."""
    for n in range(1, p + 1):
        for split in itertools.combinations_with_replacement(range(1, c + 1), n):
            if sum(split) <= k:
                yield split


def test_contribution_is_the_largest_move_over_every_group():
    for k in range(1, 7):
        for p, c in itertools.product(range(1, k + 2), range(1, k + 2)):
            bound = partition_contribution(k, p, c)
            moves = list(_moves(k, min(p, k), min(c, k)))
            assert bound.total == max(sum(m) for m in moves), (k, p, c)
            assert bound.squares == max(sum(x * x for x in m) for m in moves)
    # None is k (the k-row bound alone): L1 and L2 both k
    assert partition_contribution(7) == partition_contribution(7, 7, 7)
    assert partition_contribution(7).squares == 49


def test_l2_is_rounded_up_at_the_extremes():
    huge = 2**53  # the largest accepted k: k² is not a double
    bound = partition_contribution(huge, 3, huge - 1)
    root = bound.l2()
    assert root * root >= bound.squares and sqrt_up(2) ** 2 >= 2
    assert math.nextafter(root, 0) ** 2 < bound.squares


def _data(rng, n_groups, max_rows, n_bins):
    sizes = rng.integers(1, max_rows + 1, n_groups)
    groups = np.repeat(np.arange(n_groups), sizes)
    return groups, rng.integers(0, n_bins, groups.size)


@pytest.mark.parametrize("p, c", [(1, 1), (2, 1), (2, 3), (5, 2)])
def test_kept_rows_obey_the_bounds_and_depend_on_the_groups_own_rows(p, c):
    rng = np.random.default_rng(p * 10 + c)
    bound = partition_contribution(8, p, c)
    for trial in range(10):
        groups, bins = _data(rng, 6, 8, 5)
        values = np.column_stack([bins, rng.normal(size=bins.size)])
        kept = partition_rows(groups, bins, bound, (trial, 7), [values])
        for g in range(6):
            mine = bins[kept][groups[kept] == g]
            assert len(set(mine.tolist())) <= p
            assert np.bincount(mine).max() <= c
            # all of a group's rows are kept when they fit the bounds
            theirs = bins[groups == g]
            fits = len(set(theirs.tolist())) <= p and np.bincount(theirs).max() <= c
            assert not fits or mine.size == theirs.size
        # another group added: the first groups keep the same rows
        extra_groups, extra_bins = _data(rng, 3, 8, 5)
        more_groups = np.r_[groups, extra_groups + 6]
        more_bins = np.r_[bins, extra_bins]
        more_values = np.column_stack([more_bins, rng.normal(size=more_bins.size)])
        more_values[: bins.size] = values
        more = partition_rows(more_groups, more_bins, bound, (trial, 7), [more_values])
        np.testing.assert_array_equal(more[more < bins.size], kept)
        # any row order: the same rows
        order = rng.permutation(bins.size)
        shuffled = partition_rows(
            groups[order], bins[order], bound, (trial, 7), [values[order]]
        )
        np.testing.assert_array_equal(np.sort(order[shuffled]), kept)


def test_minus_zero_and_nans_are_one_partition():
    values = np.array([0.0, -0.0, np.nan, -np.nan, 1.0])
    kept = partition_rows(
        np.zeros(5), values, partition_contribution(5, 2, 1), (0, 0), []
    )
    assert kept.size == 2  # two partitions ({0.0, -0.0} and NaN or 1.0), one row each


@pytest.mark.parametrize("p, c", [(1, 1), (2, 1), (2, 2), (3, 2)])
def test_histograms_move_by_the_stated_bound_and_no_more(p, c):
    # every group of k = 4 rows over 3 bins added to a fixed data set: the
    # counts move by at most L1 = total and L2² = squares, both attained
    k = 4
    bound = partition_contribution(k, p, c)
    edges = [np.array([0.0, 1.0, 2.0, 3.0])]
    base = np.array([0.5, 1.5, 1.5, 2.5])
    base_groups = np.array([0, 0, 1, 2])
    before = np.array(
        bounded_histogram_counts(
            base[:, None], edges, base_groups, bound, (1, 2)
        ).numerators
    )
    worst_l1 = worst_sq = 0
    for cells in itertools.combinations_with_replacement([0.5, 1.5, 2.5], k):
        X = np.r_[base, cells][:, None]
        groups = np.r_[base_groups, [9] * k]
        after = bounded_histogram_counts(X, edges, groups, bound, (1, 2)).numerators
        move = np.array(after) - before
        assert (move >= 0).all()
        worst_l1 = max(worst_l1, int(move.sum()))
        worst_sq = max(worst_sq, int((move**2).sum()))
        joint = bounded_joint_counts(X, edges, groups, bound, (1, 2)).numerators
        assert joint == after  # one feature: the grid is the histogram
    assert (worst_l1, worst_sq) == (bound.total, bound.squares)


def _tail_sum(bound, t, threshold):
    """Largest Σ_i P(m_i + Z >= τ) over every group's moves, exactly."""
    norm = np.tanh(1 / (2 * t))
    z = np.arange(-2000, 2000)
    pmf = norm * np.exp(-np.abs(z) / t)

    def tail(m):
        return pmf[z >= threshold - m].sum()

    k, p, c = bound.total, bound.partitions, bound.per_partition
    return max(sum(tail(m) for m in ms) for ms in _moves(k, p, c))


@pytest.mark.parametrize(
    "k, p, c, epsilon, delta",
    [
        (5, 5, 5, 1.0, 1e-6),
        (5, 2, 1, 1.0, 1e-6),
        (6, 3, 2, 2.0, 1e-3),
        (4, 4, 1, 0.5, 1e-4),
    ],
)
def test_threshold_is_the_smallest_that_bounds_every_groups_tails(
    k, p, c, epsilon, delta
):
    bound = partition_contribution(k, p, c)
    threshold = partition_threshold(epsilon, delta, bound)
    num, den = _scale(epsilon, bound)
    t = num / den
    assert t >= bound.total / epsilon
    assert _tail_sum(bound, t, threshold) <= delta
    assert _tail_sum(bound, t, threshold - 1) > delta


def test_one_row_in_one_partition_is_the_row_level_selection():
    bound = partition_contribution(5, 1, 1)
    assert partition_threshold(1.0, 1e-6, bound) == partition_threshold(1.0, 1e-6)
    # k = 5, eps = 1, delta = 1e-6: 76 when every split is possible (the
    # Notes' figure), 72 for one value, 30 for two values of one row each
    assert partition_threshold(1.0, 1e-6, partition_contribution(5)) == 76
    assert partition_threshold(1.0, 1e-6, partition_contribution(5, 1)) == 72
    assert partition_threshold(1.0, 1e-6, partition_contribution(5, 2, 1)) == 30


def _selection_law(count, t, threshold, support):
    """P(not released) and P(noisy count = v), v in ``support``, of one key."""
    if count == 0:  # an absent key is never released
        return np.r_[1.0, np.zeros(support.size)]
    released = np.tanh(1 / (2 * t)) * np.exp(-np.abs(support - count) / t)
    return np.r_[max(0.0, 1.0 - released.sum()), released]


@pytest.mark.parametrize(
    "k, p, c, epsilon, delta", [(3, 2, 2, 1.0, 1e-3), (4, 2, 1, 0.5, 1e-4)]
)
def test_bounded_selection_is_dp_for_every_group_exactly(k, p, c, epsilon, delta):
    # the exact law of the released (key, noisy count) pairs of the keys a
    # group touches (absent before, or of count 1 or 40), with and without
    # it, compared in both directions by the hockey-stick divergence
    bound = partition_contribution(k, p, c)
    threshold = partition_threshold(epsilon, delta, bound)
    num, den = _scale(epsilon, bound)
    t = num / den
    support = np.arange(threshold, 40 + k + int(30 * t))
    worst = 0.0
    for moves in _moves(k, bound.partitions, bound.per_partition):
        for before in itertools.product([0, 1, 40], repeat=len(moves)):
            p0 = p1 = np.ones(1)
            for b, m in zip(before, moves, strict=True):
                p0 = np.outer(p0, _selection_law(b, t, threshold, support)).ravel()
                p1 = np.outer(p1, _selection_law(b + m, t, threshold, support)).ravel()
            for a, b in ((p0, p1), (p1, p0)):
                worst = max(worst, np.maximum(a - np.exp(epsilon) * b, 0.0).sum())
    assert delta / 10 < worst <= delta  # stated, and not far off it


def test_a_group_whose_label_sorts_first_changes_no_other_groups_rows():
    # its (group, partition) pairs take the first codes, shifting every
    # other pair's code: the rows kept within a partition must be keyed by
    # the pair's values, never by its code
    rng = np.random.default_rng(3)
    bound = partition_contribution(8, 2, 1)
    groups, bins = _data(rng, 40, 8, 3)
    values = np.column_stack([bins, rng.normal(size=bins.size)])
    kept = partition_rows(groups, bins, bound, (5, 7), [values])
    more_groups = np.r_[np.full(4, -1), groups]
    more_bins = np.r_[np.arange(4) % 3, bins]
    more_values = np.vstack([np.column_stack([more_bins[:4], np.zeros(4)]), values])
    more = partition_rows(more_groups, more_bins, bound, (5, 7), [more_values])
    np.testing.assert_array_equal(more[more >= 4] - 4, kept)


def test_each_group_draws_its_own_partitions():
    # every group has rows in partitions 0 and 1 and keeps one of them: a
    # hash of the partition's value alone made all groups keep the same one
    groups = np.repeat(np.arange(2000), 2)
    bins = np.tile([0, 1], 2000)
    bound = partition_contribution(2, 1, 2)
    for seed in range(2):
        kept = partition_rows(groups, bins, bound, (seed, 7), [bins[:, None]])
        share = np.mean(bins[kept] == 0)
        assert abs(share - 0.5) < 4 * np.sqrt(0.25 / 2000), share
