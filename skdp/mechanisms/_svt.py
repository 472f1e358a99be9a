"""The sparse vector technique: AboveThreshold and Sparse.

Both functions accept either a precomputed 1-D array of query answers (all
noise drawn at once, first hit found with a masked argmax) or a lazy iterable
of answers or zero-argument callables, consumed only until the mechanism
halts. Only the indices of the queries that fired are released.
"""

import math
from collections.abc import Iterable
from fractions import Fraction
from numbers import Integral, Real

import numpy as np

from skdp.accounting._composition import budget_left
from skdp.accounting._cost import PrivacyCost
from skdp.mechanisms._discrete import _discrete_laplace
from skdp.mechanisms._grid import (
    MAX_GRID_EXP,
    MIN_GRID_EXP,
    PRECISION_BITS,
    floor_log2,
)
from skdp.mechanisms._random import check_random_source
from skdp.mechanisms._selection import _check_sensitivity
from skdp.utils._validation import check_epsilon

__all__ = ["above_threshold", "sparse", "svt_cost"]

_FIRST_CHUNK = 16
_MAX_CHUNK = 4096
#: Largest integer noise scale in grid steps (as for the Laplace mechanism).
_MAX_SVT_STEPS = 1 << 44
#: Query answers are compared as integers clipped to this magnitude (in grid
#: steps, relative to the threshold); noise is at most this large too (else
#: OverflowError, probability below exp(-511)), so sums fit in int64.
_SVT_CLIP = 1 << 53
#: The threshold may be at most this many grid steps from 0, so that T / 2**k
#: is a finite float (a public-parameter check).
_MAX_THRESHOLD_STEPS = 1 << 1023


def _check_threshold(threshold):
    if isinstance(threshold, bool) or not isinstance(threshold, Real | np.number):
        raise TypeError(f"threshold must be a real number; got {threshold!r}.")
    value = float(threshold)
    if not math.isfinite(value):
        raise ValueError(f"threshold must be finite; got {value}.")
    return value


def _check_threshold_share(share):
    if isinstance(share, bool) or not isinstance(share, Real | np.number):
        raise TypeError(f"threshold_share must be a real number; got {share!r}.")
    value = float(share)
    if not 0.0 < value < 1.0:
        raise ValueError(f"threshold_share must lie in (0, 1); got {value}.")
    return value


def _check_cutoff(cutoff):
    if isinstance(cutoff, bool) or not isinstance(cutoff, Integral) or cutoff < 1:
        raise ValueError(f"cutoff must be a positive integer; got {cutoff!r}.")
    return int(cutoff)


def _as_answer_array(queries):
    """Return a float array for precomputed answers, or None for a lazy stream."""
    if isinstance(queries, np.ndarray):
        candidate = queries
    elif isinstance(queries, list | tuple):
        if any(callable(q) for q in queries):
            return None
        candidate = queries
    else:
        return None
    try:
        arr = np.asarray(candidate, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("queries must be numeric query answers.") from None
    if arr.ndim != 1:
        raise ValueError(
            f"queries must be a 1-D array of answers; got shape {arr.shape}."
        )
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"query answers must be finite; answer {bad} is {arr[bad]}.")
    return arr


class _Grid:
    """The integer form in which SVT compares noisy answers with the threshold.

    With the grid step ``g = 2**k``, query ``i`` fires iff
    ``d_i + N_i >= P``, where ``d_i = clip(floor(f_i / g) - ceil(T / g),
    ±2**53)`` is an integer, ``P ~ DLap(t1)`` the threshold noise (drawn once)
    and ``N_i ~ DLap(t2)`` fresh query noise: discrete Laplace with integer
    scales, sampled exactly, and compared in exact int64 arithmetic. This is
    ``f_i + g N_i >= T + g P`` up to the rounding of ``f_i`` and ``T`` to the
    grid.

    Privacy: ``floor`` and ``clip`` are monotone and ``|floor(a) - floor(b)|
    <= ceil(|a - b|)``, so the integer queries ``d_i`` have sensitivity
    ``D = ceil(Δ / g)`` and stay monotone when the ``f_i`` are. Lyu–Su–Li
    Alg. 1 for integer queries and integer noise shifts the threshold noise by
    ``D`` and the noise of each positive query by ``2D`` (``D`` if
    monotone), so ``t1 >= D / ε1`` and ``t2 >= 2cD / ε2`` (``cD / ε2``) give
    ``(ε1 + ε2)``-DP exactly, with ``ε1 = threshold_share * ε`` and
    ``ε2 = ε - ε1`` (both exact fractions). (Floating-point noise, or discrete noise on
    different grids compared in floating point, is not covered by the
    continuous proof: shifts must be whole grid steps and the comparison
    exact.)
    """

    def __init__(
        self, epsilon, sensitivity, monotonic, cutoff, threshold, threshold_share=0.5
    ):
        threshold_scale, _ = _scales(
            epsilon, sensitivity, monotonic, cutoff, threshold_share
        )
        eps1 = Fraction(epsilon) * Fraction(threshold_share)
        eps2 = Fraction(epsilon) - eps1
        k = floor_log2(min(sensitivity, threshold_scale)) - PRECISION_BITS
        k = min(max(k, MIN_GRID_EXP), MAX_GRID_EXP)
        sens = Fraction(sensitivity)
        factor = (1 if monotonic else 2) * cutoff
        while True:
            if k > MAX_GRID_EXP:
                raise ValueError(
                    f"Cannot represent the sparse vector noise for "
                    f"sensitivity={sensitivity!r}, epsilon={epsilon!r} and "
                    f"cutoff={cutoff}: the noise scale is too large."
                )
            steps = math.ceil(sens / Fraction(2) ** k)  # D
            t1 = math.ceil(steps / eps1)
            t2 = math.ceil(factor * steps / eps2)
            if t2 <= _MAX_SVT_STEPS:
                break
            k += 1
        threshold_steps = math.ceil(Fraction(threshold) / Fraction(2) ** k)
        if abs(threshold_steps) >= _MAX_THRESHOLD_STEPS:
            raise ValueError(
                f"threshold={threshold!r} is too large relative to the "
                f"sensitivity={sensitivity!r} (2**1023 grid steps or more)."
            )
        self.k, self.t1, self.t2 = k, t1, t2
        # ceil of the float T * 2**-k: an integer that is itself a float
        self.threshold_steps = threshold_steps

    def steps(self, answers):
        """``clip(floor(f / g) - ceil(T / g), ±2**53)`` as int64, exactly.

        ``ldexp`` is exact unless it overflows (then ``±inf``, clipped as the
        exact value would be) or underflows (a value in ``(-1, 1)``, whose
        floor is fixed below). The float subtraction is monotone and exact for
        results within ``±2**53``, so clipping after it gives the exact
        clipped integer.
        """
        with np.errstate(over="ignore", invalid="ignore"):
            f = np.floor(np.ldexp(answers, -self.k))
            f[(answers < 0) & (f == 0)] = -1.0  # underflow: floor(-tiny) = -1
            d = f - float(self.threshold_steps)
        return np.clip(d, -_SVT_CLIP, _SVT_CLIP).astype(np.int64)

    def threshold_noise(self, source, size):
        return _discrete_laplace(self.t1, 1, size, source, max_abs=_SVT_CLIP)

    def query_noise(self, source, size):
        n = math.prod(size) if isinstance(size, tuple) else int(size)
        noise = _discrete_laplace(self.t2, 1, n, source, max_abs=_SVT_CLIP)
        return noise.reshape(size)


def _answer(item, i):
    value = item() if callable(item) else item
    if isinstance(value, bool) or not isinstance(value, Real | np.number):
        raise ValueError(f"query {i} answered {value!r}; answers must be real numbers.")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"query answers must be finite; answer {i} is {value}.")
    return value


def _stream(queries, source, grid):
    """Yield (index, d_i + N_i) lazily; noise is drawn in growing chunks."""
    if not isinstance(queries, Iterable):
        raise TypeError(
            "queries must be an array of answers or an iterable of answers or "
            f"zero-argument callables; got {type(queries).__name__}."
        )
    chunk, buf, pos = _FIRST_CHUNK, np.empty(0, dtype=np.int64), 0
    for i, item in enumerate(queries):
        if pos == buf.size:
            buf, pos = grid.query_noise(source, chunk), 0
            chunk = min(2 * chunk, _MAX_CHUNK)
        steps = grid.steps(np.array([_answer(item, i)]))[0]
        noisy = int(steps) + int(buf[pos])
        pos += 1
        yield i, noisy


def _scales(epsilon, sensitivity, monotonic, cutoff, threshold_share=0.5):
    # Lyu–Su–Li 2017, Alg. 1: eps1 + eps2 = eps, rho ~ Lap(Δ/eps1),
    # nu ~ Lap(2cΔ/eps2) (Lap(cΔ/eps2) for monotone queries).
    eps1 = epsilon * threshold_share
    eps2 = budget_left(epsilon, eps1)
    threshold_scale = sensitivity / eps1
    query_scale = (1.0 if monotonic else 2.0) * cutoff * sensitivity / eps2
    return threshold_scale, query_scale


def above_threshold(
    queries,
    threshold,
    epsilon,
    *,
    sensitivity=1.0,
    monotonic=False,
    threshold_share=0.5,
    random_state=None,
):
    """AboveThreshold: the index of the first query whose noisy answer crosses.

    Parameters
    ----------
    queries : array-like of shape (n_queries,) or iterable
        Either the precomputed answers ``f_i(x)`` (fast, vectorised path), or
        a lazy iterable (e.g. a generator) of answers or zero-argument
        callables returning answers; a lazy stream is consumed only up to the
        query that fires. Answers must be finite.
    threshold : float
        Public threshold ``T``.
    epsilon : float
        Privacy loss, ``> 0``.
    sensitivity : float, default=1.0
        ``Δ``, the largest change of any single query between neighbouring
        datasets.
    monotonic : bool, default=False
        True only if, for every pair of neighbouring datasets, all queries
        move in the same direction (e.g. counts under add/remove). Halves the
        query noise.
    threshold_share : float, default=0.5
        ``ε₁/ε``, the share of ε spent on the threshold noise (public, in
        (0, 1)); the queries get ``ε₂ = ε - ε₁``. A larger share makes the
        threshold noise smaller and the query noise larger (see Notes).
    random_state : None, int, numpy.random.RandomState or RandomSource, \
default=None
        Source of randomness; None uses the operating system's secure
        generator. Seeds are for reproducible tests only.

    Returns
    -------
    index : int or None
        The index of the first query with ``f_i(x) + ν_i ≥ T + ρ``, or
        ``None`` when no query fires (never -1, which would silently index the
        last element of a grid).

    Notes
    -----
    Dwork–Roth Algorithm 1: the threshold noise ``ρ ~ Lap(2Δ/ε)`` is drawn
    once, each query gets fresh noise ``ν_i ~ Lap(4Δ/ε)``, and the mechanism
    halts at the first query that fires. It is ε-DP under add/remove-one-row
    neighbours for ``Δ``-sensitive queries, for any number of queries, even
    adaptively chosen (Dwork–Roth Thm 3.23). For monotone queries
    ``ν_i ~ Lap(2Δ/ε)`` suffices (Lyu–Su–Li 2017, Alg. 1 with ``c = 1``:
    ``ν ~ Lap(cΔ/ε₂)``, ``ε₁ = ε₂ = ε/2``); ``monotonic=True`` asserts that
    every neighbouring pair moves all queries in the same direction.

    **Unequal split.** Lyu–Su–Li's Alg. 1 holds for any ``ε₁ + ε₂ = ε``:
    ``ρ ~ Lap(Δ/ε₁)``, ``ν_i ~ Lap(2Δ/ε₂)`` (``Lap(Δ/ε₂)`` if monotone). The
    proof shifts ρ by Δ (factor ``e^{ε₁}``) and only the noise of the query
    that fires by up to 2Δ (Δ if monotone; factor ``e^{ε₂}``), so the split
    is free; ``threshold_share`` sets ``ε₁ = threshold_share · ε``. Why it
    matters: once all remaining answers are below the threshold by a margin
    (e.g. counts of rows above bounds beyond the data's maximum), a run whose
    threshold noise came out at ``t`` scales above its mean keeps going for
    about ``e^{t ε₂/ε₁}`` queries, so the probability of passing ``K`` such
    queries decays like ``K^{-ε₁/ε₂}``: ``K^{-1}`` for the equal split, and
    ``K^{-4}`` for ``threshold_share=0.8``.

    The noise is exact discrete Laplace noise on one power-of-two grid
    ``g <= min(Δ, 2Δ/ε) 2**-20`` shared by the threshold and the queries;
    answers and threshold are rounded to the grid and compared as integers,
    with the scales computed for the rounded sensitivity ``ceil(Δ/g)`` (see
    ``_Grid``), so the guarantee holds exactly. Only the index is released.
    The cost is due in full whether or not a query fires (see
    :func:`svt_cost`).

    References
    ----------
    .. [1] Dwork, Roth. "The Algorithmic Foundations of Differential
       Privacy", §3.6, Algorithm 1.
    .. [2] Lyu, Su, Li. "Understanding the Sparse Vector Technique for
       Differential Privacy." PVLDB 10(6), 2017.

    Examples
    --------
    >>> from skdp.mechanisms._svt import above_threshold
    >>> above_threshold([0, 1, 2, 100, 3], threshold=50, epsilon=1.0,
    ...                 random_state=0)
    3
    >>> print(above_threshold([0, 1, 2], threshold=1000, epsilon=1.0,
    ...                       random_state=0))
    None
    """
    fired = _svt(
        queries,
        threshold,
        epsilon,
        1,
        sensitivity,
        monotonic,
        random_state,
        threshold_share,
    )
    return fired[0] if fired else None


def sparse(
    queries,
    threshold,
    epsilon,
    *,
    cutoff,
    sensitivity=1.0,
    monotonic=False,
    random_state=None,
):
    """Sparse: the indices of up to ``cutoff`` queries whose noisy answers cross.

    Parameters
    ----------
    queries : array-like of shape (n_queries,) or iterable
        Precomputed answers, or a lazy iterable of answers or zero-argument
        callables consumed only until the ``cutoff``-th query fires.
    threshold : float
        Public threshold ``T``.
    epsilon : float
        Total privacy loss, ``> 0``.
    cutoff : int
        ``c``: the mechanism halts after ``c`` queries fire.
    sensitivity : float, default=1.0
        ``Δ``, the sensitivity of each query.
    monotonic : bool, default=False
        True only if all queries move in the same direction for every pair of
        neighbouring datasets.
    random_state : None, int, numpy.random.RandomState or RandomSource, \
default=None
        Source of randomness; None uses the operating system's secure
        generator.

    Returns
    -------
    indices : list of int
        Increasing indices of the queries that fired, at most ``cutoff`` of
        them (possibly empty).

    Notes
    -----
    Lyu–Su–Li 2017, Algorithm 1, with ``ε₁ = ε₂ = ε/2``: the threshold noise
    ``ρ ~ Lap(Δ/ε₁)`` is drawn **once** and never refreshed; each query gets
    fresh ``ν_i ~ Lap(2cΔ/ε₂)`` (``Lap(cΔ/ε₂)`` for monotone queries); the
    mechanism halts after ``c`` positive answers. It is ε-DP under
    add/remove-one-row neighbours for ``Δ``-sensitive queries. With
    ``cutoff=1`` it is :func:`above_threshold`. Only the indices are
    released: the noisy answers of the queries that fired are not (release
    them with fresh noise and pay for it).

    The Lyu–Su–Li variants 3–6 (releasing ``q_i + ν_i``, noise without the
    factor ``c``, no query noise, no cutoff) are not differentially private
    at the claimed ε; the tests audit them as mutants.

    References
    ----------
    .. [1] Lyu, Su, Li. "Understanding the Sparse Vector Technique for
       Differential Privacy." PVLDB 10(6), 2017.
    .. [2] Dwork, Roth. "The Algorithmic Foundations of Differential
       Privacy", §3.6.

    Examples
    --------
    >>> from skdp.mechanisms._svt import sparse
    >>> sparse([0, 200, 1, 300, 2, 400], threshold=100, epsilon=1.0, cutoff=2,
    ...        random_state=0)
    [1, 3]
    """
    cutoff = _check_cutoff(cutoff)
    return _svt(
        queries, threshold, epsilon, cutoff, sensitivity, monotonic, random_state
    )


def check_svt_feasible(
    epsilon,
    threshold,
    *,
    sensitivity=1.0,
    monotonic=False,
    cutoff=1,
    threshold_share=0.5,
):
    """Raise ``ValueError`` now if a sparse-vector run with these public
    parameters could not represent its noise, whatever the queries.

    Estimators call it before charging, so that an infeasible ε (say 1e-300)
    is an error with nothing charged rather than a failure after the charge.

    Examples
    --------
    >>> from skdp.mechanisms._svt import check_svt_feasible
    >>> check_svt_feasible(1.0, 5.0)
    >>> check_svt_feasible(1e-300, 5.0)
    Traceback (most recent call last):
    ...
    ValueError: Cannot represent the sparse vector noise ...
    """
    _Grid(
        check_epsilon(epsilon),
        _check_sensitivity(sensitivity),
        monotonic,
        cutoff,
        _check_threshold(threshold),
        _check_threshold_share(threshold_share),
    )


def _svt(
    queries,
    threshold,
    epsilon,
    cutoff,
    sensitivity,
    monotonic,
    random_state,
    threshold_share=0.5,
):
    threshold = _check_threshold(threshold)
    epsilon = check_epsilon(epsilon)
    sensitivity = _check_sensitivity(sensitivity)
    share = _check_threshold_share(threshold_share)
    grid = _Grid(epsilon, sensitivity, monotonic, cutoff, threshold, share)
    answers = _as_answer_array(queries)
    source = check_random_source(random_state)
    if answers is not None:
        fired = _fired_mask(answers, grid, cutoff, source, 1)[0]
        # flatnonzero of an all-False mask is empty; np.argmax would return 0,
        # a false positive (ALGORITHMS.md §9 item 3).
        return [int(i) for i in np.flatnonzero(fired)]

    noisy_threshold = int(grid.threshold_noise(source, 1)[0])
    fired = []
    for i, noisy in _stream(queries, source, grid):
        if noisy >= noisy_threshold:
            fired.append(i)
            if len(fired) == cutoff:
                break
    return fired


def _fired_mask(answers, grid, cutoff, source, n_runs):
    """``n_runs`` independent runs on precomputed answers, vectorised.

    Returns a boolean array of shape (n_runs, n_queries) marking the queries
    that fired in each run (at most ``cutoff`` per row, the first ones). One
    threshold noise per run, drawn once; fresh noise for every query.
    """
    n_runs = int(n_runs)
    rho = grid.threshold_noise(source, n_runs)
    if answers.size == 0:
        return np.zeros((n_runs, 0), dtype=bool)
    nu = grid.query_noise(source, (n_runs, answers.size))
    hits = grid.steps(answers) + nu >= rho[:, None]
    if cutoff < answers.size:
        hits &= np.cumsum(hits, axis=1) <= cutoff
    return hits


def _svt_many(
    answers,
    threshold,
    epsilon,
    *,
    cutoff=1,
    sensitivity=1.0,
    monotonic=False,
    threshold_share=0.5,
    random_state=None,
    n_runs,
):
    """Vectorised repeated Sparse on precomputed answers (audits, simulations)."""
    threshold = _check_threshold(threshold)
    epsilon = check_epsilon(epsilon)
    sensitivity = _check_sensitivity(sensitivity)
    cutoff = _check_cutoff(cutoff)
    share = _check_threshold_share(threshold_share)
    grid = _Grid(epsilon, sensitivity, monotonic, cutoff, threshold, share)
    answers = _as_answer_array(np.asarray(answers, dtype=np.float64))
    source = check_random_source(random_state)
    return _fired_mask(answers, grid, cutoff, source, n_runs)


def svt_cost(epsilon):
    """The privacy cost of one :func:`above_threshold` or :func:`sparse` call.

    Parameters
    ----------
    epsilon : float
        The ``epsilon`` passed to the mechanism.

    Returns
    -------
    cost : PrivacyCost
        ``(epsilon, 0)`` with the generic ``rho = ε²/2`` of an ε-DP
        mechanism. It is due in full even when no query fires.

    Examples
    --------
    >>> from skdp.mechanisms._svt import svt_cost
    >>> svt_cost(0.5)
    PrivacyCost(epsilon=0.5, delta=0.0, rho=0.125, mechanism='svt')
    """
    epsilon = check_epsilon(epsilon)
    return PrivacyCost(epsilon, 0.0, epsilon * epsilon / 2.0, mechanism="svt")
