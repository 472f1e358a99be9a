"""The quantile releases of :class:`~skdp.preprocessing.PrivateQuantile`.

The checks of its public parameters (levels, candidate grid) and its
independent releases per level, without the estimator: the exponential
mechanism over the fine public grid (:func:`exponential_release`) and
permute-and-flip over public candidates (:func:`permute_and_flip_release`).
The estimator's Notes give the derivations; this module imports no
scikit-learn, so ``skdp describe`` can use it without the estimator.
"""

import math
from numbers import Integral

import numpy as np

from skdp.accounting._composition import equal_shares
from skdp.mechanisms import permute_and_flip
from skdp.mechanisms._quantile_sampling import (
    sample_log_weights,
    uniform_grid_points,
)
from skdp.mechanisms._selection import _select_many
from skdp.sensitivity._quantile import (
    quantile_score_sensitivity,
    scores_from_cell_counts,
)
from skdp.sensitivity._quantile_grid import grid_score_classes, quantile_grid_exponent

__all__ = [
    "candidate_grid",
    "check_quantile_levels",
    "check_selection_epsilon",
    "exponential_release",
    "permute_and_flip_release",
    "sorted_clipped_column",
]

DEFAULT_N_CANDIDATES = 1000


def check_quantile_levels(quantiles):
    """Validate quantile levels: a float or a non-empty 1-D array in [0, 1]."""
    try:
        levels = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(
            f"quantiles must be numbers in [0, 1]; got {quantiles!r}."
        ) from None
    if levels.ndim != 1 or levels.size == 0:
        raise ValueError(
            f"quantiles must be a number or a non-empty 1-D sequence; got "
            f"{quantiles!r}."
        )
    if not np.all((levels >= 0) & (levels <= 1)):  # also rejects NaN
        raise ValueError(f"quantiles must lie in [0, 1]; got {quantiles!r}.")
    return levels


def candidate_grid(candidates, lower, upper):
    """Public candidates per feature, shape (n_candidates, n_features).

    None gives 1000 evenly spaced points in each feature's bounds, an int
    ``m`` gives ``m`` of them, and a 1-D array is shared by every feature.
    """
    if candidates is None or isinstance(candidates, Integral):
        m = DEFAULT_N_CANDIDATES if candidates is None else int(candidates)
        # bounds more than the largest double apart: on halved bounds, then
        # doubled (exact there, both are far from the subnormals). linspace's
        # last step may still round past the float limit; it then sets that
        # point to the upper bound itself, so the overflow it warns about
        # never reaches the grid (a warning after the charge in describe).
        # Elsewhere on the bounds themselves: halving a subnormal bound rounds
        # it (5e-324 / 2 is 0), and the grid left the bounds
        with np.errstate(over="ignore", invalid="ignore"):
            wide = ~np.isfinite(np.asarray(upper) - np.asarray(lower))
            halved = 2.0 * np.linspace(lower * 0.5, upper * 0.5, m)
            direct = np.linspace(lower, upper, m)
        return np.where(wide, halved, direct)
    grid = np.asarray(candidates, dtype=np.float64)
    if grid.ndim != 1 or grid.size == 0:
        raise ValueError(
            f"candidates must be None, an int >= 2 or a non-empty 1-D array; got "
            f"an array of shape {grid.shape}."
        )
    if not np.all(np.isfinite(grid)):
        raise ValueError("candidates must be finite.")
    if np.any(np.diff(grid) <= 0):
        raise ValueError(
            "candidates must be strictly increasing; sort them and drop duplicates "
            "(np.unique)."
        )
    return np.repeat(grid[:, None], lower.shape[0], axis=1)


def sorted_clipped_column(column, lower, upper):
    """Sort one feature and clip it to its public bounds (clipping keeps order)."""
    values = np.sort(column)
    return np.clip(values, lower, upper, out=values)


def exponential_release(
    sorted_clipped, lower, upper, levels, epsilon, source, n_runs=1
):
    """Exponential mechanism over the public grid for each level; (n_runs, k).

    ``epsilon`` is the budget of each single release (one level, one feature).
    The grid is ``{j 2**k} ∩ [lower, upper]`` with ``k`` from the bounds
    (:func:`~skdp.sensitivity._quantile_grid.quantile_grid_exponent`); a class
    of equal-score grid points is chosen with probability ``∝ count *
    exp(ε u / (2Δ))`` and a uniform point of it is released.
    """
    exponent = quantile_grid_exponent(lower, upper)
    out = np.empty((n_runs, levels.size))
    for k, q in enumerate(levels):
        scale = epsilon / (2.0 * quantile_score_sensitivity(q))
        first, counts, log_weights = _windowed_classes(
            sorted_clipped, lower, upper, exponent, q, scale
        )
        chosen = sample_log_weights(log_weights, random_state=source, n_runs=n_runs)
        out[:, k] = uniform_grid_points(
            first[chosen], counts[chosen], exponent, random_state=source
        )
    return out


#: exp(x) is exactly 0.0 in float64 for x < -745.2: classes whose log-weight is
#: further than this below the largest get probability exactly 0 in the
#: sampler, so they need not be computed.
UNDERFLOW_GAP = 750.0


def check_selection_epsilon(method, levels, epsilon, n_features):
    """Refuse, before the charge, a per-release ε the sampler cannot run at:
    ``epsilon / (levels.size * n_features)`` rounded down, as the releases
    split it (:func:`~skdp.accounting._composition.equal_shares`).

    Public: the exponential mechanism's first window ``(UNDERFLOW_GAP +
    ln(points)) / scale`` rows (``scale = ε/(2 max(q, 1 - q))``, at most
    ``2**54 + 1`` points: every grid index is at most ``2**53`` in
    magnitude) must be a finite double, and
    permute-and-flip needs ``ε > 0``; an ``ε`` that underflowed (a tiny
    ``epsilon``, or ``epsilon / max_rows_per_group`` with groups) made the
    release raise after the charge. The joint release runs at any ``ε > 0``.
    """
    if method == "joint":
        return
    epsilon_each = equal_shares(epsilon, levels.size * n_features)
    problem = not epsilon_each > 0.0
    if method == "exponential" and not problem:
        sensitivity = float(np.max(np.maximum(levels, 1.0 - levels)))
        scale = epsilon_each / (2.0 * sensitivity)
        points = math.log(2.0**55)
        problem = not (scale > 0.0 and math.isfinite((UNDERFLOW_GAP + points) / scale))
    if problem:
        raise ValueError(
            f"the epsilon of each {method} release, {epsilon_each!r}, is too small "
            "for its sampler (its noise scale leaves the float range); raise "
            "epsilon or release fewer levels or features. Nothing was charged."
        )


def _windowed_classes(sorted_clipped, lower, upper, exponent, q, scale):
    """Classes and log-weights of the rows near the target rank ``q n``.

    The window of rows grows until every class outside it provably gets
    weight exactly 0 in the sampler: such a class has at most all the grid
    points (``log`` of their number) and a score at most minus the window's
    distance to ``q n`` in rows (ties and atoms included), so its
    log-weight is below the best one inside by more than ``UNDERFLOW_GAP``.
    The selection law is then that of all classes, at a cost proportional to
    the window.
    """
    n = sorted_clipped.shape[0]
    target = q * n
    step = 2.0**exponent
    n_points = float(
        np.floor(upper / step) - np.ceil(lower / step) + 1.0
    )  # the whole grid
    half_width = (UNDERFLOW_GAP + np.log(n_points)) / scale + 2.0
    while True:
        start = max(0, int(np.floor(target - half_width)))
        stop = min(n, int(np.ceil(target + half_width)))
        first, counts, scores = grid_score_classes(
            sorted_clipped, lower, upper, exponent, q, rows=(start, stop)
        )
        log_weights = np.log(counts.astype(np.float64)) + scale * scores
        if start == 0 and stop == n:
            return first, counts, log_weights
        distance = min(
            target - start if start > 0 else np.inf,
            stop - target if stop < n else np.inf,
        )
        top = log_weights.max() if log_weights.size else -np.inf
        if top - (np.log(n_points) - scale * distance) > UNDERFLOW_GAP:
            return first, counts, log_weights
        half_width *= 4.0


def permute_and_flip_release(
    cell_counts, candidates, levels, epsilon, source, n_runs=None
):
    """Permute-and-flip over public candidates for each level.

    ``cell_counts`` are the column's rows per cell between the candidates
    (:func:`~skdp.sensitivity._quantile.candidate_cell_counts`, added up
    over blocks of rows if counted by blocks). Returns shape (k,) for
    ``n_runs=None`` (one release, as ``fit`` does) or (n_runs, k) for
    repeated draws (audits and simulations).
    """
    out = np.empty((1 if n_runs is None else n_runs, levels.size))
    for k, q in enumerate(levels):
        scores = scores_from_cell_counts(cell_counts, candidates, q)
        sensitivity = float(quantile_score_sensitivity(q))
        if n_runs is None:
            index = permute_and_flip(
                scores, epsilon, sensitivity, monotonic=False, random_state=source
            )
        else:
            index = _select_many(
                scores,
                epsilon,
                sensitivity,
                noise="exponential",
                monotonic=False,
                random_state=source,
                n_runs=n_runs,
            )
        out[:, k] = candidates[index]
    return out[0] if n_runs is None else out
