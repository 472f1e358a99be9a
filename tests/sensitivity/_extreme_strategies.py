"""Hypothesis strategies of extreme doubles for the sensitivity fuzz tests.

Rows mix, in one row, subnormals, ±the largest double, zeros, ±tiny normals
and huge values; public parameters are drawn at both ends of the ranges the
estimators accept, and rows are also aimed at the magnitudes where a clip
factor ``c / ||x||`` underflows (norms about ``c 2**1074``).
"""

import math
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

BIG = float(np.finfo(np.float64).max)
TINY = float(np.finfo(np.float64).tiny)  # smallest normal, 2**-1022
SUBNORMAL = math.ldexp(1.0, -1074)
SPECIAL = [0.0, -0.0, SUBNORMAL, -SUBNORMAL, TINY, -TINY, BIG, -BIG, 1.0, -1.0]

subnormals = st.builds(
    lambda m, sign: sign * math.ldexp(m, -1074),
    st.integers(1, 2**52 - 1),
    st.sampled_from([1.0, -1.0]),
)
huge = st.floats(1e300, BIG).flatmap(lambda v: st.sampled_from([v, -v]))
extreme_doubles = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(SPECIAL),
    subnormals,
    huge,
)


def between(low, high):
    """A public parameter at either end of ``[low, high]`` or inside it."""
    ends = [low, high, math.nextafter(low, math.inf), math.nextafter(high, 0.0)]
    return st.one_of(st.sampled_from(ends), st.floats(low, high))


#: data_norm of PrivateLinearRegression, max_norm of PrivateLogisticRegression
model_norms = between(2.0**-500, 2.0**500)
#: max_norm of PrivatePCA
pca_norms = between(1e-150, 1e150)
#: max_norm of DPClipper(norm="l2"): any positive finite float
any_radius = st.one_of(
    st.sampled_from([SUBNORMAL, 3 * SUBNORMAL, TINY, BIG, 1.0]),
    st.floats(SUBNORMAL, BIG, allow_subnormal=True),
)


def rows(d, elements=extreme_doubles):
    return hnp.arrays(np.float64, (d,), elements=elements)


@st.composite
def rows_near_the_subnormal_factor(draw, d, norm):
    """A finite row of norm about ``norm 2**1074 / t``, ``t`` in (0.5, 1].

    ``norm / ||x||`` is then a subnormal of about ``t 2**-1074``, the case
    where rounding it to nearest nearly doubles it.
    """
    t = draw(st.floats(0.5, 1.0, exclude_min=True))
    shift = draw(st.integers(1060, 1080))
    direction = draw(rows(d, st.floats(-1, 1))).astype(np.float64)
    direction[draw(st.integers(0, d - 1))] = 1.0
    try:
        scale = math.ldexp(norm / t, shift)
    except OverflowError:  # no subnormal factor for this norm: a huge row
        scale = BIG
    scale = min(scale, BIG)
    with np.errstate(over="ignore"):
        row = direction * (scale / math.sqrt(d))
    return np.where(np.isfinite(row), row, BIG)


def adversarial_row(d, norm):
    """Any extreme row, or one aimed at the subnormal clip factor of ``norm``."""
    return st.one_of(rows(d), rows_near_the_subnormal_factor(d, norm))


def exact_squared_norm(values):
    """The exact squared Euclidean norm of float values, as a Fraction."""
    return sum((Fraction(float(v)) ** 2 for v in values), Fraction(0))


def squared_distance(a, b):
    """Exact squared L2 distance of two FixedPoints' numerators (integers)."""
    return sum((x - y) ** 2 for x, y in zip(a.numerators, b.numerators, strict=True))
