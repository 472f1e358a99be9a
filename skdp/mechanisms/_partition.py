"""Private partition selection: keep the keys whose noisy count clears a threshold."""

import math

import numpy as np

from skdp.mechanisms._discrete import discrete_laplace
from skdp.mechanisms._random import check_random_source
from skdp.utils._validation import check_delta, check_epsilon

__all__ = ["partition_noise_std", "partition_selection", "partition_threshold"]

#: The noise scale is ``t = ceil(2**SCALE_BITS / epsilon) / 2**SCALE_BITS``,
#: at least ``1 / epsilon``, as an exact rational for the sampler.
SCALE_BITS = 20


def _scale(epsilon):
    return math.ceil(math.ldexp(1.0, SCALE_BITS) / epsilon), 1 << SCALE_BITS


def partition_noise_std(epsilon):
    """Standard deviation of the selection's discrete Laplace noise.

    ``Var Z = 2 e^{-1/t} / (1 - e^{-1/t})²`` for ``P(z) ∝ exp(-|z|/t)``.

    Parameters
    ----------
    epsilon : float
        ε of the selection, ``> 0``.

    Returns
    -------
    std : float

    Examples
    --------
    >>> from skdp.mechanisms import partition_noise_std
    >>> round(partition_noise_std(1.0), 3)
    1.357
    """
    num, den = _scale(check_epsilon(epsilon))
    ratio = math.exp(-den / num)
    return math.sqrt(2.0 * ratio) / (1.0 - ratio)


def partition_threshold(epsilon, delta):
    """The integer threshold ``τ`` of :func:`partition_selection`.

    Parameters
    ----------
    epsilon : float
        ε of the selection, ``> 0``.
    delta : float
        δ of the selection, in (0, 1).

    Returns
    -------
    threshold : int
        The smallest integer with ``P(1 + Z >= τ) <= delta`` for the
        discrete Laplace noise ``Z`` of the selection.

    Examples
    --------
    >>> from skdp.mechanisms import partition_threshold
    >>> partition_threshold(1.0, 1e-6)
    15
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=False)
    num, den = _scale(epsilon)
    t = num / den
    # P(Z >= m) = exp(-m/t) / (1 + exp(-1/t)) for m >= 1
    steps = t * math.log(1.0 / (delta * (1.0 + math.exp(-1.0 / t))))
    threshold = 1 + max(1, math.ceil(steps * (1 + 1e-12)))
    while math.exp(-(threshold - 1) / t) / (1.0 + math.exp(-1.0 / t)) > delta:
        threshold += 1  # guards the float evaluation above
    return threshold


def partition_selection(counts, epsilon, delta, *, random_state=None):
    """Keep the keys whose count plus discrete Laplace noise reaches a threshold.

    Parameters
    ----------
    counts : array-like of int of shape (n_keys,)
        Exact positive row counts of the keys present in the data, one row
        contributing to one key.
    epsilon : float
        ε of the selection, ``> 0``.
    delta : float
        δ of the selection, in (0, 1).
    random_state : None, int, RandomState or RandomSource, default=None
        Source of randomness, see :func:`check_random_source`.

    Returns
    -------
    keep : ndarray of bool of shape (n_keys,)
        Which keys are released.
    noisy_counts : ndarray of float of shape (n_keys,)
        The noisy counts (integers); those of the kept keys may be released
        with them (part of the same mechanism).

    Notes
    -----
    **Mechanism.** Each present key's count gets independent discrete Laplace
    noise ``Z`` with ``P(z) ∝ exp(-|z|/t)`` on the integers, ``t =
    ceil(2**20/ε)/2**20 >= 1/ε``, sampled exactly (Canonne, Kamath and
    Steinke 2020); the key is kept when ``count + Z >= τ``, with ``τ`` from
    :func:`partition_threshold`. Absent keys are never kept.

    **Privacy ((ε, δ)-DP, add/remove one row contributing to one key).**
    Removing the row changes one key's count by 1. If that count stays
    positive, the released keys and noisy counts are those of a Laplace
    mechanism on a sensitivity-1 count: privacy loss at most ``1/t <= ε``.
    If the count was 1, the key disappears; the bad event is that it was
    released, which has probability ``P(1 + Z >= τ) = exp(-(τ-1)/t) / (1 +
    exp(-1/t)) <= δ``. This is the Laplace thresholding of Korolova et al.
    (2009) and Desfontaines, Voss, Gipson and Mandayam (2022), with the
    exact tail of the discrete Laplace noise.

    References
    ----------
    .. [1] A. Korolova, K. Kenthapadi, N. Mishra and A. Ntoulas, "Releasing
       Search Queries and Clicks Privately", WWW 2009.
    .. [2] D. Desfontaines, J. Voss, B. Gipson and C. Mandayam,
       "Differentially private partition selection", PoPETs 2022.

    Examples
    --------
    >>> from skdp.mechanisms import partition_selection
    >>> keep, _ = partition_selection([1000, 2], 1.0, 1e-6, random_state=0)
    >>> keep.tolist()
    [True, False]
    """
    counts = np.asarray(counts, dtype=np.int64)
    threshold = partition_threshold(epsilon, delta)
    source = check_random_source(random_state)
    num, den = _scale(epsilon)
    noise = discrete_laplace(num, den, counts.shape, random_state=source)
    noisy = counts + noise
    return noisy >= threshold, noisy.astype(float)
