"""The joint release of several quantiles of one feature (see PrivateQuantile)."""

import math

import numpy as np

from skdp.mechanisms._joint_quantile import joint_quantile_states
from skdp.sensitivity._joint_quantile import (
    STATES_PER_POINT,
    grid_rank_counts,
    rank_states,
)
from skdp.sensitivity._quantile_grid import quantile_grid_exponent

__all__ = [
    "JOINT_GRID_BITS",
    "check_joint_levels",
    "grid_size",
    "joint_release",
    "joint_state_count",
    "log_binomial",
]

#: The joint release's grid has between 2**11 and 2**12 points over the bounds.
JOINT_GRID_BITS = 11


def grid_size(lower, upper, k):
    """Number of points of ``{j 2**k} ∩ [lower, upper]``."""
    step = math.ldexp(1.0, k)
    return math.floor(upper / step) - math.ceil(lower / step) + 1


def joint_state_count(lower, upper):
    """Number of rank states of the joint release on ``[lower, upper]`` (public)."""
    k = quantile_grid_exponent(lower, upper, bits=JOINT_GRID_BITS)
    return grid_size(lower, upper, k) * STATES_PER_POINT


def log_binomial(n, m):
    return math.lgamma(n + 1) - math.lgamma(m + 1) - math.lgamma(n - m + 1)


def joint_release(column, lower, upper, levels, epsilon, source):
    """All ``levels`` of one feature in one joint release with ``epsilon``.

    One pass over the column (counts on the public grid), the joint
    exponential mechanism over ordered rank states, and the grid points of
    the chosen states. Repeated or unsorted levels are released once each,
    sorted, and mapped back (post-processing).
    """
    k = quantile_grid_exponent(lower, upper, bits=JOINT_GRID_BITS)
    first, below, atoms = grid_rank_counts(column, lower, upper, k)
    distinct, inverse = np.unique(levels, return_inverse=True)
    ranks = rank_states(below, atoms)
    states = joint_quantile_states(
        ranks, column.size, distinct, epsilon, random_state=source
    )
    points = (first + states // STATES_PER_POINT).astype(np.float64)
    return np.ldexp(points, k)[inverse]


def check_joint_levels(levels, lower, upper):
    """Refuse more distinct levels than the joint grid has states (public)."""
    needed = np.unique(levels).size
    for lo, hi in zip(lower, upper, strict=True):
        states = joint_state_count(lo, hi)
        if needed > states:
            raise ValueError(
                f"{needed} distinct levels need at least as many grid states; "
                f"bounds ({lo}, {hi}) give {states}. Widen the bounds or use "
                "method='exponential'."
            )
