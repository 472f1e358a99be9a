"""JointExp (Gillenwater, Joseph and Kulesza 2021), continuous outputs, for the
benchmarks only: the reference the joint quantiles are compared with.

Written from the paper's description: the exponential mechanism with the gap
utility (sensitivity 2) over ordered outputs in ``[lower, upper]``, sampled
as blocks of quantiles that share an interval between consecutive data
points (volume ``length**k / k!``), then uniform points inside the chosen
intervals. ``O(m^2 n^2)``: fine for ``n = 1000``.
"""

import numpy as np
from scipy.special import gammaln, logsumexp


def jointexp_reference(x, lower, upper, levels, epsilon, rng):
    """Gillenwater, Joseph and Kulesza's JointExp (continuous outputs), for
    benchmarks only: O(m² n²) dynamic programme over blocks of quantiles that
    share a data interval, then uniform points inside the chosen intervals."""
    data = np.sort(np.clip(x, lower, upper))
    n, m = data.size, len(levels)
    edges = np.concatenate(([lower], data, [upper]))
    with np.errstate(divide="ignore"):
        log_len = np.log(np.diff(edges))  # interval i = [edges[i], edges[i+1])
    q = np.concatenate(([0.0], levels, [1.0]))
    target = np.diff(q) * n
    beta = epsilon / 4.0  # exp(eps u / (2 * 2)), sensitivity 2
    idx = np.arange(n + 1)
    gap = idx[None, :] - idx[:, None]  # gap[i', i] = i - i'
    # A[j][i]: log weight of quantiles 1..j placed, the last block in interval i
    A = np.full((m + 1, n + 1), -np.inf)
    choices = {}
    for j in range(1, m + 1):
        for start in range(1, j + 1):  # block = quantiles start..j
            k = j - start + 1
            inner = -beta * np.sum(np.abs(target[start:j]))  # gaps of 0 inside
            block = inner + k * log_len - gammaln(k + 1)
            if start == 1:
                prev = -beta * np.abs(idx - target[0])  # from i_0 = 0
                cand = prev + block
            else:
                trans = np.where(
                    gap > 0, -beta * np.abs(gap - target[start - 1]), -np.inf
                )
                cand = logsumexp(A[start - 1][:, None] + trans, axis=0) + block
            choices[(j, start)] = cand
            A[j] = np.logaddexp(A[j], cand)

    # backward sampling of blocks
    def draw(logw):
        logw = logw - logw.max()
        p = np.exp(logw)
        return rng.choice(p.size, p=p / p.sum())

    out = []
    last = A[m] - beta * np.abs(n - idx - target[m])
    i = draw(last)
    j = m
    while j > 0:
        starts = list(range(1, j + 1))
        weights = np.array([choices[(j, s)][i] for s in starts])
        s = starts[draw(weights)]
        k = j - s + 1
        points = np.sort(rng.uniform(edges[i], edges[i + 1], k))
        out = list(points) + out
        if s > 1:
            trans = np.where(
                i - idx > 0, -beta * np.abs(i - idx - target[s - 1]), -np.inf
            )
            i = draw(A[s - 1] + trans)
        j = s - 1
    return np.array(out)
