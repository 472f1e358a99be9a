"""Noise and randomness: the only place where skdp draws random numbers.

Secure by default: ``random_state=None`` draws from the operating system's
CSPRNG, and Laplace/Gaussian releases add exact integer noise on a
power-of-two grid (Canonne, Kamath and Steinke, 2020).
"""

from skdp.mechanisms._discrete import bernoulli_exp, discrete_gaussian, discrete_laplace
from skdp.mechanisms._gaussian import (
    analytic_gaussian_sigma,
    gaussian_cost,
    gaussian_mechanism,
)
from skdp.mechanisms._laplace import laplace_cost, laplace_mechanism
from skdp.mechanisms._random import RandomSource, check_random_source

__all__ = [
    "RandomSource",
    "analytic_gaussian_sigma",
    "bernoulli_exp",
    "check_random_source",
    "discrete_gaussian",
    "discrete_laplace",
    "gaussian_cost",
    "gaussian_mechanism",
    "laplace_cost",
    "laplace_mechanism",
]
