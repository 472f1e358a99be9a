"""Contribution bounding (skdp.utils._groups.kept_rows): at most k rows per
group, chosen by a rule on the group's own rows only, for any row order.

The reference below is written from the rule's statement (the k rows of
smallest (keyed hash, content bit patterns) in each group), with Python's
sort on tuples; the vectorised code packs codes, truncated hashes and
indices into one sorted word and must agree with it exactly.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from skdp.utils import _groups
from skdp.utils._groups import group_codes, kept_rows, row_hashes


def _table(n_groups=40, seed=0, max_size=7, n_values=3):
    """Groups of 1..max_size rows; few distinct values, so rows repeat."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size + 1, n_groups)
    groups = np.repeat(np.arange(n_groups) * 7 + 3, sizes)
    X = rng.integers(0, n_values, size=(groups.size, 2)).astype(float)
    y = rng.integers(0, 2, groups.size)
    return groups, X, y


def _content(X, y, rows):
    return [
        (*X[i].view(np.uint64).tolist(), int(np.int64(y[i]).view(np.uint64)))
        for i in rows
    ]


def _reference(groups, k, seed, X, y):
    """The kept (group, content) multiset, from the rule's statement."""
    h = row_hashes(seed, [X, y])
    kept = []
    for g in sorted(set(groups.tolist())):
        rows = np.flatnonzero(groups == g)
        keys = sorted(
            (int(h[i]), *c) for i, c in zip(rows, _content(X, y, rows), strict=True)
        )
        kept += [(g, *key[1:]) for key in keys[:k]]
    return sorted(kept)


def _kept_multiset(groups, k, seed, X, y):
    rows = kept_rows(groups, k, seed, [X, y])
    assert np.all(np.diff(rows) > 0), "increasing indices"
    return sorted(
        (int(groups[i]), *c) for i, c in zip(rows, _content(X, y, rows), strict=True)
    )


@pytest.mark.parametrize("k", [1, 2, 3, 10])
def test_kept_rows_follow_the_rule_and_keep_at_most_k_per_group(k):
    groups, X, y = _table()
    kept = kept_rows(groups, k, 99, [X, y])
    per_group = pd.Series(groups[kept]).value_counts()
    sizes = pd.Series(groups).value_counts()
    assert (per_group <= k).all()
    np.testing.assert_array_equal(
        per_group.sort_index(), np.minimum(sizes, k).sort_index()
    )
    assert _kept_multiset(groups, k, 99, X, y) == _reference(groups, k, 99, X, y)


@pytest.mark.parametrize("seed", range(4))
def test_the_same_rows_for_any_row_order(seed):
    groups, X, y = _table(seed=seed)
    order = np.random.default_rng(seed + 10).permutation(groups.size)
    before = _kept_multiset(groups, 2, 5, X, y)
    after = _kept_multiset(groups[order], 2, 5, X[order], y[order])
    assert before == after


def test_a_groups_kept_rows_do_not_depend_on_other_groups():
    groups, X, y = _table()
    base = _kept_multiset(groups, 2, 7, X, y)
    # add a group of 30 rows, then remove an existing group
    rng = np.random.default_rng(1)
    groups2 = np.append(groups, np.full(30, -1))
    X2 = np.vstack([X, rng.integers(0, 3, size=(30, 2)).astype(float)])
    y2 = np.append(y, rng.integers(0, 2, 30))
    added = _kept_multiset(groups2, 2, 7, X2, y2)
    assert [r for r in added if r[0] != -1] == base
    dropped = groups != groups[0]
    removed = _kept_multiset(groups[dropped], 2, 7, X[dropped], y[dropped])
    assert removed == [r for r in base if r[0] != groups[0]]


def test_ties_of_the_truncated_hash_are_broken_by_the_full_hash_and_content(
    monkeypatch,
):
    # few hash values: the packed word's truncated hashes tie across the
    # k-th place in most groups, and the full hashes tie too
    groups, X, y = _table(n_values=5)
    real = row_hashes

    def coarse(seed, columns):
        return real(seed, columns) % np.uint64(3) << np.uint64(62)

    monkeypatch.setattr(_groups, "row_hashes", coarse)
    for k in (1, 2, 3):
        expected = _reference_with(coarse, groups, k, X, y)
        assert _kept_multiset(groups, k, 3, X, y) == expected
        order = np.random.default_rng(k).permutation(groups.size)
        assert _kept_multiset(groups[order], k, 3, X[order], y[order]) == expected


def _reference_with(hashes, groups, k, X, y):
    h = hashes(3, [X, y])
    kept = []
    for g in sorted(set(groups.tolist())):
        rows = np.flatnonzero(groups == g)
        keys = sorted(
            (int(h[i]), *c) for i, c in zip(rows, _content(X, y, rows), strict=True)
        )
        kept += [(g, *key[1:]) for key in keys[:k]]
    return sorted(kept)


def test_the_lexicographic_fallback_keeps_the_same_rows(monkeypatch):
    groups, X, y = _table()
    expected = _kept_multiset(groups, 2, 11, X, y)
    monkeypatch.setattr(_groups, "_MIN_HASH_BITS", 64)  # no room: fallback
    assert _kept_multiset(groups, 2, 11, X, y) == expected


def test_negative_zero_and_zero_are_different_contents_in_any_order():
    # bit patterns: -0.0 and 0.0 are two contents; the choice between them
    # is still the same for every order
    X = np.array([[0.0], [-0.0], [0.0], [-0.0], [1.0]])
    groups = np.zeros(5, dtype=int)
    y = np.zeros(5, dtype=int)
    h = row_hashes(0, [X])
    assert h[0] != h[1] and h[0] == h[2]
    first = _kept_multiset(groups, 2, 0, X, y)
    for seed in range(5):
        order = np.random.default_rng(seed).permutation(5)
        assert _kept_multiset(groups, 2, 0, X[order], y[order]) == first


def test_the_key_changes_the_choice_and_is_not_read_from_the_data():
    groups, X, y = _table()
    choices = {tuple(map(tuple, _kept_multiset(groups, 1, s, X, y))) for s in range(4)}
    assert len(choices) > 1


def test_sparse_rows_are_kept_the_same_for_any_order():
    groups, X, y = _table()
    matrix = sparse.csr_matrix(X)
    order = np.random.default_rng(0).permutation(groups.size)
    a = kept_rows(groups, 2, 1, [matrix, y])
    b = kept_rows(groups[order], 2, 1, [matrix[order], y[order]])
    as_rows = lambda rows, M, g: sorted(  # noqa: E731
        (int(g[i]), *M[i].toarray().ravel().tolist()) for i in rows
    )
    assert as_rows(a, matrix, groups) == as_rows(b, matrix[order], groups[order])


@pytest.mark.parametrize(
    "labels, n_groups",
    [
        (["b", "a", "b", "c"], 3),
        ([1.0, 1, True, 2.5], 2),  # 1 == 1.0 == True: one group
        ([-0.0, 0.0, 3.0, 3.0], 2),
        ([10**18, 5, 10**18, 7], 3),  # far apart: sorted, not offset
        (np.array([2**64 - 1, 2**64 - 3, 2**64 - 1], dtype=np.uint64), 2),
        (np.array([-(2**63), 2**63 - 1, -(2**63)]), 2),
        ([True, False, True], 2),
        ([("a", 1), "a", ("a", 1), 2], 3),  # mixed objects: by equality
        (pd.Series(["x", "y", "x", "x"]), 2),
        (np.array(["2020-01-01", "2020-01-02", "2020-01-01"], "datetime64[D]"), 2),
    ],
)
def test_group_labels_of_any_kind(labels, n_groups):
    codes, _ = group_codes(labels)
    assert len(set(codes.tolist())) == n_groups
    labels = list(labels)
    for i in range(len(labels)):
        for j in range(len(labels)):
            assert (codes[i] == codes[j]) == bool(labels[i] == labels[j])


@pytest.mark.parametrize(
    "labels", [[1.0, np.nan], ["a", None], np.array(["NaT", "2020"], "datetime64[D]")]
)
def test_a_missing_group_label_is_refused(labels):
    with pytest.raises(ValueError, match="missing label"):
        group_codes(labels)
