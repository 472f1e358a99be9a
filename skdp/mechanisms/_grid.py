"""Power-of-two grids shared by the Laplace and Gaussian releases.

A release on the grid ``2**k`` works on the integers ``round(x / 2**k)``: the
value is rounded to the nearest multiple of ``2**k``, integer noise is added,
and the result is the exact multiple ``(round(x / 2**k) + Z) * 2**k``, of which
the caller gets the nearest float (IEEE addition is correctly rounded, so this
is post-processing of the exact release).

Rounding can move each coordinate by at most ``2**(k-1)``, so for two inputs
the rounded difference of a coordinate exceeds the true one by at most
``2**k``; coordinates that are equal stay equal. Over ``m`` coordinates the
L1 sensitivity grows by at most ``m * 2**k`` and the L2 sensitivity by at most
``sqrt(m) * 2**k`` (triangle inequality with the rounding errors).
"""

import math
from fractions import Fraction
from numbers import Real
from typing import NamedTuple

import numpy as np

#: Grid exponents are kept in this range so that every grid point used is a
#: normal float and no product ``Z * 2**k`` with ``|Z| <= 2**53`` overflows
#: (the Gaussian, whose noise stays below ``2**36`` steps, may go to 986).
MIN_GRID_EXP = -1000
MAX_GRID_EXP = 970
MAX_GAUSSIAN_GRID_EXP = 986
#: Noise magnitudes are at most this many grid steps, so they are exact floats.
MAX_NOISE_STEPS = 1 << 53
#: Relative precision target: the rounding slack is at most this fraction of
#: the sensitivity (and of the noise scale), unless the grid must be coarsened
#: to keep the integers in range.
PRECISION_BITS = 20


def check_sensitivity(sensitivity, name="sensitivity"):
    """Validate a positive finite sensitivity and return it as a float."""
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, Real | np.number):
        raise TypeError(f"{name} must be a real number; got {sensitivity!r}.")
    value = float(sensitivity)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be finite and > 0; got {sensitivity!r}.")
    return value


class FixedPoint(NamedTuple):
    """Exact query values ``numerators * 2**exponent``, with Python ints.

    A sum of many clipped terms formed in floating point can move by more
    than its stated sensitivity when a row is added, through rounding
    (Casacuberta, Shoemate, Vadhan and Wagaman 2022). Queries summed exactly
    on a public fixed-point grid are handed to the Laplace and Gaussian
    releases in this form, and rounded to the release grid in integer
    arithmetic, so no float rounding happens between the exact sum and the
    release.

    Attributes
    ----------
    numerators : tuple of int
        The values times ``2**-exponent``, in C order.
    exponent : int
    shape : tuple of int

    Examples
    --------
    >>> from skdp.mechanisms._grid import FixedPoint
    >>> value = FixedPoint((3, -5), -2, (2,))  # 0.75 and -1.25
    >>> value.size, value.as_float().tolist()
    (2, [0.75, -1.25])
    """

    numerators: tuple
    exponent: int
    shape: tuple

    @property
    def size(self):
        return len(self.numerators)

    def as_float(self):
        """The nearest floats (for display and tests; never for a release)."""
        scale = Fraction(2) ** self.exponent
        values = [float(Fraction(num) * scale) for num in self.numerators]
        return np.array(values, dtype=np.float64).reshape(self.shape)


def check_values(value):
    """Return ``value`` as a float64 array; reject NaN and infinities.

    A :class:`FixedPoint` is returned as it is (it is exact and finite).
    """
    if isinstance(value, FixedPoint):
        return value
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"value must be a real number or an array of them; got {value!r}."
        ) from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            "value contains NaN or infinity; a noisy release needs finite values "
            "(clip or impute them with a data-independent rule first)."
        )
    return arr


def floor_log2(x):
    """``floor(log2(x))`` for a positive finite float, exactly."""
    return math.frexp(x)[1] - 1


def ceil_log2_int(n):
    """``ceil(log2(n))`` for an int ``n >= 1``."""
    return (n - 1).bit_length()


def _nearest_float(integer, k):
    """The float nearest to ``integer * 2**k`` (saturating at ±max float)."""
    try:
        if k >= 0:
            return float(integer << k)
        return integer / (1 << -k)  # int / int is correctly rounded
    except OverflowError:
        big = np.finfo(np.float64).max
        return big if integer > 0 else -big


def _release_fixed_point(x, noise, k):
    """``(round(x / 2**k) + noise) * 2**k`` for exact ``x``, in integers."""
    shift = x.exponent - k
    out = np.empty(x.size)
    for i, (num, z) in enumerate(zip(x.numerators, noise.tolist(), strict=True)):
        if shift >= 0:
            steps = num << shift
        else:  # round half up: moves the value by at most 2**(k-1)
            steps = (num + (1 << (-shift - 1))) >> -shift
        out[i] = _nearest_float(steps + int(z), k)
    return out.reshape(x.shape)


def release_on_grid(x, noise, k):
    """Return the nearest floats to ``(round(x / 2**k) + noise) * 2**k``.

    Parameters
    ----------
    x : ndarray of float64 or FixedPoint
        Finite values (any shape), or exact values.
    noise : ndarray of int64
        Integer noise, one per value, ``|noise| <= 2**53`` (so
        ``float(noise)`` is exact).
    k : int
        Grid exponent in ``[MIN_GRID_EXP, MAX_GAUSSIAN_GRID_EXP]``, with
        ``|noise| * 2**k`` below the float range.

    Notes
    -----
    For ``|x| < 2**(52 + k)``, ``ldexp(x, -k)`` is exact and below ``2**52``,
    ``rint`` rounds it to the nearest integer (ties to even) and scaling back
    is exact (grid points are normal floats since ``k >= -1000``). For larger
    ``|x|`` the float spacing at ``x`` is at least ``2**k``, so ``x`` is already
    a multiple of ``2**k``. The noise ``noise * 2**k`` is an exact float, and one
    correctly rounded addition gives the nearest float to the exact release.
    A result beyond the float range saturates at ``±max float`` instead of
    becoming infinite (still post-processing). A :class:`FixedPoint` is
    rounded to the grid in integer arithmetic and the nearest float to the
    exact result is returned.
    """
    if isinstance(x, FixedPoint):
        return _release_fixed_point(x, noise, k)
    shape = np.shape(x)
    x = np.asarray(x, dtype=np.float64).ravel()
    limit = math.ldexp(1.0, 52 + k) if 52 + k < 1024 else math.inf
    small = np.abs(x) < limit
    rounded = x.copy()
    with np.errstate(over="ignore"):
        rounded[small] = np.ldexp(np.rint(np.ldexp(x[small], -k)), k)
        out = rounded + np.ldexp(noise.astype(np.float64), k)
    big = np.finfo(np.float64).max
    np.clip(out, -big, big, out=out)
    return out.reshape(shape)
