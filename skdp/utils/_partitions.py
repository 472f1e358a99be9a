"""Contribution bounding across partitions: at most ``p`` partitions of at
most ``c`` rows each per group.

A histogram-like release counts rows per partition (a bin of a feature, a
category of a column). With ``groups`` and ``max_rows_per_group = k`` a
group moves the counts by ``k`` in L1 and, all its rows in one partition,
by ``k`` in L2 too. Two more public bounds shrink that:

* ``p = max_partitions_per_group``: a group adds rows to at most ``p``
  partitions (L0 bound). It keeps its ``p`` partitions of smallest keyed
  hash of (the group label's value, the partition's value), ties broken by
  the value: a function of the seed, the label and the group's own rows,
  and a different draw for each group (a hash of the value alone made every
  group keep the same partitions, a biased shape);
* ``c = max_rows_per_partition``: a group adds at most ``c`` rows to one
  partition (L∞ bound), the ``c`` rows of that (group, partition) kept by
  :func:`~skdp.utils._groups.kept_rows` (the same keyed, order-free,
  uniform rule, keyed by that hash of the pair, never by the pair's code).

Both rules run after the ``k``-row bound, so a group's kept rows still
depend on its own rows only, and adding or removing a group changes no
other group's rows. :func:`partition_contribution` gives the resulting
sensitivities of one group's count vector.
"""

import math
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from skdp.utils._group_labels import GroupLabels
from skdp.utils._groups import _bit_columns, _ranks_in_groups, kept_rows, row_hashes
from skdp.utils._label_hashes import _mix

__all__ = ["PartitionBound", "partition_contribution", "partition_rows"]


def sqrt_up(n):
    """The smallest double ``>= sqrt(n)`` for an integer ``n >= 0``."""
    root = math.sqrt(n)
    while Fraction(root) ** 2 < n:
        root = math.nextafter(root, math.inf)
    return root


class PartitionBound(NamedTuple):
    """What one group may add to a count vector over partitions.

    ``partitions`` (L0), ``per_partition`` (L∞), ``total`` (L1) and
    ``squares`` (the largest sum of squared moves, an exact integer).
    """

    partitions: int
    per_partition: int
    total: int
    squares: int

    def l1(self, n_releases=1):
        """L1 sensitivity of ``n_releases`` such count vectors."""
        return float(self.total * n_releases)

    def l2(self, n_releases=1):
        """L2 sensitivity of ``n_releases`` such count vectors (rounded up)."""
        return sqrt_up(self.squares * n_releases)


def partition_contribution(max_rows, max_partitions=None, max_per_partition=None):
    """Largest moves of one group's counts over disjoint partitions.

    A group of at most ``k`` rows, each in one partition, touching at most
    ``p`` partitions with at most ``c`` rows each (``None``: no bound
    beyond ``k``), adds ``m_i <= c`` to at most ``p`` counts with
    ``Σ m_i <= k``. Then ``Σ m_i <= L = min(k, p c)`` (L1), and ``Σ m_i²``,
    a convex function maximised at a vertex of that polytope, is largest
    with ``q = floor(L / c)`` partitions at ``c`` and one at the remainder
    ``r = L - q c``: ``q c² + r²`` (``k²`` for ``p = c = k``; ``p c²``
    when ``p c <= k``).

    Examples
    --------
    >>> from skdp.utils._partitions import partition_contribution
    >>> partition_contribution(10)
    PartitionBound(partitions=10, per_partition=10, total=10, squares=100)
    >>> partition_contribution(10, 10, 1)
    PartitionBound(partitions=10, per_partition=1, total=10, squares=10)
    >>> partition_contribution(10, 3, 2)
    PartitionBound(partitions=3, per_partition=2, total=6, squares=12)
    """
    k = int(max_rows)
    p = k if max_partitions is None else min(int(max_partitions), k)
    c = k if max_per_partition is None else min(int(max_per_partition), k)
    total = min(k, p * c)
    q, r = divmod(total, c)
    return PartitionBound(p, c, total, q * c * c + r * r)


def _canonical(content):
    """Partition values as comparable bit patterns: ``-0.0`` is ``0.0`` and
    every NaN one NaN (equal values are one partition, as when counted)."""
    values = np.asarray(content)
    if values.dtype.kind == "f":
        values = values.astype(np.float64) + 0.0
        values[np.isnan(values)] = np.nan
    return _bit_columns(values)


def partition_rows(groups, partitions, bound, seeds, columns):
    """Rows kept when each group keeps ``bound.partitions`` partitions of at
    most ``bound.per_partition`` rows each.

    Parameters
    ----------
    groups : array-like of shape (n_samples,) or GroupLabels
        Group labels of rows already bounded to ``k`` per group, or labels
        checked before a charge
        (:class:`~skdp.utils._group_labels.GroupLabels`: no label is then
        read).
    partitions : array-like of shape (n_samples,) or (n_samples, m)
        Numbers that stand for each row's partition value (a bin index, a
        category's content); equal values are one partition.
    bound : PartitionBound
        From :func:`partition_contribution`.
    seeds : tuple of two int
        Keys of the partitions' hash and of the rows' choice in a partition
        (public or random, never from the data).
    columns : sequence of array-like
        The rows' content (numbers), for the choice of ``c`` rows.

    Returns
    -------
    kept : ndarray of intp
        Increasing row indices.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.utils._partitions import partition_contribution, partition_rows
    >>> bins = np.array([0, 1, 2, 0, 0, 0])
    >>> bound = partition_contribution(6, 2, 2)
    >>> kept = partition_rows(np.zeros(6), bins, bound, (0, 1), [bins])
    >>> len(set(bins[kept].tolist())), int(np.bincount(bins[kept]).max()) <= 2
    (2, True)
    """
    labels = GroupLabels.of(groups, hashed=False)
    codes = labels.codes
    bits = _canonical(partitions)
    pairs = np.column_stack([codes.astype(np.uint64), bits])
    _, first, part = np.unique(pairs, axis=0, return_index=True, return_inverse=True)
    part = part.ravel()
    # each row's keyed hash of (its label's value, its partition's value)
    pair_keys = _mix(row_hashes(seeds[0], [bits.view(np.int64)]) ^ labels.label_keys())
    # (group, value) pairs ordered by group, then that hash, then the value
    pair_group = codes[first]
    pair_bits = bits[first]
    order = np.lexsort([*reversed(list(pair_bits.T)), pair_keys[first], pair_group])
    rank = np.empty(first.size, dtype=np.intp)
    rank[order] = _ranks_in_groups(pair_group[order])
    rows = np.flatnonzero(rank[part] < bound.partitions)
    # the (group, value) pairs as groups, each keyed by that hash
    pairs = GroupLabels(part[rows], part[rows], first.size, pair_keys[first], False)
    content = [bits.view(np.int64), *columns]
    inner = kept_rows(
        pairs,
        bound.per_partition,
        seeds[1],
        [None if c is None else np.asarray(c)[rows] for c in content],
    )
    return rows[inner]


def stated_partition_bound(estimator, unit):
    """The estimator's :class:`PartitionBound`, or None when it states
    neither ``max_partitions_per_group`` nor ``max_rows_per_partition``
    (then the ``k``-row bound alone applies). Refused before the charge
    when a bound is stated but ``fit`` got no ``groups``."""
    p = estimator.max_partitions_per_group
    c = estimator.max_rows_per_partition
    if p is None and c is None:
        return None
    if unit.groups is None:
        raise ValueError(
            f"{type(estimator).__name__}: max_partitions_per_group={p} and "
            f"max_rows_per_partition={c} bound what one group adds, but fit "
            "got no groups (the unit is one row, which adds 1 to one "
            "partition). Pass fit(X, groups=...) with max_rows_per_group, or "
            "leave both None. Nothing was charged."
        )
    return partition_contribution(unit.max_rows, p, c)


def seeds_of(source):
    """Two keys for :func:`partition_rows`, drawn from the random source."""
    return int(source.uint64()), int(source.uint64())
