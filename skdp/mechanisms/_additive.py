"""Additive noise chosen by delta: Laplace for pure ε, analytic Gaussian else."""

import numpy as np

from skdp.mechanisms._gaussian import analytic_gaussian_sigma, gaussian_mechanism
from skdp.mechanisms._laplace import laplace_mechanism


def additive_release(value, l1_sensitivity, l2_sensitivity, epsilon, delta, source):
    """Release ``value`` with Laplace noise (``delta == 0``) or Gaussian noise.

    Laplace noise is calibrated to the L1 sensitivity (ε-DP), Gaussian noise
    to the L2 sensitivity by the analytic mechanism ((ε, δ)-DP). Returns a
    float array of the shape of ``value``.
    """
    if delta > 0:
        noisy = gaussian_mechanism(
            value, l2_sensitivity, epsilon, delta, random_state=source
        )
    else:
        noisy = laplace_mechanism(value, l1_sensitivity, epsilon, random_state=source)
    return np.asarray(noisy, dtype=float)


def additive_noise_variance(l1_sensitivity, l2_sensitivity, epsilon, delta):
    """Variance of each coordinate's noise in :func:`additive_release`."""
    if delta > 0:
        return analytic_gaussian_sigma(l2_sensitivity, epsilon, delta) ** 2
    return 2 * (l1_sensitivity / epsilon) ** 2
