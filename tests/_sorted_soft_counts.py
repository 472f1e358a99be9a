"""The sort-based SVT queries and bound search of skdp up to ac0d316.

Kept verbatim as the reference that the tallies of
:mod:`skdp.sensitivity._soft_counts` must reproduce bit for bit, and with it
the search as it ran on sorted columns (sign counts by comparison, upper
search on the sorted column, lower search on the reversed negation).
"""

import numpy as np

from skdp.mechanisms import laplace_mechanism
from skdp.sensitivity._soft_counts import SOFT_COUNT_BITS
from skdp.stats._svt_search import (
    SVTBoundsRelease,
    _searched_sides,
    _svt_upper_bound,
)

_HALF_MAX = np.finfo(np.float64).max / 4


def sorted_soft_counts_above(x, grid):
    """The sort-based soft counts of skdp <= ac0d316 (the reference)."""
    x = np.sort(np.asarray(x, dtype=float).ravel())
    return soft_counts_above_sorted(x, np.asarray(grid, dtype=float))


def soft_counts_above_sorted(x, grid):
    """The soft counts of sorted rows, as computed up to ac0d316."""
    k = grid.size
    if k < 2:
        return np.empty(0, dtype=float)
    if max(abs(grid[0]), abs(grid[-1])) > _HALF_MAX:
        x, grid = x / 2, grid / 2
    edges = np.searchsorted(x, grid, side="right")
    rows_above = x.size - edges[1:]
    first, last = edges[0], edges[-1]
    per_interval = np.diff(edges)
    ramp = x[first:last] - np.repeat(grid[:-1], per_interval)
    ramp /= np.repeat(np.diff(grid), per_interval)
    np.clip(ramp, 0.0, 1.0, out=ramp)
    ramp *= float(1 << SOFT_COUNT_BITS)
    units = np.rint(ramp).astype(np.int64)
    prefix = np.concatenate(([0], np.cumsum(units)))
    inside = prefix[edges[1:] - first] - prefix[edges[:-1] - first]
    total = (rows_above.astype(np.int64) << SOFT_COUNT_BITS) + inside
    return np.ldexp(total.astype(np.float64), -SOFT_COUNT_BITS)


def sorted_run_svt_bounds(X, plan, source):
    """``run_svt_bounds`` of ac0d316: one sort per column, a reversed copy."""
    n_features = X.shape[1]
    lower, upper = plan.origin.copy(), plan.origin.copy()
    if plan.two_sided:
        counts = np.concatenate([(X < 0).sum(axis=0), (X > 0).sum(axis=0)])
        noisy = laplace_mechanism(
            counts.astype(float),
            float(n_features),
            plan.epsilon_sign,
            random_state=source,
        )
        search_lower, search_upper = _searched_sides(
            noisy, n_features, plan.epsilon_sign
        )
        side_counts = np.asarray(noisy, dtype=float).reshape(2, n_features)
    else:
        search_lower = np.zeros(n_features, dtype=bool)
        search_upper = np.ones(n_features, dtype=bool)
        side_counts = np.full((2, n_features), None)  # no count: public lower
    for f in range(n_features):
        n_sides = int(search_lower[f]) + int(search_upper[f])
        column = np.sort(X[:, f])
        if search_upper[f]:
            # the per-side threshold rule of issue 27 (not in ac0d316)
            epsilon_run, n_above, share = plan.side_run(
                n_features, n_sides, side_counts[1, f]
            )
            candidates = plan.origin[f] + plan.widths
            upper[f] = _svt_upper_bound(
                soft_counts_above_sorted(column, candidates),
                candidates,
                n_above,
                epsilon_run,
                share,
                source,
            )
        if search_lower[f]:
            epsilon_run, n_above, share = plan.side_run(
                n_features, n_sides, side_counts[0, f]
            )
            candidates = -plan.origin[f] + plan.widths
            lower[f] = -_svt_upper_bound(
                soft_counts_above_sorted(-column[::-1], candidates),
                candidates,
                n_above,
                epsilon_run,
                share,
                source,
            )
    if not plan.two_sided:
        side_counts = None
    return SVTBoundsRelease(
        lower, upper, side_counts, np.vstack([search_lower, search_upper])
    )
