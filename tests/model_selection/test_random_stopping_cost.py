"""Random stopping's accounting against closed forms, brute-force optimisation
and dp_accounting's published figures (Papernot and Steinke 2022)."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from skdp.accounting import PrivacyCost
from skdp.accounting._zcdp import zcdp_epsilon
from skdp.mechanisms import check_random_source
from skdp.mechanisms._gaussian import _gaussian_delta_terms
from skdp.model_selection._random_stopping_cost import (
    _log_pmf,
    base_rdp,
    check_rdp_accountable,
    random_stopping_epsilon,
    rdp_epsilon,
    repeat_select_curve,
    sample_repetitions,
    tnb_gamma,
    tnb_mean,
)

TNB = "truncated_negative_binomial"
FREE = PrivacyCost(0.0)


def gaussian(ratio):
    value, error = _gaussian_delta_terms(ratio, 1.0)
    return PrivacyCost(1.0, min(value + 2 * error, 0.999), noise_multiplier=ratio)


def tnb_epsilon(ratio, mean, eta, delta=1e-6):
    gamma = tnb_gamma(mean, eta)
    return random_stopping_epsilon(
        [gaussian(ratio)], FREE, TNB, tnb_mean(gamma, eta), eta, gamma, delta
    )


def brute_min(function):
    """min over orders λ in (1, 1e8) of ``function``, by a bounded scalar
    search on log(λ - 1) started from a coarse scan."""
    grid = np.linspace(-12, 18, 3001)
    values = [function(1 + math.exp(t)) for t in grid]
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = minimize_scalar(
        lambda t: function(1 + math.exp(t)),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return min(res.fun, values[i])


def conversion(rdp, delta):
    def eps(lam):
        return (
            rdp(lam)
            + math.log1p(-1 / lam)
            - (math.log(delta) + math.log(lam)) / (lam - 1)
        )

    return brute_min(eps)


# -- the distribution of K ----------------------------------------------------
@pytest.mark.parametrize("eta", [-0.5, 0.0, 0.5, 1.0, 3.0])
def test_truncated_negative_binomial_pmf_and_mean_match_its_definition(eta):
    # Definition 1: P[K = k] ∝ (1-γ)^k Π_{j<k} (j+η)/(j+1), k >= 1; at
    # η = 0 its limit (1-γ)^k / k (the logarithmic distribution)
    gamma, ks = 0.05, np.arange(1, 3000)
    if eta == 0.0:
        weights = (1 - gamma) ** ks / ks
    else:
        weights = np.cumprod([(1 - gamma) * (j + eta) / (j + 1) for j in ks - 1])
    pmf = weights / weights.sum()
    ours = np.exp([_log_pmf(int(k), TNB, eta, gamma, None) for k in ks])
    np.testing.assert_allclose(ours, pmf, rtol=1e-9, atol=1e-300)
    assert tnb_mean(gamma, eta) == pytest.approx(float(ks @ pmf), rel=1e-10)


def test_mean_closed_forms_and_the_limit_eta_to_zero():
    assert tnb_gamma(10.0, 1.0) == 0.1  # geometric: E[K] = 1/γ
    gamma = 0.02
    log_mean = (1 - gamma) / (gamma * math.log(1 / gamma))  # logarithmic
    assert tnb_mean(gamma, 0.0) == pytest.approx(log_mean, rel=1e-15)
    assert tnb_mean(gamma, 1e-9) == pytest.approx(log_mean, rel=1e-8)
    assert tnb_gamma(10.0, 1e-9) == pytest.approx(tnb_gamma(10.0, 0.0), rel=1e-7)
    for eta in (-0.5, 0.0, 0.5, 2.0):
        assert tnb_mean(tnb_gamma(7.5, eta), eta) == pytest.approx(7.5, rel=1e-12)


@pytest.mark.parametrize(
    "stopping, eta, mean, p_one",
    [
        (TNB, 1.0, 10.0, 0.1),  # geometric: P[K = 1] = γ
        (TNB, 0.0, 10.0, None),
        ("poisson", None, 10.0, 10 * math.exp(-10)),
    ],
)
def test_sampled_repetitions_follow_the_distribution(stopping, eta, mean, p_one):
    source = check_random_source(0)
    gamma = None if stopping == "poisson" else tnb_gamma(mean, eta)
    if p_one is None:
        p_one = (1 - gamma) / math.log(1 / gamma)  # logarithmic
    draws = np.array(
        [sample_repetitions(stopping, eta, gamma, mean, source) for _ in range(6000)]
    )
    # mean: standard error below sqrt(var/6000) <= 0.4 for these laws
    assert abs(draws.mean() - mean) < 1.0
    assert abs(np.mean(draws == 1) - p_one) < 4 * math.sqrt(p_one / 6000) + 1e-3
    assert draws.min() >= (0 if stopping == "poisson" else 1)


# -- the base run's Rényi curve --------------------------------------------------
def test_base_curve_is_gaussian_linear_pure_capped_and_max_of_the_parts():
    orders = np.array([1.0, 2.0, 10.0, 1e3])
    fit = gaussian(4.0)  # α / (2·16)
    score = PrivacyCost(0.1)  # Laplace: min(0.1, α·0.005)
    np.testing.assert_allclose(base_rdp([fit], FREE, orders), orders / 32)
    np.testing.assert_allclose(
        base_rdp([FREE], score, orders), np.minimum(0.1, orders * 0.005)
    )
    both = base_rdp([fit, gaussian(8.0)], score, orders)  # the max, not the sum
    np.testing.assert_allclose(
        both, np.maximum(orders / 32, np.minimum(0.1, orders * 0.005))
    )
    # two releases within one fit add up
    np.testing.assert_allclose(base_rdp([fit + fit], FREE, orders), orders / 16)


def test_a_release_without_a_renyi_curve_is_refused_naming_the_fix():
    check_rdp_accountable(gaussian(2.0) + PrivacyCost(0.3), "x")
    with pytest.raises(ValueError, match=r"Gaussian noise.*pure epsilon-DP.*Nothing"):
        check_rdp_accountable(PrivacyCost(0.5, 1e-6, mechanism="ptr"), "x")


# -- the conversion and the theorems -------------------------------------------
@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.5, 20.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-6, 1e-2])
def test_rdp_to_dp_conversion_matches_brute_force(rho, delta):
    ours = rdp_epsilon(lambda a: rho * a, delta)
    brute = max(conversion(lambda a: rho * a, delta), 0.0)  # (ε < 0, δ) is (0, δ)
    assert brute <= ours <= brute * (1 + 1e-9) + 1e-15
    # the same conversion as the zCDP accountant's
    assert ours == pytest.approx(zcdp_epsilon(rho, delta), rel=1e-9)


@pytest.mark.parametrize("ratio", [2.0, 10.0])
@pytest.mark.parametrize("eta", [0.0, 0.5, 1.0])
def test_negative_binomial_matches_the_zcdp_closed_form(ratio, eta):
    # Theorem 2 with D_α = ρα: min over λ̂ >= 1 of ρ(λ̂ - 1) + L/λ̂ is
    # 2 sqrt(ρL) - ρ at λ̂ = sqrt(L/ρ) (here >= 1), L = log(1/γ)
    rho, mean, delta = 0.5 / ratio**2, 10.0, 1e-6
    gamma = tnb_gamma(mean, eta)
    L = math.log(1 / gamma)
    assert math.sqrt(L / rho) >= 1
    c = (1 + eta) * (2 * math.sqrt(rho * L) - rho)
    mean = tnb_mean(gamma, eta)
    brute = conversion(lambda lam: rho * lam + c + math.log(mean) / (lam - 1), delta)
    ours = tnb_epsilon(ratio, 10.0, eta, delta)
    assert brute <= ours <= brute * (1 + 1e-7)


def test_poisson_on_a_pure_base_is_the_theorem_6_formula_without_delta_hat():
    # a pure ε0 run is (ε̂, 0)-DP for ε̂ = log(λ/(λ-1)) >= ε0: ε'(λ) =
    # min(ε0, λ ε0²/2) + log(μ)/(λ-1), for λ <= 1/(1 - exp(-ε0)) ≈ 100.5
    eps0, mu = 0.01, 10.0
    curve = repeat_select_curve(
        lambda o: base_rdp([PrivacyCost(eps0)], FREE, o), "poisson", mu, pure=eps0
    )
    lam = np.array([2.0, 20.0, 100.0])
    expected = np.minimum(eps0, lam * eps0**2 / 2) + math.log(mu) / (lam - 1)
    np.testing.assert_allclose(curve(lam), expected, rtol=1e-15)
    assert curve(np.array([200.0]))[0] > eps0 + math.log(mu) / 199  # δ̂ > 0 there


def test_poisson_on_a_gaussian_base_matches_brute_force_delta_hat():
    rho, mu, lam = 0.5 / 5.0**2, 10.0, 30.0
    eps_hat = math.log(lam / (lam - 1))

    def log_delta(a):
        return (a - 1) * (rho * a - eps_hat + math.log1p(-1 / a)) - math.log(a)

    delta_hat = math.exp(min(brute_min(log_delta), 0.5 * math.log1p(-math.exp(-rho))))
    expected = rho * lam + mu * delta_hat + math.log(mu) / (lam - 1)
    curve = repeat_select_curve(
        lambda o: base_rdp([gaussian(5.0)], FREE, o), "poisson", mu
    )
    assert expected <= curve(np.array([lam]))[0] <= expected * (1 + 1e-3)


# dp_accounting 0.6.0, RdpAccountant + RepeatAndSelectDpEvent(GaussianDpEvent(5),
# mean 10, shape) at δ = 1e-6 (benchmarks/dpa_repeat_runner.py)
DP_ACCOUNTING = {
    0.0: 1.5132523611735296,
    0.5: 1.671752841690731,
    1.0: 1.813568988372425,
}
DP_ACCOUNTING_POISSON = 1.9804037817028843


@pytest.mark.parametrize("eta", sorted(DP_ACCOUNTING))
def test_within_one_percent_of_dp_accounting_and_never_above(eta):
    ours = tnb_epsilon(5.0, 10.0, eta)
    assert DP_ACCOUNTING[eta] * 0.99 <= ours <= DP_ACCOUNTING[eta]


def test_poisson_within_one_percent_of_dp_accounting_and_never_above():
    ours = random_stopping_epsilon(
        [gaussian(5.0)], FREE, "poisson", 10.0, None, None, 1e-6
    )
    assert DP_ACCOUNTING_POISSON * 0.99 <= ours <= DP_ACCOUNTING_POISSON


def test_more_expected_runs_cost_more():
    for eta in (0.0, 1.0):
        values = [tnb_epsilon(5.0, m, eta) for m in (1.5, 3.0, 10.0, 100.0)]
        assert np.all(np.diff(values) > 0)
    poisson = [
        random_stopping_epsilon([gaussian(5.0)], FREE, "poisson", m, None, None, 1e-6)
        for m in (1.5, 3.0, 10.0, 100.0)
    ]
    assert np.all(np.diff(poisson) > 0)
    # and more than one run of the base alone
    assert tnb_epsilon(5.0, 1.5, 1.0) > zcdp_epsilon(0.5 / 25, 1e-6)


class _Top:
    """A source whose uniform draw is the largest double below 1."""

    def random(self):
        return math.nextafter(1.0, 0.0)


@pytest.mark.parametrize(
    "stopping, eta", [(TNB, 0.0), (TNB, 0.5), (TNB, 3.0), ("poisson", None)]
)
def test_the_sampler_ends_in_the_far_tail_whatever_the_rounding(stopping, eta):
    # a uniform draw above the rounded sum of the probabilities used to walk on
    gamma = None if stopping == "poisson" else tnb_gamma(10.0, eta)
    k = sample_repetitions(stopping, eta, gamma, 10.0, _Top())
    assert 20 < k < 10_000


def test_the_negative_binomial_tends_to_a_zero_truncated_poisson_as_eta_grows():
    # NB(η, γ) -> Poisson(μ) as η -> ∞ with η(1-γ)/γ -> μ; truncated at K >= 1
    # its mean is μ / (1 - e^-μ)
    eta, mean = 1e6, 10.0
    gamma = tnb_gamma(mean, eta)
    mu = mean
    for _ in range(50):  # the fixed point of μ = mean (1 - e^-μ)
        mu = mean * (1 - math.exp(-mu))
    ks = np.arange(1, 60)
    ours = np.exp([_log_pmf(int(k), TNB, eta, gamma, None) for k in ks])
    poisson = np.exp([-mu + k * math.log(mu) - math.lgamma(k + 1) for k in ks]) / (
        1 - math.exp(-mu)
    )
    np.testing.assert_allclose(ours, poisson, atol=2e-5)
