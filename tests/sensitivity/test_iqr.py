"""IQR instability distance vs brute force on the add/remove graph."""

import math

import numpy as np
import pytest

from skdp.sensitivity import (
    _iqr,
    interquartile_range,
    iqr_instability_distance,
    log_grid_bin,
    log_grid_edges,
    quartile_ranks,
)

from . import bruteforce as bf

N_MAX = 8
GRAPH_SIZE = 2 * N_MAX + 1  # A_j <= n - 1, so shortest paths stay inside
LOG_GRIDS = [{"width": w, "offset": o} for w in (1.0, 0.5, 0.25) for o in (0.0, 0.5)]
S_RANGE = np.arange(-60, 61)


class Grid:
    """A grid given by its sorted edge values; bin s is [edges[s], edges[s+1])."""

    def __init__(self, edges, name):
        self.edges = np.asarray(edges, dtype=float)
        self.name = name

    def bin_of(self, iqr):
        """Oracle bin index by comparison with the edge values (-1: IQR = 0)."""
        index = np.searchsorted(self.edges, iqr, side="right") - 1
        return np.where(iqr > 0, index, -1)


def log_grid(width, offset):
    edges = log_grid_edges(S_RANGE, width=width, offset=offset)
    return Grid(edges, f"w={width},o={offset}")


def float_edge_grid(unit):
    """Edges unit * 2^s: 0.1 * 2^s and 0.3 * 2^s disagree with sums of tenths."""
    return Grid(unit * np.ldexp(1.0, S_RANGE), f"{unit}*2^s")


def grids_for(domain):
    grids = [log_grid(**params) for params in LOG_GRIDS]
    if domain == bf.TENTHS_DOMAIN:
        grids += [float_edge_grid(0.1), float_edge_grid(0.3)]
    return grids


class IQROracle:
    def __init__(self, domain):
        self.g = g = bf.graph(domain, GRAPH_SIZE)
        self.bounds = (g.lower, g.upper)
        self.iqr = g.iqr()
        self.ball_min = g.ball_min(self.iqr, GRAPH_SIZE - 1)
        self.ball_max = g.ball_max(self.iqr, GRAPH_SIZE - 1)
        self.nodes = np.flatnonzero(g.sizes <= N_MAX)
        self.data = {node: g.sorted_values(node) for node in self.nodes}
        self.grids = grids_for(domain)
        self._cache = {}

    def distances(self, grid):
        """Brute-force A_j for every checked node: the first k whose ball leaves.

        Returns an array over all graph nodes (NaN where not checked).
        """
        if grid.name not in self._cache:
            nodes = self.nodes
            bins = grid.bin_of(self.iqr[nodes])
            s = np.maximum(bins, 0)
            lo, hi = grid.edges[s], grid.edges[s + 1]
            out = (self.ball_min[:, nodes] < lo) | (self.ball_max[:, nodes] >= hi)
            k = np.arange(GRAPH_SIZE)[:, None]
            out &= k < GRAPH_SIZE - self.g.sizes[nodes]  # exact part of the ball
            first = np.where(out.any(axis=0), np.argmax(out, axis=0), np.inf)
            result = np.full(len(self.g), np.nan)
            result[nodes] = np.where(bins < 0, 0, first)
            self._cache[grid.name] = result
        return self._cache[grid.name]

    def checked_nodes(self, grid_index):
        """All nodes with n <= 6; nodes with n = 7, 8 at every other grid."""
        n = self.g.sizes[self.nodes]
        return self.nodes[(n <= 6) | (self.nodes % 2 == grid_index % 2)]

    def implementation(self, grid_index, cap=None):
        """skdp's A_j on ``checked_nodes(grid_index)`` (NaN elsewhere)."""
        key = (grid_index, cap)
        if key not in self._cache:
            grid = self.grids[grid_index]
            bins = grid.bin_of(self.iqr)
            values = np.full(len(self.g), np.nan)
            for node in self.checked_nodes(grid_index):
                s = max(bins[node], 0)  # IQR = 0: any bin, the answer is 0
                lo, hi = grid.edges[s], grid.edges[s + 1]
                x = self.data[node]
                values[node] = iqr_instability_distance(x, self.bounds, lo, hi, cap=cap)
            self._cache[key] = values
        return self._cache[key]


@pytest.fixture(scope="module", params=bf.DOMAINS, ids=["int", "gappy", "tenths"])
def oracle(request):
    return IQROracle(request.param)


def test_interquartile_range_matches_graph(oracle):
    for node, x in oracle.data.items():
        assert interquartile_range(x, oracle.bounds) == oracle.iqr[node]


@pytest.mark.parametrize("params", LOG_GRIDS, ids=lambda p: f"{p}")
def test_log_grid_bin_agrees_with_edge_comparisons(oracle, params):
    grid = log_grid(**params)
    values = np.unique(oracle.iqr[oracle.iqr > 0])
    values = np.concatenate([values, log_grid_edges(np.arange(-8, 8), **params)])
    for value in values:
        s, lo, hi = log_grid_bin(value, **params)
        assert lo <= value < hi
        assert (lo, hi) == (grid.edges[s - S_RANGE[0]], grid.edges[s + 1 - S_RANGE[0]])


def test_instability_matches_bfs(oracle):
    cases = 0
    for index, grid in enumerate(oracle.grids):
        truth = oracle.distances(grid)
        got = oracle.implementation(index)
        nodes = oracle.checked_nodes(index)
        wrong = nodes[got[nodes] != truth[nodes]]
        assert wrong.size == 0, (grid.name, oracle.data[wrong[0]])
        cases += nodes.size
    assert cases >= 6 * 1500


def test_ball_distance_equals_graph_bfs(oracle):
    """The ball-based oracle equals a multi-source BFS for one bin."""
    grid = oracle.grids[0]
    bins = grid.bin_of(oracle.iqr)
    checked = oracle.nodes[bins[oracle.nodes] >= 0]
    s = np.bincount(bins[checked]).argmax()
    lo, hi = grid.edges[s], grid.edges[s + 1]
    outside = (oracle.iqr < lo) | (oracle.iqr >= hi)
    bfs = oracle.g.distance_to(outside, GRAPH_SIZE)
    truth = oracle.distances(grid)
    in_bin = checked[bins[checked] == s]
    assert in_bin.size > 10
    np.testing.assert_array_equal(bfs[in_bin], truth[in_bin])


def _literal_distance(multiset, domain, lo, hi, k_max=3):
    def iqr(item):
        n = len(item)
        r1, r3 = quartile_ranks(n)
        padded = (min(domain), *item, max(domain))
        return padded[r3] - padded[r1]

    for k in range(k_max + 1):
        ball = bf.literal_ball(multiset, domain, k)
        if any(not (0 < iqr(item) and lo <= iqr(item) < hi) for item in ball):
            return k
    return math.inf


def test_instability_matches_literal_enumeration(oracle):
    domain = tuple(oracle.g.values)
    rng = np.random.default_rng(0)
    grid = oracle.grids[-1]
    bins = grid.bin_of(oracle.iqr)
    small = oracle.nodes[
        (oracle.g.sizes[oracle.nodes] <= 5) & (bins[oracle.nodes] >= 0)
    ]
    for node in rng.choice(small, 30):
        x = oracle.data[node]
        lo, hi = grid.edges[bins[node]], grid.edges[bins[node] + 1]
        got = iqr_instability_distance(x, oracle.bounds, lo, hi, cap=4)
        assert got == min(_literal_distance(tuple(x), domain, lo, hi), 4)


@pytest.mark.parametrize("which", [0, 3, -1])
def test_instability_has_global_sensitivity_one(oracle, which):
    grid = oracle.grids[which]
    values = oracle.implementation(which % len(oracle.grids))
    neighbour = oracle.g.neighbour_values(values, np.nan)[oracle.nodes]
    here = values[oracle.nodes][:, None]
    both = ~np.isnan(neighbour) & ~np.isnan(here)
    assert both.sum() > 10_000
    assert np.all(np.abs(neighbour - here)[both] <= 1)
    # A_j >= 2 => every neighbour has its IQR in the same bin
    bins = grid.bin_of(oracle.iqr)
    neighbour_bins = oracle.g.neighbour_values(bins, np.nan)[oracle.nodes]
    stable = (here >= 2) & both
    same = neighbour_bins == bins[oracle.nodes][:, None]
    assert np.all(same[stable])


CAPS = (1, 2, 3, 5, 8)


def test_capped_on_small_domains(oracle):
    """Each node at one (cap, grid) pair, rotating through all of them."""
    for node, x in oracle.data.items():
        cap = CAPS[node % len(CAPS)]
        grid = oracle.grids[node % len(oracle.grids)]
        s = max(int(grid.bin_of(oracle.iqr[node])), 0)
        got = iqr_instability_distance(
            x, oracle.bounds, *grid.edges[[s, s + 1]], cap=cap
        )
        assert got == min(oracle.distances(grid)[node], cap)


# --- mutants ---------------------------------------------------------------------


def _count_mismatches(oracle, grids):
    """Mismatches of skdp vs the brute force; stops after the first bad grid."""
    for grid in grids:
        truth = oracle.distances(grid)
        bins = grid.bin_of(oracle.iqr)
        mismatches = 0
        for node, x in oracle.data.items():
            s = max(bins[node], 0)
            got = iqr_instability_distance(x, oracle.bounds, *grid.edges[[s, s + 1]])
            mismatches += got != truth[node]
        if mismatches:
            return mismatches
    return 0


@pytest.fixture(scope="module")
def tenths_oracle():
    return IQROracle(bf.TENTHS_DOMAIN)  # a fresh one: no cached skdp answers


def test_brute_force_catches_cost_up_off_by_one(tenths_oracle, monkeypatch):
    def cost_up_off_by_one(i, j, n):
        return np.maximum.reduce(
            [
                np.zeros_like(i),
                2 * (j - i) - n,  # mutant: should be - n - 1
                -((4 * i - n) // 3),
                -((3 * n + 3 - 4 * j) // 3),
            ]
        )

    monkeypatch.setattr(_iqr, "_cost_up", cost_up_off_by_one)
    # Caught on the 0.1 * 2^s grid (52 of 6435), also on int/w=1 (35) and
    # tenths/w=1/o=1/2 (38); missed by w = 1/2 and 1/4 on these domains.
    float_edge_grids = [grid for grid in tenths_oracle.grids if "2^s" in grid.name]
    assert _count_mismatches(tenths_oracle, float_edge_grids) > 0


def test_brute_force_catches_searchsorted_without_fixup(tenths_oracle, monkeypatch):
    def plain_searchsorted(values, start, threshold):
        first = np.searchsorted(values, values[start] + threshold, side="left")
        return np.maximum(first, start + 1)

    monkeypatch.setattr(_iqr, "_first_difference_at_least", plain_searchsorted)
    # 484 of 6435 wrong on the 0.1 * 2^s grid (255 to 454 on the other tenths grids)
    float_edge_grids = [grid for grid in tenths_oracle.grids if "2^s" in grid.name]
    assert _count_mismatches(tenths_oracle, float_edge_grids) > 0


# --- large n -------------------------------------------------------------------


def _cost_up(i, j, n):
    return np.maximum.reduce(
        [0 * i, 2 * (j - i) - n - 1, -((4 * i - n) // 3), -((3 * n + 3 - 4 * j) // 3)]
    )


def _cost_down(i, j, n):
    return np.maximum.reduce(
        [0 * i, n - 2 * (j - i) - 1, -((n + 3 - 4 * i) // 3), -((4 * j - 3 * n) // 3)]
    )


def reference_distance(x, bounds, lo, hi):
    """All pairs (O(n^2)): min cost_up / cost_down over qualifying pairs."""
    y = np.concatenate(([bounds[0]], np.sort(np.clip(x, *bounds)), [bounds[1]]))
    n = x.size
    r1, r3 = quartile_ranks(n)
    iqr = y[r3] - y[r1]
    if not (iqr > 0 and lo <= iqr < hi):
        return 0
    i = np.arange(n + 2)[:, None]
    j = np.arange(n + 2)[None, :]
    width = y[None, :] - y[:, None]
    up = (i < j) & (width >= hi)
    down = (i >= 1) & (i <= j) & (j <= n) & (width < lo)
    best = math.inf
    if up.any():
        best = _cost_up(i + 0 * j, j + 0 * i, n)[up].min()
    if down.any():
        best = min(best, _cost_down(i + 0 * j, j + 0 * i, n)[down].min())
    return int(best)


def random_iqr_dataset(rng, n):
    """Ties, tenths, heavy tails, and big gaps next to r1 or r3."""
    kind = rng.integers(4)
    if kind == 0:
        return rng.integers(0, 9, n).astype(float)
    if kind == 1:
        return np.round(rng.uniform(0, 3, n), 1)
    if kind == 2:
        return rng.standard_t(2, n)
    x = np.sort(rng.normal(size=n))
    r1, r3 = quartile_ranks(n)
    for r in (r1, r3):
        cut = min(n, max(0, r + int(rng.integers(-4, 5))))
        x[cut:] += float(rng.choice([2.0, 8.0, 30.0]))
    return rng.permutation(x)


def _random_bins(count, n_max, seed):
    rng = np.random.default_rng(seed)
    bounds = (-5.0, 60.0)
    produced = 0
    while produced < count:
        x = random_iqr_dataset(rng, int(rng.integers(0, n_max)))
        iqr = interquartile_range(x, bounds)
        params = LOG_GRIDS[rng.integers(len(LOG_GRIDS))]
        if iqr > 0:
            _, lo, hi = log_grid_bin(iqr, **params)
        else:
            lo, hi = 1.0, 2.0
        produced += 1
        yield rng, x, bounds, lo, hi


def test_exact_distance_vs_all_pairs():
    for _, x, bounds, lo, hi in _random_bins(200, 500, 4):
        got = iqr_instability_distance(x, bounds, lo, hi)
        assert got == reference_distance(x, bounds, lo, hi)


def test_windowed_equals_capped_exact():
    windowed = 0
    largest = 0
    for rng, x, bounds, lo, hi in _random_bins(400, 3000, 5):
        exact = iqr_instability_distance(x, bounds, lo, hi)
        cap = int(rng.choice([1, 2, 4, 8, 20, 60]))
        assert iqr_instability_distance(x, bounds, lo, hi, cap=cap) == min(exact, cap)
        windowed += x.size > 2 * (2 * (3 * cap // 4 + 3) + 1)
        largest = max(largest, exact)
    assert windowed > 100 and largest >= 20


# --- edge cases ----------------------------------------------------------------


def test_tiny_and_constant_datasets_have_zero_iqr_distance():
    bounds = (0.0, 10.0)
    for x in ([], [3.0], np.full(50, 2.0)):
        assert interquartile_range(x, bounds) == 0.0
        assert iqr_instability_distance(x, bounds, 1.0, 2.0) == 0
        assert iqr_instability_distance(x, bounds, 1.0, 2.0, cap=3) == 0


def test_iqr_outside_the_bin_is_distance_zero():
    x = np.arange(8.0)
    assert interquartile_range(x, (0.0, 10.0)) == 4.0
    assert iqr_instability_distance(x, (0.0, 10.0), 1.0, 2.0) == 0
    assert iqr_instability_distance(x, (0.0, 10.0), 4.0, 8.0) >= 1


def test_values_at_the_bounds_and_beyond():
    x = np.array([-3.0, 0.0, 0.0, 1.0, 2.0, 2.0, 9.0, 9.0])
    bounds = (0.0, 2.0)
    _, lo, hi = log_grid_bin(interquartile_range(x, bounds))
    clipped = np.clip(x, *bounds)
    assert iqr_instability_distance(x, bounds, lo, hi) == iqr_instability_distance(
        clipped, bounds, lo, hi
    )
    assert iqr_instability_distance(x, bounds, lo, hi) == reference_distance(
        x, bounds, lo, hi
    )


def test_log_grid_bin_rejects_zero():
    with pytest.raises(ValueError, match="positive finite"):
        log_grid_bin(0.0)
