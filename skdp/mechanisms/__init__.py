"""Noise and randomness: the only place where skdp draws random numbers.

Selection mechanisms (exponential mechanism, permute-and-flip,
report-noisy-max) and the sparse vector technique live here too.

Secure by default: ``random_state=None`` draws from the operating system's
CSPRNG, and Laplace/Gaussian releases add exact integer noise on a
power-of-two grid (Canonne, Kamath and Steinke, 2020).
"""

from skdp.mechanisms._cauchy import cauchy_noise
from skdp.mechanisms._discrete import bernoulli_exp, discrete_gaussian, discrete_laplace
from skdp.mechanisms._gaussian import (
    analytic_gaussian_sigma,
    gaussian_cost,
    gaussian_mechanism,
)
from skdp.mechanisms._laplace import laplace_cost, laplace_mechanism
from skdp.mechanisms._random import RandomSource, check_random_source
from skdp.mechanisms._selection import (
    exponential_mechanism,
    permute_and_flip,
    report_noisy_max,
    selection_cost,
)
from skdp.mechanisms._svt import above_threshold, sparse, svt_cost

__all__ = [
    "RandomSource",
    "above_threshold",
    "analytic_gaussian_sigma",
    "bernoulli_exp",
    "cauchy_noise",
    "check_random_source",
    "discrete_gaussian",
    "discrete_laplace",
    "exponential_mechanism",
    "gaussian_cost",
    "gaussian_mechanism",
    "laplace_cost",
    "laplace_mechanism",
    "permute_and_flip",
    "report_noisy_max",
    "selection_cost",
    "sparse",
    "svt_cost",
]
