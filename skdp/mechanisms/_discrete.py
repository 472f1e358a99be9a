"""Exact samplers for discrete noise (Canonne, Kamath and Steinke, 2020).

Everything here is built from uniform random bits of a
:class:`~skdp.mechanisms.RandomSource`, exact integer arithmetic and exact
rational thresholds: the output distributions are exactly the stated ones.
The discrete Laplace and Gaussian used by the mechanisms are drawn by the
faster samplers of :mod:`skdp.mechanisms._fastnoise` (bins of a power-of-two
width, an exactly inverted bin index and one CKS Algorithm 1 trial per
proposal); there, float64 values computed with correctly rounded basic
operations and a proven error bound only *skip* comparisons whose outcome is
certain, and every other comparison is made exactly. The original CKS
samplers stay here (``_discrete_laplace_cks``, ``_discrete_gaussian_cks``) as
references for the tests.

Vectorisation: each sampler keeps an array of *pending* indices and redraws
only those in the next round (masked rejection loops); the number of rounds is
a small random number independent of the array size.

Overflow: the parameter limits below make every intermediate fit in int64.
A draw whose magnitude would not fit (probability below ``exp(-256)`` under
the limits) raises :class:`OverflowError` instead of wrapping around.
"""

import math
from numbers import Integral

import numpy as np

from skdp.mechanisms._fastnoise import _sample_gaussian, _sample_laplace
from skdp.mechanisms._random import check_random_source

__all__ = ["bernoulli_exp", "discrete_gaussian", "discrete_laplace"]

#: Largest numerator/denominator accepted by :func:`bernoulli_exp`.
MAX_BERNOULLI_PARAM = (1 << 61) - 1
#: Largest numerator/denominator of a discrete Laplace scale.
MAX_LAPLACE_PARAM = 1 << 52
#: Largest ``sigma2_num`` of a discrete Gaussian; also ``den * t**2 <= 2**52``.
MAX_GAUSSIAN_PARAM = 1 << 60


def _check_int(value, name, low, high):
    if isinstance(value, bool) or not isinstance(value, Integral | np.integer):
        raise TypeError(f"{name} must be an integer; got {value!r}.")
    value = int(value)
    if not low <= value <= high:
        raise ValueError(
            f"{name} must be in [{low}, {high}] to be represented exactly "
            f"in int64; got {value}."
        )
    return value


def _check_int_array(value, name, low, high):
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer array; got dtype {arr.dtype}.")
    if arr.size and (arr.min() < low or arr.max() > high):
        raise ValueError(
            f"{name} must be in [{low}, {high}] to be represented exactly in int64."
        )
    return arr.astype(np.int64)


def _size_to_n(size):
    if size is None:
        return (), 1
    shape = (int(size),) if isinstance(size, Integral) else tuple(map(int, size))
    return shape, math.prod(shape)


def _ceil_div(a, b):
    return a // b + (a % b > 0)


def _bernoulli_exp_product(a1, b1, a2, b2, source):
    """Exact Bernoulli(exp(-(a1/b1) * (a2/b2))) for int64 arrays.

    Requires ``0 <= a_i < 2**61`` and ``1 <= b_i < 2**61`` so that
    ``b_i * ceil(a_i / b_i) <= a_i + b_i`` fits in int64.

    gamma = (a1/b1)(a2/b2) is split into n1*n2 equal pieces
    gamma' = p1 * p2 with p_i = a_i / (b_i * n_i) <= 1, n_i = max(1, ceil(a_i/b_i)),
    and exp(-gamma) = exp(-gamma')**(n1*n2): the result is 1 iff all n1*n2
    independent Bernoulli(exp(-gamma')) draws are 1. Each of those is CKS
    Algorithm 1 (valid for gamma' in [0, 1]): K = 1; while Bernoulli(gamma'/K):
    K += 1; return K odd. Bernoulli(gamma'/K) is the product of the independent
    Bernoulli(p1), Bernoulli(p2) and Bernoulli(1/K), each an exact integer
    comparison, so no product of two large integers is ever formed.
    """
    n = a1.size
    out = np.ones(n, dtype=bool)
    live = np.flatnonzero((a1 > 0) & (a2 > 0))  # gamma == 0 -> always 1
    if live.size == 0:
        return out
    a1, b1, a2, b2 = a1[live], b1[live], a2[live], b2[live]
    n1 = np.maximum(_ceil_div(a1, b1), 1)
    n2 = np.maximum(_ceil_div(a2, b2), 1)
    d1, d2 = b1 * n1, b2 * n2
    r1, r2 = n1.copy(), n2.copy()  # remaining pieces: (r1 - 1) * n2 + r2
    k = np.ones(live.size, dtype=np.int64)
    idx = np.arange(live.size)  # positions (into live) still undecided
    while idx.size:
        kk = k[idx]
        # A ~ Bernoulli(p1 * p2 / K), drawing each factor only while needed.
        a = np.ones(idx.size, dtype=bool)
        sub = np.flatnonzero(kk > 1)
        if sub.size:
            a[sub] = _bernoulli_any(np.ones(sub.size, dtype=np.int64), kk[sub], source)
        for num, den in ((a1, d1), (a2, d2)):
            sub = np.flatnonzero(a & (num[idx] < den[idx]))
            if sub.size:
                pos = idx[sub]
                a[sub] = _bernoulli_any(num[pos], den[pos], source)
        # A == 1: continue this piece with K + 1.
        k[idx[a]] += 1
        # A == 0: the piece ends; it succeeded iff K is odd.
        ended = idx[~a]
        failed = ended[(k[ended] & 1) == 0]
        out[live[failed]] = False
        good = ended[(k[ended] & 1) == 1]
        r2[good] -= 1
        wrap = good[r2[good] == 0]
        r1[wrap] -= 1
        r2[wrap] = n2[wrap]
        k[good] = 1
        finished = np.zeros(live.size, dtype=bool)
        finished[failed] = True
        finished[good[(r1[good] == 0)]] = True
        idx = idx[~finished[idx]]
    return out


_LAZY_MAX_DEN = 1 << 54


def _bernoulli_lazy(num, den, source):
    """Exact Bernoulli(num / den) from (usually) one random byte per draw.

    ``num`` is an int64 array and ``den`` an int (or int64 array) with
    ``0 <= num <= den <= 2**54``. With a uniform real ``R = (r + R') / 256``
    (``r`` a random byte, ``R'`` uniform on [0, 1)), the draw is ``R < num/den``:
    it is 1 when ``(r + 1) den <= 256 num``, 0 when ``r den >= 256 num`` and
    otherwise (probability below 1/256) ``R' < c / den`` for the integer
    ``c = 256 num - r den`` in ``(0, den)``, drawn exactly as
    ``uniform{0..den-1} < c``. All products stay below ``2**63``.
    """
    lhs = num << 8
    lo = source.uint8(num.size).astype(np.int64) * den
    out = lo + den <= lhs
    undecided = np.flatnonzero((lo < lhs) & ~out)
    if undecided.size:
        c = lhs[undecided] - lo[undecided]
        high = den if np.ndim(den) == 0 else den[undecided]
        out[undecided] = source.integers(high, size=undecided.size) < c
    return out


def _bernoulli_any(num, den, source):
    """Exact Bernoulli(num / den) for int64 arrays ``0 <= num <= den < 2**63``."""
    small = den <= _LAZY_MAX_DEN
    if small.all():
        return _bernoulli_lazy(num, den, source)
    out = np.empty(num.size, dtype=bool)
    pos = np.flatnonzero(small)
    out[pos] = _bernoulli_lazy(num[pos], den[pos], source)
    pos = np.flatnonzero(~small)
    out[pos] = source.integers(den[pos]) < num[pos]
    return out


def _bernoulli_inverse(k, n, source):
    """Exact Bernoulli(1/k) for one Python int ``k >= 1``."""
    if k == 2:
        return source.random_bits(n)
    return _bernoulli_lazy(np.ones(n, dtype=np.int64), k, source)


_FACT7 = math.factorial(7)
# P(K >= k) = 1/(k-1)! for the stopping K of one Bernoulli(exp(-1)) trial;
# with W uniform on [0, 7!), "K >= k" is "W < 7!/(k-1)!" for k = 1..8.
_TRIAL_THRESHOLDS = np.array(
    [_FACT7 // math.factorial(k - 1) for k in range(8, 0, -1)], dtype=np.int64
)


def _bernoulli_exp_minus_one(n, source):
    """Exact Bernoulli(exp(-1)) draws: CKS Algorithm 1 with gamma = 1.

    The trial draws Bernoulli(1/K) for K = 1, 2, ... and returns 1 iff the K
    at which it stops is odd. The stopping K has ``P(K >= k) = 1/(k-1)!``, so a
    single uniform integer ``W`` below ``7!`` (from two bytes) decides it for
    K <= 7 (``K = #{k <= 8 : W < 7!/(k-1)!}``); when ``W = 0`` (``K >= 8``,
    probability ``1/7!``) the trial continues with Bernoulli(1/8), ...
    """
    w = source.integers(_FACT7, size=n)
    # Fast path: K = 2 (fail) for W >= 7!/2, K = 3 (success) for 7!/6 <= W < 7!/2.
    out = (w < _FACT7 // 2) & (w >= _FACT7 // 6)
    rest = np.flatnonzero(w < _FACT7 // 6)
    k = 8 - np.searchsorted(_TRIAL_THRESHOLDS, w[rest], side="right")
    cand = np.flatnonzero(k == 8)
    kk = 8
    while cand.size:
        cont = _bernoulli_inverse(kk, cand.size, source)
        k[cand[~cont]] = kk
        cand = cand[cont]
        kk += 1
    out[rest] = (k & 1) == 1
    return out


def _geometric_exp1(n, source):
    """Number of successes before the first failure of Bernoulli(exp(-1)) trials."""
    count = np.zeros(n, dtype=np.int64)
    idx = np.flatnonzero(_bernoulli_exp_minus_one(n, source))
    while idx.size:
        count[idx] += 1
        idx = idx[_bernoulli_exp_minus_one(idx.size, source)]
    return count


def _keep_exp_uniform(u, s, source):
    """Exact Bernoulli(exp(-u / s)) for an int64 array ``0 <= u < s`` (scalar s).

    CKS Algorithm 1 with gamma = u/s: Bernoulli(gamma / K) is Bernoulli(1/K)
    and Bernoulli(u/s) (a uniform draw below ``s`` compared with ``u``).
    """
    step = _bernoulli_lazy(u, s, source)  # K = 1
    keep = ~step
    cand = np.flatnonzero(step)
    k = 2
    while cand.size:
        cont = _bernoulli_inverse(k, cand.size, source)
        sub = np.flatnonzero(cont)
        cont[sub] = _bernoulli_lazy(u[cand[sub]], s, source)
        if k % 2:
            keep[cand[~cont]] = True
        cand = cand[cont]
        k += 1
    return keep


def _discrete_laplace(num, den, n, source, max_abs=None):
    """Exact discrete Laplace, pmf proportional to exp(-|x| * den / num).

    ``max_abs`` (optional) raises OverflowError if a draw has a larger
    magnitude, before anything is returned (the callers choose it so that
    this has probability below ``exp(-500)``).

    Notes
    -----
    Drawn by :func:`skdp.mechanisms._fastnoise._sample_laplace`: a geometric
    bin index ``J`` (inverted from a uniform against integer brackets of
    ``exp(-j w d / s)``), ``U`` uniform in the bin of width ``w = 2**k``, a
    fair sign with ``-0`` rejected, and acceptance with probability
    ``exp(-U d / s)`` by CKS Algorithm 1 on one uniform (rational thresholds
    ``f**K / K!``). Every comparison of a uniform with a threshold is exact
    (see that module), so the pmf is exactly the discrete Laplace.
    :func:`_discrete_laplace_cks` is the plain CKS Algorithm 2 (same
    distribution, slower), kept as a reference for the tests.
    """
    return _sample_laplace(num, den, n, source, max_abs)


def _discrete_laplace_cks(num, den, n, source, max_abs=None):
    """CKS Algorithm 2 for pmf proportional to exp(-|x| * den / num).

    ``max_abs`` (optional) raises OverflowError for a draw with a larger
    magnitude instead of returning it (the callers choose it so that this has
    probability below ``exp(-500)``).
    """
    out = np.empty(n, dtype=np.int64)
    vmax = (1 << 62) // num - 1  # U + num * V < num * (V + 1) <= 2**62
    if max_abs is not None:
        vmax = min(vmax, (max_abs * den) // num - 1)
    pending = np.arange(n)
    while pending.size:
        m = pending.size
        u = source.integers(num, size=m)
        keep = np.flatnonzero(_keep_exp_uniform(u, num, source))
        v = _geometric_exp1(keep.size, source)
        if v.size and v.max() > vmax:
            raise OverflowError(
                "discrete Laplace draw exceeds the representable range "
                "(probability below exp(-500) within the documented parameter "
                "limits); nothing was released."
            )
        y = u[keep] + num * v
        if den != 1:
            y //= den
        negative = source.random_bits(keep.size)
        ok = ~(negative & (y == 0))  # reject -0 so that 0 is not counted twice
        np.negative(y, out=y, where=negative)
        if ok.all():
            accepted = keep
            y_ok = y
        else:
            accepted, y_ok = keep[ok], y[ok]
        out[pending[accepted]] = y_ok
        if accepted.size == m:
            break
        done = np.zeros(m, dtype=bool)
        done[accepted] = True
        pending = pending[~done]
    return out


def bernoulli_exp(gamma_num, gamma_den, size=None, *, random_state=None):
    """Draw exact Bernoulli(exp(-gamma)) variables for rational ``gamma``.

    Parameters
    ----------
    gamma_num, gamma_den : int or array-like of int
        ``gamma = gamma_num / gamma_den`` with ``0 <= gamma_num < 2**61`` and
        ``1 <= gamma_den < 2**61``; broadcast together.
    size : int or tuple of int, default=None
        Output shape; ``None`` uses the broadcast shape of the parameters.
    random_state : None, int, RandomState or RandomSource, default=None
        Source of randomness, see :func:`check_random_source`.

    Returns
    -------
    out : ndarray of bool

    Notes
    -----
    Canonne, Kamath and Steinke (2020), Algorithm 1, for ``gamma <= 1``, and
    ``exp(-gamma) = exp(-gamma / n) ** n`` for larger ``gamma``. Every step is
    an exact comparison of a uniform integer with an integer threshold.

    References
    ----------
    .. [1] C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for
       Differential Privacy", NeurIPS 2020, arXiv:2004.00010.

    Examples
    --------
    >>> from skdp.mechanisms import bernoulli_exp
    >>> round(float(bernoulli_exp(1, 2, size=100_000, random_state=0).mean()), 2)
    0.61
    """
    source = check_random_source(random_state)
    num = _check_int_array(gamma_num, "gamma_num", 0, MAX_BERNOULLI_PARAM)
    den = _check_int_array(gamma_den, "gamma_den", 1, MAX_BERNOULLI_PARAM)
    num, den = np.broadcast_arrays(num, den)
    shape = num.shape if size is None else _size_to_n(size)[0]
    num = np.broadcast_to(num, shape).ravel()
    den = np.broadcast_to(den, shape).ravel()
    one = np.ones(num.size, dtype=np.int64)
    return _bernoulli_exp_product(num, den, one, one, source).reshape(shape)


def discrete_laplace(scale_num, scale_den=1, size=None, *, random_state=None):
    """Draw exact discrete Laplace variables with rational scale ``t = s / d``.

    The pmf on the integers is ``P(x) ∝ exp(-|x| / t) = exp(-|x| * d / s)``.

    Parameters
    ----------
    scale_num : int
        ``s``, in ``[1, 2**52]``.
    scale_den : int, default=1
        ``d``, in ``[1, 2**52]``.
    size : int or tuple of int, default=None
        Output shape (``None``: a 0-d array).
    random_state : None, int, RandomState or RandomSource, default=None
        Source of randomness, see :func:`check_random_source`.

    Returns
    -------
    out : ndarray of int64

    Raises
    ------
    OverflowError
        If a draw does not fit in int64 (probability below ``exp(-1023)``).

    Notes
    -----
    Exact: ``|x| = J w + U`` for a bin width ``w = 2**k <= t/8`` (``w = 1``
    for ``t < 16``), ``U`` uniform on ``{0..w-1}``, ``J`` geometric with
    ``P(J >= j) = exp(-j w / t)`` (inverted from a uniform against integer
    brackets of these thresholds), a fair sign with ``-0`` rejected, and
    acceptance with probability ``exp(-U/t)`` (Canonne, Kamath and Steinke,
    2020, Algorithm 1, on one uniform with the rational thresholds
    ``(U/t)**K / K!``); the accepted values have probability exactly
    ``∝ exp(-|x| / t)``. At least 94% of proposals are accepted. This draws
    the same distribution as CKS Algorithm 2, faster.

    References
    ----------
    .. [1] C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for
       Differential Privacy", NeurIPS 2020, arXiv:2004.00010.

    Examples
    --------
    >>> from skdp.mechanisms import discrete_laplace
    >>> discrete_laplace(3, size=5, random_state=0).dtype
    dtype('int64')
    """
    source = check_random_source(random_state)
    s = _check_int(scale_num, "scale_num", 1, MAX_LAPLACE_PARAM)
    d = _check_int(scale_den, "scale_den", 1, MAX_LAPLACE_PARAM)
    shape, n = _size_to_n(size)
    return _discrete_laplace(s, d, n, source).reshape(shape)


def discrete_gaussian(sigma2_num, sigma2_den=1, size=None, *, random_state=None):
    """Draw exact discrete Gaussian variables with rational variance parameter.

    The pmf on the integers is ``P(x) ∝ exp(-x**2 / (2 sigma2))`` with
    ``sigma2 = sigma2_num / sigma2_den``.

    Parameters
    ----------
    sigma2_num : int
        Numerator of ``sigma2``, in ``[1, 2**60]``.
    sigma2_den : int, default=1
        Denominator of ``sigma2``, ``>= 1``, with
        ``sigma2_den * t**2 <= 2**52`` where ``t = floor(sqrt(sigma2)) + 1``.
    size : int or tuple of int, default=None
        Output shape (``None``: a 0-d array).
    random_state : None, int, RandomState or RandomSource, default=None
        Source of randomness, see :func:`check_random_source`.

    Returns
    -------
    out : ndarray of int64

    Raises
    ------
    OverflowError
        If a proposal does not fit the int64 arithmetic (probability below
        ``exp(-256)``).

    Notes
    -----
    Exact rejection sampling: ``|x| = J w + U`` for a bin width
    ``w = 2**k <= sigma/8`` (``w = 1`` for ``sigma < 16``), ``J`` with
    ``P(J = j) ∝ exp(-(j w)**2 / (2 sigma2))`` (inverted from a uniform
    against integer brackets of its survival function), ``U`` uniform on
    ``{0..w-1}``, a fair sign with ``-0`` rejected, and acceptance with
    probability ``exp(-U (2Jw + U) / (2 sigma2))`` (Canonne, Kamath and
    Steinke, 2020, Algorithm 1, on one uniform with exact rational
    thresholds). The accepted values have probability exactly
    ``∝ exp(-x**2 / (2 sigma2))``; at least 95% of proposals are accepted.
    This draws the same distribution as CKS Algorithm 3, faster.

    References
    ----------
    .. [1] C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for
       Differential Privacy", NeurIPS 2020, arXiv:2004.00010.

    Examples
    --------
    >>> from skdp.mechanisms import discrete_gaussian
    >>> round(float(discrete_gaussian(4, size=100_000, random_state=0).std()), 1)
    2.0
    """
    source = check_random_source(random_state)
    a = _check_int(sigma2_num, "sigma2_num", 1, MAX_GAUSSIAN_PARAM)
    b = _check_int(sigma2_den, "sigma2_den", 1, MAX_GAUSSIAN_PARAM)
    t = math.isqrt(a // b) + 1  # floor(sqrt(a / b)) + 1
    if b * t * t > MAX_LAPLACE_PARAM:
        raise ValueError(
            "discrete_gaussian needs sigma2_den * (floor(sigma) + 1)**2 <= 2**52 "
            f"to stay within int64; got sigma2 = {a}/{b}."
        )
    shape, n = _size_to_n(size)
    return _discrete_gaussian(a, b, n, source).reshape(shape)


def _discrete_gaussian(a, b, n, source):
    """Exact discrete Gaussian for sigma2 = a / b (limits checked by the caller).

    Notes
    -----
    Drawn by :func:`skdp.mechanisms._fastnoise._sample_gaussian`: bins of
    width ``w = 2**s <= sigma / 8``, a bin index ``J`` with
    ``P(J = j) ∝ exp(-(j w)**2 b / (2a))`` inverted exactly from a uniform
    (integer brackets of its survival function), ``U`` uniform in the bin, a
    fair sign with ``-0`` rejected, and acceptance with probability
    ``exp(-gamma)``, ``gamma = U (2Jw + U) b / (2a)`` (an exact rational), by
    CKS Algorithm 1 on one uniform with rational thresholds
    ``gamma**K / K!``. Then every integer ``x`` has probability exactly
    ``∝ exp(-x**2 b / (2a))``. :func:`_discrete_gaussian_cks` is the plain CKS
    Algorithm 3 (same distribution, slower), kept as a reference for the
    tests.
    """
    return _sample_gaussian(a, b, n, source)


def _discrete_gaussian_cks(a, b, n, source):
    """CKS Algorithm 3 for sigma2 = a / b (limits checked by the caller)."""
    t = math.isqrt(a // b) + 1
    # |Y| <= ymax keeps E = ||Y| b t - a| below 2**61 (P(|Y| > ymax) < e**-256).
    ymax = ((1 << 61) - a) // (b * t)
    out = np.empty(n, dtype=np.int64)
    pending = np.arange(n)
    while pending.size:
        m = pending.size
        y = _discrete_laplace_cks(t, 1, m, source)
        mag = np.abs(y)
        if m and mag.max() > ymax:
            raise OverflowError(
                "discrete Gaussian proposal does not fit in int64 (probability "
                "below exp(-256)); nothing was released."
            )
        e = np.abs(mag * (b * t) - a)
        accept = _bernoulli_exp_product(
            e, np.full(m, b * t * t), e, np.full(m, 2 * a), source
        )
        out[pending[accept]] = y[accept]
        pending = pending[~accept]
    return out
