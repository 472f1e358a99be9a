"""Binning doubles against sorted breakpoints by a lookup on their top bits.

A double's sign, exponent and top mantissa bits, read as an integer (a
bucket key), are monotone in its value on each sign (increasing for positive
values, decreasing for negative ones), so the doubles of one bucket form an
interval; a table indexed by the key gives the number of breakpoints below
every value of a bucket but the one breakpoint (at most) inside it, which one
comparison settles. Used by the
soft counts of :mod:`skdp.sensitivity._soft_counts` instead of a binary
search per row; the bins are exactly those of ``np.searchsorted``.
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["BucketTable", "bucket_table"]

# Largest bucket table (entries); beyond, rows are binned by searchsorted.
_MAX_TABLE = 1 << 16


@dataclass(frozen=True)
class BucketTable:
    """Binning by lookup: the bin of ``x`` is ``base[q] + (x > edge[q])``
    for the bucket ``q`` of ``x - offset``: its bits ``>> shift``, minus
    ``first``."""

    offset: float
    shift: int
    first: int
    base: np.ndarray
    edge: np.ndarray


def _float_bits(values):
    return np.asarray(values, dtype=np.float64).view(np.int64)


def _key_span(low, high, shift):
    """Smallest and largest bucket key of the doubles in ``[low, high]``."""
    ends = []
    if high >= 0:  # the non-negative part, from +0.0 (or low) to high
        ends += [low if low > 0 else 0.0, high]
    if low <= 0:  # the non-positive part, from -0.0 (or high) to low
        ends += [high if high < 0 else -0.0, low]
    keys = _float_bits(ends) >> shift
    return int(keys.min()), int(keys.max())


def _bucket_bounds(first, last, shift):
    """``(vmin, vmax, valid)``: the doubles of every bucket key in range."""
    keys = np.arange(first, last + 1, dtype=np.int64)
    small = (keys << shift).view(np.float64)  # nearest to 0 in the bucket
    large = (((keys + 1) << shift) - 1).view(np.float64)  # farthest
    with np.errstate(invalid="ignore"):
        vmin = np.where(keys >= 0, small, large)
        vmax = np.where(keys >= 0, large, small)
        valid = np.isfinite(vmin) & np.isfinite(vmax)  # not inf or NaN
    return np.where(valid, vmin, 0.0), np.where(valid, vmax, 0.0)


def bucket_table(breakpoints, low, high, offset=0.0):
    """The smallest bucket table with at most one breakpoint per bucket.

    A bucket is the set of doubles sharing their sign, exponent and top
    ``52 - shift`` mantissa bits: an interval ``[vmin, vmax]`` of doubles.
    Keys are taken of ``y = x - offset`` (rounded; 0 for none), a
    non-decreasing function of ``x``, so the ``x`` of a bucket form an
    interval too, and a breakpoint ``B_t`` below ``x`` has ``B_t - offset``
    at most ``y``. On a bucket, ``#{t : B_t < x}`` is therefore
    ``L = #{t : B_t - offset < vmin}`` plus the breakpoints with
    ``B_t - offset`` in ``[vmin, vmax]`` (``[vmin, vmax)`` without offset,
    where ``B_t = vmax`` is never below ``x``) that are below ``x``; with at most
    one such breakpoint that is ``L + (x > edge)``, exactly (the comparison
    is of ``x`` with ``B_t`` themselves, so rounding in ``y`` cannot move a
    row to another bin, and 0.0 and -0.0 compare equal as in
    ``searchsorted``). Returns None when every table with that property has
    more than ``_MAX_TABLE`` entries (a grid with very close points): rows
    are then binned by ``searchsorted``.
    """
    if breakpoints.size == 0:  # one bin
        return None
    with np.errstate(over="ignore"):
        mapped = breakpoints - offset
        low, high = low - offset, high - offset
    if not (np.all(np.isfinite(mapped)) and np.isfinite(low) and np.isfinite(high)):
        return None
    for precision in range(0, 53):
        shift = 52 - precision
        first, last = _key_span(low, high, shift)
        if last - first + 1 > _MAX_TABLE:
            return None
        vmin, vmax = _bucket_bounds(first, last, shift)
        base = np.searchsorted(mapped, vmin, "left")
        # with rounding in y, a breakpoint mapped onto vmax may be below x;
        # without (offset 0) it never is, and the bucket of -0.0 must not
        # count the breakpoint 0.0 (equal as floats)
        steps = np.searchsorted(mapped, vmax, "left" if offset == 0 else "right")
        steps -= base
        if np.max(steps, initial=0) <= 1:
            inside = breakpoints[np.minimum(base, breakpoints.size - 1)]
            edge = np.where(steps == 1, inside, np.inf)
            return BucketTable(offset, shift, first, base.astype(np.intp), edge)
    return None
