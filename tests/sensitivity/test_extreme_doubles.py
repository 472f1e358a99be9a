"""Norm clipping fuzzed with extreme doubles against the stated sensitivities.

Every norm-clipped sum (the linear models' Gram, cross products and
gradients, PrivatePCA's moments) and ``DPClipper``'s row clipping, on rows
mixing subnormals, ±the largest double, zeros and huge values, with the
public norm at both ends of the range its estimator accepts. The sums are
exact, so adding one row must move the released numerators by at most the
stated sensitivity exactly, in integer arithmetic (no tolerance); a clipped
row's norm is checked in rational arithmetic.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdp.decomposition._pca import clipped_moments_gram
from skdp.linear_model._target_range import regression_sums
from skdp.preprocessing._clip import clip_row_norms
from skdp.sensitivity import exact_clipped_gradient_sum, exact_clipped_gram
from skdp.sensitivity._linear import GRADIENT_BITS, GRAM_BITS
from tests.sensitivity._extreme_strategies import (
    adversarial_row,
    any_radius,
    exact_squared_norm,
    extreme_doubles,
    model_norms,
    pca_norms,
    rows,
    squared_distance,
)

# No float warning either: these run after an estimator's charge.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
FUZZ = settings(max_examples=200, deadline=None)
GRAM_UNIT = 1 << (2 * GRAM_BITS)  # a released product is a multiple of 2**-32
GRADIENT_UNIT = 1 << GRADIENT_BITS


@st.composite
def data_and_row(draw, norms, max_d=4):
    """``(D, z, norm)``: up to three extreme rows, one adversarial row."""
    d = draw(st.integers(1, max_d))
    norm = draw(norms)
    n = draw(st.integers(0, 3))
    base = np.array([draw(rows(d)) for _ in range(n)]).reshape(n, d)
    return base, draw(adversarial_row(d, norm)), norm


def with_row(base, row):
    return np.vstack([base, row[None, :]])


@FUZZ
@given(data_and_row(model_norms), st.booleans(), extreme_doubles)
def test_gram_and_cross_move_by_at_most_one(case, intercept, target):
    base, row, norm = case
    t = np.clip(np.linspace(-1, 1, base.shape[0]), -1, 1)
    gram0, cross0 = exact_clipped_gram(base, norm, t, intercept=intercept)
    y = np.r_[t, np.clip(target, -1, 1)]
    X = with_row(base, row)
    gram1, cross1 = exact_clipped_gram(X, norm, y, intercept=intercept)
    assert squared_distance(gram1, gram0) <= GRAM_UNIT**2
    assert squared_distance(cross1, cross0) <= GRAM_UNIT**2


@st.composite
def target_bounds(draw):
    """Bounds PrivateLinearRegression accepts: low < high, finite width."""
    low, high = sorted([draw(extreme_doubles), draw(extreme_doubles)])
    if not (high / 2 - low / 2 > 0) or not math.isfinite(high - low):
        low, high = draw(st.sampled_from([(-1.0, 1.0), (-8e307, 8e307), (0.0, 1e-300)]))
    return low, high


@FUZZ
@given(data_and_row(model_norms), target_bounds(), st.booleans(), extreme_doubles)
def test_regression_sums_move_by_at_most_one(case, bounds, intercept, target):
    base, row, norm = case
    low, high = bounds
    y = np.linspace(low / 2, high / 2, base.shape[0]) * 2
    gram0, cross0 = regression_sums(base, y, norm, low, high, intercept)
    gram1, cross1 = regression_sums(
        with_row(base, row), np.r_[y, target], norm, low, high, intercept
    )
    assert squared_distance(gram1, gram0) <= GRAM_UNIT**2
    assert squared_distance(cross1, cross0) <= GRAM_UNIT**2


@st.composite
def residual_rows(draw, n, k):
    return np.array([draw(rows(k)) for _ in range(n)]).reshape(n, k)


@FUZZ
@given(data_and_row(model_norms, max_d=3), st.integers(1, 3), st.data())
def test_gradient_sum_moves_by_at_most_one(case, k, data):
    base, row, norm = case
    intercept = data.draw(st.booleans())
    residuals = data.draw(residual_rows(base.shape[0] + 1, k))
    X = with_row(base, row)
    total0 = exact_clipped_gradient_sum(
        base, lambda a, b: residuals[a:b], norm, intercept=intercept
    )
    total1 = exact_clipped_gradient_sum(
        X, lambda a, b: residuals[a:b], norm, intercept=intercept
    )
    assert squared_distance(total1, total0) <= GRADIENT_UNIT**2


@FUZZ
@given(st.integers(1, 3), model_norms, st.data())
def test_gradient_term_with_a_huge_residual_has_norm_at_most_one(k, norm, data):
    # the clip factor divides by ||x|| ||r||: aim the huge norm at r
    x = data.draw(rows(data.draw(st.integers(1, 3))))
    r = data.draw(adversarial_row(k, norm))
    total = exact_clipped_gradient_sum(x[None, :], lambda a, b: r[None, :][a:b], norm)
    assert sum(v * v for v in total.numerators) <= GRADIENT_UNIT**2


@FUZZ
@given(data_and_row(pca_norms))
def test_pca_moments_move_by_at_most_one(case):
    base, row, norm = case
    gram0 = clipped_moments_gram(base, norm)
    gram1 = clipped_moments_gram(with_row(base, row), norm)
    assert squared_distance(gram1, gram0) <= GRAM_UNIT**2


@FUZZ
@given(st.integers(1, 4), any_radius, st.data())
def test_clipped_rows_have_norm_at_most_max_norm(d, radius, data):
    X = np.array([data.draw(adversarial_row(d, radius)) for _ in range(3)])
    out = clip_row_norms(X, radius)
    bound = Fraction(radius) ** 2
    for x, y in zip(X, out, strict=True):
        assert np.all(np.isfinite(y))
        assert exact_squared_norm(y) <= bound
        if exact_squared_norm(x) <= bound * (1 - Fraction(1, 2**40)):
            np.testing.assert_array_equal(y, x)  # short rows are kept


@FUZZ
@given(st.integers(1, 4), st.floats(2.0**-900, 2.0**900), st.data())
def test_clipped_rows_keep_almost_all_of_max_norm(d, radius, data):
    # utility: clipping shrinks a long row to (nearly) max_norm, not below
    x = data.draw(adversarial_row(d, radius))
    squared = exact_squared_norm(x)
    y = clip_row_norms(x[None, :], radius)[0]
    target = min(squared, Fraction(radius) ** 2)
    assert exact_squared_norm(y) >= target * (1 - Fraction(1, 2**40))


@FUZZ
@given(target_bounds())
def test_target_bounds_map_onto_minus_one_and_one(bounds):
    # utility at the extremes: the ends of accepted target bounds map to the
    # ends of [-1, 1] (a centre that overflowed mapped every target to -1)
    low, high = bounds
    row = np.array([[1.0]])
    _, at_low = regression_sums(row, np.array([low]), 1.0, low, high, True)
    _, at_high = regression_sums(row, np.array([high]), 1.0, low, high, True)
    assert all(v < 0 for v in at_low.numerators)
    assert all(v > 0 for v in at_high.numerators)
