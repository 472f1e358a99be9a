"""Tests of laplace_mechanism, gaussian_mechanism and the analytic Gaussian."""

import decimal
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from skdp.accounting import PrivacyCost
from skdp.mechanisms import (
    analytic_gaussian_sigma,
    check_random_source,
    gaussian_cost,
    gaussian_mechanism,
    laplace_cost,
    laplace_mechanism,
)
from skdp.mechanisms._gaussian import _gaussian_delta, _gaussian_grid, _sigma_ratio
from skdp.mechanisms._grid import release_on_grid
from skdp.mechanisms._laplace import _laplace_grid

ALPHA = 1e-7  # per test; ~200 draws-based tests must not flake in CI
MAX = np.finfo(np.float64).max


def laplace(value, random_state=0, sensitivity=1.0, epsilon=1.0):
    return laplace_mechanism(value, sensitivity, epsilon, random_state=random_state)


def gaussian(value, random_state=0, sensitivity=1.0, epsilon=1.0, delta=1e-6):
    return gaussian_mechanism(
        value, sensitivity, epsilon, delta, random_state=random_state
    )


MECHANISMS = [laplace, gaussian]


# -- reproducibility, shapes ---------------------------------------------------
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_seed_reproduces_and_none_does_not(mechanism):
    x = np.arange(50.0)
    np.testing.assert_array_equal(mechanism(x, 7), mechanism(x, 7))
    assert not np.array_equal(mechanism(x, 7), mechanism(x, 8))
    assert not np.array_equal(mechanism(x, None), mechanism(x, None))
    rs = np.random.RandomState(0)
    np.testing.assert_array_equal(
        mechanism(x, rs), mechanism(x, np.random.RandomState(0))
    )


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_shapes(mechanism):
    scalar = mechanism(3.0)
    assert np.ndim(scalar) == 0 and isinstance(float(scalar), float)
    assert mechanism([[1.0, 2.0], [3.0, 4.0]]).shape == (2, 2)
    assert mechanism(np.empty(0)).shape == (0,)
    assert mechanism([1, 2, 3]).dtype == np.float64


def test_shared_source_advances():
    source = check_random_source(0)
    a = laplace(np.zeros(5), source)
    b = laplace(np.zeros(5), source)
    assert not np.array_equal(a, b)


# -- the grid -------------------------------------------------------------------
def _on_grid(out, k):
    scaled = np.ldexp(out, -k)
    return np.array_equal(scaled, np.rint(scaled))


@pytest.mark.parametrize(
    ("sensitivity", "epsilon", "size"),
    [(1.0, 1.0, 1), (3.0, 0.1, 100), (1e-3, 5.0, 7), (250.0, 2.0, 10_000)],
)
def test_laplace_release_is_multiple_of_grid(sensitivity, epsilon, size):
    values = np.random.RandomState(1).normal(scale=100, size=size)
    out = laplace_mechanism(values, sensitivity, epsilon, random_state=2)
    k, t, steps = _laplace_grid(sensitivity, epsilon, size)
    assert _on_grid(out, k)
    # the grid is the largest power of two within the precision target
    target = (
        min(sensitivity, sensitivity / epsilon)
        * 2.0**-20
        / 2 ** math.ceil(math.log2(size))
    )
    assert 2.0**k <= target < 2.0 ** (k + 1)
    # the integer scale pays for the rounding slack and no more than needed
    assert steps == math.floor(sensitivity / 2.0**k) + size
    assert Fraction(steps) / t <= Fraction(epsilon)
    assert t * 2.0**k / (sensitivity / epsilon) < 1 + 2.0**-18


@pytest.mark.parametrize(("sensitivity", "size"), [(1.0, 1), (0.25, 300)])
def test_gaussian_release_is_multiple_of_grid(sensitivity, size):
    values = np.random.RandomState(1).normal(scale=100, size=size)
    out = gaussian_mechanism(values, sensitivity, 0.5, 1e-5, random_state=2)
    ratio = _sigma_ratio(0.5, 1e-5)
    k, sigma2 = _gaussian_grid(sensitivity, ratio, size)
    assert _on_grid(out, k)
    rounded_sens = Fraction(sensitivity) / Fraction(2) ** k + math.ceil(math.sqrt(size))
    assert sigma2 >= (rounded_sens * Fraction(ratio)) ** 2
    # rho of the released noise is at most the reported one
    assert float(rounded_sens**2 / (2 * sigma2)) <= gaussian_cost(0.5, 1e-5).rho
    assert math.sqrt(sigma2) * 2.0**k / (sensitivity * ratio) < 1 + 2.0**-15


def test_rounding_slack_bound_brute_force():
    # Neighbouring inputs |x - x'|_1 <= sens, placed next to rounding
    # boundaries: the rounded difference never exceeds the charged `steps`.
    rng = np.random.RandomState(0)
    for sens, eps, m in [(1.0, 1.0, 1), (0.3, 2.0, 4), (5.0, 0.5, 16)]:
        k, _, steps = _laplace_grid(sens, eps, m)
        g = 2.0**k
        for _ in range(200):
            base = (rng.randint(-1000, 1000, m) + 0.5) * g  # exactly on ties
            base = base - rng.choice([0.0, g * 2**-30], m)
            split = rng.dirichlet(np.ones(m)) * sens * rng.choice([1.0, 0.999999])
            other = base + split * rng.choice([-1, 1], m)
            zero = np.zeros(m, dtype=np.int64)
            r1 = np.ldexp(release_on_grid(base, zero, k), -k)
            r2 = np.ldexp(release_on_grid(other, zero, k), -k)
            assert np.abs(r1 - r2).sum() <= steps


def test_release_on_grid_is_correctly_rounded():
    rng = np.random.RandomState(3)
    k = -20
    x = np.concatenate(
        [rng.normal(size=200) * 10.0 ** rng.randint(-5, 300, 200), [1e300, -1e308]]
    )
    noise = rng.randint(-(2**53), 2**53, size=x.size, dtype=np.int64)
    out = release_on_grid(x, noise, k)
    step = Fraction(2) ** k
    for xi, zi, oi in zip(x, noise, out, strict=True):
        exact = (round(Fraction(xi) / step) + int(zi)) * step
        expected = float(exact)  # Fraction -> float rounds to nearest
        assert oi == expected


# -- distributions of the releases ---------------------------------------------
@pytest.mark.parametrize("random_state", [None, 5])
def test_laplace_noise_distribution(random_state):
    out = laplace_mechanism(np.full(50_000, 3.0), 2.0, 0.5, random_state=random_state)
    k, t, _ = _laplace_grid(2.0, 0.5, 50_000)
    scale = t * 2.0**k
    assert stats.kstest(out - 3.0, stats.laplace(scale=scale).cdf).pvalue > ALPHA


@pytest.mark.parametrize("random_state", [None, 5])
def test_gaussian_noise_distribution(random_state):
    out = gaussian_mechanism(
        np.full(50_000, -1.0), 1.0, 1.0, 1e-5, random_state=random_state
    )
    k, sigma2 = _gaussian_grid(1.0, _sigma_ratio(1.0, 1e-5), 50_000)
    sigma = math.sqrt(sigma2) * 2.0**k
    assert stats.kstest(out + 1.0, stats.norm(scale=sigma).cdf).pvalue > ALPHA
    # analytic sigma for Δ = 1, ε = 1, δ = 1e-5 is 3.7306 (Balle and Wang)
    assert 3.73 < sigma < 3.74


# -- analytic Gaussian ------------------------------------------------------------
@pytest.mark.parametrize(
    ("epsilon", "delta"),
    [(0.05, 1e-6), (0.5, 1e-5), (1.0, 1e-5), (3.0, 1e-9), (20.0, 1e-3), (1.0, 0.3)],
)
def test_analytic_sigma_is_the_threshold(epsilon, delta):
    sigma = analytic_gaussian_sigma(1.0, epsilon, delta)
    assert _gaussian_delta(sigma, epsilon) <= delta
    assert _gaussian_delta(sigma / (1 + 1e-6), epsilon) > delta
    assert analytic_gaussian_sigma(2.5, epsilon, delta) == pytest.approx(
        2.5 * sigma, rel=1e-12
    )


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 0.5, 0.99])
@pytest.mark.parametrize("delta", [1e-10, 1e-6, 1e-3])
def test_classical_sigma_is_larger_for_small_epsilon(epsilon, delta):
    classical = math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    assert analytic_gaussian_sigma(1.0, epsilon, delta) < classical


def test_analytic_sigma_hand_checked_values():
    # epsilon = 1, delta = 1e-5: 3.7306 (Balle and Wang 2018; classical 4.84)
    assert analytic_gaussian_sigma(1.0, 1.0, 1e-5) == pytest.approx(3.7306, abs=1e-4)
    # the condition at a hand-evaluated point: sigma = 1, epsilon = 0 limit is
    # 2 Phi(1/2) - 1 = 0.3829
    assert _gaussian_delta(1.0, 1e-12) == pytest.approx(0.38292492, abs=1e-7)


# -- costs ------------------------------------------------------------------------
def test_costs():
    assert laplace_cost(0.5) == PrivacyCost(0.5, 0.0, 0.125, mechanism="laplace")
    cost = gaussian_cost(1.0, 1e-5)
    sigma = analytic_gaussian_sigma(1.0, 1.0, 1e-5)
    assert cost.epsilon == 1.0 and cost.delta == 1e-5
    assert cost.rho == pytest.approx(1 / (2 * sigma**2))


# -- bad inputs ---------------------------------------------------------------------
@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_bad_epsilon(bad):
    with pytest.raises(ValueError, match="epsilon"):
        laplace_mechanism(1.0, 1.0, bad)
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_mechanism(1.0, 1.0, bad, 1e-5)
    with pytest.raises(ValueError, match="epsilon"):
        laplace_cost(bad)


@pytest.mark.parametrize("bad", [0.0, -2.0, math.nan, math.inf])
def test_bad_sensitivity(bad):
    with pytest.raises(ValueError, match="sensitivity.*" + str(bad)[:3]):
        laplace_mechanism(1.0, bad, 1.0)
    with pytest.raises(ValueError, match="l2_sensitivity"):
        gaussian_mechanism(1.0, bad, 1.0, 1e-5)
    with pytest.raises(ValueError, match="l2_sensitivity"):
        analytic_gaussian_sigma(bad, 1.0, 1e-5)


@pytest.mark.parametrize("bad", ["1", None, True])
def test_non_numeric_sensitivity(bad):
    with pytest.raises(TypeError, match="sensitivity"):
        laplace_mechanism(1.0, bad, 1.0)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, math.nan])
def test_bad_delta(bad):
    with pytest.raises(ValueError, match="delta"):
        gaussian_mechanism(1.0, 1.0, 1.0, bad)
    with pytest.raises(ValueError, match="delta"):
        analytic_gaussian_sigma(1.0, 1.0, bad)


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("bad", [[1.0, math.nan], [math.inf], "abc", [[1], [2, 3]]])
def test_bad_values(mechanism, bad):
    with pytest.raises(ValueError, match="value"):
        mechanism(bad)


def test_unrepresentable_release_raises():
    with pytest.raises(ValueError, match="Cannot represent"):
        laplace_mechanism(np.zeros(100_000), 1.0, 1e-9, random_state=0)
    with pytest.raises(ValueError, match="Cannot represent"):
        laplace_mechanism(1.0, 1e308, 1e-10, random_state=0)


# -- extreme values ---------------------------------------------------------------
@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("sensitivity", [1.0, 1e300])
def test_huge_values_stay_finite(mechanism, sensitivity):
    x = np.array([1e300, -1e300, MAX, -MAX, 0.0, 5e-324])
    out = mechanism(x, 0, sensitivity=sensitivity)
    assert np.all(np.isfinite(out))
    if sensitivity == 1.0:  # noise far below the float spacing at 1e300
        np.testing.assert_array_equal(out[:4], x[:4])


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_tiny_sensitivity(mechanism):
    out = mechanism(np.array([1e-300, 0.0, 1.0]), 0, sensitivity=1e-300)
    assert np.all(np.isfinite(out))
    assert out[2] == pytest.approx(1.0, abs=1e-290)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_all_equal_array(mechanism):
    out = mechanism(np.full(2_000, 7.25), 1)
    assert np.all(np.isfinite(out))
    assert len(np.unique(out)) > 1900  # independent noise per coordinate
    assert abs(out.mean() - 7.25) < 1.0


# -- analytic Gaussian in exact arithmetic -----------------------------------------
_PI = decimal.Decimal(
    "3.14159265358979323846264338327950288419716939937510582097494459230781640628"
)


def _phi_lower(x):
    """Φ(x) for x <= 0 to ~60 significant digits (Decimal arithmetic)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        z = -decimal.Decimal(x)
        if z < 6:  # 1/2 - erf(z / sqrt 2) / 2 by its Taylor series
            y = z / decimal.Decimal(2).sqrt()
            term, total, n = y, y, 0
            while abs(term) > decimal.Decimal(10) ** -75:
                n += 1
                term *= -y * y / n
                total += term / (2 * n + 1)
            return decimal.Decimal(1) / 2 - total / _PI.sqrt()
        # Laplace's continued fraction for the Mills ratio, evaluated backwards
        frac = z
        for k in range(400, 0, -1):
            frac = z + k / frac
        density = (-z * z / 2).exp() / (2 * _PI).sqrt()
        return density / frac


def _exact_delta(ratio, epsilon):
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        r, eps = decimal.Decimal(ratio), decimal.Decimal(epsilon)
        a, b = 1 / (2 * r), eps * r
        return _phi_lower(a - b) - eps.exp() * _phi_lower(-a - b)


def test_exact_phi_reference():
    assert float(_phi_lower(-1.0)) == pytest.approx(0.15865525393145705, rel=1e-15)
    assert float(_phi_lower(-8.0)) == pytest.approx(6.220960574271785e-16, rel=1e-13)


@pytest.mark.parametrize(
    ("epsilon", "delta"),
    [(1e-6, 1e-12), (1e-4, 1e-30), (1e-4, 1e-100), (1e-4, 1e-300), (1.0, 1e-5)],
)
def test_analytic_sigma_holds_in_exact_arithmetic(epsilon, delta):
    # For small epsilon the two terms of the Balle-Wang condition nearly
    # cancel; evaluated in floating point, delta came out up to 2e-6 too small
    # (relative), so sigma was below the threshold. It must err on the large
    # side in exact arithmetic.
    ratio = analytic_gaussian_sigma(1.0, epsilon, delta)
    assert _exact_delta(ratio, epsilon) <= decimal.Decimal(delta)
    # and it is still the threshold up to a relative 1e-6
    assert _exact_delta(ratio / (1 + 1e-6), epsilon) > decimal.Decimal(delta)
