"""Dwork–Lei's private IQR: two-grid propose-test-release on a log scale.

The parts of ``IQRScale(method="dwork_lei")`` (and of
``PrivateRobustScaler(scale_method="dwork_lei")``); the proofs are in the
Notes of :class:`~skdp.preprocessing.IQRScale`.
"""

import math

import numpy as np

from skdp.accounting._composition import equal_shares
from skdp.mechanisms import check_random_source, laplace_mechanism
from skdp.sensitivity import log_grid_bin, quartile_ranks, select_order_statistics

# One selection serves the IQR and both grids (the public functions would each
# partition the data again): the window helpers of the sensitivity module.
from skdp.sensitivity._iqr import _instability_from, _iqr_from
from skdp.stats._ptr import CAP_FAILURE_PROBABILITY, check_ptr_cap
from skdp.utils._validation import check_bounds, check_finite_width

__all__ = [
    "DEFAULT_BASE",
    "DEFAULT_WIDTH",
    "grid_parameters",
    "iqr_bounds",
    "iqr_parameters",
    "iqr_release",
    "iqr_statistics",
]

#: Public default grid: bins ``[2**(o + s/8), 2**(o + (s+1)/8))``, a factor
#: ``2**0.125`` (about 9%) wide; see the IQRScale Notes for the trade-off.
DEFAULT_BASE = 2.0
DEFAULT_WIDTH = 0.125


def iqr_parameters(epsilon, delta, n_features, unit_rows=1):
    """Public per-grid constants of :class:`IQRScale`.

    ``epsilon`` is the fit's total, charged as two equal halves (tests,
    releases); ``delta`` the tests' δ (for groups, the row-level ``δ_r``);
    a unit of ``unit_rows = k`` rows costs ``k`` times a row.

    Returns
    -------
    eps_grid : float
        ``ε' = ε/(4dk)``: each of the two grids spends ε' on its test and ε'
        on its release, for each of the ``d`` features; rounded down so that
        ``2dk`` of them fit in each charged half
        (:func:`~skdp.accounting._composition.equal_shares`, both).
    threshold : float
        ``T = 1 + ln(2d/δ)/ε'`` (``δ' = δ/(2d)`` per grid).
    cap : int
        ``K = ceil(T + ln(1/β)/ε')``, ``β = 1e-9``.
    """
    half = equal_shares(epsilon, 2)
    eps_grid = equal_shares(half, unit_rows * 2 * n_features)
    threshold = 1.0 + math.log(2.0 * n_features / delta) / eps_grid
    cap = threshold + math.log(1.0 / CAP_FAILURE_PROBABILITY) / eps_grid
    check_ptr_cap(cap, eps_grid)
    return eps_grid, threshold, math.ceil(cap)


def _usable(iqr):
    return iqr > 0 and math.isfinite(iqr)


def iqr_statistics(X, bounds, base, width, cap):
    """IQR and ``min(A_j, K)`` on the two grids, for every column.

    One selection per column: the order statistics of ranks ``r1 ± W`` and
    ``r3 ± W``, ``W = ceil(3K/4) + 2`` (the windows of
    :func:`skdp.sensitivity.iqr_instability_distance` with ``cap=K``), serve
    the IQR and both grids' distances.

    Returns
    -------
    iqrs : ndarray of shape (d,)
        The IQRs of the clipped columns (0 or inf where not usable).
    distances : ndarray of shape (2, d)
        ``min(A_j, K)`` for grid ``j`` with offset ``j·width/2``; 0 where
        the IQR is 0 (or overflows to inf, which lies in no bin).
    """
    lower, upper = bounds
    n_samples, n_features = X.shape
    r1, r3 = quartile_ranks(n_samples)
    half = -(-3 * int(cap) // 4) + 2
    windows = [(r1 - half, r1 + half), (r3 - half, r3 + half)]
    iqrs = np.empty(n_features)
    distances = np.zeros((2, n_features))
    for f in range(n_features):
        ranks, values = select_order_statistics(X[:, f], (lower[f], upper[f]), windows)
        with np.errstate(over="ignore", invalid="ignore"):
            iqr = float(_iqr_from(ranks, values, n_samples))
        iqrs[f] = 0.0 if math.isnan(iqr) else iqr  # n = 0 unbounded: -inf + inf
        if not _usable(iqrs[f]):
            continue
        for grid in (0, 1):
            _, lo, hi = log_grid_bin(
                iqrs[f], base=base, width=width, offset=grid * width / 2
            )
            with np.errstate(invalid="ignore", over="ignore"):
                a = _instability_from(ranks, values, n_samples, lo, hi)
            distances[grid, f] = min(a, int(cap))
    return iqrs, distances


def iqr_release(iqrs, distances, eps_grid, threshold, base, width, *, random_state):
    """Two-grid test per coordinate; release ``IQR · base^(width · Lap(1/ε'))``.

    ``distances`` has shape (2, m): every entry is one 1-sensitive test
    (one vector Laplace query, per-entry scale ``1/ε'``). A coordinate passes
    when either grid passes; the release (for the first passing grid) is one
    vector query on ``log_base(IQR)/width`` with per-coordinate scale
    ``1/ε'`` (change below 1 for same-bin neighbours), mapped back by
    ``base ** (width · y)`` (post-processing). A pass with an unusable IQR
    (0 or overflow; only possible with probability at most δ', since its
    ``A = 0``) is reported as a refusal.

    Returns
    -------
    scales : ndarray of shape (m,)
        Released scales, NaN where refused.
    refused : ndarray of bool of shape (m,)
    """
    iqrs = np.asarray(iqrs, dtype=float)
    random_state = check_random_source(random_state)  # one stream for all draws
    distances = np.asarray(distances, dtype=float)
    size = distances.size
    noisy = laplace_mechanism(
        distances.ravel(), float(size), size * eps_grid, random_state=random_state
    ).reshape(distances.shape)
    passed = (noisy > threshold).any(axis=0)
    with np.errstate(over="ignore"):
        passed &= (iqrs > 0) & np.isfinite(iqrs)
    scales = np.full(iqrs.shape, np.nan)
    n_pass = int(passed.sum())
    if n_pass:
        logs = np.log(iqrs[passed]) / (math.log(base) * width)
        noisy_logs = laplace_mechanism(
            logs, float(n_pass), n_pass * eps_grid, random_state=random_state
        )
        with np.errstate(over="ignore", under="ignore"):
            scales[passed] = np.power(base, width * np.atleast_1d(noisy_logs))
    return scales, ~passed


def iqr_bounds(bounds, n_features):
    """Per-feature bounds; ``None`` is the unbounded domain ``(-inf, inf)``."""
    if bounds is None:
        return np.full(n_features, -np.inf), np.full(n_features, np.inf)
    if isinstance(bounds, tuple | list) and len(bounds) == 2 and bounds[1] is None:
        raise ValueError(
            "bounds=(lower, None) asks for a private upper bound, which only "
            "method='joint' chooses; with method='dwork_lei' give both bounds, "
            "or bounds=None for the unbounded domain. Nothing was charged."
        )
    lower, upper = check_bounds(bounds, n_features)
    check_finite_width(lower, upper, "IQRScale")
    return lower, upper


def grid_parameters(base, width):
    """Resolve the public grid defaults (base 2, width 1/8)."""
    base = DEFAULT_BASE if base is None else float(base)
    width = DEFAULT_WIDTH if width is None else float(width)
    return base, width
