"""Additive noise chosen by delta: Laplace for pure ε, analytic Gaussian else."""

import math

import numpy as np

from skdp.mechanisms._gaussian import (
    _gaussian_grid,
    _sigma_ratio,
    analytic_gaussian_sigma,
    gaussian_cost,
    gaussian_mechanism,
)
from skdp.mechanisms._laplace import _laplace_grid, laplace_cost, laplace_mechanism


def additive_cost(epsilon, delta):
    """The cost of one :func:`additive_release`, saying which mechanism it is.

    Examples
    --------
    >>> from skdp.mechanisms._additive import additive_cost
    >>> additive_cost(0.5, 0.0).mechanism, additive_cost(0.5, 1e-6).mechanism
    ('laplace', 'gaussian')
    """
    return gaussian_cost(epsilon, delta) if delta > 0 else laplace_cost(epsilon)


def quieter_additive_mechanism(l1_sensitivity, l2_sensitivity, epsilon, delta):
    """The mechanism of :func:`additive_release` whose noise is smaller:
    ``"laplace"`` or ``"gaussian"``, from public parameters only.

    Compares the standard deviation of one coordinate's noise: Laplace of
    scale ``l1 / ε`` has ``sqrt(2) l1 / ε``, the analytic Gaussian
    ``σ = r(ε, δ) l2`` (:func:`~skdp.mechanisms.analytic_gaussian_sigma`).
    For a vector in which one row moves ``d`` coordinates by 1 (L1 ``d``, L2
    ``sqrt(d)``) the Gaussian is quieter when ``d > (ε r(ε, δ))² / 2``: from
    8 features at ε = 0.3, 9 at ε = 1, 11 at ε = 3, 48 at ε = 100 and about
    250,000 at ε = 10⁶ (δ = 1e-6; at large ε the Gaussian's multiplier falls
    like ``1 / sqrt(2ε)``, Laplace's scale like ``1 / ε``). A tie, ``delta
    == 0``, and a Gaussian that cannot be calibrated (ε beyond 1e150, a δ
    too small) give Laplace, which spends no δ. Multiplying both
    sensitivities by a group's ``k`` does not change the answer.

    Parameters
    ----------
    l1_sensitivity, l2_sensitivity : float
        Sensitivities of the released vector, ``> 0``.
    epsilon : float
        ε of the release, ``> 0``.
    delta : float
        The δ a Gaussian release would spend (0: Laplace only).

    Returns
    -------
    mechanism : {"laplace", "gaussian"}

    Examples
    --------
    >>> import math
    >>> from skdp.mechanisms._additive import quieter_additive_mechanism
    >>> [quieter_additive_mechanism(d, math.sqrt(d), 1.0, 1e-6) for d in (1, 64)]
    ['laplace', 'gaussian']
    >>> quieter_additive_mechanism(64, 8.0, 1e6, 1e-6)
    'laplace'
    """
    if not delta > 0:
        return "laplace"
    try:
        ratio = _sigma_ratio(epsilon, delta)
    except (ValueError, OverflowError, ZeroDivisionError):
        return "laplace"
    # sigma < sqrt(2) l1 / epsilon, both sides times epsilon: l2 (r epsilon)
    # is finite wherever the ratio is (r epsilon grows like sqrt(epsilon))
    gaussian = l2_sensitivity * (ratio * epsilon)
    return "gaussian" if gaussian < math.sqrt(2.0) * l1_sensitivity else "laplace"


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


def additive_release_problem(l1_sensitivity, l2_sensitivity, epsilon, delta, size):
    """Why :func:`additive_release` of ``size`` values cannot run, or None.

    Public: the noise grid must be representable for these sensitivities,
    budget and size (a tiny ε makes the scale overflow). Callers check it
    before they charge, so that the release cannot fail after the charge.
    """
    try:
        if delta > 0:
            _gaussian_grid(l2_sensitivity, _sigma_ratio(epsilon, delta), size)
        else:
            _laplace_grid(l1_sensitivity, epsilon, size)
    except (ValueError, OverflowError, ZeroDivisionError) as exc:
        return str(exc)
    return None


def check_additive_release(name, l1_sensitivity, l2_sensitivity, epsilon, delta, size):
    """Raise ``ValueError`` naming ``name`` when :func:`additive_release`
    cannot run for these public parameters (call it before the charge)."""
    problem = additive_release_problem(
        l1_sensitivity, l2_sensitivity, epsilon, delta, size
    )
    if problem is not None:
        raise ValueError(
            f"{name}: {problem} Nothing was charged. Use a larger epsilon (or, "
            "with groups, a smaller max_rows_per_group)."
        )


def additive_noise_variance(l1_sensitivity, l2_sensitivity, epsilon, delta):
    """Variance of each coordinate's noise in :func:`additive_release`."""
    if delta > 0:
        return analytic_gaussian_sigma(l2_sensitivity, epsilon, delta) ** 2
    return 2 * (l1_sensitivity / epsilon) ** 2


def additive_noise_bound(alpha, l1_sensitivity, l2_sensitivity, epsilon, delta):
    """``t`` with ``P(|noise| > t) <= alpha`` for one coordinate of
    :func:`additive_release`.

    Laplace of scale ``b = l1 / ε``: ``P(|Z| > t) = exp(-t / b)``; Gaussian of
    standard deviation ``σ``: ``2 (1 - Φ(t / σ))``. The exact discrete noise
    has scale at least ``b`` (resp. ``σ``) by at most ``2**-20`` relative and
    lives on a grid at most ``2**-20`` of the scale; the bound adds one
    percent to cover both.
    """
    if delta > 0:
        from scipy.stats import norm  # here: scipy.stats takes 0.5 s to import

        sigma = analytic_gaussian_sigma(l2_sensitivity, epsilon, delta)
        return 1.01 * sigma * float(norm.isf(alpha / 2))
    return 1.01 * (l1_sensitivity / epsilon) * math.log(1.0 / alpha)
