"""Adversarial review of :func:`on_grid` computed in place (one copy, NaN to
0, clip, scaling by powers of two).

What is checked: the result is, bit for bit (the sign of a zero included),
the grid point nearest to the clipped value, ties to even, from exact
rationals, over random bit patterns of doubles (every exponent, subnormals,
NaN payloads of both signs, ±inf) and the neighbours of halfway points, at
each loss's bound, under ``np.errstate(all="raise")``; and the caller's array
is never written to, whatever its layout (a strided view, Fortran order, a
read-only array, the multiclass 2-D gradients) or dtype (float32, int, bool).

Also (the merged review's hint): a refusal of a release too large at once
(``_check_sizes``, not only the tree and noise caps) names the mode and
settings ``boosting="auto"`` resolved from the public ε, for both
estimators, and a stated mode gets no such hint.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from skdp.ensemble import (
    PrivateHistGradientBoostingClassifier,
    PrivateHistGradientBoostingRegressor,
)
from skdp.ensemble._hist_gradient_boosting._plan import check_run_time
from skdp.ensemble._hist_gradient_boosting.loss import GRID_BITS, on_grid

BIG = np.finfo(float).max
EXTREMES = [np.inf, -np.inf, BIG, -BIG, -np.nan, 2.0**53 + 2, -(2.0**-1074)]
BOUNDS = (0.25, 1.0, 2.0)  # the hessians', the log losses', squared error's


def _nearest_step(value, bound):
    """The exact reference: NaN is +0; else ``value`` clipped to the bound,
    rounded to the nearest multiple of ``2**-GRID_BITS`` (ties to the even
    multiple), a zero keeping the sign of the clipped value."""
    if math.isnan(value):
        return 0.0
    if math.isinf(value):
        return math.copysign(bound, value)
    clipped = min(max(Fraction(value), Fraction(-bound)), Fraction(bound))
    nearest = float(Fraction(round(clipped * 2**GRID_BITS), 2**GRID_BITS))
    return math.copysign(nearest, value) if nearest == 0.0 else nearest


def _adversarial_doubles(rng):
    bits = rng.integers(0, 2**64, size=2000, dtype=np.uint64, endpoint=False)
    step = 2.0**-GRID_BITS
    halfway = (rng.integers(-(2**22), 2**22, size=300) + 0.5) * step
    return np.concatenate(
        [
            bits.view(np.float64),  # any double, NaNs with payloads and signs
            halfway,
            np.nextafter(halfway, np.inf),
            np.nextafter(halfway, -np.inf),
            EXTREMES,
        ]
    )


@pytest.mark.parametrize("bound", BOUNDS)
def test_on_grid_is_bit_for_bit_the_nearest_step_on_random_bit_patterns(bound):
    values = _adversarial_doubles(np.random.default_rng(30))
    with np.errstate(all="raise"):
        got = on_grid(values, bound)
    want = np.array([_nearest_step(v, bound) for v in values.tolist()])
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


def _layouts(rng):
    """The caller's arrays on_grid may be given: the multiclass (n, k)
    gradients in C and Fortran order, a strided view, a read-only array,
    and non-float dtypes."""
    matrix = rng.normal(scale=0.4, size=(50, 3))
    matrix[::7, 1] = np.nan
    matrix[3] = [np.inf, -np.inf, 2.0**-1074]
    read_only = matrix[:, 0].copy()
    read_only.flags.writeable = False
    return [
        matrix,
        np.asfortranarray(matrix),
        matrix[::2, 1:],
        read_only,
        matrix.astype(np.float32),
        np.array([-3, 0, 1, 2]),
        np.array([True, False]),
    ]


@pytest.mark.parametrize("bound", BOUNDS)
def test_on_grid_never_writes_to_the_callers_array(bound):
    for values in _layouts(np.random.default_rng(31)):
        before = values.copy()
        got = on_grid(values, bound)
        np.testing.assert_array_equal(values, before)  # NaN == NaN here
        assert not np.shares_memory(got, values)
        assert got.dtype == np.float64 and got.shape == values.shape
        flat = values.astype(np.float64).ravel().tolist()
        want = np.array([_nearest_step(v, bound) for v in flat])
        np.testing.assert_array_equal(got.ravel(), want)


def test_a_too_large_release_of_auto_names_the_resolved_mode():
    # 20,000 features: the private bins alone release 20.5 million counts
    # at once, more than 2**24 in either mode (checked before the charge)
    C, R = PrivateHistGradientBoostingClassifier, PrivateHistGradientBoostingRegressor
    for model, mode in ((C(1.0), "cyclic"), (C(1000.0), "trees"), (R(1.0), "trees")):
        hint = f"boosting='auto' chose '{mode}' at epsilon="
        with pytest.raises(ValueError, match=f"{hint}.*Nothing was charged"):
            check_run_time(model, "model", 20_000, 1)
    with pytest.raises(ValueError, match="at once") as refused:
        check_run_time(C(1.0, boosting="cyclic"), "model", 20_000, 1)
    assert "boosting='auto'" not in str(refused.value)
