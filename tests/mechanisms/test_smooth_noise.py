"""Exact discrete Laplace with rational scales of any size, and lattice releases."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from skdp.mechanisms import check_random_source
from skdp.mechanisms._smooth_noise import (
    _bernoulli_exp_fraction,
    discrete_cauchy_fraction,
    discrete_laplace_fraction,
    lattice_release,
)

ALPHA = 1e-7  # per test: these must not flake


def _pmf(z, t):
    return math.tanh(0.5 / t) * math.exp(-abs(z) / t)


@pytest.mark.parametrize("scale", [Fraction(1, 2), Fraction(7, 3)])
def test_matches_the_discrete_laplace_pmf(scale):
    # chi-square on |z| <= 6 plus the two tails, exact pmf tanh(1/2t) e^{-|z|/t}
    source = check_random_source(7)
    n = 10_000
    z = np.array(
        [discrete_laplace_fraction(scale, random_state=source) for _ in range(n)]
    )
    t = float(scale)
    cells = list(range(-6, 7))
    probs = [_pmf(v, t) for v in cells]
    tail = (1 - sum(probs)) / 2
    counts = [np.count_nonzero(z < -6)] + [np.count_nonzero(z == v) for v in cells]
    counts.append(np.count_nonzero(z > 6))
    expected = np.array([tail, *probs, tail]) * n
    assert stats.chisquare(counts, expected).pvalue > ALPHA


@pytest.mark.parametrize("scale", [Fraction(1, 3), Fraction(7, 3)])
def test_matches_the_discrete_cauchy_pmf(scale):
    # pmf 1 / (pi t coth(pi t) (1 + (z/t)^2)); chi-square on |z| <= 8 + tails
    source = check_random_source(11)
    n = 10_000
    z = np.array(
        [discrete_cauchy_fraction(scale, random_state=source) for _ in range(n)]
    )
    t = float(scale)
    norm = math.pi * t / math.tanh(math.pi * t)
    cells = list(range(-8, 9))
    probs = [1 / (norm * (1 + (v / t) ** 2)) for v in cells]
    tail = (1 - sum(probs)) / 2
    counts = [np.count_nonzero(z < -8)] + [np.count_nonzero(z == v) for v in cells]
    counts.append(np.count_nonzero(z > 8))
    expected = np.array([tail, *probs, tail]) * n
    assert stats.chisquare(counts, expected).pvalue > ALPHA


def test_bernoulli_exp_fraction_probability():
    source = check_random_source(3)
    n = 20_000
    hits = sum(_bernoulli_exp_fraction(2, 3, source) for _ in range(n))
    assert stats.binomtest(hits, n, math.exp(-2 / 3)).pvalue > ALPHA


@pytest.mark.parametrize(
    "scale", [Fraction(10**40, 3), Fraction(3, 10**30), 2.0**-1074, 2.0**1000]
)
def test_any_scale_is_sampled_without_error(scale):
    # Python ints: no int64 limit, nothing raises for huge or tiny scales; the
    # mean |z| is about t for large t (|z| = 0 always for tiny t)
    source = check_random_source(0)
    z = [discrete_laplace_fraction(scale, random_state=source) for _ in range(400)]
    t = Fraction(scale)
    if t < 1e-6:
        assert set(z) == {0}
    else:
        ratio = float(Fraction(sum(abs(v) for v in z), len(z)) / t)
        assert 0.8 < ratio < 1.25


@pytest.mark.parametrize(
    "scale", [Fraction(10**40, 3), Fraction(3, 10**30), 2.0**-1074, 2.0**1000]
)
def test_any_cauchy_scale_is_sampled_without_error(scale):
    # P(|Z| <= t) = 1/2 for the continuous Cauchy; the discrete one is close
    source = check_random_source(0)
    z = [discrete_cauchy_fraction(scale, random_state=source) for _ in range(400)]
    t = Fraction(scale)
    if t < 1e-6:
        assert set(z) == {0}
    else:
        inside = np.mean([abs(v) <= t for v in z])
        assert 0.4 < inside < 0.6


@pytest.mark.parametrize(
    "sampler", [discrete_laplace_fraction, discrete_cauchy_fraction]
)
@pytest.mark.parametrize("scale", [0, -1, float("inf"), float("nan")])
def test_rejects_bad_scales(sampler, scale):
    with pytest.raises(ValueError, match="positive and finite"):
        sampler(scale)


@pytest.mark.parametrize(
    "value, k, lower, upper",
    [
        (5.0, -57, 0.0, 10.0),
        (0.1, -1074, -1e-300, 1e-300),  # subnormal grid
        (3e307, 980, -8e307, 8e307),  # huge grid; the noise pushes past the bounds
        (1e6 + 0.3, -70, 1e6, 1e6 + 1),  # grid far below the float spacing
    ],
)
@pytest.mark.parametrize("noise", ["laplace", "cauchy"])
def test_lattice_release_is_on_the_grid_and_inside_the_bounds(
    value, k, lower, upper, noise
):
    width = Fraction(upper) - Fraction(lower)
    for scale in (width / 1000, width * 10**6):
        out = lattice_release(
            [value] * 50,
            [scale] * 50,
            [k] * 50,
            [lower] * 50,
            [upper] * 50,
            noise=noise,
            random_state=1,
        )
        for v in out:
            assert lower <= v <= upper
            assert (Fraction(v) / Fraction(2) ** k).denominator == 1


def test_lattice_release_rounds_the_centre_exactly():
    # a tiny scale leaves only the rounded centre: round(v / 2**k) 2**k
    out = lattice_release(
        [0.3, 0.375, 0.125],
        [Fraction(1, 10**9)] * 3,
        [-2] * 3,
        [0.0] * 3,
        [1.0] * 3,
        random_state=0,
    )
    assert out == [0.25, 0.5, 0.0]  # ties to even: 1.5 -> 2, 0.5 -> 0
