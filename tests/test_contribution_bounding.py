"""Contribution bounding (skdp.utils._groups.kept_rows): at most k rows per
group, chosen by a rule on the group's own rows only, for any row order.

The reference below is written from the rule's statement (each group's rows
in the order (keyed hash, content bit patterns) give positions 0..m-1; the
k positions of smallest (position key, position) are kept), with Python's
sort on tuples; the vectorised code packs codes, truncated hashes and
indices into sorted words and must agree with it exactly. The position
keys are the module's primitive; whether the kept rows are a uniform draw
is checked by counting, against the binomial and chi-square laws.
"""

import datetime

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from skdp.utils import _group_labels, _groups
from skdp.utils._groups import group_codes, kept_rows, row_hashes
from skdp.utils._label_hashes import label_hashes


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


def _reference(groups, k, seed, X, y, hashes=row_hashes):
    """The kept (group, content) multiset, from the rule's statement."""
    h = hashes(seed, [X, y])
    kept = []
    for g in sorted(set(groups.tolist())):
        rows = np.flatnonzero(groups == g)
        canonical = sorted(
            (int(h[i]), *c) for i, c in zip(rows, _content(X, y, rows), strict=True)
        )
        m = len(rows)
        group_key = _groups._group_keys(seed, label_hashes(np.array([g])))
        keys = _groups._position_keys(group_key, np.arange(m)).tolist()
        picked = sorted(range(m), key=lambda r: (keys[r], r))[:k]
        kept += [(g, *canonical[r][1:]) for r in picked]
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


@pytest.mark.parametrize("max_rounds", [8, 0], ids=["minima", "sort"])
def test_ties_of_the_truncated_hashes_and_keys_are_broken_exactly(
    monkeypatch, max_rounds
):
    # few hash values: the packed word's truncated hashes tie inside most
    # groups and the full hashes tie too (content decides); position keys
    # that differ in their last bits only: the truncated keys tie across
    # the k-th place (the full key decides)
    groups, X, y = _table(n_values=5)
    real_hashes, real_keys = row_hashes, _groups._position_keys

    def coarse(seed, columns):
        return real_hashes(seed, columns) % np.uint64(3) << np.uint64(62)

    def coarse_keys(group_key, rank):
        top = real_keys(group_key, rank) % np.uint64(2) << np.uint64(63)
        return top | (rank.astype(np.uint64) * np.uint64(7) % np.uint64(11))

    monkeypatch.setattr(_groups, "row_hashes", coarse)
    monkeypatch.setattr(_groups, "_MAX_ROUNDS", max_rounds)
    for patch_keys in (False, True):
        if patch_keys:
            monkeypatch.setattr(_groups, "_position_keys", coarse_keys)
        for k in (1, 2, 3, 5):
            expected = _reference(groups, k, 3, X, y, hashes=coarse)
            assert _kept_multiset(groups, k, 3, X, y) == expected
            order = np.random.default_rng(k).permutation(groups.size)
            assert _kept_multiset(groups[order], k, 3, X[order], y[order]) == expected


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


# -- a uniform draw within every group ----------------------------------------


def _repeated_groups(counts, n_groups, label=lambda g: g):
    """``n_groups`` groups of identical composition: ``counts[c]`` rows of
    content ``c`` each (rows shuffled)."""
    contents = np.repeat(np.arange(len(counts)), counts).astype(float)
    X = np.tile(contents, n_groups)[:, None]
    groups = np.repeat([label(g) for g in range(n_groups)], len(contents))
    order = np.random.default_rng(0).permutation(groups.size)
    return groups[order], X[order]


@pytest.mark.parametrize("seed", [0, 1])
def test_one_kept_row_is_a_uniform_draw_from_its_group(seed):
    # 4 rows of content 0 and 1 of content 1 in every group: the old rule
    # (smallest content hash) kept the same content in every group (a
    # proportion of 0 or 1 instead of 0.8)
    n_groups = 2000
    groups, X = _repeated_groups([4, 1], n_groups)
    kept = kept_rows(groups, 1, seed, [X])
    assert kept.size == n_groups
    share = np.mean(X[kept, 0] == 0)
    assert abs(share - 0.8) < 4.5 * np.sqrt(0.8 * 0.2 / n_groups), share


def test_two_kept_rows_are_a_uniform_pair_of_the_groups_rows():
    # 3 + 2 + 1 rows of contents a, b, c: of the 15 pairs of rows, 3 are
    # aa, 6 ab, 3 ac, 1 bb, 2 bc
    n_groups = 3000
    groups, X = _repeated_groups([3, 2, 1], n_groups, label=lambda g: f"id{g}")
    kept = kept_rows(groups, 2, 4, [X])
    pairs = {}
    for g, value in zip(groups[kept], X[kept, 0], strict=True):
        pairs.setdefault(g, []).append(int(value))
    observed = pd.Series([tuple(sorted(p)) for p in pairs.values()]).value_counts()
    cells = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2)]
    assert set(observed.index) <= set(cells)
    counts = [observed.get(c, 0) for c in cells]
    expected = n_groups * np.array([3, 6, 3, 1, 2]) / 15
    statistic = np.sum((np.array(counts) - expected) ** 2 / expected)
    assert statistic < 18.467, counts  # chi-square, 4 dof: P(> 18.467) = 1e-3


def test_groups_of_the_same_rows_go_to_blocks_independently():
    # a group's block was a hash of its rows only: every group of the same
    # rows landed in the same block (one block held them all)
    from skdp.utils._groups import group_blocks

    groups, X = _repeated_groups([2, 1], 400)
    blocks = group_blocks(groups, 4, 7, [X])
    per_block = [np.unique(groups[rows]).size for rows in blocks]
    assert sum(per_block) == 400
    assert max(per_block) < 100 + 4.5 * np.sqrt(400 * 0.25 * 0.75), per_block


# -- the label's value, not its rank or its array --------------------------


def _kept_by_label(groups, X, k=1, seed=3):
    kept = kept_rows(groups, k, seed, [X])
    out = {}
    for row in kept:
        out.setdefault(groups[row], []).append(float(X[row, 0]))
    return {label: sorted(v) for label, v in out.items()}


@pytest.mark.parametrize(
    "labels, new_label",
    [
        (np.arange(30) * 1.0, 2.5),  # the array stops being integral
        (np.array([f"p{i}" for i in range(30)]), "a much longer person id"),
        (np.arange(30) * 10**6, 10**15),  # codes from a range, then sorted
        (np.arange(30), -1),  # every code shifts by one
    ],
)
def test_a_new_group_changes_no_other_groups_choice(labels, new_label):
    groups, X = _repeated_groups([3, 2, 1], 30, label=lambda g: labels[g])
    before = _kept_by_label(groups, X)
    new_groups = np.r_[np.array([new_label] * 4, dtype=groups.dtype), groups]
    if isinstance(new_label, str):
        new_groups = np.r_[np.array([new_label] * 4), groups]
    after = _kept_by_label(new_groups, np.vstack([np.zeros((4, 1)), X]))
    del after[new_label]
    assert after == before


def test_equal_labels_of_other_types_or_signs_choose_the_same_rows():
    groups, X = _repeated_groups([3, 2, 1], 40, label=lambda g: float(g))
    base = _kept_by_label(groups, X)
    rng = np.random.default_rng(0)
    signs = np.where(rng.random(groups.size) < 0.5, -1.0, 1.0)
    signed = np.where(groups == 0, signs * 0.0, groups)  # 0.0 and -0.0
    assert _kept_by_label(signed, X) == base
    mixed = np.array([int(g) if i % 2 else g for i, g in enumerate(groups)], object)
    assert _kept_by_label(mixed, X) == base
    assert _kept_by_label(groups.astype(int), X) == base


def test_labels_whose_hashes_collide_are_still_separate_groups(monkeypatch):
    # every label hashes to 0: groups are formed by equality, so each keeps
    # its own rows; only their draws coincide
    monkeypatch.setattr(
        _group_labels,
        "label_hashes",
        lambda labels: np.zeros(labels.size, np.uint64),
    )
    groups, X = _repeated_groups([3, 2, 1], 30, label=lambda g: f"id{g}")
    kept = kept_rows(groups, 2, 5, [X])
    assert pd.Series(groups[kept]).value_counts().tolist() == [2] * 30
    before = _kept_by_label(groups, X, k=2)
    after = _kept_by_label(
        np.r_[["new"] * 5, groups], np.vstack([np.arange(5.0)[:, None], X]), k=2
    )
    del after["new"]
    assert after == before


def test_equal_labels_hash_equally_in_every_representation():
    # pairs equal as Python values, in the arrays numpy or a list makes of
    # them: a numeric array, an object array, a string array of any width
    from fractions import Fraction

    pairs = [
        (np.array([0.0, -0.0, 3.0, -(2.0**63)]), np.array([0, 0, 3, -(2**63)])),
        (np.array([2.0**63, 1e300, 0.5]), [2**63, 10**300 * 1.0, Fraction(1, 2)]),
        (np.array([2**64 - 1, 2**63], np.uint64), [2**64 - 1, 2.0**63]),
        (np.array([True, False]), [1, 0.0]),
        (np.array(["ab", "a much longer label"]), ["ab", "a much longer label"]),
        (np.array([b"x"], "S9"), [b"x"]),
        (np.array([1 + 0j]), [1]),
    ]
    for array, values in pairs:
        as_objects = np.empty(len(values), object)
        as_objects[:] = values
        np.testing.assert_array_equal(label_hashes(array), label_hashes(as_objects))
    tuples = np.empty(2, object)
    tuples[:] = [(1, "a"), (1.0, "a")]
    a, b = label_hashes(tuples)
    assert a == b
    distinct = label_hashes(np.array([1.0, 1.5, 2.0**53 + 2, -1.0, 1e-300]))
    assert np.unique(distinct).size == 5


def test_date_labels_hash_the_same_in_any_unit():
    # numpy gives an array of dates the finest unit among its labels: a new
    # label at hour precision turned every day into hours (another integer)
    days = np.array(["2020-01-01", "2021-06-30"], "M8[D]")
    hours = np.array(["2020-01-01T00", "2021-06-30T00"], "M8[h]")
    as_objects = np.empty(2, object)
    as_objects[:] = [np.datetime64("2020-01-01"), datetime.date(2021, 6, 30)]
    expected = label_hashes(days)
    np.testing.assert_array_equal(label_hashes(hours), expected)
    np.testing.assert_array_equal(label_hashes(as_objects), expected)
