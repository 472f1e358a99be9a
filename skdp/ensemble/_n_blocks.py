"""The public rule of ``SampleAggregateEstimator(n_blocks="auto")``.

Everything here is a function of public quantities only: the output space
(``output_bounds``), the number of released coordinates, ``epsilon``,
``delta``, the number of features and an optional public guess of the row
count. The private row count is never read.
"""

import math

import numpy as np

from skdp.exceptions import NoiseDominatedWarning
from skdp.mechanisms import analytic_gaussian_sigma
from skdp.utils._warnings import warn_at_caller

__all__ = ["auto_n_blocks", "noise_ratio", "warn_if_noise_dominated"]

# "auto" keeps the expected noise norm on the average below this share of
# the signal scale (half the L2 diameter of the output space).
NOISE_SHARE = 0.25


def noise_ratio(space, epsilon, delta):
    """Expected noise norm on the average of one block, over the signal scale.

    With ``k`` blocks the noise norm is this ratio over ``k``. Laplace
    (``delta == 0``): scale ``b = diameter_1 / epsilon`` per coordinate, norm
    about ``b sqrt(2 D)``; Gaussian: ``sigma = c diameter_2`` with ``c`` the
    analytic-Gaussian sigma for unit sensitivity, norm about ``sigma
    sqrt(D)``. The signal scale is half the L2 diameter, the norm of a block
    output for the sphere: ``2 sqrt(2) D / epsilon`` (Laplace) and ``2 c
    sqrt(D)`` (Gaussian) for a ball, a sphere or a cube.
    """
    size = np.asarray(space.centre).size
    half = space.diameter(2) / 2.0
    if half == 0:
        return 0.0  # a single point: nothing to release, no noise
    if delta > 0:
        noise = analytic_gaussian_sigma(1.0, epsilon, delta) * space.diameter(2)
        return noise * math.sqrt(size) / half
    return space.diameter(1) / epsilon * math.sqrt(2.0 * size) / half


def auto_n_blocks(ratio, min_rows, expected_n_samples=None):
    """``n_blocks="auto"``: enough blocks for a noise share of ``NOISE_SHARE``.

    ``k = ceil(ratio / NOISE_SHARE)``; with a public ``expected_n_samples``
    it is capped so that a block expects at least ``min_rows`` rows (and at
    least one block).
    """
    k = max(1, math.ceil(ratio / NOISE_SHARE))
    if expected_n_samples is not None:
        k = max(1, min(k, int(expected_n_samples) // int(min_rows)))
    return k


def warn_if_noise_dominated(ratio, n_blocks, what):
    """Warn, before any charge, when the noise is expected to exceed the signal.

    ``ratio / n_blocks`` is the expected noise norm relative to the largest
    signal (every block in agreement); above 1 the release is mostly noise,
    whatever the data.
    """
    share = ratio / n_blocks
    if share <= 1.0:
        return
    needed = math.ceil(ratio / NOISE_SHARE)
    warn_at_caller(
        f"n_blocks={n_blocks} is noise-dominated for {what}: the expected noise "
        f"norm on the average is {share:.2g} times the largest signal (blocks in "
        f"perfect agreement). n_blocks={needed} keeps it below "
        f"{NOISE_SHARE:g}, or raise epsilon; n_blocks='auto' applies this rule.",
        NoiseDominatedWarning,
    )
