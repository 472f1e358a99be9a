"""Noise and randomness: the only place where skdp draws random numbers.

Secure by default: ``random_state=None`` draws from the operating system's
CSPRNG, and Laplace/Gaussian releases add exact integer noise on a
power-of-two grid (Canonne, Kamath and Steinke, 2020).
"""

from skdp.mechanisms._discrete import bernoulli_exp, discrete_gaussian, discrete_laplace
from skdp.mechanisms._laplace import laplace_cost, laplace_mechanism
from skdp.mechanisms._random import RandomSource, check_random_source

__all__ = [
    "RandomSource",
    "bernoulli_exp",
    "check_random_source",
    "discrete_gaussian",
    "discrete_laplace",
    "laplace_cost",
    "laplace_mechanism",
]
