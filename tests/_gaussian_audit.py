"""Audit helper: vectorised Gaussian releases of exact sums, reduced to the
log-likelihood-ratio statistic of one neighbour against the other (shared by
the audits of the linear models and of PCA)."""

import numpy as np

from skdp.linear_model._release import release_sum
from skdp.mechanisms import check_random_source
from skdp.mechanisms._grid import FixedPoint


def tiled(value, n_runs):
    return FixedPoint(value.numerators * n_runs, value.exponent, (n_runs, value.size))


def likelihood_ratio(sums, plan, d0, d1):
    """Vectorised releases ``plan = [(index into sums, multiplier)]``, reduced to
    the log-likelihood-ratio statistic of d1 against d0."""
    s0, s1 = ([v.as_float().ravel() for v in sums[id(d)]] for d in (d0, d1))

    def mech(data, random_state, n_runs):
        source = check_random_source(random_state)
        stat = np.zeros(n_runs)
        for which, ratio in plan:
            noisy = release_sum(tiled(sums[id(data)][which], n_runs), ratio, source)
            diff = s1[which] - s0[which]
            centre = 0.5 * (s0[which] + s1[which])
            stat += (noisy.reshape(n_runs, -1) - centre) @ diff / ratio**2
        return stat

    return mech
