"""Brute-force oracle on the add/remove-one-row graph (DESIGN.md §5).

All multisets over a small value domain ``V`` (``L = min V``, ``U = max V``)
with at most ``max_size`` elements are the nodes; two nodes are joined when
one is the other plus one element. Statistics are evaluated on each node from
its counts, and the sensitivity notions straight from their definitions:

* ``LS(x) = max_{x' ~ x} |f(x') - f(x)|`` (exact for ``|x| < max_size``);
* ``A(x, k) = max{LS(x') : d(x, x') <= k}`` by ``k`` max-filters over closed
  neighbourhoods, i.e. the literal ``k``-ball (exact for ``|x| + k < max_size``);
* ``dist(x, T) = min{k : ball_k(x) meets T}`` -- the BFS distance to a set.

Nothing here uses a closed form of skdp.sensitivity.
"""

import itertools
from functools import cache

import numpy as np


class MultisetGraph:
    """The add/remove graph of all multisets over ``values`` of size <= max_size."""

    def __init__(self, values, max_size):
        self.values = np.array(sorted(values), dtype=float)
        self.lower, self.upper = float(self.values[0]), float(self.values[-1])
        self.max_size = max_size
        self.counts = _all_count_vectors(len(self.values), max_size)
        self.sizes = self.counts.sum(axis=1)
        self.cumulative = np.cumsum(self.counts, axis=1)
        radix = (max_size + 1) ** np.arange(len(self.values), dtype=np.int64)
        codes = self.counts @ radix
        order = np.argsort(codes)
        self.counts, self.sizes = self.counts[order], self.sizes[order]
        self.cumulative = self.cumulative[order]
        codes = codes[order]
        self.neighbours = self._neighbour_table(codes, radix)

    def _neighbour_table(self, codes, radix):
        """Index of ``x + v`` and ``x - v`` for every value ``v``; -1 if absent."""
        columns = []
        for v, step in enumerate(radix):
            for sign, allowed in (
                (1, self.sizes < self.max_size),
                (-1, self.counts[:, v] > 0),
            ):
                target = np.searchsorted(codes, codes + sign * step)
                columns.append(np.where(allowed, target, -1))
        return np.stack(columns, axis=1)

    def __len__(self):
        return len(self.counts)

    def sorted_values(self, node):
        """The multiset of one node as a sorted array."""
        return np.repeat(self.values, self.counts[node])

    def order_statistic(self, rank):
        """Padded order statistic of rank ``rank`` (array, per node)."""
        rank = np.asarray(rank)
        position = (self.cumulative < rank[:, None]).sum(axis=1)
        value = self.values[np.minimum(position, len(self.values) - 1)]
        value = np.where(rank <= 0, self.lower, value)
        return np.where(rank >= self.sizes + 1, self.upper, value)

    def neighbour_values(self, node_values, fill):
        """Matrix ``node_values[neighbour]`` with ``fill`` for absent neighbours."""
        padded = np.append(np.asarray(node_values, dtype=float), fill)
        return padded[self.neighbours]

    def local_sensitivity(self, statistic):
        """``max |f(x') - f(x)|`` over neighbours; valid for ``|x| < max_size``."""
        neighbour = self.neighbour_values(statistic, np.nan)
        gaps = np.abs(neighbour - statistic[:, None])
        return np.nanmax(np.where(np.isnan(gaps), -np.inf, gaps), axis=1)

    def ball_max(self, node_values, radius):
        """``[max over the k-ball of node_values for k in 0..radius]``."""
        current = np.asarray(node_values, dtype=float)
        balls = [current]
        for _ in range(radius):
            neighbour = self.neighbour_values(current, -np.inf)
            current = np.maximum(current, neighbour.max(axis=1))
            balls.append(current)
        return np.array(balls)

    def ball_min(self, node_values, radius):
        return -self.ball_max(-np.asarray(node_values, dtype=float), radius)

    def distance_to(self, target, limit):
        """BFS distance to the node set ``target`` (bool mask); inf beyond limit."""
        distance = np.where(target, 0.0, np.inf)
        for _ in range(limit):
            neighbour = self.neighbour_values(distance, np.inf)
            updated = np.minimum(distance, neighbour.min(axis=1) + 1)
            if np.array_equal(updated, distance):
                break
            distance = updated
        return distance

    def smooth_upper_bound(self, local, beta, valid):
        """Fixed point of ``S = max(LS, e^{-β} max_nbr S)`` = ``max e^{-βd} LS``."""
        local = np.where(valid, local, 0.0)
        current = local.copy()
        factor = np.exp(-beta)
        while True:
            neighbour = self.neighbour_values(current, 0.0).max(axis=1)
            updated = np.maximum(local, factor * neighbour)
            if np.array_equal(updated, current):
                return updated
            current = updated

    # statistics ---------------------------------------------------------------
    def median(self):
        return self.order_statistic((self.sizes + 1) // 2)

    def iqr(self):
        r1 = (self.sizes + 3) // 4
        r3 = (3 * self.sizes + 3) // 4
        return self.order_statistic(r3) - self.order_statistic(r1)


def _all_count_vectors(n_values, max_size):
    """All count vectors of length ``n_values`` with total <= max_size."""
    vectors = np.zeros((1, 0), dtype=np.int64)
    for _ in range(n_values):
        used = vectors.sum(axis=1)
        repeats = max_size - used + 1
        expanded = np.repeat(vectors, repeats, axis=0)
        new = np.concatenate([np.arange(r) for r in repeats])
        vectors = np.column_stack([expanded, new])
    return vectors


@cache
def graph(values, max_size):
    """Cached graph per (domain, size): built once per test session."""
    return MultisetGraph(values, max_size)


# Domains of ALGORITHMS_ADDREMOVE.md §6 (the last one has 0.1-multiples whose
# differences and sums disagree in the last bit).
INTEGER_DOMAIN = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)
GAPPY_DOMAIN = (0.0, 1.0, 1.5, 4.0, 4.2, 10.0)
TENTHS_DOMAIN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.6, 0.7)
DOMAINS = (INTEGER_DOMAIN, GAPPY_DOMAIN, TENTHS_DOMAIN)


def sensitivity_thresholds(values):
    """Every gap between domain values, 0, (U-L)/2, U-L and more."""
    values = np.array(values)
    width = values.max() - values.min()
    gaps = {float(b - a) for a, b in itertools.combinations(sorted(values), 2)}
    return sorted(gaps | {0.0, width / 2, width, 1.5 * width})


def literal_ball(multiset, domain, radius):
    """Every multiset within ``radius`` add/remove steps, by literal enumeration."""
    frontier = {tuple(sorted(multiset))}
    ball = set(frontier)
    for _ in range(radius):
        step = set()
        for item in frontier:
            for v in domain:
                step.add(tuple(sorted((*item, v))))
            for position in range(len(item)):
                step.add(item[:position] + item[position + 1 :])
        frontier = step - ball
        ball |= step
    return ball


def median_of(multiset, lower):
    """Lower median of a sorted tuple, ``L`` for the empty one."""
    return multiset[(len(multiset) + 1) // 2 - 1] if multiset else lower
