"""The sparse vector technique: AboveThreshold and Sparse.

Both functions accept either a precomputed 1-D array of query answers (all
noise drawn at once, first hit found with a masked argmax) or a lazy iterable
of answers or zero-argument callables, consumed only until the mechanism
halts. Only the indices of the queries that fired are released.
"""

import math
from collections.abc import Iterable
from numbers import Integral, Real

import numpy as np

from skdp.accounting._cost import PrivacyCost
from skdp.mechanisms._laplace import laplace_mechanism
from skdp.mechanisms._random import check_random_source
from skdp.mechanisms._selection import _check_sensitivity
from skdp.utils._validation import check_epsilon

__all__ = ["above_threshold", "sparse", "svt_cost"]

_FIRST_CHUNK = 16
_MAX_CHUNK = 4096


def _check_threshold(threshold):
    if isinstance(threshold, bool) or not isinstance(threshold, Real | np.number):
        raise TypeError(f"threshold must be a real number; got {threshold!r}.")
    value = float(threshold)
    if not math.isfinite(value):
        raise ValueError(f"threshold must be finite; got {value}.")
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


def _laplace_noise(source, scale, size):
    """Laplace(scale) noise of the given shape for the SVT comparisons.

    Uses a Laplace sampler of the random source when it has one; otherwise
    the exact discrete Laplace noise of :func:`laplace_mechanism` (released on
    zeros with sensitivity ``scale`` and ε = 1), whose grid step is below
    ``scale * 2**-20`` and whose scale exceeds ``scale`` by a relative
    ``2**-20`` at most: more noise, never less.
    """
    sampler = getattr(source, "laplace", None)
    if sampler is not None:
        return sampler(scale, size)
    return laplace_mechanism(np.zeros(size), scale, 1.0, random_state=source)


def _answer(item, i):
    value = item() if callable(item) else item
    if isinstance(value, bool) or not isinstance(value, Real | np.number):
        raise ValueError(f"query {i} answered {value!r}; answers must be real numbers.")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"query answers must be finite; answer {i} is {value}.")
    return value


def _stream(queries, source, scale):
    """Yield (index, answer + noise) lazily; noise is drawn in growing chunks."""
    if not isinstance(queries, Iterable):
        raise TypeError(
            "queries must be an array of answers or an iterable of answers or "
            f"zero-argument callables; got {type(queries).__name__}."
        )
    chunk, buf, pos = _FIRST_CHUNK, np.empty(0), 0
    for i, item in enumerate(queries):
        if pos == buf.size:
            buf, pos = _laplace_noise(source, scale, chunk), 0
            chunk = min(2 * chunk, _MAX_CHUNK)
        noisy = _answer(item, i) + buf[pos]
        pos += 1
        yield i, noisy


def _scales(epsilon, sensitivity, monotonic, cutoff):
    # Lyu–Su–Li 2017, Alg. 1: eps1 = eps2 = eps/2, rho ~ Lap(Δ/eps1),
    # nu ~ Lap(2cΔ/eps2) (Lap(cΔ/eps2) for monotone queries).
    eps1 = eps2 = epsilon / 2.0
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

    The noise is exact discrete Laplace noise on a fine power-of-two grid
    (from :func:`~skdp.mechanisms.laplace_mechanism`), and only the index is
    released. The cost is due in full whether or not a query fires (see
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
    fired = _svt(queries, threshold, epsilon, 1, sensitivity, monotonic, random_state)
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


def _svt(queries, threshold, epsilon, cutoff, sensitivity, monotonic, random_state):
    threshold = _check_threshold(threshold)
    epsilon = check_epsilon(epsilon)
    sensitivity = _check_sensitivity(sensitivity)
    threshold_scale, query_scale = _scales(epsilon, sensitivity, monotonic, cutoff)
    answers = _as_answer_array(queries)
    source = check_random_source(random_state)
    if answers is not None:
        fired = _fired_mask(
            answers, threshold, cutoff, threshold_scale, query_scale, source, 1
        )[0]
        # flatnonzero of an all-False mask is empty; np.argmax would return 0,
        # a false positive (ALGORITHMS.md §9 item 3).
        return [int(i) for i in np.flatnonzero(fired)]

    noisy_threshold = threshold + float(_laplace_noise(source, threshold_scale, 1)[0])
    fired = []
    for i, noisy in _stream(queries, source, query_scale):
        if noisy >= noisy_threshold:
            fired.append(i)
            if len(fired) == cutoff:
                break
    return fired


def _fired_mask(
    answers, threshold, cutoff, threshold_scale, query_scale, source, n_runs
):
    """``n_runs`` independent runs on precomputed answers, vectorised.

    Returns a boolean array of shape (n_runs, n_queries) marking the queries
    that fired in each run (at most ``cutoff`` per row, the first ones). One
    threshold noise per run, drawn once; fresh noise for every query.
    """
    n_runs = int(n_runs)
    rho = _laplace_noise(source, threshold_scale, n_runs)
    if answers.size == 0:
        return np.zeros((n_runs, 0), dtype=bool)
    nu = _laplace_noise(source, query_scale, (n_runs, answers.size))
    hits = answers + nu >= (threshold + rho)[:, None]
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
    random_state=None,
    n_runs,
):
    """Vectorised repeated Sparse on precomputed answers (audits, simulations)."""
    threshold = _check_threshold(threshold)
    epsilon = check_epsilon(epsilon)
    sensitivity = _check_sensitivity(sensitivity)
    cutoff = _check_cutoff(cutoff)
    scales = _scales(epsilon, sensitivity, monotonic, cutoff)
    answers = _as_answer_array(np.asarray(answers, dtype=np.float64))
    source = check_random_source(random_state)
    return _fired_mask(answers, threshold, cutoff, *scales, source, n_runs)


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
    PrivacyCost(epsilon=0.5, delta=0.0, rho=0.125)
    """
    epsilon = check_epsilon(epsilon)
    return PrivacyCost(epsilon, 0.0, epsilon**2 / 2.0)
