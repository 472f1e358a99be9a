"""Cauchy noise: distribution, shapes, validation, randomness source."""

import numpy as np
import pytest
from scipy import stats

from skdp.mechanisms import cauchy_noise, check_random_source


def test_matches_the_cauchy_distribution():
    # Kolmogorov-Smirnov against Cauchy(0, 3) at level 1e-6 (a correct
    # sampler fails with probability 1e-6; a Laplace or a normal one fails)
    noise = cauchy_noise(3.0, size=200_000, random_state=1)
    assert stats.kstest(noise, stats.cauchy(scale=3.0).cdf).pvalue > 1e-6
    assert stats.kstest(noise, stats.laplace(scale=3.0).cdf).pvalue < 1e-6


def test_quartiles_are_plus_minus_scale():
    # Cauchy(0, s) has quartiles -s and s: the binomial count below -s is
    # within 6 standard deviations of n/4
    noise = cauchy_noise(2.0, size=100_000, random_state=2)
    below = int((noise < -2.0).sum())
    assert abs(below - 25_000) < 6 * np.sqrt(100_000 * 0.25 * 0.75)


def test_always_finite_and_shapes():
    noise = cauchy_noise(1.0, size=(1000, 3), random_state=0)
    assert noise.shape == (1000, 3)
    assert np.isfinite(noise).all()
    assert isinstance(cauchy_noise(1.0, random_state=0), float)
    per_column = cauchy_noise([1.0, 1e-9], size=(50_000, 2), random_state=0)
    assert (
        np.median(np.abs(per_column[:, 1])) < 1e-8 < np.median(np.abs(per_column[:, 0]))
    )


def test_array_scale_alone_sets_the_shape():
    assert cauchy_noise(np.ones(4), random_state=0).shape == (4,)


def test_reproducible_with_a_seed_and_secure_by_default():
    a = cauchy_noise(1.0, size=5, random_state=7)
    b = cauchy_noise(1.0, size=5, random_state=7)
    np.testing.assert_array_equal(a, b)
    assert check_random_source(None).is_secure
    assert cauchy_noise(1.0, size=3).shape == (3,)  # system CSPRNG


@pytest.mark.parametrize("scale", [0.0, -1.0, np.inf, np.nan])
def test_rejects_bad_scales(scale):
    with pytest.raises(ValueError, match="positive and finite"):
        cauchy_noise(scale, size=2, random_state=0)
