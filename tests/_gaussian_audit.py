"""Audit helper: vectorised Gaussian (or Laplace) releases of exact sums,
reduced to the log-likelihood-ratio statistic of one neighbour against the
other (shared by the audits of the linear models and of PCA)."""

import numpy as np

from skdp.linear_model._noise_plan import LaplaceNoise
from skdp.linear_model._release import release_sum
from skdp.mechanisms import check_random_source
from skdp.mechanisms._grid import FixedPoint


def tiled(value, n_runs):
    return FixedPoint(value.numerators * n_runs, value.exponent, (n_runs, value.size))


def likelihood_ratio(sums, plan, d0, d1):
    """Vectorised releases ``plan = [(index into sums, noise)]``, reduced to
    the log-likelihood-ratio statistic of d1 against d0. ``noise`` is a
    Gaussian multiplier or a :class:`LaplaceNoise` (scale ``l1 / epsilon``)."""
    s0, s1 = ([v.as_float().ravel() for v in sums[id(d)]] for d in (d0, d1))

    def mech(data, random_state, n_runs):
        source = check_random_source(random_state)
        stat = np.zeros(n_runs)
        for which, ratio in plan:
            noisy = release_sum(tiled(sums[id(data)][which], n_runs), ratio, source)
            noisy = noisy.reshape(n_runs, -1)
            if isinstance(ratio, LaplaceNoise):
                far = np.abs(noisy - s0[which]) - np.abs(noisy - s1[which])
                stat += far.sum(axis=1) * (ratio.epsilon / ratio.l1)
                continue
            diff = s1[which] - s0[which]
            centre = 0.5 * (s0[which] + s1[which])
            stat += (noisy - centre) @ diff / ratio**2
        return stat

    return mech
