"""Noise and randomness: the only place where skdp draws random numbers.

Selection mechanisms (exponential mechanism, permute-and-flip,
report-noisy-max) and the sparse vector technique live here too.

Secure by default: ``random_state=None`` draws from the operating system's
CSPRNG, and Laplace/Gaussian releases add exact integer noise on a
power-of-two grid (Canonne, Kamath and Steinke, 2020).

**The release invariant.** A proof of differential privacy over the reals
says nothing about the doubles a program prints (Mironov 2012). Every
function here that releases a number obeys one rule:

* the released number is the correctly rounded image of an exact random
  variable whose *support is fixed by public parameters* (a power-of-two
  grid chosen from the public sensitivity, ε and bounds; a public candidate
  grid), so the set of doubles that can come out does not depend on the data;
* nothing data-dependent is multiplied, divided or added to the noise after
  it is sampled: a data-dependent noise scale (smooth sensitivity) is a
  parameter of an exact sampler on the public lattice, never a factor
  applied to its output;
* no float arithmetic is done on data-dependent endpoints inside a sampler
  (no ``left + U * (right - left)`` between data values): a sampler picks a
  public grid point with exact integer arithmetic;
* query values enter a release exactly: sums of clipped values are formed
  in exact fixed-point arithmetic on a public grid, so float rounding cannot
  push two neighbours' queries further apart than the stated sensitivity
  (Casacuberta et al. 2022).

After the budget is charged, the data decides nothing public: no exception,
warning or code path depends on the data; a failure becomes the input of a
public rule (the centre of the output space, an abstention, a documented
refusal). :mod:`skdp.audit` checks the invariant empirically with lattice,
low-order-bit and reachability events next to its value thresholds.
"""

from skdp.mechanisms._cauchy import cauchy_noise
from skdp.mechanisms._discrete import bernoulli_exp, discrete_gaussian, discrete_laplace
from skdp.mechanisms._gaussian import (
    analytic_gaussian_sigma,
    gaussian_cost,
    gaussian_mechanism,
    gaussian_noise_multipliers,
    gaussian_release,
)
from skdp.mechanisms._labels import select_labels
from skdp.mechanisms._laplace import laplace_cost, laplace_mechanism
from skdp.mechanisms._partition import (
    partition_noise_std,
    partition_selection,
    partition_threshold,
)
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
    "gaussian_noise_multipliers",
    "gaussian_release",
    "laplace_cost",
    "laplace_mechanism",
    "partition_noise_std",
    "partition_selection",
    "partition_threshold",
    "permute_and_flip",
    "report_noisy_max",
    "select_labels",
    "selection_cost",
    "sparse",
    "svt_cost",
]
