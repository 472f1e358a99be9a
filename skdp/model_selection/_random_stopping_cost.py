"""Accounting of random stopping: repeat a private run, release the best.

Papernot and Steinke, "Hyperparameter tuning with Renyi differential
privacy" (ICLR 2022; arXiv:2110.03620 v2): a base mechanism ``Q`` (here one
private fit and one private evaluation) is run ``K`` times, ``K`` drawn from
a public distribution independently of the data, and only the best run is
released. Its Rényi DP follows from ``Q``'s Rényi DP curve:

* ``K`` truncated negative binomial ``D_{η,γ}`` (Theorem 2): for orders
  ``λ > 1`` and ``λ̂ >= 1``,
  ``ε'(λ) = ε(λ) + (1 + η) [(1 - 1/λ̂) ε(λ̂) + log(1/γ)/λ̂] + log E[K]/(λ - 1)``;
* ``K`` Poisson with mean ``μ`` (Theorem 6): if ``Q`` is also
  ``(ε̂, δ̂)``-DP with ``e^ε̂ <= 1 + 1/(λ - 1)``,
  ``ε'(λ) = ε(λ) + μ δ̂ + log μ/(λ - 1)``.

The curve is converted to ``(ε, δ)`` with the conversion of Canonne, Kamath
and Steinke (2020, Prop. 12), as :mod:`skdp.accounting._zcdp` does for
zCDP, minimised over a grid of orders refined around the best. Every order
gives a valid bound, so a finite search is sound; the result is rounded up.
"""

import math

import numpy as np
from scipy.optimize import brentq

__all__ = [
    "base_rdp",
    "check_rdp_accountable",
    "random_stopping_epsilon",
    "rdp_epsilon",
    "repeat_and_select",
    "repeat_select_curve",
    "sample_repetitions",
    "stopping_distribution",
    "stopping_label",
    "tnb_gamma",
    "tnb_mean",
]

STOPPING_RULES = ("truncated_negative_binomial", "poisson")

# Orders λ of the conversion (λ > 1) and λ̂ of Theorem 2 (λ̂ >= 1).
_ORDERS = np.geomspace(1.0 + 1e-6, 1e8, 4001)
_HAT_ORDERS = np.concatenate(([1.0], _ORDERS))
# Orders of Theorem 6's δ̂, one row per λ (a coarser grid: a matrix).
_DELTA_ORDERS = np.geomspace(1.0 + 1e-6, 1e8, 1201)
_ROUND_UP = 1e-12
# The sampler walks K's probabilities until what is left is below this.
_TAIL = 2.0**-60


# -- the number of runs ----------------------------------------------------
def tnb_mean(gamma, eta):
    """``E[K]`` for ``K ~ D_{η,γ}`` (Papernot–Steinke, Definition 1).

    ``η (1 - γ) / (γ (1 - γ^η))``; ``(1 - γ) / (γ log(1/γ))`` at ``η = 0``
    (the logarithmic distribution), the limit of the former as ``η → 0``.
    """
    if gamma >= 1.0:
        return 1.0
    log_gamma = math.log(gamma)
    if eta == 0.0:
        return (1.0 - gamma) / (gamma * -log_gamma)
    return eta * (1.0 - gamma) / (gamma * -math.expm1(eta * log_gamma))


def stopping_distribution(stopping, n_iter, eta):
    """``(E[K], γ)`` of the stopping rule (``γ`` None for Poisson): the
    accounting uses the mean of the very ``γ`` the sampler uses, rounded
    up."""
    if stopping == "poisson":
        return float(n_iter), None
    gamma = tnb_gamma(float(n_iter), float(eta))
    return math.nextafter(tnb_mean(gamma, float(eta)), math.inf), gamma


def stopping_label(stopping, n_iter, eta, gamma, scorer):
    """The ledger label of a random stopping search's charge."""
    if stopping == "poisson":
        law = f"K ~ Poisson(mean {n_iter:g}) (Theorem 6)"
    else:
        law = (
            f"K ~ truncated negative binomial (eta {eta:g}, gamma "
            f"{gamma:.6g}, mean {n_iter:g}) (Theorem 2)"
        )
    return (
        f"random stopping: best of K runs of private fit + private "
        f"{scorer.name} on held-out rows, {law}, Papernot-Steinke RDP -> "
        "(epsilon, delta)"
    )


def tnb_gamma(mean, eta):
    """The ``γ`` in (0, 1) for which ``D_{η,γ}`` has mean ``mean`` (> 1).

    ``E[K]`` decreases from ``∞`` to 1 as ``γ`` goes from 0 to 1, so the
    root is unique; it is found to the last bits (``brentq``). The search
    then accounts with ``tnb_mean`` of this very ``γ``, so the sampler and
    the accounting use the same distribution, whatever the root's error.
    """
    if eta == 1.0:
        return 1.0 / mean  # the geometric distribution
    low = math.ldexp(1.0, -1000)
    return brentq(
        lambda g: tnb_mean(g, eta) - mean, low, 1.0 - 1e-15, xtol=1e-300, rtol=1e-15
    )


def _log_pmf(k, stopping, eta, gamma, mean):
    """``log P[K = k]`` (``k >= 1`` for ``D_{η,γ}``, ``k >= 0`` for Poisson)."""
    if stopping == "poisson":
        return -mean + k * math.log(mean) - math.lgamma(k + 1)
    log_q = k * math.log1p(-gamma)
    if eta == 0.0:
        return log_q - math.log(k) - math.log(-math.log(gamma))
    # (1-γ)^k Γ(k+η) / (Γ(η) k! (γ^-η - 1)); Γ(η) and γ^-η - 1 share their
    # sign for η in (-1, 0), so their absolute values are used
    norm = abs(math.expm1(-eta * math.log(gamma)))
    return (
        log_q
        + math.lgamma(k + eta)
        - math.lgamma(eta)
        - math.lgamma(k + 1)
        - math.log(norm)
    )


def _tail_ratio(k, stopping, eta, gamma, mean):
    """A ratio ``r < 1`` with ``P[K = j + 1] <= r P[K = j]`` for all ``j >= k``
    (``k`` past the mode), so that ``P[K > k] <= P[K = k] r / (1 - r)``.

    Poisson: ``μ/(j+1)`` decreases in ``j``. ``D_{η,γ}``: ``(1-γ)(j+η)/(j+1)``
    decreases to ``1-γ`` for ``η > 1`` and increases to it for ``η <= 1``.
    """
    if stopping == "poisson":
        return mean / (k + 1)
    return max((1.0 - gamma) * (k + eta) / (k + 1), 1.0 - gamma)


def sample_repetitions(stopping, eta, gamma, mean, source):
    """Draw ``K`` by inversion of one uniform draw of ``source``.

    The walk adds ``P[K = k]`` for ``k = 0, 1, ...`` until the sum exceeds
    the uniform value, or until the mass beyond ``k`` is below ``2**-60``
    (a geometric bound, :func:`_tail_ratio`), when ``k`` is returned: the
    drawn ``K`` then differs from an exact draw with probability below
    ``2**-52`` (the uniform's own resolution), which no privacy statement
    here can resolve. The walk ends whatever the rounding of the sum.
    """
    u = source.random()
    k = 0 if stopping == "poisson" else 1
    total = 0.0
    while True:
        p = math.exp(_log_pmf(k, stopping, eta, gamma, mean))
        total += p
        if u < total:
            return k
        if k > 2 * mean + 2 * abs(eta or 0.0):
            r = _tail_ratio(k, stopping, eta, gamma, mean)
            if r < 1.0 and p * r / (1.0 - r) < _TAIL:
                return k
        k += 1


def repeat_and_select(run_once, draw_k, source):
    """The mechanism the theorems bound: the best of ``K = draw_k()`` runs.

    Parameters
    ----------
    run_once : callable
        ``run_once()`` makes one run of the base mechanism and returns a
        tuple whose first item is its released score (a float, greater is
        better; NaN ranks as ``-inf``). The runs must be independent given
        what the caller fixed before (the search's split).
    draw_k : callable
        ``draw_k()`` draws ``K`` from a public distribution, independently of
        the data (:func:`sample_repetitions`); it is called once, first.
    source : RandomSource
        Draws, right after each run, the uniform key that breaks ties in
        the score (anything with ``random()``).

    Returns
    -------
    best : tuple or None
        The tuple of the run with the largest ``(score, key)``: the runs are
        totally ordered, as Theorems 2 and 6 of Papernot and Steinke need;
        None when ``K = 0`` (the paper's ``⊥``). Nothing else about the
        runs, ``K`` included, leaves this function.
    """
    best, best_rank = None, None
    for _ in range(draw_k()):
        run = run_once()
        score = run[0]
        rank = (-math.inf if math.isnan(score) else score, source.random())
        if best is None or rank > best_rank:
            best, best_rank = run, rank
    return best


# -- the base mechanism's Rényi curve --------------------------------------
def check_rdp_accountable(cost, what):
    """Refuse, before the charge, a cost with a release that has no RDP curve.

    A Gaussian release (its noise multiplier) and a pure ε-DP release
    (``delta == 0``) have one; a release stated only as ``(ε, δ)`` with
    ``δ > 0`` (propose-test-release, smooth sensitivity) does not.
    """
    for atom in cost.atoms:
        if atom.noise_multiplier is None and atom.delta > 0:
            kind = atom.mechanism or "(epsilon, delta)"
            raise ValueError(
                f"Random stopping needs the Renyi DP curve of every release of "
                f"one run, but {what} makes a {kind} release stated only as "
                f"(epsilon={atom.epsilon:g}, delta={atom.delta:g}), which has "
                "none. Use releases with Gaussian noise (a noise multiplier) or "
                "pure epsilon-DP ones (delta=0), or NoisyMaxSearchCV. Nothing "
                "was charged."
            )


def _atom_rdp(atom, orders):
    if atom.noise_multiplier is not None:
        # Gaussian, noise multiplier r: D_α = α / (2 r²) (Mironov 2017, Prop. 7)
        return orders * (0.5 / atom.noise_multiplier**2)
    if atom.epsilon == 0.0:
        return np.zeros_like(orders)
    # pure ε-DP: D_α <= ε at every order, and ε-DP implies (ε²/2)-zCDP (Bun
    # and Steinke 2016, Prop. 3.3), i.e. D_α <= α ε²/2; a stated zCDP rho
    # (the exponential mechanism's ε²/8) is used where smaller
    rho = atom.epsilon**2 / 2
    if atom.rho is not None and 0.0 < atom.rho < rho:
        rho = atom.rho
    return np.minimum(atom.epsilon, orders * rho)


def _cost_rdp(cost, orders):
    """Rényi curve of a sequential composition: the atoms' curves add up."""
    total = np.zeros_like(orders)
    for atom in cost.atoms:
        total = total + _atom_rdp(atom, orders)
    return total


def base_rdp(fit_costs, evaluation, orders):
    """Rényi curve of one run: a fit on the training part, then a score on
    the disjoint held-out part.

    A row added or removed is in one part (its own independent coin): in the
    training part it moves the fit (the score on fixed held-out rows is
    post-processing of the fit), in the held-out part it moves the score
    only. The candidate is drawn from the public grid independently of the
    data. The run's output is thus a mixture, over the row's coin and the
    candidate, of pairs each within one curve; ``exp((α-1) D_α)`` is jointly
    convex (van Erven and Harremoës 2014), so the mixture is within the
    pointwise maximum of the curves.
    """
    fits = np.max([_cost_rdp(c, orders) for c in fit_costs], axis=0)
    return np.maximum(fits, _cost_rdp(evaluation, orders))


def _pure_epsilon(fit_costs, evaluation):
    """The run's pure ε if every release is pure, else ``inf``."""
    atoms = [a for c in (*fit_costs, evaluation) for a in c.atoms]
    if any(a.delta > 0 for a in atoms):
        return math.inf
    fit = max(math.fsum(a.epsilon for a in c.atoms) for c in fit_costs)
    return max(fit, evaluation.epsilon)


# -- Theorems 2 and 6, and the conversion ------------------------------------
def _rdp_delta(base, epsilon):
    """``δ`` at each ``epsilon`` from the run's Rényi curve ``base``.

    The best order of the conversion (CKS 2020, Prop. 12) over
    ``_DELTA_ORDERS``, and ``sqrt(1 - e^{-KL})`` with ``KL = D_1``
    (Bretagnolle–Huber: the total variation bounds δ at every ε >= 0).
    """
    orders = _DELTA_ORDERS
    rdp = base(orders)
    epsilon = np.asarray(epsilon, dtype=np.float64)[:, None]
    with np.errstate(over="ignore"):
        log_delta = (orders - 1.0) * (rdp - epsilon + np.log1p(-1.0 / orders)) - np.log(
            orders
        )
    best = np.min(log_delta, axis=1)
    kl = float(base(np.array([1.0]))[0])
    if kl > 0:
        best = np.minimum(best, 0.5 * math.log1p(-math.exp(-kl)))
    return np.minimum(np.exp(best), 1.0)


def repeat_select_curve(base, stopping, mean, eta=None, gamma=None, pure=math.inf):
    """The Rényi curve of the best of ``K`` runs, as a function of orders > 1.

    Parameters
    ----------
    base : callable
        ``base(orders)``: the run's Rényi curve at an array of orders >= 1.
    stopping : {"truncated_negative_binomial", "poisson"}
    mean : float
        ``E[K]`` (for the negative binomial, that of ``gamma``).
    eta, gamma : float
        The negative binomial's parameters.
    pure : float
        The run's pure ε if it has one (else ``inf``): it is then
        ``(ε̂, 0)``-DP for every ``ε̂ >= pure`` (Theorem 6's ``δ̂``).
    """
    if stopping == "poisson":

        def poisson(orders):
            # Theorem 6 at the largest ε̂ it allows, log(1 + 1/(λ-1))
            eps_hat = np.log1p(1.0 / (orders - 1.0))
            delta_hat = np.where(eps_hat >= pure, 0.0, _rdp_delta(base, eps_hat))
            return base(orders) + mean * delta_hat + math.log(mean) / (orders - 1.0)

        return poisson
    # Theorem 2: the λ̂ term does not depend on λ; minimised once, over a
    # grid refined around its best point (any λ̂ >= 1 is a valid bound)
    constant = (1.0 + eta) * _minimise(
        lambda h: (1.0 - 1.0 / h) * base(h) - math.log(gamma) / h, _HAT_ORDERS
    )

    def negative_binomial(orders):
        return base(orders) + constant + math.log(mean) / (orders - 1.0)

    return negative_binomial


def _minimise(function, grid):
    """``min`` of ``function`` over ``grid``, refined between the best
    point's neighbours (257 points)."""
    with np.errstate(over="ignore"):
        values = function(grid)
        best = int(np.argmin(values))
        lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
        fine = function(np.linspace(lo, hi, 257))
    return min(float(values[best]), float(np.min(fine)))


def rdp_epsilon(curve, delta):
    """The smallest ``ε`` at ``delta`` over the orders, rounded up.

    ``ε(λ) = D_λ + log(1 - 1/λ) - (log δ + log λ)/(λ - 1)`` (Canonne, Kamath
    and Steinke 2020, Prop. 12; Balle et al. 2020, Thm. 21), for the curve
    ``curve(orders)`` at orders > 1.
    """
    log_delta = math.log(delta)
    value = _minimise(
        lambda o: curve(o) + np.log1p(-1.0 / o) - (log_delta + np.log(o)) / (o - 1.0),
        _ORDERS,
    )
    if value <= 0.0:
        return 0.0
    return math.nextafter(value * (1.0 + _ROUND_UP), math.inf)


def random_stopping_epsilon(fit_costs, evaluation, stopping, mean, eta, gamma, delta):
    """``ε`` at ``delta`` of the best of ``K`` runs of fit-then-score.

    ``fit_costs`` are the candidates' fit costs (one run fits one of them),
    ``evaluation`` the private scorer's cost; ``mean`` is ``E[K]``.
    """
    curve = repeat_select_curve(
        lambda orders: base_rdp(fit_costs, evaluation, orders),
        stopping,
        mean,
        eta,
        gamma,
        _pure_epsilon(fit_costs, evaluation),
    )
    return rdp_epsilon(curve, delta)
