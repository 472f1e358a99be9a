"""Empirical privacy auditing: statistical lower bounds on epsilon.

A mechanism ``M`` is (ε, δ)-DP when, for neighbouring datasets ``d0, d1`` and
every event ``E``, ``P[M(d0) ∈ E] ≤ exp(ε) P[M(d1) ∈ E] + δ``. Estimating both
probabilities from samples, with exact (Clopper–Pearson) confidence bounds,
gives a lower bound on the ε the mechanism actually has. When that bound
exceeds the claimed ε, the claim is false (up to the error probability
``alpha``). The auditor can only refute a claim, never prove one.
"""

import inspect
import math
from dataclasses import dataclass, field

import numpy as np

from skdp.audit._clopper_pearson import _cp_lower, _cp_upper, clopper_pearson_interval
from skdp.audit._events import (
    OutcomeSetEvent,
    ThresholdEvent,
    _CallableEvent,
    _candidate_events,
    _support_candidates,
)
from skdp.audit._outputs import _concat, _normalise
from skdp.utils._validation import check_delta, check_epsilon

__all__ = [
    "AuditResult",
    "OutcomeSetEvent",
    "ThresholdEvent",
    "assert_dp",
    "audit_mechanism",
    "clopper_pearson_interval",
]

_SEED_SPACE = 2**32


# --------------------------------------------------------------------------
# Running the mechanism
# --------------------------------------------------------------------------
def _accepts_n_runs(mechanism):
    try:
        params = inspect.signature(mechanism).parameters
    except (TypeError, ValueError):
        return False
    return "n_runs" in params


class _Runner:
    def __init__(self, mechanism, vectorized, batch_size, random_state):
        self.mechanism = mechanism
        self.vectorized = (
            _accepts_n_runs(mechanism) if vectorized is None else bool(vectorized)
        )
        self.batch_size = int(batch_size)
        rng = np.random.default_rng(random_state)
        self.next_seed = int(rng.integers(_SEED_SPACE))

    def seed(self):
        seed = self.next_seed
        self.next_seed = (seed + 1) % _SEED_SPACE
        return seed

    def run(self, dataset, n):
        if not self.vectorized:
            return _normalise([self.mechanism(dataset, self.seed()) for _ in range(n)])
        batches, remaining = [], n
        while remaining > 0:
            m = min(self.batch_size, remaining)
            out = self.mechanism(dataset, self.seed(), n_runs=m)
            if isinstance(out, np.ndarray) and out.dtype != object:
                pass
            else:
                out = list(out)
            if len(out) != m:
                raise ValueError(
                    f"mechanism returned {len(out)} outputs for n_runs={m}; a "
                    "vectorised mechanism must return one output per run "
                    "(an array of length n_runs or a list)."
                )
            batches.append(out)
            remaining -= m
        return _concat(batches)


# --------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_mechanism`.

    Attributes
    ----------
    epsilon_lower_bound : float
        ``max(0, ln((p_lower - delta) / p_upper))`` for the best event tested:
        with probability at least ``1 - alpha`` the mechanism is not
        (ε, δ)-DP for any ε below it.
    event : object
        The event (a :class:`ThresholdEvent`, an :class:`OutcomeSetEvent` or
        the user's callable) that gave the bound.
    direction : tuple of int
        ``(0, 1)`` when the event is more likely under ``d0``; ``(1, 0)``
        otherwise.
    counts : tuple of int
        How often the event occurred in the fresh samples of ``d0`` and ``d1``.
    n_samples : int
        Fresh runs per dataset.
    p_lower, p_upper : float
        Clopper–Pearson lower bound for the probability of the event under
        the more likely dataset, and upper bound under the other one, each
        at one-sided level ``alpha / (2 * n_events_tested)``.
    alpha, delta : float
        Error probability of the audit and the δ that was assumed.
    n_events_tested : int
        Number of (event, direction) pairs tested on the fresh samples.
    candidates : list
        Every tested (lower bound, event, direction), best first.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.audit import audit_mechanism
    >>> def noisy_count(rows, seed, n_runs=None):
    ...     rng = np.random.default_rng(seed)
    ...     return len(rows) + rng.laplace(scale=1.0, size=n_runs)
    >>> result = audit_mechanism(noisy_count, [1] * 10, [1] * 11, random_state=0)
    >>> 0 <= result.epsilon_lower_bound <= 1.0  # cannot refute the claim ε = 1
    True
    >>> result.n_samples
    100000
    """

    epsilon_lower_bound: float
    event: object
    direction: tuple
    counts: tuple
    n_samples: int
    p_lower: float
    p_upper: float
    alpha: float
    delta: float
    n_events_tested: int
    candidates: list = field(default_factory=list, repr=False)

    @property
    def frequencies(self):
        """Empirical probabilities of the event under ``d0`` and ``d1``."""
        return (self.counts[0] / self.n_samples, self.counts[1] / self.n_samples)

    def __str__(self):
        return (
            f"epsilon >= {self.epsilon_lower_bound:.4g} (confidence "
            f"{1 - self.alpha:.6g}, delta={self.delta:g}) from event "
            f"[{self.event}]: {self.counts[0]}/{self.n_samples} under d0, "
            f"{self.counts[1]}/{self.n_samples} under d1"
        )


def audit_mechanism(
    mechanism,
    d0,
    d1,
    *,
    n_samples=100_000,
    n_pilot=20_000,
    alpha=1e-6,
    delta=0.0,
    event=None,
    n_events=3,
    vectorized=None,
    batch_size=100_000,
    max_outcomes=1000,
    n_thresholds=200,
    support=None,
    random_state=None,
):
    """Statistically lower-bound the ε of a mechanism on two neighbouring inputs.

    The mechanism runs ``n_pilot`` times on each dataset; on these pilot
    samples the auditor picks the events (and directions) that best separate
    the two output distributions. It then runs the mechanism ``n_samples``
    fresh times on each dataset and computes exact Clopper–Pearson bounds for
    the probability of each chosen event, giving

        ε ≥ ln((p_lower(d_a) − δ) / p_upper(d_b))

    for the best event. Because the events are chosen on independent pilot
    data, the bound holds with probability at least ``1 - alpha`` (Bonferroni
    over the ``n_events`` events and the two bounds per event).

    Parameters
    ----------
    mechanism : callable
        ``mechanism(dataset, random_state)`` returns one output; it receives
        ``d0`` or ``d1`` unchanged and an int seed (distinct for every call)
        that it should pass to its noise source. Outputs may be numbers,
        fixed-length numeric vectors or tuples, None (⊥), or any hashable
        value (indices, strings, tuples of mixed lengths). If the callable
        has a keyword ``n_runs`` (or ``vectorized=True``), it is called as
        ``mechanism(dataset, random_state, n_runs=m)`` and must return ``m``
        independent outputs (an array whose first axis has length ``m``, or a
        list); audits of vectorised mechanisms are orders of magnitude faster.
    d0, d1 : object
        Neighbouring datasets (any objects the mechanism accepts). Audits are
        only as strong as this pair: use worst-case neighbours.
    n_samples : int, default=100_000
        Fresh runs per dataset for the final test.
    n_pilot : int, default=20_000
        Runs per dataset used to choose the events (ignored when ``event`` is
        given).
    alpha : float, default=1e-6
        Probability that the reported bound exceeds the true ε.
    delta : float, default=0.0
        The δ of the claim being tested; bounds use ``p_lower - delta``.
    event : callable, default=None
        Test this event instead of searching: ``event(output) -> bool`` on one
        raw output (for vectorised mechanisms, one element of the returned
        batch). Both directions are tested.
    n_events : int, default=3
        How many of the best pilot events are re-tested on fresh samples.
    vectorized : bool, default=None
        Whether to pass ``n_runs``; by default, when the signature has it.
    batch_size : int, default=100_000
        Largest ``n_runs`` per call.
    max_outcomes : int, default=1000
        Search sets of outcomes only when the pilot has at most this many
        distinct outputs.
    n_thresholds : int, default=200
        Candidate thresholds (pilot quantiles) per numeric feature.
    support : callable, default=None
        A reachability oracle, ``support(dataset, outputs) -> bool array``:
        True where ``dataset`` can produce the output (numeric outputs come
        as one float array, 1-D for scalars). With it, the events "output
        unreachable from d0" and "... from d1" are candidates too: they
        catch mechanisms whose set of reachable floats depends on the data
        (e.g. a uniform drawn between data-valued ends).
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the sequence of seeds passed to the mechanism.

    Returns
    -------
    result : AuditResult
        The bound, the event, the counts and the confidence bounds.

    See Also
    --------
    assert_dp : Fail when the lower bound exceeds a claimed ε.

    Notes
    -----
    Candidate events are one-sided thresholds on each numeric coordinate (and
    on the sum of the coordinates), optionally together with ⊥, and, when the
    outputs take at most ``max_outcomes`` values, sets of outcomes made of
    the outcomes with the highest pilot likelihood ratio. Because a release
    can be DP over the reals and still leak through floating point, the
    auditor also tries events on how each coordinate is represented
    (:mod:`skdp.audit._float_events`): sets of trailing-zero counts and of
    low-order significand bits (taken in order of their pilot likelihood
    ratio), membership in a lattice ``anchor + step Z`` estimated from each
    dataset's pilot outputs, and, given a ``support`` oracle, reachability.
    Candidates are ranked by a pessimistic projection of the final bound (95%
    pilot bounds scaled to ``n_samples``), which keeps rare events whose pilot
    ratio is mostly chance from being chosen.

    An audit is a refutation test: a bound above the claim shows, with
    confidence ``1 - alpha``, that the implementation is not (ε, δ)-DP on
    these inputs. A bound below the claim does not show that it is DP; its
    value depends on the neighbours and events tried. Audit each mechanism
    together with a deliberately broken twin (for example, half the noise
    scale) to check that the audit is strong enough to catch it.

    References
    ----------
    .. [1] Ding, Wang, Wang, Zhang, Kifer. "Detecting Violations of
       Differential Privacy." CCS 2018.
    .. [2] Bichsel, Steffen, Bogunovic, Vechev. "DP-Sniper: Black-Box Discovery
       of Differential Privacy Violations using Classifiers." S&P 2021.
    .. [3] Jagielski, Ullman, Oprea. "Auditing Differentially Private Machine
       Learning: How Private is Private SGD?" NeurIPS 2020.

    Examples
    --------
    Audit a noisy count (``Lap(1)`` noise: ε = 1 for add/remove neighbours).
    Accepting ``n_runs`` lets the auditor draw many outputs per call.

    >>> import numpy as np
    >>> from skdp.audit import audit_mechanism
    >>> def noisy_count(data, random_state, n_runs=None):
    ...     rng = np.random.default_rng(random_state)
    ...     return len(data) + rng.laplace(scale=1.0, size=n_runs)
    >>> result = audit_mechanism(noisy_count, [5, 3, 1], [5, 3],
    ...                          n_samples=100_000, random_state=0)
    >>> 0.8 < result.epsilon_lower_bound <= 1.0
    True
    >>> print(result.event)
    output ... 2...
    """
    n_samples = _check_count(n_samples, "n_samples")
    alpha = _check_alpha(alpha)
    delta = check_delta(delta)
    runner = _Runner(mechanism, vectorized, batch_size, random_state)

    if event is None:
        n_pilot = _check_count(n_pilot, "n_pilot")
        n_events = _check_count(n_events, "n_events")
        level = alpha / (2 * n_events)
        pilot0 = runner.run(d0, n_pilot)
        pilot1 = runner.run(d1, n_pilot)
        found = _candidate_events(
            pilot0,
            pilot1,
            n_final=n_samples,
            level=level,
            delta=delta,
            max_outcomes=int(max_outcomes),
            n_thresholds=int(n_thresholds),
            max_features=16,
        )
        if support is not None:
            found.extend(
                _support_candidates(
                    support, (d0, d1), pilot0, pilot1, n_samples, level, delta
                )
            )
        found.sort(key=lambda t: -t[0])
        chosen, seen = [], set()
        for _score, ev, direction in found:
            if (ev, direction) not in seen:
                seen.add((ev, direction))
                chosen.append((ev, direction))
            if len(chosen) == n_events:
                break
        if not chosen:  # nothing separates the pilot samples
            chosen = [(OutcomeSetEvent(frozenset()), (0, 1))]
    else:
        wrapped = event if hasattr(event, "indicator") else _CallableEvent(event)
        chosen = [(wrapped, (0, 1)), (wrapped, (1, 0))]
    n_tests = len(chosen)
    level = alpha / (2 * n_tests)

    fresh = (runner.run(d0, n_samples), runner.run(d1, n_samples))
    results = []
    for ev, direction in chosen:
        counts = tuple(int(ev.indicator(out).sum()) for out in fresh)
        a, b = direction
        low = float(_cp_lower(counts[a], n_samples, level))
        high = float(_cp_upper(counts[b], n_samples, level))
        bound = math.log((low - delta) / high) if low - delta > 0 else -math.inf
        results.append((bound, ev, direction, counts, low, high))
    results.sort(key=lambda t: -t[0])
    bound, ev, direction, counts, low, high = results[0]
    if isinstance(ev, _CallableEvent):
        ev = ev.func
    return AuditResult(
        epsilon_lower_bound=max(0.0, bound),
        event=ev,
        direction=direction,
        counts=counts,
        n_samples=n_samples,
        p_lower=low,
        p_upper=high,
        alpha=alpha,
        delta=delta,
        n_events_tested=n_tests,
        candidates=[(max(0.0, r[0]), r[1], r[2]) for r in results],
    )


def assert_dp(mechanism, d0, d1, epsilon, delta=0.0, *, alpha=1e-6, **kwargs):
    """Raise ``AssertionError`` if an audit refutes an (ε, δ)-DP claim.

    Runs :func:`audit_mechanism` (testing the claimed ``delta``) and fails
    when the lower bound on ε exceeds ``epsilon``. A correct mechanism fails
    with probability at most ``alpha``, so tests built on it are not flaky
    for small ``alpha``.

    Parameters
    ----------
    mechanism : callable
        See :func:`audit_mechanism` for the calling convention.
    d0, d1 : object
        Neighbouring datasets.
    epsilon : float
        The claimed ε.
    delta : float, default=0.0
        The claimed δ.
    alpha : float, default=1e-6
        Probability of failing a correct mechanism.
    **kwargs : dict
        Passed to :func:`audit_mechanism` (``n_samples``, ``n_pilot``,
        ``event``, ``random_state``, …).

    Returns
    -------
    result : AuditResult
        The audit, when it does not refute the claim.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.audit import assert_dp
    >>> def noisy_count(data, random_state, n_runs=None):
    ...     rng = np.random.default_rng(random_state)
    ...     return len(data) + rng.laplace(scale=0.5, size=n_runs)
    >>> assert_dp(noisy_count, [1, 2], [1], epsilon=1.0, random_state=0)
    Traceback (most recent call last):
    ...
    AssertionError: audit refutes (1, 0)-DP: epsilon >= ...
    """
    epsilon = check_epsilon(epsilon, allow_zero=True)
    result = audit_mechanism(mechanism, d0, d1, alpha=alpha, delta=delta, **kwargs)
    if result.epsilon_lower_bound > epsilon:
        raise AssertionError(f"audit refutes ({epsilon:g}, {delta:g})-DP: {result}")
    return result


def _check_count(value, name):
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}.")
    return int(value)


def _check_alpha(alpha):
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1); got {alpha}.")
    return alpha
