"""The audit catches releases that leak through floating point.

Two mutation twins reproduce the releases an outside review broke (issue 13):
noise drawn on a grid and rescaled by a data-dependent factor (the old smooth
sensitivity release), and a uniform drawn between data-valued interval ends
(the old exponential-mechanism quantile). Both are DP over the reals; both
must be refuted by the audit's default event search (lattice events) or its
reachability events, at the review's neighbouring datasets.
"""

import numpy as np
import pytest

from skdp.audit import LatticeEvent, SupportEvent, audit_mechanism
from skdp.audit._float_events import estimate_lattice, float_bits_keys

GRID_BITS = 20  # the old release drew its noise on a 2**-20 grid


def rescaled_grid_laplace(data, random_state, n_runs=None):
    """Old smooth release: grid noise on ``median / s``, multiplied by ``s``.

    ``s`` depends on the data (here, the spread of the order statistics next
    to the median), so every output lies on the dataset's own lattice
    ``{fl(j 2**-20 s)}``.
    """
    rng = np.random.default_rng(random_state)
    x = np.sort(np.asarray(data, dtype=np.float64))
    mid = (x.size - 1) // 2
    median = x[mid]
    s = 2.0 * max(x[min(mid + 1, x.size - 1)] - x[max(mid - 1, 0)], 1e-3)
    steps = 2.0**GRID_BITS
    centre = np.round(median / s * steps)
    noise = rng.geometric(1 - np.exp(-1 / steps), n_runs) - rng.geometric(
        1 - np.exp(-1 / steps), n_runs
    )
    return (centre + noise) / steps * s


def interval_uniform(left, right, rng, size):
    """Old Smith sampler: ``left + U*half + U*half``, U on the 2**-53 grid."""
    unit = rng.integers(0, 2**53, size) * 2.0**-53
    half = right * 0.5 - left * 0.5
    return np.clip(left + unit * half + unit * half, left, right)


def interval_quantile(data, random_state, n_runs=None, *, q=0.5, bounds=(0.0, 1.0)):
    """Old exponential-mechanism quantile (ε = 1): interval, then uniform in it."""
    rng = np.random.default_rng(random_state)
    ends = np.concatenate([[bounds[0]], np.sort(data), [bounds[1]]])
    left, right = ends[:-1], ends[1:]
    n = len(data)
    ranks = np.arange(n + 1)
    log_w = np.log(np.maximum(right - left, 1e-300)) - 0.5 * np.abs(ranks - q * n)
    log_w[right <= left] = -np.inf
    p = np.exp(log_w - log_w.max())
    chosen = rng.choice(n + 1, size=n_runs, p=p / p.sum())
    return interval_uniform(left[chosen], right[chosen], rng, n_runs)


def interval_support(bounds):
    """Reachability oracle of :func:`interval_quantile` (exact, by bisection).

    The map ``U -> left + U*half + U*half`` is monotone in ``U``, so an output
    ``x`` is reachable inside ``[left, right]`` iff the smallest grid ``U``
    whose image is ``>= x`` maps exactly to ``x``.
    """

    def support(data, outputs):
        ends = np.concatenate([[bounds[0]], np.sort(data), [bounds[1]]])
        x = np.asarray(outputs, dtype=np.float64)
        reachable = np.zeros(x.shape, dtype=bool)
        for i in range(ends.size - 1):
            left, right = ends[i], ends[i + 1]
            inside = (x >= left) & (x <= right)
            if right <= left or not inside.any():
                continue
            target = x[inside]
            low = np.zeros(target.shape, dtype=np.int64)
            high = np.full(target.shape, 2**53, dtype=np.int64)
            half = right * 0.5 - left * 0.5
            while np.any(low < high):
                mid = (low + high) // 2
                unit = mid * 2.0**-53
                image = np.clip(left + unit * half + unit * half, left, right)
                below = image < target
                low = np.where(below & (low < high), mid + 1, low)
                high = np.where(~below & (low < high), mid, high)
            unit = np.minimum(low, 2**53 - 1) * 2.0**-53
            image = np.clip(left + unit * half + unit * half, left, right)
            reachable[inside] |= image == target
        return reachable

    return support


def test_lattice_estimate_recovers_a_rescaled_grid():
    outputs = rescaled_grid_laplace(np.arange(11.0), 0, n_runs=4000)
    anchor, step = estimate_lattice(outputs)
    assert LatticeEvent(0, anchor, step).indicator is not None
    coord = (outputs - anchor) / step
    assert np.abs(coord - np.round(coord)).max() < 1e-3
    # a continuous output has no lattice
    assert estimate_lattice(np.random.default_rng(0).normal(size=4000)) is None


def test_bits_keys_see_a_power_of_two_grid():
    on_grid = np.array([1.0, 1.25, 3.5, -0.75])
    assert (float_bits_keys(on_grid, "trailing_zeros") >= 49).all()
    assert float_bits_keys(np.array([0.0, np.inf, np.nan]), "low4").tolist() == [-1] * 3


def test_audit_catches_the_rescaled_grid_twin():
    rng = np.random.default_rng(0)
    d0 = np.sort(rng.normal(5.0, 1.0, 101))
    d1 = np.append(d0, np.median(d0))  # one row added at the median
    result = audit_mechanism(
        rescaled_grid_laplace, d0, d1, n_samples=20_000, n_pilot=5_000, random_state=1
    )
    assert isinstance(result.event, LatticeEvent)
    assert result.epsilon_lower_bound > 5.0  # the twin's real-valued claim is 1


@pytest.mark.parametrize(
    "d0, d1, q, bounds",
    [
        ([0.3], [0.3, 0.6], 0.5, (0.0, 1.0)),  # the review's first example
        ([20.0] * 50 + [30.0] * 50, [20.0] * 50 + [30.0] * 50 + [16.0], 0.01, (0, 2e4)),
    ],
)
def test_audit_catches_the_interval_twin(d0, d1, q, bounds):
    d0, d1 = np.asarray(d0), np.asarray(d1)

    def mechanism(data, random_state, n_runs=None):
        return interval_quantile(data, random_state, n_runs, q=q, bounds=bounds)

    support = interval_support(bounds)
    # the oracle is exact: every output of a dataset is in its own support
    own = mechanism(d1, 0, n_runs=2000)
    assert support(d1, own).all()
    result = audit_mechanism(
        mechanism,
        d0,
        d1,
        n_samples=20_000,
        n_pilot=5_000,
        support=support,
        random_state=2,
    )
    assert isinstance(result.event, SupportEvent)
    assert result.epsilon_lower_bound > 1.0  # the claim of the twin
