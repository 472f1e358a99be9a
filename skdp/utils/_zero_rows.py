"""Fits on zero rows, inside a meta-estimator that splits rows at random.

An skdp estimator refuses an empty input before its charge (a public
precondition of a direct call). A meta-estimator that trains it on a random
part of the rows, after its own charge, cannot refuse: whether the part is
empty depends on the number of rows, which is private, and the charge is
already made. Inside :func:`fits_on_zero_rows` the input validation takes
zero rows, and the fit is its release on the empty data set: every skdp
statistic is a sum over rows (zero over none) and its noise is drawn from
public parameters, so the release is the same mechanism at any number of
rows, zero included.
"""

from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["fits_on_zero_rows", "min_samples"]

_ZERO_ROWS = ContextVar("skdp_fits_on_zero_rows", default=False)


@contextmanager
def fits_on_zero_rows():
    """Let the fits run in this context (this thread) take zero rows."""
    token = _ZERO_ROWS.set(True)
    try:
        yield
    finally:
        _ZERO_ROWS.reset(token)


def min_samples():
    """The smallest number of rows input validation takes here: 0 or 1."""
    return 0 if _ZERO_ROWS.get() else 1
