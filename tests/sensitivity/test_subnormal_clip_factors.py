"""Regression tests: clip factors that underflow to subnormals (issue 26, item 1).

A public norm bound ``c`` at the small end of the accepted range and a finite
row of norm about ``c 2**1075`` make ``c / ||x||`` a subnormal, whose rounding
is absolute (up to half of ``2**-1074``) rather than relative: the factor
could come out twice too large, and the clipped row with it. Each test adds
that one row to an empty data set and checks the released sum against the
stated sensitivity, exactly (the sums are exact integers).
"""

import math
import warnings

import numpy as np

from skdp import BudgetAccountant, DPClipper, NoiseDominatedWarning
from skdp.decomposition._pca import clipped_moments_gram
from skdp.linear_model._target_range import regression_sums
from skdp.preprocessing import PrivateMean
from skdp.preprocessing._clip import clip_row_norms
from skdp.sensitivity import (
    exact_centred_sums,
    exact_clipped_gradient_sum,
    exact_moment_sums,
)
from skdp.sensitivity._mean import FIXED_POINT_BITS

SMALLEST_NORM = 2.0**-500  # the smallest data_norm / max_norm the models accept
SMALLEST_PCA_NORM = 1e-150  # the smallest max_norm PrivatePCA accepts


def row_with_subnormal_factor(c):
    """A finite row with ``c / ||x||`` just above half the smallest subnormal.

    The quotient rounds up to ``2**-1074``: nearly twice its value.
    """
    return np.array([[math.ldexp(c / 0.5000001, 1074)]])


def squared_norm(fixed_point):
    """Exact squared L2 norm of a released FixedPoint, as a float."""
    scale = 2.0 ** (2 * fixed_point.exponent)
    return sum(v * v for v in fixed_point.numerators) * scale


def test_regression_gram_of_one_huge_row_has_norm_at_most_one():
    # before the fix: 3.99994 (the row came out with norm 2)
    X = row_with_subnormal_factor(SMALLEST_NORM)
    gram, _ = regression_sums(X, np.array([1.0]), SMALLEST_NORM, -1.0, 1.0, False)
    assert squared_norm(gram) <= 1.0


def test_regression_cross_products_of_one_huge_row_have_norm_at_most_one():
    # before the fix: 1.99998
    X = row_with_subnormal_factor(SMALLEST_NORM)
    _, cross = regression_sums(X, np.array([1.0]), SMALLEST_NORM, -1.0, 1.0, False)
    assert squared_norm(cross) <= 1.0


def test_gradient_term_of_one_huge_row_has_norm_at_most_one():
    # before the fix: 2.0 (a logistic gradient with residual 1)
    X = row_with_subnormal_factor(SMALLEST_NORM)
    total = exact_clipped_gradient_sum(
        X, lambda a, b: np.ones((b - a, 1)), SMALLEST_NORM
    )
    assert squared_norm(total) <= 1.0


def test_gradient_term_with_huge_residual_has_norm_at_most_one():
    # the factor divides by ||x|| ||r||: put the huge norm in the residual
    c = SMALLEST_NORM
    residual = math.ldexp(c / 0.5000001, 1074)
    X = np.array([[1.0]])
    total = exact_clipped_gradient_sum(X, lambda a, b: np.full((b - a, 1), residual), c)
    assert squared_norm(total) <= 1.0


def test_pca_moments_of_one_huge_row_have_norm_at_most_one():
    # before the fix: the Gram term of [clip(x), c] / (c sqrt 2) had norm 2.5
    # (the review measured 2.29 with another row)
    X = row_with_subnormal_factor(SMALLEST_PCA_NORM)
    assert squared_norm(clipped_moments_gram(X, SMALLEST_PCA_NORM)) <= 1.0


def test_dpclipper_l2_output_norm_is_at_most_max_norm():
    # before the fix: the output had norm 2 c
    X = row_with_subnormal_factor(SMALLEST_NORM)
    clipper = DPClipper(method=None, norm="l2", max_norm=SMALLEST_NORM)
    out = clipper.fit_transform(X)
    assert abs(out[0, 0]) <= SMALLEST_NORM


def test_clip_row_norms_at_a_subnormal_radius_rounds_toward_zero():
    # max_norm may be any positive float: at the smallest subnormal, a row
    # (1, 1) may not come out as (2**-1074, 2**-1074) (norm sqrt 2 times it)
    tiny = math.ldexp(1.0, -1074)
    out = clip_row_norms(np.array([[1.0, 1.0], [3.0, -4.0]]), tiny)
    for row in out:
        assert math.hypot(*(float(v) / tiny for v in row)) <= 1.0


# Found by the fuzz tests of test_extreme_doubles_bounds.py: one feature with
# a bound at a quarter of the largest double made every feature's bounds be
# halved, and the subnormal half width of another feature halved to 0.
NEAR_LIMIT = float(np.finfo(np.float64).max) / 4
NARROW_AND_WIDE = (np.array([0.0, 0.0]), np.array([1e-323, NEAR_LIMIT]))


def test_centred_sums_with_a_subnormal_width_next_to_a_near_limit_bound():
    # before the fix: ValueError (cannot convert float NaN to integer)
    sums = exact_centred_sums(np.zeros((3, 2)), *NARROW_AND_WIDE)
    assert sums.numerators == (-3 << FIXED_POINT_BITS, -3 << FIXED_POINT_BITS)


def test_moment_sums_with_a_subnormal_width_next_to_a_near_limit_bound():
    # before the fix: NaN terms (and a warning); every row added (1, 0, 0),
    # whatever its value
    X = np.array([[0.0, 0.0], [1e-323, 0.0], [1e-323, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sums = exact_moment_sums(X, *NARROW_AND_WIDE)
    # feature 0: one row at the lower bound, two at the upper; feature 1: three
    # at the lower bound. Order: (1 - a)², 2a(1 - a), a², each per feature.
    expected = tuple(v << FIXED_POINT_BITS for v in (1, 3, 0, 0, 2, 0))
    assert sums.numerators == expected


def test_private_mean_with_a_subnormal_width_next_to_a_near_limit_bound():
    # before the fix: charged, then raised ValueError (and warned)
    accountant = BudgetAccountant()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # the release-based note is right: at a subnormal width the noise is
        # as large as the spread; any other warning (overflow) still fails
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        mean = PrivateMean(
            epsilon=1.0, bounds=NARROW_AND_WIDE, accountant=accountant, random_state=0
        ).fit(np.zeros((5, 2)))
    assert np.all(
        (mean.mean_ >= NARROW_AND_WIDE[0]) & (mean.mean_ <= NARROW_AND_WIDE[1])
    )


def test_regression_targets_scale_without_overflow_near_the_float_limit():
    # target_bounds=(1e308, 1.7e308) are accepted (finite width); the centre
    # 0.5 (low + high) overflowed to inf, so every target mapped to -1
    # (before: cross products -0.707 for a target at the upper bound)
    _, cross = regression_sums(
        np.array([[1.0]]), np.array([1.7e308]), 1.0, 1e308, 1.7e308, True
    )
    assert all(v > 0 for v in cross.numerators)
    _, cross = regression_sums(
        np.array([[1.0]]), np.array([1e308]), 1.0, 1e308, 1.7e308, True
    )
    assert all(v < 0 for v in cross.numerators)
