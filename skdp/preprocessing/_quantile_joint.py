"""The joint release of several quantiles of one feature (see PrivateQuantile)."""

import math

import numpy as np

from skdp.mechanisms._joint_quantile import joint_quantile_blocks
from skdp.sensitivity._joint_quantile import (
    STATES_PER_POINT,
    rank_blocks,
    relative_grid_counts,
    state_points,
)
from skdp.sensitivity._quantile_grid import RelativeGrid

__all__ = [
    "check_joint_levels",
    "grid_size",
    "joint_release",
    "joint_state_count",
    "log_binomial",
]


def grid_size(lower, upper, k):
    """Number of points of ``{j 2**k} ∩ [lower, upper]``."""
    step = math.ldexp(1.0, k)
    return math.floor(upper / step) - math.ceil(lower / step) + 1


def joint_state_count(lower, upper):
    """Number of rank states of the joint release on ``[lower, upper]`` (public)."""
    grid = RelativeGrid(lower, upper)
    copies = grid.multiplicity(np.arange(grid.first, grid.last + 1))
    return int(copies.sum()) * STATES_PER_POINT


def log_binomial(n, m):
    return math.lgamma(n + 1) - math.lgamma(m + 1) - math.lgamma(n - m + 1)


def joint_release(column, lower, upper, levels, epsilon, source):
    """All ``levels`` of one feature in one joint release with ``epsilon``.

    One pass over the column in chunks (counts on the public relative grid
    of the bounds), the joint exponential mechanism over ordered rank states
    merged into blocks of equal rank, and the grid points of the chosen
    states. Repeated or unsorted levels are released once each, sorted, and
    mapped back (post-processing).
    """
    grid = RelativeGrid(lower, upper)
    below, atoms = relative_grid_counts(column, grid)
    distinct, inverse = np.unique(levels, return_inverse=True)
    multiplicity = grid.multiplicity(np.arange(grid.first, grid.last + 1))
    ranks, sizes, points, gap = rank_blocks(below, atoms, multiplicity=multiplicity)
    blocks, offsets = joint_quantile_blocks(
        ranks, sizes, column.size, distinct, epsilon, random_state=source
    )
    index = state_points(points[blocks], offsets, gap[blocks], multiplicity)
    return grid.points(grid.first + index)[inverse]


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
