"""Exact integer noise with a data-dependent scale on a public lattice.

Smooth-sensitivity releases (Nissim, Raskhodnikova and Smith, 2007) scale the
noise with a quantity computed from the data. Drawing noise of a fixed scale
and multiplying it by that quantity in floating point puts every output of a
dataset on the dataset's own lattice, which identifies the dataset. Here the
scale enters only as an exact rational parameter of the sampler: the value is
rounded to the public grid ``2**k Z`` and an integer drawn exactly from the
discrete Laplace (or Cauchy-type) distribution with that rational scale is
added. The support of every release is the public set
``2**k Z ∩ [lower, upper]``.

Scales are arbitrary positive :class:`fractions.Fraction` objects, handled
with Python integers, so no scale in any range can overflow and the sampler
never raises on the data; there is one draw per released coordinate.
"""

import math
from fractions import Fraction

from skdp.mechanisms._discrete import _geometric_exp1
from skdp.mechanisms._random import check_random_source

__all__ = [
    "discrete_cauchy_fraction",
    "discrete_laplace_fraction",
    "lattice_release",
]


def _uniform_below(high, source):
    """Exactly uniform Python int in ``[0, high)`` for any int ``high >= 1``.

    Whole 64-bit words are drawn, masked to ``high.bit_length()`` bits and
    redrawn when ``>= high`` (probability below 1/2).
    """
    bits = high.bit_length()
    words = -(-bits // 64)
    mask = (1 << bits) - 1
    while True:
        value = 0
        for word in source.uint64(words):
            value = (value << 64) | int(word)
        value &= mask
        if value < high:
            return value


def _bernoulli_exp_fraction(num, den, source):
    """Exact Bernoulli(exp(-num/den)) for ints ``0 <= num <= den`` (CKS Alg. 1).

    With ``γ = num/den <= 1``: ``K = 1``; while Bernoulli(γ/K), ``K += 1``;
    return whether ``K`` is odd. Bernoulli(γ/K) is ``uniform{0..K den-1} < num``.
    """
    k = 1
    while _uniform_below(k * den, source) < num:
        k += 1
    return k % 2 == 1


def discrete_laplace_fraction(scale, *, random_state=None):
    """Draw one exact discrete Laplace integer with rational scale ``t``.

    The pmf on the integers is
    ``P(z) = tanh(1/(2t)) exp(-|z|/t)``.

    Parameters
    ----------
    scale : fractions.Fraction, int or float
        ``t > 0``, any size (Python integers are used throughout). A float is
        taken at its exact binary value.
    random_state : None, int, RandomState or RandomSource, default=None
        Source of randomness, see
        :func:`~skdp.mechanisms.check_random_source`.

    Returns
    -------
    z : int
        A Python int (no int64 limit).

    Raises
    ------
    ValueError
        If ``scale`` is not positive and finite.

    Notes
    -----
    Canonne, Kamath and Steinke (2020), Algorithm 2, with ``t = a/b``:
    ``U`` uniform on ``{0..a-1}`` kept with probability ``exp(-U/a)``,
    ``V`` geometric with ratio ``exp(-1)``, ``|z| = floor((U + aV)/b)`` and a
    fair sign, ``-0`` rejected. Every decision compares a uniform integer
    with an integer threshold, so the output distribution is exact for every
    rational scale; unlike :func:`~skdp.mechanisms.discrete_laplace` the
    numerator and denominator are not limited to ``2**52``.

    References
    ----------
    .. [1] C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for
       Differential Privacy", NeurIPS 2020, arXiv:2004.00010.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from skdp.mechanisms._smooth_noise import discrete_laplace_fraction
    >>> z = discrete_laplace_fraction(Fraction(10**30, 3), random_state=0)
    >>> isinstance(z, int)
    True
    """
    scale = _check_scale(scale)
    source = check_random_source(random_state)
    return _discrete_laplace_fraction(scale.numerator, scale.denominator, source)


def discrete_cauchy_fraction(scale, *, random_state=None):
    """Draw one exact discrete Cauchy-type integer with rational scale ``t``.

    The pmf on the integers is ``P(z) = 1 / (N(t) (1 + (z/t)**2))`` with
    ``N(t) = π t coth(π t)``.

    Parameters
    ----------
    scale : fractions.Fraction, int or float
        ``t > 0``, any size. A float is taken at its exact binary value.
    random_state : None, int, RandomState or RandomSource, default=None
        Source of randomness, see
        :func:`~skdp.mechanisms.check_random_source`.

    Returns
    -------
    z : int
        A Python int (no int64 limit; the tails are heavy).

    Raises
    ------
    ValueError
        If ``scale`` is not positive and finite.

    Notes
    -----
    Rejection sampling with every decision an exact integer comparison (see
    ``_discrete_cauchy_fraction``); the expected number of proposals is
    ``8 ceil(t) / N(t)``, about 2.6 for large ``t``.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from skdp.mechanisms._smooth_noise import discrete_cauchy_fraction
    >>> isinstance(discrete_cauchy_fraction(Fraction(7, 3), random_state=0), int)
    True
    """
    scale = _check_scale(scale)
    source = check_random_source(random_state)
    return _discrete_cauchy_fraction(scale.numerator, scale.denominator, source)


def _check_scale(scale):
    if isinstance(scale, float) and not math.isfinite(scale):
        raise ValueError(f"scale must be positive and finite; got {scale!r}.")
    scale = Fraction(scale)
    if scale <= 0:
        raise ValueError(f"scale must be positive and finite; got {scale!r}.")
    return scale


def _discrete_laplace_fraction(num, den, source):
    """CKS Algorithm 2 for the scale ``num/den`` (Python ints, no limits)."""
    while True:
        u = _uniform_below(num, source)
        if not _bernoulli_exp_fraction(u, num, source):
            continue
        v = int(_geometric_exp1(1, source)[0])
        magnitude = (u + num * v) // den
        negative = bool(source.random_bits(1)[0])
        if negative and magnitude == 0:
            continue
        return -magnitude if negative else magnitude


def _fair_bit(source):
    return bool(source.random_bits(1)[0])


def _discrete_cauchy_fraction(num, den, source):
    """Exact draw with pmf ``∝ 1/(1 + (z/t)**2)`` on the integers, ``t = num/den``.

    Rejection from a proposal ``q`` on blocks of ``|z|``, with ``T = ceil(t)``:
    block 0 is ``|z| < T`` (uniform, probability 1/2); block ``b >= 1`` is
    ``T 2**(b-1) <= |z| < T 2**b`` (probability ``2**-(b+1)``, uniform, fair
    sign). With ``w(z) = t²/(t² + z²)`` and ``M = 8T``, ``w/(M q)`` is at most
    ``(4T - 2)/(8T)`` on block 0 and ``4**(b-1)/(1 + 4**(b-1))`` on block
    ``b``, so the acceptance probability, an exact rational, is below 1 and
    the accepted ``z`` has pmf ``∝ w(z)``.
    """
    top = -(-num // den)  # T = ceil(t)
    num2, den2 = num * num, den * den
    while True:
        block = 0
        while _fair_bit(source):
            block += 1
        if block == 0:
            z = _uniform_below(2 * top - 1, source) - (top - 1)
            # w / (M q) = w * 2 (2T - 1) / (8T)
            acc_num = num2 * (2 * top - 1)
            acc_den = (num2 + z * z * den2) * 4 * top
        else:
            size = top << (block - 1)
            z = size + _uniform_below(size, source)
            if _fair_bit(source):
                z = -z
            # w / (M q) = w * 4**(b-1)
            acc_num = num2 << (2 * (block - 1))
            acc_den = num2 + z * z * den2
        if _uniform_below(acc_den, source) < acc_num:
            return z


def _nearest_float(j, k):
    """The float nearest to ``j * 2**k`` (one correct rounding, no overflow check)."""
    if k >= 0:
        return float(j << k)
    return j / (1 << -k)  # int true division is correctly rounded


_SAMPLERS = {
    "laplace": _discrete_laplace_fraction,
    "cauchy": _discrete_cauchy_fraction,
}


def lattice_release(
    values, scales, grid_exponents, lower, upper, *, noise="laplace", random_state
):
    """Release ``values`` on public lattices with exact data-scaled noise.

    Parameters
    ----------
    values : sequence of float
        Finite values, one per coordinate.
    scales : sequence of fractions.Fraction
        Noise scales ``s_j > 0`` **in units of the value** (exact rationals,
        data-dependent allowed): the integer noise has scale ``s_j / 2**k_j``.
    grid_exponents : sequence of int
        Public grid exponents ``k_j``: coordinate ``j`` is released on
        ``2**k_j Z``.
    lower, upper : sequence of float
        Public finite bounds with ``lower_j < upper_j``; the release is clipped
        to the lattice points inside them.
    noise : {"laplace", "cauchy"}, default="laplace"
        Integer noise with pmf ``∝ exp(-|z|/t)`` (:func:`discrete_laplace_fraction`)
        or ``∝ 1/(1 + (z/t)**2)`` (:func:`discrete_cauchy_fraction`).
    random_state : None, int, RandomState or RandomSource
        Source of randomness.

    Returns
    -------
    released : list of float
        ``fl(2**k_j · clip(round(v_j / 2**k_j) + Z_j, ceil(L_j/2**k_j),
        floor(U_j/2**k_j)))`` with ``Z_j`` exact integer noise of scale
        ``t_j = s_j / 2**k_j``.

    Notes
    -----
    Rounding to the nearest lattice point (ties to even) is exact (Fraction
    arithmetic) and moves a value by at most ``2**(k-1)``; the caller accounts
    for it in the sensitivity. The clip to ``[L, U]`` is done on the integer
    and the result is rounded to the nearest float once: post-processing of an
    integer whose support, ``[ceil(L/2**k), floor(U/2**k)]``, is fixed by
    public parameters. Every output is a multiple of ``2**k``: a float that is
    not exactly ``j 2**k`` lies in a binade whose spacing is a larger power
    of two. Nothing here raises on the data: the scales are Python rationals
    of any size.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from skdp.mechanisms._smooth_noise import lattice_release
    >>> out = lattice_release([0.3], [Fraction(1, 100)], [-20], [0.0], [1.0],
    ...                       random_state=0)
    >>> out[0] * 2**20 == int(out[0] * 2**20)
    True
    """
    source = check_random_source(random_state)
    sampler = _SAMPLERS[noise]
    released = []
    for value, scale, k, low, high in zip(
        values, scales, grid_exponents, lower, upper, strict=True
    ):
        step = Fraction(2) ** int(k)
        centre = round(Fraction(float(value)) / step)
        noise_scale = Fraction(scale) / step
        z = sampler(noise_scale.numerator, noise_scale.denominator, source)
        first = math.ceil(Fraction(float(low)) / step)
        last = math.floor(Fraction(float(high)) / step)
        released.append(_nearest_float(min(max(centre + z, first), last), int(k)))
    return released
