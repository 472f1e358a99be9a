"""Brute-force checks of the exact clipped sums behind the linear models.

For every row of an adversarial pool (at the clipping norm, far outside it,
near the float limits, zero, tiny) and random datasets, adding the row must
move the exact sums by at most the stated sensitivity, checked in integer
arithmetic on the released numerators (no float tolerance).
"""

import math

import numpy as np
import pytest

from skdp.sensitivity import exact_clipped_gradient_sum, exact_clipped_gram
from skdp.sensitivity._linear import GRADIENT_BITS

GRAM_UNIT = 1 << 32  # 2**(2 * GRAM_BITS): the numerators' unit is 2**-32
GRADIENT_UNIT = 1 << GRADIENT_BITS


def adversarial_rows(d, rng):
    rows = [
        np.zeros(d),
        np.full(d, 1e-300),
        np.full(d, 1.0 / math.sqrt(d)),  # exactly at norm 1
        np.full(d, 1e154),  # squares overflow
        np.full(d, 1.7e308),
        np.full(d, -1.7e308),
        np.r_[1e308, -1e308, np.zeros(d - 2)] if d >= 2 else np.array([1e308]),
    ]
    for scale in (1e-8, 0.5, 1.0, 3.0, 1e6, 1e200):
        rows.extend(rng.normal(size=(4, d)) * scale)
    return np.array(rows)


def l2_norm_of_ints(values):
    return math.isqrt(sum(v * v for v in values))  # floor of the exact norm


def differences(a, b):
    return [x - y for x, y in zip(a.numerators, b.numerators, strict=True)]


@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("d", [1, 3, 7])
def test_gram_moves_by_at_most_one(d, intercept):
    rng = np.random.default_rng(d)
    pool = adversarial_rows(d, rng)
    base = rng.normal(size=(5, d)) * 2
    targets = rng.uniform(-1, 1, size=5)
    gram0, cross0 = exact_clipped_gram(base, 1.5, targets, intercept=intercept)
    for row in pool:
        for t in (-1.0, 0.3, 1.0):
            X = np.vstack([base, row])
            gram1, cross1 = exact_clipped_gram(
                X, 1.5, np.r_[targets, t], intercept=intercept
            )
            # sum of squares of exact integers <= unit**2 (norm <= 1 exactly)
            diff = differences(gram1, gram0)
            assert sum(v * v for v in diff) <= GRAM_UNIT**2
            diff = differences(cross1, cross0)
            assert sum(v * v for v in diff) <= GRAM_UNIT**2


@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize(("d", "k"), [(1, 1), (3, 1), (4, 3)])
def test_gradient_sum_moves_by_at_most_one(d, k, intercept):
    rng = np.random.default_rng(10 * d + k)
    pool = adversarial_rows(d, rng)
    residual_pool = [
        np.zeros(k),
        np.ones(k),
        np.full(k, -1.0),
        np.full(k, 1e300),
        rng.normal(size=k) * 1e-5,
        rng.normal(size=k),
    ]
    base = rng.normal(size=(6, d))
    base_r = rng.normal(size=(6, k))
    for norm in (0.7, 1.0, 4.0):
        total0 = exact_clipped_gradient_sum(
            base, lambda a, b: base_r[a:b], norm, intercept=intercept
        )
        for row in pool:
            for r in residual_pool:
                X = np.vstack([base, row])
                R = np.vstack([base_r, r])
                total1 = exact_clipped_gradient_sum(
                    X, lambda a, b, R=R: R[a:b], norm, intercept=intercept
                )
                diff = differences(total1, total0)
                assert sum(v * v for v in diff) <= GRADIENT_UNIT**2


def test_gradient_sum_is_the_clipped_sum():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4)) * 2
    R = rng.normal(size=(300, 2))
    total = exact_clipped_gradient_sum(X, lambda a, b: R[a:b], 1.5).as_float()
    terms = X[:, :, None] * R[:, None, :]
    norms = np.linalg.norm(terms.reshape(300, -1), axis=1)
    expected = (terms * np.minimum(1, 1.5 / norms)[:, None, None]).sum(0) / 1.5
    # each term is truncated onto 2**-20 (relative to the norm bound)
    assert np.abs(total - expected).max() <= 300 * 2.0**-20


def test_gram_is_the_clipped_gram_with_an_intercept_column():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    y = rng.uniform(-1, 1, 200)
    gram, cross = exact_clipped_gram(X, 2.0, y, intercept=True)
    clipped = X * np.minimum(1, 2.0 / np.linalg.norm(X, axis=1))[:, None]
    q = np.hstack([clipped, np.full((200, 1), 2.0)]) / (2.0 * math.sqrt(2))
    full = q.T @ q
    upper = full[np.triu_indices(4)]
    assert np.abs(gram.as_float() - upper).max() <= 200 * 2 * 2.0**-16
    assert np.abs(cross.as_float() - y @ q).max() <= 200 * 2 * 2.0**-16


def test_float_sum_of_clipped_terms_can_exceed_the_bound():
    """Why the sums are exact: a float sum moves by more than one clipped term.

    Rows at the clipping norm next to a large running total: in floats,
    adding a row of norm 1 moves the sum by the rounding of the total too
    (Casacuberta et al. 2022), which the exact sum never does.
    """
    big = np.array([[2.0**53], [1.0], [1.0]])
    naive = big.sum(axis=0)[0] - np.array([[2.0**53], [1.0]]).sum(axis=0)[0]
    assert naive != 1.0  # the float sum loses the row (or double counts)
    ones = lambda a, b: np.ones((b - a, 1))  # noqa: E731
    exact0 = exact_clipped_gradient_sum(big[:2], ones, 1.0)
    exact1 = exact_clipped_gradient_sum(big, ones, 1.0)
    assert sum(v * v for v in differences(exact1, exact0)) <= GRADIENT_UNIT**2


def test_gradient_sum_of_no_rows_has_the_shape_of_any_other():
    # Blocks of a Dask input may be empty; their sums must add to the others'.
    X = np.ones((2, 3))
    r = np.ones((2, 4))
    some = exact_clipped_gradient_sum(X, lambda a, b: r[a:b], 1.0, intercept=True)
    none = exact_clipped_gradient_sum(X[:0], lambda a, b: r[a:b], 1.0, intercept=True)
    assert none.shape == some.shape == (4, 4)
    assert set(none.numerators) == {0}
