"""The median's distance to instability fuzzed with extreme doubles.

PTR releases the median with noise for sensitivity ``b`` when ``D(x, b)``
passes a noisy test; it is private because ``D >= 1`` only if the local
sensitivity ``x_(h+1) - x_(h)`` is at most ``b`` (exactly, in the reals) and
because ``D`` moves by at most 1 between neighbours. Both are checked here
on rows of subnormals, ±the largest double and huge values, with public
bounds and proposals anywhere they are accepted, in rational arithmetic.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from skdp.sensitivity import median_distance_to_instability, padded_order_statistics
from tests.sensitivity._extreme_strategies import BIG, SUBNORMAL, extreme_doubles

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
FUZZ = settings(max_examples=200, deadline=None)


def test_a_gap_that_rounds_down_to_b_is_unstable():
    # 1 + 2**-52 - 2**-53 = 1 + 2**-53 > b = 1, but the float difference
    # rounds (to even) to 1.0: before the fix D was 1 (and 5 for three
    # copies of each value), as if the local sensitivity were at most b
    low, high = 2.0**-53, 1.0 + 2.0**-52
    assert median_distance_to_instability([low, high], 1.0, (-10.0, 10.0)) == 0
    x = [low] * 3 + [high] * 3
    assert median_distance_to_instability(x, 1.0, (-10.0, 10.0)) == 0
    assert median_distance_to_instability(x, 1.0, (-10.0, 10.0), cap=3) == 0


def test_bounds_whose_width_rounds_down_to_b_are_not_always_stable():
    # U - L = 1 + 2**-53 > b: a dataset with LS > b exists, so D is finite
    low, high = 2.0**-53, 1.0 + 2.0**-52
    assert median_distance_to_instability([], 1.0, (low, high)) == 0


@st.composite
def bounds_and_proposal(draw):
    low, high = sorted([draw(extreme_doubles), draw(extreme_doubles)])
    assume(low < high)
    b = draw(st.one_of(extreme_doubles.map(abs), st.sampled_from([SUBNORMAL, BIG])))
    assume(b > 0)
    return (low, high), b


@st.composite
def data_with_gaps_near_b(draw, b):
    """Rows ``l`` and ``fl(l + b)`` (and neighbours): gaps within ulps of b."""
    low = draw(extreme_doubles)
    step = draw(st.sampled_from([-1.0, 0.0, 1.0]))
    with np.errstate(over="ignore"):
        high = np.float64(low) + np.float64(b)
        high = np.nextafter(high, np.inf * step) if step else high
    assume(np.isfinite(high))
    high = float(high)
    m = draw(st.integers(1, 3))
    return [low] * m + [high] * draw(st.integers(m - 1, m + 1))


def exact_gap_at_the_median(x, bounds):
    y = padded_order_statistics(x, bounds)  # [L, sorted clip(x), U]
    h = len(x) // 2
    return Fraction(float(y[h + 1])) - Fraction(float(y[h]))


@FUZZ
@given(st.lists(extreme_doubles, max_size=6), bounds_and_proposal(), st.data())
def test_positive_distance_means_local_sensitivity_at_most_b(x, public, data):
    bounds, b = public
    if data.draw(st.booleans()):  # aim at the rounding of the gap
        x = data.draw(data_with_gaps_near_b(b))
    capped = data.draw(st.booleans())
    cap = 4 if capped else None
    distance = median_distance_to_instability(np.array(x), b, bounds, cap=cap)
    if distance >= 1:
        assert exact_gap_at_the_median(x, bounds) <= Fraction(b)
    else:
        assert exact_gap_at_the_median(x, bounds) > Fraction(b)


@FUZZ
@given(
    st.lists(extreme_doubles, max_size=6),
    extreme_doubles,
    bounds_and_proposal(),
)
def test_distance_moves_by_at_most_one_between_neighbours(x, row, public):
    bounds, b = public
    before = median_distance_to_instability(np.array(x), b, bounds)
    after = median_distance_to_instability(np.array([*x, row]), b, bounds)
    assert before == after or abs(before - after) <= 1
