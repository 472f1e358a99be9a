"""Median sensitivity vs brute force on the add/remove graph (DESIGN.md §5)."""

import math
from fractions import Fraction

import numpy as np
import pytest

from skdp.sensitivity import (
    median_A,
    median_distance_to_instability,
    median_local_sensitivity,
    median_smooth_sensitivity,
    padded_order_statistics,
    select_order_statistics,
)

from . import bruteforce as bf

N_MAX = 8  # datasets checked exhaustively: every multiset of size <= N_MAX
GRAPH_SIZE = 2 * N_MAX + 1  # LS exact up to size 2 N_MAX, so D and S* are too
BETAS = (0.05, 0.3, 1.0, 3.0)


class MedianOracle:
    """Definitions evaluated on one domain's graph, plus skdp's answers."""

    def __init__(self, domain):
        self.g = g = bf.graph(domain, GRAPH_SIZE)
        self.bounds = (g.lower, g.upper)
        self.median = g.median()
        valid = g.sizes < GRAPH_SIZE
        self.ls = np.where(valid, g.local_sensitivity(self.median), np.nan)
        self.ball = g.ball_max(np.where(valid, self.ls, -np.inf), GRAPH_SIZE - 1)
        self.nodes = np.flatnonzero(g.sizes <= N_MAX)
        self.data = {node: g.sorted_values(node) for node in self.nodes}
        self.thresholds = bf.sensitivity_thresholds(domain)
        self._cache = {}

    def A(self, node, k):
        """Brute-force A(x, k); only exact while |x| + k < GRAPH_SIZE."""
        return self.ball[k, node]

    def distance(self, node, b):
        """min{k : the k-ball around x meets {LS > b}} (BFS distance)."""
        n = self.g.sizes[node]
        hits = np.flatnonzero(self.ball[: GRAPH_SIZE - n, node] > b)
        return int(hits[0]) if hits.size else math.inf

    def smooth(self, beta):
        """Fixed point of S = max(LS, e^{-β} max_nbr S) over the valid nodes."""
        if ("smooth", beta) not in self._cache:
            valid = self.g.sizes < GRAPH_SIZE
            self._cache["smooth", beta] = self.g.smooth_upper_bound(
                self.ls, beta, valid
            )
        return self._cache["smooth", beta]

    def implementation_distances(self, b):
        """skdp's D(x, b) on every checked node (NaN elsewhere)."""
        if ("D", b) not in self._cache:
            values = np.full(len(self.g), np.nan)
            for node, x in self.data.items():
                values[node] = median_distance_to_instability(x, b, self.bounds)
            self._cache["D", b] = values
        return self._cache["D", b]

    def thresholds_for(self, node):
        """All thresholds for n <= 5, a rotating third of them for larger n."""
        if self.g.sizes[node] <= 5:
            return self.thresholds
        return self.thresholds[node % 3 :: 3]


@pytest.fixture(scope="module", params=bf.DOMAINS, ids=["int", "gappy", "tenths"])
def oracle(request):
    return MedianOracle(request.param)


def test_local_sensitivity_matches_definition(oracle):
    checked = 0
    for node, x in oracle.data.items():
        assert median_local_sensitivity(x, oracle.bounds) == oracle.ls[node], x
        checked += 1
    assert checked == len(oracle.nodes)


def test_A_matches_k_ball(oracle):
    mismatches = 0
    for node, x in oracle.data.items():
        n = x.size
        k = np.arange(GRAPH_SIZE - n)
        y = padded_order_statistics(x, oracle.bounds)
        mismatches += np.count_nonzero(median_A(y, n, k) != oracle.A(node, k))
    assert mismatches == 0


def _literal_A(multiset, domain, k):
    lower = min(domain)

    def ls(item):
        here = bf.median_of(item, lower)
        neighbours = [tuple(sorted((*item, v))) for v in domain]
        neighbours += [item[:p] + item[p + 1 :] for p in range(len(item))]
        return max(abs(bf.median_of(other, lower) - here) for other in neighbours)

    return max(ls(item) for item in bf.literal_ball(multiset, domain, k))


def test_A_matches_literal_enumeration(oracle):
    """Literal ball enumeration (k <= 3), independent of the graph code."""
    domain = tuple(oracle.g.values)
    rng = np.random.default_rng(0)
    nodes = rng.choice(oracle.nodes[oracle.g.sizes[oracle.nodes] <= 6], 40)
    for node in nodes:
        x = oracle.data[node]
        y = padded_order_statistics(x, oracle.bounds)
        for k in range(4):
            assert median_A(y, x.size, k) == _literal_A(tuple(x), domain, k)


def test_distance_matches_bfs(oracle):
    cases = 0
    for node, x in oracle.data.items():
        for b in oracle.thresholds_for(node):
            got = median_distance_to_instability(x, b, oracle.bounds)
            assert got == oracle.distance(node, b), (x, b)
            cases += 1
    assert cases > 10_000


@pytest.mark.parametrize("which", [1, 3])
def test_ball_distance_equals_graph_bfs(oracle, which):
    """The oracle's ball-based distance is the multi-source BFS distance."""
    b = oracle.thresholds[which]
    g = oracle.g
    bfs = g.distance_to(oracle.ls > b, GRAPH_SIZE)
    expected = np.array([oracle.distance(node, b) for node in oracle.nodes])
    np.testing.assert_array_equal(bfs[oracle.nodes], expected)


@pytest.mark.parametrize("which", [0, 2, 4, -4, -3])
def test_distance_has_global_sensitivity_one(oracle, which):
    b = oracle.thresholds[which]
    distance = oracle.implementation_distances(b)
    neighbour = oracle.g.neighbour_values(distance, np.nan)[oracle.nodes]
    here = distance[oracle.nodes][:, None]
    both = ~np.isnan(neighbour)
    finite = both & np.isfinite(here) & np.isfinite(neighbour)
    assert np.all(np.abs(neighbour - here)[finite] <= 1)
    assert np.all(np.isinf(neighbour[both & np.isinf(here)]))  # inf iff U-L <= b


@pytest.mark.parametrize("which", [0, 2, 4, -4, -3])
def test_stable_distance_bounds_neighbour_medians(oracle, which):
    b = oracle.thresholds[which]
    distance = oracle.implementation_distances(b)[oracle.nodes]
    neighbour_medians = oracle.g.neighbour_values(oracle.median, np.nan)
    moves = np.abs(neighbour_medians - oracle.median[:, None])[oracle.nodes]
    stable = distance >= 1
    assert np.all(np.nan_to_num(moves[stable], nan=0.0) <= b)


@pytest.mark.parametrize("beta", BETAS)
def test_smooth_sensitivity_matches_fixed_point(oracle, beta):
    truth = oracle.smooth(beta)
    for node, x in oracle.data.items():
        if x.size > 6 and node % len(BETAS) != BETAS.index(beta):
            continue  # n = 7, 8: each node at one of the betas
        got = median_smooth_sensitivity(x, beta, oracle.bounds)
        assert got == pytest.approx(truth[node], rel=1e-12), x


CAPS = (1, 2, 3, 5, 9)


def test_capped_variants_on_small_domains(oracle):
    """Every node at one cap and one threshold (rotating), vs min(exact, K)."""
    lower, upper = oracle.bounds
    beta = 0.3
    for node, x in oracle.data.items():
        cap = CAPS[node % len(CAPS)]
        b = oracle.thresholds[node % len(oracle.thresholds)]
        got = median_distance_to_instability(x, b, oracle.bounds, cap=cap)
        assert got == min(oracle.distance(node, b), cap)
        capped = median_smooth_sensitivity(x, beta, oracle.bounds, cap=cap)
        expected = max(
            oracle.smooth(beta)[node], math.exp(-beta * cap) * (upper - lower)
        )
        assert capped == pytest.approx(expected, rel=1e-12)


# --- mutants: the brute force must catch these ---------------------------------


def _replace_one_A(y, n, k):
    """NRS replace-one A(x, k) = max_t x_(m+t) - x_(m+t-k-1)."""
    m = (n + 1) // 2
    t = np.arange(k + 2)
    return np.max(y[np.clip(m + t, 0, n + 1)] - y[np.clip(m + t - k - 1, 0, n + 1)])


def _distance_without_k0(y, n, b):
    """D computed from k = 1, as in Programming-DP's text."""
    k = np.arange(1, n + 1)
    hits = np.flatnonzero(median_A(y, n, k) > b)
    return int(k[hits[0]]) if hits.size else math.inf


def test_brute_force_catches_replace_one_A(oracle):
    mismatches = 0
    for node, x in oracle.data.items():
        y = padded_order_statistics(x, oracle.bounds)
        for k in range(4):
            mismatches += _replace_one_A(y, x.size, k) != oracle.A(node, k)
    assert mismatches > 0


def test_brute_force_catches_distance_without_k0(oracle):
    mismatches = 0
    for node, x in oracle.data.items():
        y = padded_order_statistics(x, oracle.bounds)
        for b in oracle.thresholds[:4]:
            mismatches += _distance_without_k0(y, x.size, b) != oracle.distance(node, b)
    assert mismatches > 0


# --- large n: windows vs exact, exact vs an O(n^2) pair-form reference ----------


def _pair_costs(n):
    i = np.arange(n + 2)[:, None]
    j = np.arange(n + 2)[None, :]
    cost = np.maximum(np.maximum(2 * j - n - 2, n - 2 * i - 1), 0)
    return np.where(i < j, cost, -1)


def reference_distance(x, b, bounds):
    """O(n^2) pair form: min max(2j-n-2, n-2i-1) over x_(j) - x_(i) > b.

    The comparison is exact: where the float difference is within a few
    ulps of ``b`` (it may have rounded onto or across ``b``), it is redone
    in rational arithmetic.
    """
    y = padded_order_statistics(x, bounds)
    cost = _pair_costs(x.size)
    diff = y[None, :] - y[:, None]
    ok = (cost >= 0) & (diff > b)
    near = (cost >= 0) & (np.abs(diff - b) <= 4 * np.spacing(b))
    for i, j in zip(*np.nonzero(near), strict=True):
        ok[i, j] = Fraction(float(y[j])) - Fraction(float(y[i])) > Fraction(b)
    return int(cost[ok].min()) if ok.any() else math.inf


def reference_smooth_sensitivity(x, beta, bounds):
    """O(n^2) pair form: max (x_(j) - x_(i)) e^{-β cost(i, j)}."""
    y = padded_order_statistics(x, bounds)
    cost = _pair_costs(x.size)
    gaps = np.where(cost >= 0, y[None, :] - y[:, None], 0.0)
    return float(np.max(gaps * np.exp(-beta * np.maximum(cost, 0))))


def random_dataset(rng, n):
    """Ties, clipped values, and a big gap next to the median."""
    kind = rng.integers(4)
    if kind == 0:
        x = rng.integers(0, 6, n).astype(float)
    elif kind == 1:
        x = rng.standard_t(2, n)
    elif kind == 2:
        x = np.round(rng.normal(size=n), 1)
    else:
        x = rng.normal(size=n)
        order = np.argsort(x)
        x[order[(n + 1) // 2 + rng.integers(-3, 4) :]] += 50.0
    return x


def _random_cases(count, n_max, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(0, n_max))
        yield rng, random_dataset(rng, n), (-4.0, 40.0)


def test_exact_distance_and_smooth_sensitivity_vs_pair_form():
    for rng, x, bounds in _random_cases(150, 400, 1):
        b = float(rng.choice([0.0, 0.01, 0.1, 0.5, 3.0, 60.0]))
        assert median_distance_to_instability(x, b, bounds) == reference_distance(
            x, b, bounds
        )
        beta = float(rng.choice(BETAS))
        assert median_smooth_sensitivity(x, beta, bounds) == pytest.approx(
            reference_smooth_sensitivity(x, beta, bounds), rel=1e-12
        )


def test_windowed_variants_equal_capped_exact():
    checked = 0
    for rng, x, bounds in _random_cases(300, 3000, 2):
        cap = int(rng.choice([1, 2, 5, 20, 80, 500]))
        b = float(rng.choice([0.0, 0.01, 0.1, 0.5, 3.0]))
        exact = median_distance_to_instability(x, b, bounds)
        assert median_distance_to_instability(x, b, bounds, cap=cap) == min(exact, cap)
        beta = float(rng.choice(BETAS))
        s_exact = median_smooth_sensitivity(x, beta, bounds)
        s_cap = median_smooth_sensitivity(x, beta, bounds, cap=cap)
        floor = math.exp(-beta * cap) * (bounds[1] - bounds[0])
        assert s_cap == pytest.approx(max(s_exact, floor), rel=1e-12)
        checked += 1
    assert checked == 300


# --- edge cases ------------------------------------------------------------------


def test_empty_dataset_uses_lower_bound_convention():
    bounds = (0.0, 10.0)
    assert median_local_sensitivity([], bounds) == 10.0
    assert median_distance_to_instability([], 1.0, bounds) == 0
    assert median_distance_to_instability([], 1.0, bounds, cap=5) == 0
    assert median_distance_to_instability([], 10.0, bounds) == math.inf
    assert median_distance_to_instability([], 10.0, bounds, cap=5) == 5
    assert median_smooth_sensitivity([], 1.0, bounds) == 10.0


def test_single_row_and_all_equal():
    bounds = (0.0, 10.0)
    assert median_local_sensitivity([3.0], bounds) == 3.0  # deleting it gives L
    assert median_distance_to_instability([3.0], 3.0, bounds) == 1
    x = np.full(101, 4.0)
    assert median_local_sensitivity(x, bounds) == 0.0
    # ties: only emptying one side (k = n - 1) moves the median off 4
    assert median_distance_to_instability(x, 0.0, bounds) == 100
    assert median_distance_to_instability(x, 5.0, bounds) == 101


def test_values_at_and_beyond_the_bounds_are_clipped():
    bounds = (0.0, 1.0)
    x = np.array([-5.0, 0.0, 0.0, 1.0, 7.0])
    clipped = np.clip(x, *bounds)
    for b in (0.0, 0.5, 0.99):
        assert median_distance_to_instability(
            x, b, bounds
        ) == median_distance_to_instability(clipped, b, bounds)
    assert median_local_sensitivity(x, bounds) == 0.0


def test_huge_bounds_do_not_overflow():
    bounds = (-1e308, 1e308)
    x = np.array([-1e308, 0.0, 1.0, 1e308])
    s = median_smooth_sensitivity(x, 1.0, bounds)
    assert np.isfinite(s)
    assert s == pytest.approx(1e308 * math.exp(-1.0), rel=1e-12)
    log_s = median_smooth_sensitivity(x, 1.0, bounds, log=True)
    assert log_s == pytest.approx(math.log(1e308) - 1.0, rel=1e-14)


def test_log_scale_survives_underflow():
    x = np.full(2001, 1.0)
    bounds = (0.0, 2.0)
    assert median_smooth_sensitivity(x, 1.0, bounds) == 0.0  # e^{-1000} underflows
    log_s = median_smooth_sensitivity(x, 1.0, bounds, log=True)
    # all values tied: A(x, k) = 0 until k = n - 1 = 2000, where it is 1 - 0
    assert log_s == pytest.approx(-2000.0)


def test_window_selection_matches_full_sort():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 50, 1000).astype(float)
    y = padded_order_statistics(x, (5.0, 40.0))
    ranks, values = select_order_statistics(
        x, (5.0, 40.0), [(0, 3), (500, 520), (990, 1001)]
    )
    np.testing.assert_array_equal(values, y[ranks])
    assert ranks[0] == 0 and ranks[-1] == 1001


# -- float error of S_K (the smooth-sensitivity releases rely on 2**-40) -------


def _exact_smooth_sensitivity(x, beta, bounds, cap):
    """``S_K`` for the float data, bounds and β, evaluated with 60 digits."""
    from decimal import Context, Decimal

    ctx = Context(prec=60)
    lower, upper = bounds
    y = np.concatenate([[lower], np.sort(np.clip(x, lower, upper)), [upper]])
    n = len(x)
    b = Decimal(beta)  # the exact binary value of the float
    terms = [
        ctx.multiply(ctx.subtract(Decimal(upper), Decimal(lower)), ctx.exp(-b * cap))
    ]
    for k in range(min(cap - 1, n) + 1):
        lo, hi = max(0, (n - k) // 2), min(n + 1, (n + k + 2) // 2)
        gap = ctx.subtract(Decimal(float(y[hi])), Decimal(float(y[lo])))
        terms.append(ctx.multiply(gap, ctx.exp(ctx.multiply(-b, k))))
    return max(terms)


@pytest.mark.parametrize(
    "bounds, scale",
    [((0.0, 10.0), 1.0), ((-8e307, 8e307), 1e306), ((1e6, 1e6 + 1e-3), 1e-4)],
)
def test_smooth_sensitivity_float_error_is_below_2_to_minus_40(bounds, scale):
    from decimal import Decimal

    rng = np.random.default_rng(0)
    worst = Decimal(0)
    for trial in range(40):
        n = int(rng.integers(1, 60))
        centre = bounds[0] / 2 + bounds[1] / 2
        with np.errstate(over="ignore"):
            x = centre + scale * rng.standard_t(1 + trial % 3, size=n)
        x = np.clip(x, *bounds)
        beta = float(rng.choice([1e-6, 0.01, 0.3]))
        cap = int(rng.choice([2, 7, 50, 10**9]))
        got = median_smooth_sensitivity(x, beta, bounds, cap=cap)
        exact = _exact_smooth_sensitivity(x, beta, bounds, cap)
        worst = max(worst, abs(Decimal(got) / exact - 1))
    assert worst < Decimal(2) ** -40
