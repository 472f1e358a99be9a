"""Clipped sums are exact, so a row moves them by at most its own term (issue 13).

A float sum can move by more than the stated sensitivity when a row is added
(Casacuberta, Shoemate, Vadhan and Wagaman 2022); skdp sums on a public
fixed-point grid in integers and rounds to the release grid in integers.
"""

from fractions import Fraction

import numpy as np
import pytest

from skdp.mechanisms import gaussian_mechanism, laplace_mechanism
from skdp.mechanisms._grid import FixedPoint
from skdp.mechanisms._laplace import _laplace_grid
from skdp.sensitivity import exact_centred_sums, exact_split_sums

LOWER, UPPER = np.array([-1.0]), np.array([1.0])


def as_fractions(value):
    return [Fraction(n) * Fraction(2) ** value.exponent for n in value.numerators]


def quantised_fraction_sum(column):
    """The oracle: each term rounded to 2**-32, summed as fractions."""
    terms = np.clip(column, -1.0, 1.0)
    return sum(Fraction(int(np.rint(t * 2.0**32)), 2**32) for t in terms)


def test_a_float_sum_moves_by_more_than_one_row_but_the_exact_sum_never():
    # find neighbours whose float sums differ by more than the added term
    # (1.0): the hazard of main's float sums; the exact sums never do
    rng = np.random.default_rng(0)
    found = 0
    for _ in range(200):
        x = rng.uniform(-1, 1, 2000) * rng.choice([1.0, 1e-6, 1e-12], 2000)
        grown = np.append(x, 1.0)
        float_change = Fraction(float(np.sum(grown))) - Fraction(float(np.sum(x)))
        found += float_change > 1
        exact = as_fractions(exact_centred_sums(grown[:, None], LOWER, UPPER))[0]
        exact -= as_fractions(exact_centred_sums(x[:, None], LOWER, UPPER))[0]
        assert abs(exact) <= 1
    assert found > 0


@pytest.mark.parametrize("n", [1, 1000, (1 << 16) + 3])
def test_exact_sums_equal_the_fraction_oracle(n):
    rng = np.random.default_rng(n)
    column = rng.uniform(-3, 3, n) * rng.choice([1.0, 1e-9, 1e-300], n)
    column[::7] = 1.0  # at the bound
    got = as_fractions(exact_centred_sums(column[:, None], LOWER, UPPER))[0]
    assert got == quantised_fraction_sum(column)
    u, v = as_fractions(exact_split_sums(column[:, None], LOWER, UPPER))
    assert u + v == n and u - v == got  # the count, exactly


def test_exact_sums_beyond_2_53_units_of_the_grid():
    # 2**23 rows at the upper bound: n * 2**32 = 2**55 units, beyond a
    # double's integers; the sum is still exact and so is the count
    n = (1 << 23) + 1
    column = np.ones((n, 1))
    column[0] = 0.5 + 2.0**-30
    total = as_fractions(exact_centred_sums(column, LOWER, UPPER))[0]
    assert total == n - 1 + Fraction(1, 2) + Fraction(1, 2**30)
    u, v = as_fractions(exact_split_sums(column, LOWER, UPPER))
    assert u + v == n


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_a_fixed_point_release_is_the_exact_grid_release(mechanism):
    # the same value as a float and as a FixedPoint: bit-identical releases;
    # and a value too large for a float is rounded to the grid in integers
    def release(value, seed):
        if mechanism == "laplace":
            return laplace_mechanism(value, 1.0, 1.0, random_state=seed)
        return gaussian_mechanism(value, 1.0, 1.0, 1e-6, random_state=seed)

    for seed in range(20):
        exact = FixedPoint((3 << 30, -(5 << 28)), -32, (2,))
        np.testing.assert_array_equal(
            release(exact, seed), release(exact.as_float(), seed)
        )
    if mechanism == "gaussian":
        return
    # N * 2**-32 with N = 2**80 + 12345: the noise Z of a seed is read off a
    # release of 0; the release of the huge value must be the double nearest
    # to round(value / 2**k) * 2**k + Z * 2**k (main had to round the value
    # to a double first: 2**48 + 2.9e-6 is not one)
    k = _laplace_grid(1.0, 1.0, 1)[0]
    numerator = (1 << 80) + 12345
    for seed in range(5):
        noise = Fraction(float(release(FixedPoint((0,), -32, ()), seed)))
        value = Fraction(numerator, 2**32)
        steps = value / Fraction(2) ** k
        rounded = (steps + Fraction(1, 2)).__floor__()  # half up
        expected = float(rounded * Fraction(2) ** k + noise)
        assert float(release(FixedPoint((numerator,), -32, ()), seed)) == expected


@pytest.mark.parametrize("order", ["C", "F"])
def test_exact_sums_of_many_features_equal_the_per_feature_oracle(order):
    # several features with their own bounds (one near the float limit, the
    # halving path), over more rows than one flat block of 2**16 values
    rng = np.random.default_rng(5)
    lower = np.array([-1.0, 0.0, -1.5e308, 3.0, -2.0])
    upper = np.array([1.0, 10.0, 1.5e308, 3.5, 2.0])
    n = (1 << 14) + 5
    X = rng.uniform(-1, 1, (n, 5)) * np.array([2.0, 20.0, 1.7e308, 4.0, 3.0])
    X[::11] = upper  # at the bounds
    X = np.asarray(X, order=order)
    got = as_fractions(exact_centred_sums(X, lower, upper))
    for j in range(5):
        alone = exact_centred_sums(
            np.ascontiguousarray(X[:, [j]]), lower[[j]], upper[[j]]
        )
        assert got[j] == as_fractions(alone)[0]
        if j < 2:  # bounds at +-1 after centring: the fraction oracle applies
            centre, radius = (lower[j] + upper[j]) / 2, (upper[j] - lower[j]) / 2
            assert got[j] == quantised_fraction_sum((X[:, j] - centre) / radius)
