"""Events on mechanism outputs, and their selection on the pilot sample."""

from dataclasses import dataclass

import numpy as np

from skdp.audit._clopper_pearson import _cp_lower, _cp_upper
from skdp.audit._float_events import (
    BIT_KINDS,
    FloatBitsEvent,
    LatticeEvent,
    SupportEvent,
    estimate_lattice,
    float_bits_keys,
)
from skdp.audit._outputs import _normalise, _Outputs

__all__ = ["OutcomeSetEvent", "ThresholdEvent"]

_PILOT_LEVEL = 0.05  # one-sided level of the pessimistic pilot estimates


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

        def make_outcomes(subset, keys=keys):
            return OutcomeSetEvent(frozenset(keys[i] for i in subset))

        _prefix_candidates(inverse[:n0], inverse[n0:], len(keys), add, make_outcomes)

    if both.values is not None:
        _float_candidates(p0, p1, add, max_features)

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


def _prefix_candidates(codes0, codes1, n_keys, add, make):
    """Sets of keys taken in order of their pilot likelihood ratio.

    ``codes0``/``codes1`` are integer key codes in ``[0, n_keys)`` of the two
    pilot samples; ``make(indices)`` builds the event of a set of codes.
    """
    n0, n1 = len(codes0), len(codes1)
    c0u = np.bincount(codes0, minlength=n_keys).astype(np.float64)
    c1u = np.bincount(codes1, minlength=n_keys).astype(np.float64)
    for a, b, na, nb, first in ((c0u, c1u, n0, n1, True), (c1u, c0u, n1, n0, False)):
        ratio = ((a + 0.5) / na) / ((b + 0.5) / nb)
        order = np.argsort(-ratio, kind="stable")
        ca, cb = np.cumsum(a[order]), np.cumsum(b[order])
        c0, c1 = (ca, cb) if first else (cb, ca)

        def make_prefix(j, _d, order=order):
            return make(order[: j + 1])

        add(c0, c1, make_prefix)


def _float_candidates(p0, p1, add, max_features):
    """Bit-pattern and lattice events on each numeric coordinate."""
    d = min(p0.values.shape[1], max_features)
    for f in range(d):
        col0 = np.where(p0.none, np.nan, p0.values[:, f])
        col1 = np.where(p1.none, np.nan, p1.values[:, f])
        for kind in BIT_KINDS:
            k0, k1 = float_bits_keys(col0, kind), float_bits_keys(col1, kind)
            k0[p0.none], k1[p1.none] = -2, -2
            uniq, codes = np.unique(np.concatenate([k0, k1]), return_inverse=True)
            if uniq.size < 2:
                continue

            def make_bits(subset, f=f, kind=kind, uniq=uniq):
                return FloatBitsEvent(f, kind, frozenset(int(uniq[i]) for i in subset))

            codes = codes.ravel()
            _prefix_candidates(
                codes[: len(k0)], codes[len(k0) :], uniq.size, add, make_bits
            )
        for col in (col0, col1):
            lattice = estimate_lattice(col)
            if lattice is None:
                continue
            event = LatticeEvent(f, *lattice)
            c0 = event.indicator(p0).sum()
            c1 = event.indicator(p1).sum()
            add([c0], [c1], lambda _j, _d, event=event: event)


def _support_candidates(support, datasets, p0, p1, n_final, level, delta):
    """Score the events "unreachable from d0" and "unreachable from d1"."""
    found = []
    for dataset, name in zip(datasets, ("d0", "d1"), strict=True):
        event = SupportEvent(support, dataset, name)
        c0, c1 = event.indicator(p0).sum(), event.indicator(p1).sum()
        for a, b, na, nb, direction in (
            (c0, c1, len(p0), len(p1), (0, 1)),
            (c1, c0, len(p1), len(p0), (1, 0)),
        ):
            score = float(_projected_bound([a], [b], na, nb, n_final, level, delta)[0])
            if np.isfinite(score):
                found.append((score, event, direction))
    return found
