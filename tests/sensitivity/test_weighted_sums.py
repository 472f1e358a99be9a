"""Issue 28: weighted exact sums keep the unweighted sensitivity, in floats.

A row ``(x, w)`` with ``w`` in [0, 1] adds ``trunc(ŵ t)`` where the unweighted
row adds ``t``: brute force over small domains of values and weights (with
subnormal weights, ``1 - ulp``, values at and beyond the bounds and at
±max double), comparing the exact sums (FixedPoint integers) of neighbouring
datasets.
"""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from skdp.sensitivity import (
    exact_centred_sums,
    exact_clipped_gradient_sum,
    exact_clipped_gram,
    exact_moment_sums,
    exact_split_sums,
)
from skdp.sensitivity._mean import exact_weighted_count
from skdp.sensitivity._weights import grid_weights, weighted_terms

BIG = np.finfo(np.float64).max
TINY = 5e-324
WEIGHTS = [0.0, TINY, 2.0**-33, 2.0**-32, 1 / 3, 0.5, 1 - 2.0**-53, 1.0]
VALUES = [-BIG, -3.0, -1.0, 0.0, 1e-310, 0.5, 2.0, 7.0, BIG]


def _values(fixed):
    """Exact values of a FixedPoint, as Fractions."""
    scale = Fraction(2) ** fixed.exponent
    return [Fraction(v) * scale for v in fixed.numerators]


def _change(grown, base):
    return [a - b for a, b in zip(_values(grown), _values(base), strict=True)]


def _norms(diff):
    l1 = sum(abs(v) for v in diff)
    l2_squared = sum(v * v for v in diff)
    return l1, l2_squared


def _datasets(rows, weights, max_rows=2):
    """Every dataset of up to ``max_rows`` (row, weight) pairs."""
    pairs = list(itertools.product(rows, weights))
    for n in range(max_rows + 1):
        yield from itertools.combinations_with_replacement(pairs, n)


def _arrays(data, d):
    X = np.array([row for row, _ in data], dtype=float).reshape(len(data), d)
    return X, np.array([w for _, w in data], dtype=float)


def test_grid_weights_are_below_the_weight_and_exact():
    w = np.array([*WEIGHTS, 2.0**-1074, 0.7, 1 - 2.0**-33])
    g = grid_weights(w)
    assert np.all(g <= w) and np.all(g >= 0)
    assert np.all(w - g < 2.0**-32)
    units = np.ldexp(g, 32)
    assert np.array_equal(units, np.trunc(units))  # integers, exactly
    assert grid_weights(np.array([-0.0]))[0] == 0.0 and not np.signbit(
        grid_weights(np.array([-0.0]))[0]
    )


@pytest.mark.parametrize("t", [2.0**32, -(2.0**32), 2.0**32 - 1, 3.0, -1.0, 2.0**52])
def test_a_weighted_term_is_never_larger_than_the_term(t):
    w = grid_weights(np.array(WEIGHTS))
    out = weighted_terms(np.full(w.size, t), w)
    assert np.all(np.abs(out) <= abs(t))
    assert np.array_equal(out, np.trunc(out))
    if abs(t) <= 2.0**32:  # and at most the weight, in units of 2**-32
        assert np.all(np.abs(out) <= np.ldexp(w, 32))
    assert out[-1] == t  # weight 1 changes nothing


def test_weighted_centred_and_split_sums_by_brute_force():
    # one feature, every dataset of <= 2 weighted rows, every added row: the
    # centred sum moves by at most 1, the split pair by exactly ŵ in L1 norm
    # (at most 1) with both entries >= 0, and the pair's total is the
    # weighted count
    # (bases of up to one row: the sums are exact, so a row's change does
    # not depend on the others, which the last assertion checks)
    lower, upper = np.array([-1.0]), np.array([2.0])
    worst = Fraction(0)
    for data in _datasets(VALUES, WEIGHTS, max_rows=1):
        X, w = _arrays(data, 1)
        base = exact_centred_sums(X, lower, upper, w)
        split = exact_split_sums(X, lower, upper, w)
        count = exact_weighted_count(w)
        assert sum(_values(split)) == _values(count)[0]
        for row, weight in itertools.product(VALUES, WEIGHTS):
            X1, w1 = np.vstack([X, [[row]]]), np.append(w, weight)
            step = _change(exact_centred_sums(X1, lower, upper, w1), base)
            assert abs(step[0]) <= 1
            worst = max(worst, abs(step[0]))
            pair = _change(exact_split_sums(X1, lower, upper, w1), split)
            assert min(pair) >= 0
            assert sum(pair) == Fraction(float(grid_weights([weight])[0]))
            l1, l2_squared = _norms(pair)
            assert l1 <= 1 and l2_squared <= 1
            assert _change(exact_weighted_count(w1), count)[0] <= 1
            alone = exact_centred_sums(np.array([[row]]), lower, upper, [weight])
            assert step == _values(alone)
    assert worst == 1  # attained: weight 1 at a bound


def test_weighted_moment_sums_by_brute_force():
    # two features, two groups: a row moves its group's triples by ŵ <= 1 per
    # feature in L1 norm, all entries non-negative
    lower, upper = np.array([-1.0, 0.0]), np.array([2.0, 1e-300])
    rows = [(-BIG, 0.5), (0.0, BIG), (1e-310, 1e-301), (2.0, -3.0)]
    for data in _datasets(rows, [0.0, TINY, 1 / 3, 1 - 2.0**-53, 1.0]):
        X, w = _arrays(data, 2)
        codes = np.arange(len(data)) % 2
        base = exact_moment_sums(X, lower, upper, codes, 2, w)
        for row, weight in itertools.product(rows, [TINY, 1 / 3, 1 - 2.0**-53, 1.0]):
            X1, w1 = np.vstack([X, [row]]), np.append(w, weight)
            codes1 = np.append(codes, 1)
            diff = _change(exact_moment_sums(X1, lower, upper, codes1, 2, w1), base)
            assert min(diff) >= 0
            per_feature = np.array(diff, dtype=object).reshape(2, 3, 2).sum(axis=1)
            expected = Fraction(float(grid_weights([weight])[0]))
            assert all(v == expected for v in per_feature[1])
            assert all(v == 0 for v in per_feature[0])
            l1, l2_squared = _norms(diff)
            assert l1 <= 2 and l2_squared <= 2


@pytest.mark.parametrize("intercept", [False, True])
def test_weighted_gram_and_cross_by_brute_force(intercept):
    # G moves by at most 1 in Frobenius norm (upper triangle), b by at most 1
    rows = [(BIG, -BIG), (3.0, 4.0), (1e-310, 0.0), (-0.5, 2.0)]
    targets = [-1.0, 0.3, 1.0]
    for (row, weight), t in itertools.product(
        itertools.product(rows, WEIGHTS), targets
    ):
        X0 = np.array([[1.0, 1.0]])
        X1 = np.vstack([X0, [row]])
        w0, w1 = np.array([0.7]), np.array([0.7, weight])
        g0, c0 = exact_clipped_gram(
            X0, 1.0, np.array([0.5]), intercept=intercept, sample_weight=w0
        )
        g1, c1 = exact_clipped_gram(
            X1, 1.0, np.array([0.5, t]), intercept=intercept, sample_weight=w1
        )
        _, gram_l2 = _norms(_change(g1, g0))
        _, cross_l2 = _norms(_change(c1, c0))
        assert gram_l2 <= 1 and cross_l2 <= 1


def test_weighted_gradient_sum_by_brute_force():
    rows = [(BIG, -BIG), (3.0, 4.0), (1e-310, 0.0), (-0.5, 2.0)]
    residuals = [(-1.0,), (0.5,), (BIG,)]
    for (row, weight), r in itertools.product(
        itertools.product(rows, WEIGHTS), residuals
    ):
        X = np.array([[1.0, 1.0], row])
        R = np.array([[0.25], r])
        w = np.array([1.0, weight])
        both = exact_clipped_gradient_sum(
            X, lambda a, b, R=R: R[a:b], 1.0, intercept=True, sample_weight=w
        )
        first = exact_clipped_gradient_sum(
            X[:1], lambda a, b, R=R: R[a:b], 1.0, intercept=True, sample_weight=w[:1]
        )
        _, l2_squared = _norms(_change(both, first))
        assert l2_squared <= 1


def test_weights_one_give_the_unweighted_sums_exactly():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 3, size=(200, 3)), [[BIG, -BIG, 1e-310]]])
    lower, upper = np.array([-1.0, -2.0, 0.0]), np.array([1.0, 5.0, 1e-300])
    ones = np.ones(X.shape[0])
    assert exact_centred_sums(X, lower, upper, ones).numerators == (
        exact_centred_sums(X, lower, upper).numerators
    )
    a, b = exact_split_sums(X, lower, upper, ones), exact_split_sums(X, lower, upper)
    assert a == b
    a = exact_moment_sums(X, lower, upper, sample_weight=ones)
    assert a == exact_moment_sums(X, lower, upper)
    t = np.clip(rng.normal(size=X.shape[0]), -1, 1)
    assert exact_clipped_gram(X, 2.0, t, intercept=True, sample_weight=ones) == (
        exact_clipped_gram(X, 2.0, t, intercept=True)
    )
    R = rng.normal(size=(X.shape[0], 2))
    weighted = exact_clipped_gradient_sum(
        X, lambda a, b: R[a:b], 1.0, sample_weight=ones
    )
    assert weighted == exact_clipped_gradient_sum(X, lambda a, b: R[a:b], 1.0)


def test_weight_zero_is_the_row_removed_exactly():
    rng = np.random.default_rng(1)
    X = rng.normal(0, 3, size=(300, 2))
    w = rng.uniform(size=300)
    w[::3] = 0.0
    kept = w > 0
    lower, upper = np.array([-2.0, -1.0]), np.array([2.0, 4.0])
    assert exact_split_sums(X, lower, upper, w) == exact_split_sums(
        X[kept], lower, upper, w[kept]
    )
    assert exact_moment_sums(X, lower, upper, sample_weight=w) == exact_moment_sums(
        X[kept], lower, upper, sample_weight=w[kept]
    )


def test_weighted_sums_match_the_weighted_float_sums():
    # not a bias larger than the grids: Σ ŵ t against numpy's Σ w t
    rng = np.random.default_rng(2)
    X = rng.uniform(-3, 3, size=(5_000, 2))
    w = rng.uniform(size=5_000)
    lower, upper = np.array([-2.0, -1.0]), np.array([2.0, 4.0])
    centre, radius = (lower + upper) / 2, (upper - lower) / 2
    expected = (w[:, None] * (np.clip(X, lower, upper) - centre) / radius).sum(0)
    got = exact_centred_sums(X, lower, upper, w).as_float()
    np.testing.assert_allclose(got, expected, atol=5_000 * 2.0**-31)
    assert float(exact_weighted_count(w).as_float()) == pytest.approx(
        math.fsum(w), abs=5_000 * 2.0**-32
    )
