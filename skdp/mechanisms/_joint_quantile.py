"""Joint exponential mechanism over ordered rank states (several quantiles at once).

The sampler of :func:`joint_quantile_states`: the exponential mechanism over
strictly increasing sequences of ``m`` states with the gap utility of
:mod:`skdp.sensitivity._joint_quantile`, sampled exactly as a chain. The
forward pass computes, for every state ``i`` and quantile ``j``, the log of

    A_j(i) = Σ_{p < i} A_{j-1}(p) exp(-β |r_i - r_p - T_j|),

splitting the sum at ``r_p = r_i - T_j`` into a prefix and a window of
exponentials in ``r_p`` (both evaluated with additions only: a running
``logaddexp`` and a segment tree), ``O(m N log N)`` for ``N`` states. The
backward pass draws the last state, then each earlier one given the next
(Gillenwater, Joseph and Kulesza 2021, Algorithm 1, on a public grid).
"""

import math

import numpy as np

from skdp.mechanisms._quantile_sampling import sample_log_weights
from skdp.mechanisms._random import check_random_source

__all__ = ["joint_quantile_states"]


def _segment_levels(values):
    """Bottom-up segment tree of log-sum-exp over ``values`` (padded with -inf)."""
    size = 1 << max(1, math.ceil(math.log2(max(values.size, 2))))
    level = np.full(size, -np.inf)
    level[: values.size] = values
    levels = [level]
    while level.size > 1:
        level = np.logaddexp(level[0::2], level[1::2])
        levels.append(level)
    return levels


def _window_logsumexp(levels, start, stop):
    """``log Σ_{start <= p < stop} exp(v_p)`` for each pair of bounds."""
    start, stop = start.copy(), stop.copy()
    total = np.full(start.shape, -np.inf)
    for level in levels:
        take = ((start & 1) == 1) & (start < stop)
        total[take] = np.logaddexp(total[take], level[start[take]])
        start += take
        take = ((stop & 1) == 1) & (start < stop)
        stop -= take
        total[take] = np.logaddexp(total[take], level[stop[take]])
        start >>= 1
        stop >>= 1
    return total


def _forward(ranks, targets, beta):
    """The ``log A_j`` arrays, ``j = 1..m``."""
    index = np.arange(ranks.size)
    current = -beta * np.abs(ranks - targets[0])
    tables = [current]
    for target in targets[1:-1]:
        split = np.minimum(np.searchsorted(ranks, ranks - target, side="right"), index)
        prefix = np.logaddexp.accumulate(np.append(-np.inf, current + beta * ranks))
        below = prefix[split] - beta * (ranks - target)
        window = _window_logsumexp(
            _segment_levels(current - beta * ranks), split, index
        )
        current = np.logaddexp(below, window + beta * (ranks - target))
        tables.append(current)
    return tables


def joint_quantile_states(ranks, n, levels, epsilon, *, random_state=None):
    """Sample ``m`` increasing states by the joint exponential mechanism.

    Parameters
    ----------
    ranks : ndarray of shape (n_states,)
        Non-decreasing ranks of the public states
        (:func:`skdp.sensitivity._joint_quantile.rank_states`).
    n : int
        The row count (exact).
    levels : ndarray of shape (m,)
        Strictly increasing quantile levels in (0, 1).
    epsilon : float
        ε of the release; the utility has sensitivity 2, so ``β = ε / 4``.
    random_state : None, int, RandomState or RandomSource, default=None
        Source of randomness, see :func:`check_random_source`.

    Returns
    -------
    states : ndarray of int64 of shape (m,)
        Strictly increasing state indices.

    Notes
    -----
    The output is drawn with probability ``∝ exp(ε u / (2 Δ))``, ``Δ = 2``,
    over the public set of strictly increasing state sequences (the
    exponential mechanism: ε-DP under add/remove one row for a utility of
    sensitivity Δ, McSherry and Talwar 2007). The weights are computed in
    floating point, in log space; as for every sampler in
    :mod:`skdp.mechanisms._quantile_sampling`, the probabilities carry a
    relative rounding error, here of order ``(β n + N log N) 2**-53`` (the
    log-weights reach ``β n``): about ``1e-6`` at ``n = 1e9``, ``ε = 10``.
    """
    source = check_random_source(random_state)
    q = np.concatenate(([0.0], levels, [1.0]))
    targets = np.diff(q) * n
    beta = epsilon / 4.0
    tables = _forward(ranks, targets, beta)
    m = len(levels)
    states = np.empty(m, dtype=np.int64)
    last = tables[-1] - beta * np.abs(n - ranks - targets[-1])
    states[-1] = sample_log_weights(last, random_state=source)
    for j in range(m - 2, -1, -1):
        nxt = states[j + 1]
        gap = ranks[nxt] - ranks[:nxt] - targets[j + 1]
        weights = tables[j][:nxt] - beta * np.abs(gap)
        states[j] = sample_log_weights(weights, random_state=source)
    return states
