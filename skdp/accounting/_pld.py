"""Privacy-loss-distribution (PLD) composition, rounded pessimistically.

Every ledger entry is represented by a *dominating pair* whose privacy loss is
simple, and the composition is the sum of independent losses:

* a Gaussian release with noise multiplier ``r`` (all its coordinates
  together, L2 sensitivity ``Δ``) by ``N(0, 1)`` against ``N(μ, 1)`` with
  ``μ = 1/r``: its loss under the first is ``N(μ²/2, μ²)``, and Gaussian
  losses add up to the loss of one Gaussian with ``μ² = Σ μ_i²`` exactly;
* any other ``(ε, δ)``-DP release (Laplace, exponential mechanism, SVT, PTR,
  ...) by the canonical pair of Kairouz, Oh and Viswanath (2015): with
  probability ``δ`` the loss is ``+∞`` ("reveal"), otherwise it is ``+ε``
  with probability ``e^ε/(1+e^ε)`` and ``-ε`` otherwise. Every ``(ε, δ)``-DP
  mechanism is a post-processing of this pair, for each pair of neighbours
  (both directions of add/remove), so it dominates whatever the mechanism is.

For entries sharing one ``ε`` the ``±ε`` part is a scaled binomial. Several
values of ``ε`` are combined on a grid of step ``h``; each loss value is
rounded **up** to the grid (``ceil``), so the discretised loss is never below
the true one. With ``L`` the total loss of the non-reveal part and ``R = Σ
δ_i`` over the reveal parts,

``δ(ε) <= R + E[(1 - e^(ε - L))_+] = R + Σ_j p_j δ_G(ε - l_j)``,

where ``(l_j, p_j)`` are the atoms of the ``±ε`` part and ``δ_G(t) =
Φ(-t/μ + μ/2) - e^t Φ(-t/μ - μ/2)`` is the Gaussian part's curve (Balle and
Wang 2018), valid for every real ``t`` (``max(0, 1 - e^t)`` when ``μ = 0``).
The function ``(1 - e^(ε - l))_+`` increases in ``l``, so rounding every
loss up can only increase the result; floating-point errors are covered by
outward margins. This is the pessimistic estimate in the sense of Meiser and
Mohammadi (2018) and Koskela, Jälkö and Honkela (2020), as in Google's
``dp_accounting``; the Gaussian part is not discretised at all.
"""

import math

import numpy as np
from scipy.special import log_ndtr, ndtr

from skdp.accounting._composition import largest_float_where, smallest_float_where

__all__ = ["gaussian_mu_budget", "pld_delta", "pld_epsilon"]

#: Largest number of grid points of the discretised ``±ε`` part.
MAX_GRID_POINTS = 1 << 20
#: Finest grid step of the discretised ``±ε`` part.
FINEST_STEP = 1e-5
#: Atoms of a binomial below this probability are moved to the reveal mass
#: (loss ``+∞``), which is pessimistic.
_PRUNE = 1e-30
#: Relative margin on float evaluations (CDFs, sums, binomial pmfs).
_MARGIN = 1e-9


def _gaussian_curve(t, mu, margin=_MARGIN):
    """``δ_G(t)`` at each ``t``; with the default ``margin`` an upper bound on
    the float evaluation (``margin=0``: the plain evaluation)."""
    t = np.asarray(t, dtype=float)
    if mu == 0.0:
        return np.maximum(-np.expm1(t), 0.0)
    first = ndtr(-t / mu + mu / 2.0)
    second = np.exp(t + log_ndtr(-t / mu - mu / 2.0))
    return np.maximum(first * (1.0 + margin) - second * (1.0 - margin), 0.0)


def _binomial_atoms(epsilon, count):
    """Loss values ``ε(2b - k)`` and their probabilities; the pruned mass."""
    from scipy.stats import binom  # here: scipy.stats takes 0.5 s to import

    b = np.arange(count + 1)
    p = binom.pmf(b, count, 1.0 / (1.0 + math.exp(-epsilon)))
    keep = p >= _PRUNE
    pruned = np.count_nonzero(~keep) * _PRUNE * (1.0 + _MARGIN)
    return epsilon * (2.0 * b[keep] - count), p[keep], pruned


def _round_to_grid(values, step):
    """Grid indices of loss values, rounded up (pessimistic)."""
    return np.ceil(values / step)


def _grid_step(groups):
    span = sum(2.0 * eps * count for eps, count in groups)
    return max(FINEST_STEP, span / MAX_GRID_POINTS)


def _discrete_part(groups):
    """Atoms ``(l_j, p_j)`` of the summed ``±ε`` losses, rounded up; pruned mass."""
    if not groups:
        return np.zeros(1), np.ones(1), 0.0
    if len(groups) == 1:
        return _binomial_atoms(*groups[0])
    step = _grid_step(groups)
    offset, mass, pruned = 0, np.ones(1), 0.0
    for epsilon, count in groups:
        values, probs, cut = _binomial_atoms(epsilon, count)
        index = _round_to_grid(values, step).astype(np.int64)
        mass, error = _convolve_atoms(mass, index - index.min(), probs)
        pruned += cut + error
        offset += int(index.min())
    atoms = np.flatnonzero(mass)
    return (offset + atoms) * step, mass[atoms], pruned


def _convolve_atoms(mass, shifts, probs):
    """``mass`` convolved with atoms ``probs`` at ``shifts``; an error bound.

    Shifted additions of non-negative numbers have a small relative error
    (covered by ``_MARGIN``). When that would be slow the FFT is used; its
    absolute error is bounded generously, entries below the noise floor are
    moved to the reveal mass with that bound, and both are returned as the
    error (pessimistic).
    """
    size = mass.size + int(shifts.max())
    if mass.size * shifts.size <= 1 << 26:
        out = np.zeros(size)
        for shift, prob in zip(shifts.tolist(), probs.tolist(), strict=True):
            out[shift : shift + mass.size] += prob * mass
        return out, 0.0
    from scipy.signal import fftconvolve

    kernel = np.zeros(int(shifts.max()) + 1)
    np.add.at(kernel, shifts, probs)
    out = np.maximum(fftconvolve(mass, kernel), 0.0)
    bound = out.size * math.log2(out.size) * 8.0 * 2.0**-52
    noise = out < 1e-14
    error = bound + float(out[noise].sum())
    out[noise] = 0.0
    return out, error


def pld_delta(epsilon, mu_squared, groups, reveal):
    """An upper bound on ``δ(ε)`` of the composition (module docstring).

    Parameters
    ----------
    epsilon : float
    mu_squared : float
        ``Σ 1/r_i²`` over the Gaussian entries.
    groups : sequence of (float, int)
        ``(ε, count)`` of the other entries, one pair per distinct ``ε``.
    reveal : float
        ``Σ δ_i`` of the other entries.

    Returns
    -------
    delta : float
    """
    values, probs, pruned = _prepared(groups)
    return _delta_bound(float(epsilon), values, probs, reveal + pruned, mu_squared)


def _delta_bound(epsilon, values, probs, fixed, mu_squared):
    """``fixed + Σ p_j δ_G(ε - l_j)``, rounded outward.

    The loss values and ``ε - l_j`` carry a few units in the last place of
    rounding; ``δ_G`` (and ``1 - e^t``) changes by at most the change of its
    argument (its slope is at most 1 in magnitude), so an absolute margin of
    eight units of the largest magnitude covers them. Relative margins cover
    the CDFs, the pmfs and the sum.
    """
    mu = math.sqrt(mu_squared)
    curve = float(np.sum(probs * _gaussian_curve(epsilon - values, mu)))
    scale = max(abs(epsilon), float(np.max(np.abs(values))))
    total = math.fsum([fixed, curve * (1.0 + _MARGIN), 8.0 * math.ulp(scale)])
    return math.nextafter(total, math.inf)


def _prepared(groups):
    values, probs, pruned = _discrete_part(sorted(groups))
    return values, probs * (1.0 + _MARGIN), pruned


def pld_epsilon(delta, mu_squared, groups, reveal):
    """The smallest ``ε`` (to float precision, rounded up) with ``δ(ε) <= delta``.

    Parameters
    ----------
    delta : float
        Target ``δ``.
    mu_squared, groups, reveal
        As in :func:`pld_delta`.

    Returns
    -------
    epsilon : float
        ``inf`` when even an infinite ``ε`` leaves more than ``delta``.

    Examples
    --------
    >>> from skdp.accounting._pld import pld_epsilon
    >>> round(pld_epsilon(1e-5, 1.0, [], 0.0), 4)  # a 1-GDP release
    4.3772
    """
    values, probs, pruned = _prepared(groups)
    fixed = math.nextafter(reveal + pruned, math.inf) if reveal + pruned else 0.0

    def bound(eps):
        return _delta_bound(eps, values, probs, fixed, mu_squared)

    if fixed > delta:
        return math.inf
    return smallest_float_where(lambda eps: bound(eps) <= delta, limit=1e12)


def gaussian_mu_budget(epsilon, delta):
    """The largest float ``μ²`` whose Gaussian curve bound gives ``δ(ε) <= delta``.

    Every ``μ'² <= μ²`` then has ``δ(ε) <= delta`` too (the exact curve
    increases in ``μ``, and the bound at ``μ²`` covers it), so comparing an
    exact sum ``Σ 1/m_i²`` with this value is the Gaussian-DP filter's rule.

    Examples
    --------
    >>> from skdp.accounting._pld import gaussian_mu_budget, pld_epsilon
    >>> mu2 = gaussian_mu_budget(1.0, 1e-5)
    >>> round(mu2, 4), pld_epsilon(1e-5, mu2, [], 0.0) <= 1.0
    (0.0719, True)
    """
    if math.isinf(epsilon):
        return math.inf
    return largest_float_where(lambda m: pld_delta(epsilon, m, [], 0.0) <= delta)
