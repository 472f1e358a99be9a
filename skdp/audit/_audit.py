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
from numbers import Real

import numpy as np
from scipy import stats

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
_FAST_SCALARS = {
    type(None),
    int,
    float,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float32,
    np.float64,
}
_PILOT_LEVEL = 0.05  # one-sided level of the pessimistic pilot estimates


# --------------------------------------------------------------------------
# Clopper–Pearson bounds
# --------------------------------------------------------------------------
def _cp_lower(k, n, level):
    """One-sided Clopper–Pearson lower bound: P[p < bound] <= level."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    safe_k = np.where(k > 0, k, 1.0)
    bound = stats.beta.ppf(level, safe_k, n - safe_k + 1.0)
    return np.where(k > 0, bound, 0.0)


def _cp_upper(k, n, level):
    """One-sided Clopper–Pearson upper bound: P[p > bound] <= level."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    safe_k = np.where(k < n, k, n - 1.0)
    bound = stats.beta.isf(level, safe_k + 1.0, n - safe_k)
    return np.where(k < n, bound, 1.0)


def clopper_pearson_interval(k, n, *, confidence_level=0.95):
    """Exact two-sided Clopper–Pearson confidence interval for a proportion.

    Parameters
    ----------
    k : int
        Number of successes, ``0 <= k <= n``.
    n : int
        Number of trials, ``n >= 1``.
    confidence_level : float, default=0.95
        Coverage of the interval; each tail has probability
        ``(1 - confidence_level) / 2``.

    Returns
    -------
    low, high : float
        The interval; equals
        ``scipy.stats.binomtest(k, n).proportion_ci(confidence_level,
        method='exact')``.

    Examples
    --------
    >>> from skdp.audit import clopper_pearson_interval
    >>> low, high = clopper_pearson_interval(5, 10)
    >>> round(low, 4), round(high, 4)
    (0.1871, 0.8129)
    """
    k, n = int(k), int(n)
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1; got k={k}, n={n}.")
    if not 0.0 < confidence_level < 1.0:
        raise ValueError(f"confidence_level must be in (0, 1); got {confidence_level}.")
    tail = (1.0 - confidence_level) / 2.0
    return float(_cp_lower(k, n, tail)), float(_cp_upper(k, n, tail))


# --------------------------------------------------------------------------
# Outputs: normalisation into numeric rows or hashable keys
# --------------------------------------------------------------------------
def _scalar_key(value):
    if value is None:
        return None
    if isinstance(value, bool | np.bool_):
        return float(value)
    if isinstance(value, Real | np.number):
        return float(value)
    if isinstance(value, np.ndarray | list | tuple):
        return tuple(_scalar_key(v) for v in np.asarray(value, dtype=object).ravel())
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


@dataclass
class _Outputs:
    """A batch of mechanism outputs.

    ``values`` is an (n, d) float array and ``none`` an (n,) mask when every
    output is None, a number or a fixed-length numeric vector; otherwise
    ``keys`` holds one hashable key per output.
    """

    raw: object
    values: np.ndarray | None
    none: np.ndarray | None
    keys: list | None

    def __len__(self):
        return len(self.none) if self.keys is None else len(self.keys)

    def key_of_row(self, row, is_none):
        if is_none:
            return None
        if row.shape[0] == 1:
            return float(row[0])
        return tuple(float(v) for v in row)

    def unique_keys(self):
        """Return (list of distinct keys, inverse index array)."""
        if self.values is None:
            index = {}
            inverse = np.empty(len(self.keys), dtype=np.intp)
            for i, key in enumerate(self.keys):
                inverse[i] = index.setdefault(key, len(index))
            return list(index), inverse
        if self.values.shape[1] == 1 and not np.isnan(self.values[~self.none]).any():
            # one column: code None as the smallest value, then a 1-D unique
            col = self.values[:, 0].copy()
            col[self.none] = -np.inf
            has_none = bool(self.none.any())
            if has_none and np.isneginf(col[~self.none]).any():
                col = None  # -inf is a real output too: use the general path
            if col is not None:
                _uniq, first, inverse = np.unique(
                    col, return_index=True, return_inverse=True
                )
                keys = [
                    self.key_of_row(self.values[i], bool(self.none[i])) for i in first
                ]
                return keys, inverse.ravel()
        with np.errstate(invalid="ignore"):
            nan = np.isnan(self.values)
        block = np.column_stack(
            [self.none, np.where(nan, 0.0, self.values), nan]
        ).astype(np.float64)
        _rows, first, inverse = np.unique(
            block, axis=0, return_index=True, return_inverse=True
        )
        keys = [self.key_of_row(self.values[i], bool(self.none[i])) for i in first]
        return keys, inverse.ravel()


def _is_numeric_key(key):
    return isinstance(key, float) or (
        isinstance(key, tuple) and all(isinstance(v, float) for v in key)
    )


def _normalise(raw):
    """Turn raw outputs (a list or a numeric array) into an ``_Outputs``."""
    if isinstance(raw, np.ndarray) and raw.dtype.kind in "biuf":
        values = raw.astype(np.float64).reshape(raw.shape[0], -1)
        return _Outputs(raw, values, np.zeros(raw.shape[0], dtype=bool), None)
    items = list(raw)
    kinds = set(map(type, items))
    if kinds and kinds <= _FAST_SCALARS:  # numbers and None: no per-item keys
        none = np.fromiter((x is None for x in items), dtype=bool, count=len(items))
        values = np.fromiter(
            (np.nan if x is None else x for x in items),
            dtype=np.float64,
            count=len(items),
        )
        if not none.all():
            return _Outputs(items, values[:, None], none, None)
    keys = [_scalar_key(item) for item in items]
    present = [k for k in keys if k is not None]
    if present and all(_is_numeric_key(k) for k in present):
        widths = {1 if isinstance(k, float) else len(k) for k in present}
        if len(widths) == 1 and (width := widths.pop()) > 0:
            values = np.full((len(keys), width), np.nan)
            none = np.zeros(len(keys), dtype=bool)
            for i, key in enumerate(keys):
                if key is None:
                    none[i] = True
                else:
                    values[i] = key
            return _Outputs(items, values, none, None)
    if not present:  # every output is None
        return _Outputs(
            items, np.zeros((len(keys), 1)), np.ones(len(keys), dtype=bool), None
        )
    return _Outputs(items, None, None, keys)


def _concat(batches):
    raws = list(batches)
    if all(isinstance(b, np.ndarray) and b.dtype.kind in "biuf" for b in raws):
        flat = [b.reshape(b.shape[0], -1) for b in raws]
        if len({f.shape[1] for f in flat}) == 1:
            return _normalise(np.concatenate(flat))
    items = []
    for b in raws:
        items.extend(list(b))
    return _normalise(items)


# --------------------------------------------------------------------------
# Events
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class ThresholdEvent:
    """The event ``feature(output) >= threshold`` (or ``<=``).

    Attributes
    ----------
    feature : int
        Column of a vector output (0 for scalar outputs), or -1 for the sum of
        the columns.
    threshold : float
    side : {"ge", "le"}
    include_none : bool
        Whether the output None (⊥) also belongs to the event.

    Examples
    --------
    The auditor picks a threshold event for real-valued outputs:

    >>> import numpy as np
    >>> from skdp.audit import ThresholdEvent, audit_mechanism
    >>> def noisy_count(rows, seed, n_runs=None):
    ...     rng = np.random.default_rng(seed)
    ...     return len(rows) + rng.laplace(scale=1.0, size=n_runs)
    >>> result = audit_mechanism(noisy_count, [1] * 10, [1] * 11, random_state=0)
    >>> isinstance(result.event, ThresholdEvent)
    True
    """

    feature: int
    threshold: float
    side: str
    include_none: bool = False

    def indicator(self, outputs):
        if outputs.values is None:
            return np.zeros(len(outputs), dtype=bool)
        col = _feature_column(outputs.values, self.feature)
        with np.errstate(invalid="ignore"):
            hit = col >= self.threshold if self.side == "ge" else col <= self.threshold
        hit &= ~outputs.none
        if self.include_none:
            hit |= outputs.none
        return hit

    def __str__(self):
        name = "output" if self.feature == 0 else f"output[{self.feature}]"
        if self.feature == -1:
            name = "sum(output)"
        op = ">=" if self.side == "ge" else "<="
        extra = " or output is None" if self.include_none else ""
        return f"{name} {op} {self.threshold:.6g}{extra}"


@dataclass(frozen=True)
class OutcomeSetEvent:
    """The event ``output ∈ outcomes`` for discrete outputs.

    Outputs are compared through their normalised keys: None, a float, or a
    tuple of floats (vectors and tuples), or the object itself when hashable.

    Examples
    --------
    The auditor picks a set of outcomes for discrete outputs:

    >>> import numpy as np
    >>> from skdp.audit import OutcomeSetEvent, audit_mechanism
    >>> def select(votes, seed, n_runs=None):  # permute-and-flip, ε = 1
    ...     noise = np.random.default_rng(seed).exponential(2.0, (n_runs, 2))
    ...     return np.argmax(np.asarray(votes) + noise, axis=1)
    >>> result = audit_mechanism(select, [5, 5], [4, 6], random_state=0)
    >>> isinstance(result.event, OutcomeSetEvent), result.epsilon_lower_bound < 1
    (True, True)
    """

    outcomes: frozenset

    def indicator(self, outputs):
        keys, inverse = outputs.unique_keys()
        member = np.fromiter(
            (k in self.outcomes for k in keys), dtype=bool, count=len(keys)
        )
        return member[inverse]

    def __str__(self):
        shown = sorted(self.outcomes, key=repr)
        text = ", ".join(repr(k) for k in shown[:8])
        if len(shown) > 8:
            text += f", … ({len(shown)} outcomes)"
        return f"output in {{{text}}}"


@dataclass(frozen=True)
class _CallableEvent:
    func: object

    def indicator(self, outputs):
        return np.fromiter(
            (bool(self.func(o)) for o in outputs.raw), dtype=bool, count=len(outputs)
        )

    def __str__(self):
        return getattr(self.func, "__name__", repr(self.func))


def _feature_column(values, feature):
    if feature == -1:
        return values.sum(axis=1)
    return values[:, feature]


# --------------------------------------------------------------------------
# Event selection on the pilot sample
# --------------------------------------------------------------------------
def _projected_bound(ca, cb, na, nb, n_final, level, delta):
    """Pessimistic projection of the final lower bound for counts ca, cb.

    The pilot frequencies are replaced by one-sided 95% pessimistic bounds,
    scaled to the final sample size and put through the final test; rare
    events whose pilot ratio is mostly chance are penalised.
    """
    pa = _cp_lower(ca, na, _PILOT_LEVEL)
    pb = _cp_upper(cb, nb, _PILOT_LEVEL)
    low = _cp_lower(pa * n_final, n_final, level) - delta
    high = _cp_upper(pb * n_final, n_final, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.log(low) - np.log(high)
    return np.where(low > 0, score, -np.inf)


def _candidate_events(
    p0, p1, *, n_final, level, delta, max_outcomes, n_thresholds, max_features
):
    """Yield (score, event, direction) for every candidate on the pilot."""
    n0, n1 = len(p0), len(p1)
    found = []

    def add(c0, c1, make_event):
        c0 = np.asarray(c0, dtype=np.float64)
        c1 = np.asarray(c1, dtype=np.float64)
        s01 = _projected_bound(c0, c1, n0, n1, n_final, level, delta)
        s10 = _projected_bound(c1, c0, n1, n0, n_final, level, delta)
        for scores, direction in ((s01, (0, 1)), (s10, (1, 0))):
            if scores.size == 0:
                continue
            j = int(np.argmax(scores))
            if np.isfinite(scores[j]):
                found.append((float(scores[j]), make_event(j, direction), direction))

    # discrete outcomes: prefixes of the outcomes sorted by likelihood ratio
    if (
        p0.values is not None
        and p1.values is not None
        and p0.values.shape[1] == p1.values.shape[1]
    ):
        both = _Outputs(
            None,
            np.vstack([p0.values, p1.values]),
            np.concatenate([p0.none, p1.none]),
            None,
        )
    else:
        both = _normalise(list(p0.raw) + list(p1.raw))
    keys, inverse = both.unique_keys()
    if len(keys) <= max_outcomes:
        c0u = np.bincount(inverse[:n0], minlength=len(keys)).astype(np.float64)
        c1u = np.bincount(inverse[n0:], minlength=len(keys)).astype(np.float64)
        for a, b, na, nb in ((c0u, c1u, n0, n1), (c1u, c0u, n1, n0)):
            ratio = ((a + 0.5) / na) / ((b + 0.5) / nb)
            order = np.argsort(-ratio, kind="stable")
            ca, cb = np.cumsum(a[order]), np.cumsum(b[order])
            c0, c1 = (ca, cb) if a is c0u else (cb, ca)

            def make(j, _d, order=order):
                return OutcomeSetEvent(frozenset(keys[i] for i in order[: j + 1]))

            add(c0, c1, make)

    # numeric features: one-sided thresholds
    if both.values is not None:
        d = both.values.shape[1]
        features = list(range(min(d, max_features)))
        if d > 1:
            features.append(-1)
        any_none = bool(both.none.any())
        for f in features:
            col0 = _feature_column(p0.values, f)[~p0.none]
            col1 = _feature_column(p1.values, f)[~p1.none]
            # NaN coordinates (e.g. "not released") belong to no threshold event
            col0, col1 = col0[~np.isnan(col0)], col1[~np.isnan(col1)]
            pooled = np.concatenate([col0, col1])
            pooled = pooled[np.isfinite(pooled)]
            if pooled.size == 0:
                continue
            tails = np.array([1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2])
            levels = np.concatenate(
                [np.linspace(0, 1, n_thresholds), tails, 1.0 - tails]
            )
            thresholds = np.unique(np.quantile(pooled, levels))
            s0, s1 = np.sort(col0), np.sort(col1)
            none0, none1 = int(p0.none.sum()), int(p1.none.sum())
            ge0 = s0.size - np.searchsorted(s0, thresholds, side="left")
            ge1 = s1.size - np.searchsorted(s1, thresholds, side="left")
            le0 = np.searchsorted(s0, thresholds, side="right")
            le1 = np.searchsorted(s1, thresholds, side="right")
            for side, c0, c1 in (("ge", ge0, ge1), ("le", le0, le1)):
                for inc in (False, True) if any_none else (False,):
                    extra0, extra1 = (none0, none1) if inc else (0, 0)

                    def make(j, _d, f=f, side=side, inc=inc, ts=thresholds):
                        return ThresholdEvent(f, float(ts[j]), side, inc)

                    add(c0 + extra0, c1 + extra1, make)
    return found


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
    the outcomes with the highest pilot likelihood ratio. Candidates are
    ranked by a pessimistic projection of the final bound (95% pilot bounds
    scaled to ``n_samples``), which keeps rare events whose pilot ratio is
    mostly chance from being chosen.

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
