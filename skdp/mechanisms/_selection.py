"""Private selection: exponential mechanism, report-noisy-max, permute-and-flip.

Each function releases only the index of the selected candidate. Scores are
shifted by their maximum before any scaling, so huge scores (``±1e300``) neither
overflow nor produce NaN, and all noise for all candidates is drawn in one
vectorised call.
"""

import math
from numbers import Real

import numpy as np

from skdp.accounting._cost import PrivacyCost
from skdp.mechanisms._random import check_random_source
from skdp.utils._validation import check_epsilon

__all__ = [
    "exponential_mechanism",
    "permute_and_flip",
    "report_noisy_max",
    "selection_cost",
]

_NOISES = ("laplace", "gumbel", "exponential")


def _check_scores(scores):
    arr = np.asarray(scores)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"scores must be numeric; got {scores!r}.") from None
    arr = arr.astype(np.float64, copy=False)
    if arr.ndim != 1:
        raise ValueError(f"scores must be 1-D; got an array of shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError("scores is empty: there is nothing to select from.")
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(
            f"scores must be finite; score {bad} is {arr[bad]}. Give impossible "
            "candidates a very low finite score or drop them (a public choice)."
        )
    return arr


def _check_sensitivity(sensitivity, name="sensitivity"):
    """Validate a positive, finite sensitivity and return it as a float."""
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, Real | np.number):
        raise TypeError(f"{name} must be a real number; got {sensitivity!r}.")
    value = float(sensitivity)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be finite and > 0; got {value}.")
    return value


def _scaled_gaps(scores, epsilon, sensitivity, monotonic):
    """Return ``(u - max u) / scale`` with ``scale = Δ/ε`` or ``2Δ/ε``.

    Subtracting the maximum first keeps every value in ``[-inf, 0]`` (the
    difference of two finite doubles may overflow to ``-inf``, which correctly
    gives that candidate probability 0), and the maximiser(s) are exactly 0.
    """
    u = _check_scores(scores)
    epsilon = check_epsilon(epsilon)
    sensitivity = _check_sensitivity(sensitivity)
    scale = (1.0 if monotonic else 2.0) * sensitivity / epsilon
    with np.errstate(over="ignore"):
        gaps = (u - u.max()) / scale
    return gaps


def _laplace_noise(source, scale, size):
    """Laplace(scale) noise for comparisons, as a difference of exponentials.

    ``E1 - E2`` with ``E1, E2 ~ Expo(scale)`` independent is exactly
    ``Lap(scale)`` in distribution. Used where only the outcome of a
    comparison or an argmax is released (report-noisy-max, sparse vector),
    like :meth:`RandomSource.exponential`; never to release a noisy value.
    """
    sampler = getattr(source, "laplace", None)
    if sampler is not None:
        return sampler(scale, size)
    return source.exponential(scale, size) - source.exponential(scale, size)


def _noisy_argmax(gaps, noise, source, n_runs):
    """``n_runs`` independent selections: argmax of ``gaps + noise`` per row.

    ``gaps`` are the max-shifted scores divided by the noise scale, so the
    noise here has scale 1. Every public selection function is this with
    ``n_runs=1``; audits call it with many runs to test the same code path.
    """
    shape = (int(n_runs), gaps.size)
    if noise == "gumbel":
        draw = source.gumbel(1.0, shape)
    elif noise == "exponential":
        draw = source.exponential(1.0, shape)
    else:
        draw = _laplace_noise(source, 1.0, shape)
    return np.argmax(gaps + draw, axis=1)


def _select_many(
    scores, epsilon, sensitivity, *, noise, monotonic, random_state, n_runs
):
    """Vectorised repeated selection (for audits and simulations)."""
    if noise not in _NOISES:
        raise ValueError(f"noise must be one of {_NOISES}; got {noise!r}.")
    gaps = _scaled_gaps(scores, epsilon, sensitivity, monotonic)
    return _noisy_argmax(gaps, noise, check_random_source(random_state), n_runs)


def exponential_mechanism(
    scores, epsilon, sensitivity, *, monotonic=False, random_state=None
):
    """Select an index with probability proportional to ``exp(ε u / (2Δ))``.

    Parameters
    ----------
    scores : array-like of shape (n_candidates,)
        Finite utility ``u_r(x)`` of each candidate; higher is better.
    epsilon : float
        Privacy loss, ``> 0``.
    sensitivity : float
        ``Δ``: the largest change of any single score between neighbouring
        datasets.
    monotonic : bool, default=False
        Set to True only if, for every pair of neighbouring datasets, all
        scores move in the same direction (e.g. counts under add/remove). The
        probabilities are then ``∝ exp(ε u / Δ)``.
    random_state : None, int, numpy.random.RandomState or RandomSource, \
default=None
        Source of randomness; None uses the operating system's secure
        generator. Seeds are for reproducible tests only.

    Returns
    -------
    index : int
        The selected candidate.

    Notes
    -----
    ε-DP under add/remove-one-row neighbours when every score has sensitivity
    ``Δ`` (McSherry–Talwar 2007); the general version is also ``ε²/8``-zCDP
    (bounded range, Rogers–Steinke 2021), see :func:`selection_cost`.

    Implemented with the Gumbel-max trick: ``argmax(u/s + G_r)`` with
    ``s = 2Δ/ε`` (``Δ/ε`` if monotone) and i.i.d. standard Gumbel ``G_r`` has
    exactly the exponential-mechanism distribution. Scores are shifted by
    their maximum first, so no exponential is ever evaluated and nothing
    overflows. Only the index is released; the floating-point Gumbel sampler
    is therefore not exposed to Mironov's (2012) attack on released noise.
    Equal scores give a uniform choice.

    **Floating-point caveat.** The Gumbel draws come from 53-bit uniforms, so
    their range is capped: a candidate whose scaled gap to the best score is
    below about -41 is never chosen, though its exact probability is positive
    (below ``e^-41``). The guarantee is therefore ε-DP up to an additive δ of
    about ``2^-53``.

    References
    ----------
    .. [1] McSherry, Talwar. "Mechanism Design via Differential Privacy."
       FOCS 2007.
    .. [2] Dwork, Roth. "The Algorithmic Foundations of Differential
       Privacy", §3.4.

    Examples
    --------
    >>> from skdp.mechanisms._selection import exponential_mechanism
    >>> exponential_mechanism([1.0, 50.0, 2.0], epsilon=1.0, sensitivity=1.0,
    ...                       random_state=0)
    1
    """
    gaps = _scaled_gaps(scores, epsilon, sensitivity, monotonic)
    source = check_random_source(random_state)
    return int(_noisy_argmax(gaps, "gumbel", source, 1)[0])


def report_noisy_max(
    scores,
    epsilon,
    sensitivity,
    *,
    noise="laplace",
    monotonic=False,
    random_state=None,
):
    """Release the index of the largest noisy score.

    Parameters
    ----------
    scores : array-like of shape (n_candidates,)
        Finite utility of each candidate; higher is better.
    epsilon : float
        Privacy loss, ``> 0``.
    sensitivity : float
        ``Δ``, the sensitivity of each score.
    noise : {"laplace", "gumbel", "exponential"}, default="laplace"
        Noise added to each score, with scale ``2Δ/ε`` (``Δ/ε`` if
        ``monotonic``). Gumbel noise is the exponential mechanism; exponential
        (one-sided) noise is permute-and-flip.
    monotonic : bool, default=False
        True only if all scores move in the same direction for every pair of
        neighbouring datasets.
    random_state : None, int, numpy.random.RandomState or RandomSource, \
default=None
        Source of randomness; None uses the operating system's secure
        generator.

    Returns
    -------
    index : int
        The index of the noisy maximum. The noisy value itself is **not**
        released: publishing it would need a separate, paid release.

    Notes
    -----
    ε-DP under add/remove-one-row neighbours for ``Δ``-sensitive scores with
    every noise choice. For general scores the scale must be ``2Δ/ε``; the
    ``Δ/ε`` used by Dwork–Roth Claim 3.9 and Programming-DP ch. 9 is only
    valid for monotone scores (counts), which is what ``monotonic=True``
    asserts. Gumbel noise gives the exponential mechanism (and ε²/8-zCDP);
    exponential noise is permute-and-flip (Ding et al. 2021).

    References
    ----------
    .. [1] Dwork, Roth. "The Algorithmic Foundations of Differential
       Privacy", §3.3.
    .. [2] Ding, Kifer, Steinke, Wang, Xiao, Zhang, Zhang. "The
       Permute-and-Flip Mechanism is Identical to Report-Noisy-Max with
       Exponential Noise." arXiv:2105.07260, 2021.

    Examples
    --------
    >>> from skdp.mechanisms._selection import report_noisy_max
    >>> report_noisy_max([3, 40, 5], epsilon=1.0, sensitivity=1.0,
    ...                  random_state=0)
    1
    """
    if noise not in _NOISES:
        raise ValueError(f"noise must be one of {_NOISES}; got {noise!r}.")
    gaps = _scaled_gaps(scores, epsilon, sensitivity, monotonic)
    source = check_random_source(random_state)
    return int(_noisy_argmax(gaps, noise, source, 1)[0])


def permute_and_flip(
    scores, epsilon, sensitivity, *, monotonic=False, random_state=None
):
    """Permute-and-flip selection (McKenna–Sheldon 2020).

    Visits the candidates in a uniformly random order and accepts candidate
    ``r`` with probability ``exp(ε (u_r - max u) / (2Δ))`` (``/Δ`` if
    monotone). Never worse in expected utility than the exponential mechanism,
    and up to twice as good.

    Parameters
    ----------
    scores : array-like of shape (n_candidates,)
        Finite utility of each candidate; higher is better.
    epsilon : float
        Privacy loss, ``> 0``.
    sensitivity : float
        ``Δ``, the sensitivity of each score.
    monotonic : bool, default=False
        True only if all scores move in the same direction for every pair of
        neighbouring datasets.
    random_state : None, int, numpy.random.RandomState or RandomSource, \
default=None
        Source of randomness; None uses the operating system's secure
        generator.

    Returns
    -------
    index : int
        The selected candidate.

    Notes
    -----
    ε-DP under add/remove-one-row neighbours for ``Δ``-sensitive scores.
    Implemented, in one vectorised pass, as report-noisy-max with one-sided
    exponential noise ``argmax(u_r + Expo(2Δ/ε))``, which Ding et al. (2021)
    prove has exactly the permute-and-flip distribution (OpenDP
    ``make_noisy_max`` uses the same form). Only the index is released.
    The exponential draws come from 53-bit uniforms, which caps them: a
    candidate whose scaled gap to the best is below about -37 is never chosen
    (its exact probability is below ``e^-37``), so the guarantee holds up to
    an additive δ of about ``2^-53``.

    References
    ----------
    .. [1] McKenna, Sheldon. "Permute-and-Flip: A new mechanism for
       differentially private selection." NeurIPS 2020.
    .. [2] Ding, Kifer, Steinke, Wang, Xiao, Zhang, Zhang. "The
       Permute-and-Flip Mechanism is Identical to Report-Noisy-Max with
       Exponential Noise." arXiv:2105.07260, 2021.

    Examples
    --------
    >>> from skdp.mechanisms._selection import permute_and_flip
    >>> permute_and_flip([3, 40, 5], epsilon=1.0, sensitivity=1.0,
    ...                  random_state=0)
    1
    """
    return report_noisy_max(
        scores,
        epsilon,
        sensitivity,
        noise="exponential",
        monotonic=monotonic,
        random_state=random_state,
    )


def selection_cost(epsilon, *, noise="gumbel"):
    """The privacy cost of one selection at ``epsilon``.

    Parameters
    ----------
    epsilon : float
        The ``epsilon`` passed to the selection function.
    noise : {"gumbel", "exponential", "laplace"}, default="gumbel"
        ``"gumbel"`` for :func:`exponential_mechanism` and Gumbel
        report-noisy-max, ``"exponential"`` for :func:`permute_and_flip`,
        ``"laplace"`` for Laplace report-noisy-max.

    Returns
    -------
    cost : PrivacyCost
        ``(epsilon, 0)``; ``rho = ε²/8`` for the exponential mechanism
        (bounded range, Rogers–Steinke 2021; Cesar–Rogers 2021), otherwise the
        generic ``rho = ε²/2`` of any ε-DP mechanism (Bun–Steinke 2016).

    Examples
    --------
    >>> from skdp.mechanisms._selection import selection_cost
    >>> selection_cost(1.0)
    PrivacyCost(epsilon=1.0, delta=0.0, rho=0.125, mechanism='exponential')
    """
    epsilon = check_epsilon(epsilon)
    if noise not in _NOISES:
        raise ValueError(f"noise must be one of {_NOISES}; got {noise!r}.")
    rho = epsilon * epsilon / (8.0 if noise == "gumbel" else 2.0)
    mechanism = "permute_and_flip" if noise == "exponential" else "exponential"
    return PrivacyCost(epsilon, 0.0, rho, mechanism=mechanism)
