"""Adversarial review of the uniform k-subset rule of ``kept_rows``: labels
whose dtype moves when a group is added, order invariance on the tie and
fallback paths, and uniformity of the draw (chi-square)."""

import itertools

import numpy as np
import pytest
from scipy import stats

from skdp.utils import _groups
from skdp.utils._groups import as_group_labels, group_codes, kept_rows
from skdp.utils._label_hashes import label_hashes


def _kept_content(groups, X, k, seed):
    """The kept rows as a sorted list of (label repr, content)."""
    kept = kept_rows(groups, k, seed, [X])
    labels = as_group_labels(groups)
    return sorted((repr(labels[i]), X[i].tolist()) for i in kept)


@pytest.mark.parametrize(
    "old, new",
    [
        ([2**53 + 1] * 3 + [2**53] * 3, [0.5] * 3),  # int64 -> float64
        ([2**63 + 1] * 3 + [2**63] * 3, [-1] * 3),  # uint64 -> float64
    ],
)
def test_adding_a_group_keeps_big_integer_labels_apart(old, new):
    # numpy turns a list of big integers plus one float into float64, where
    # 2**53 + 1 and 2**53 are one value: adding group `new` merged two others
    assert group_codes(old)[1] == 2
    assert group_codes(old + new)[1] == 3
    X = np.arange(len(old) + len(new), dtype=float)[:, None]
    for seed in range(5):
        before = set(kept_rows(old, 1, seed, [X[: len(old)]]).tolist())
        after = set(kept_rows(old + new, 1, seed, [X]).tolist())
        assert before == after & set(range(len(old)))


def test_long_double_label_hash_does_not_depend_on_other_labels():
    # a long double label alone is a float array; with a string it is an
    # object: its hash (hence its group's draw) must be the same in both
    value = np.longdouble(2**63) + 1
    if value == np.longdouble(2**63):
        pytest.skip("long double is double here")
    alone = label_hashes(as_group_labels([value]))[0]
    mixed = label_hashes(as_group_labels([value, "z"]))[0]
    assert alone == mixed


@pytest.mark.parametrize("k", [2, 9])
@pytest.mark.parametrize("fallback", [False, True])
def test_kept_multiset_is_order_invariant_with_hash_ties(monkeypatch, k, fallback):
    # coarse content hashes (4 values) make runs of distinct contents that
    # the choice cuts; the fallback lexicographic sort is forced too
    real = _groups.row_hashes
    monkeypatch.setattr(
        _groups, "row_hashes", lambda s, c: real(s, c) & np.uint64(3 << 62)
    )
    if fallback:
        monkeypatch.setattr(_groups, "_MIN_HASH_BITS", 64)
    rng = np.random.default_rng(0)
    groups = rng.integers(0, 4, 120)
    X = rng.integers(0, 6, (120, 2)).astype(float)
    reference = _kept_content(groups, X, k, 3)
    for _ in range(4):
        perm = rng.permutation(120)
        assert _kept_content(groups[perm], X[perm], k, 3) == reference


@pytest.mark.parametrize("m, k", [(4, 2), (10, 9)])
def test_kept_subset_is_uniform(m, k):
    # over seeds, each of the C(m, k) subsets of distinct rows is equally
    # likely (rounds path for k=2, sort path for k=9)
    X = np.arange(m, dtype=float)[:, None]
    subsets = {s: i for i, s in enumerate(itertools.combinations(range(m), k))}
    counts = np.zeros(len(subsets))
    for seed in range(600 * len(subsets) // 6):
        counts[subsets[tuple(kept_rows(np.zeros(m), k, seed, [X]).tolist())]] += 1
    assert stats.chisquare(counts).pvalue > 1e-3


def test_multiset_draw_is_uniform_over_positions():
    # rows {a, a, b}, k = 1: a is kept with probability 2/3
    X = np.array([[1.0], [1.0], [2.0]])
    hits = sum(
        X[kept_rows(np.zeros(3), 1, seed, [X])[0], 0] == 1.0 for seed in range(3000)
    )
    assert stats.binomtest(int(hits), 3000, 2 / 3).pvalue > 1e-3


def test_adding_a_nanosecond_date_does_not_wrap_a_far_date_label():
    # [3000-01-01] * 3 is a day array; one nanosecond label added made it a
    # nanosecond array where 3000-01-01 wraps to 1830: the far date's label
    # (its group and its draw) changed with the other group
    far = [np.datetime64("3000-01-01")] * 3
    fine = [np.datetime64("2020-01-01T00:00:00.000000001")] * 3
    X = np.arange(6.0)[:, None]
    alone = as_group_labels(far)
    mixed = as_group_labels(far + fine)
    assert mixed[0] == far[0]
    assert label_hashes(alone)[0] == label_hashes(mixed)[:1][0]
    for seed in range(5):
        before = set(kept_rows(far, 1, seed, [X[:3]]).tolist())
        after = set(kept_rows(far + fine, 1, seed, [X]).tolist())
        assert before == after & {0, 1, 2}


def test_half_precision_labels_raise_no_warning(recwarn):
    # 2.0**62 compared with a float16 array was cast to float16 (inf) with an
    # overflow warning, also inside kept_rows after the charge, and only
    # when every label is integral (a branch on the data)
    groups = np.array([1.0, 1.0, 2.0], dtype=np.float16)
    X = np.arange(3.0)[:, None]
    assert group_codes(groups)[1] == 2
    assert kept_rows(groups, 1, 0, [X]).size == 2
    assert len(recwarn) == 0


class _ChangingHash:
    """A label whose hash changes at every call (it breaks Python's hash
    contract, yet passes the checks made before the charge)."""

    calls = 0

    def __hash__(self):
        type(self).calls += 1
        return type(self).calls

    def __eq__(self, other):
        return self is other


def test_label_hash_that_changes_after_the_check_does_not_raise():
    label = _ChangingHash()
    groups = as_group_labels([label, "a", "a"])
    group_codes(groups)  # the check made before the charge passes
    hashes = label_hashes(groups)
    assert hashes.shape == (3,) and hashes[1] == hashes[2]
    X = np.arange(3.0)[:, None]
    assert kept_rows(groups, 1, 0, [X]).size >= 2


def test_signalling_nan_label_is_refused_as_missing():
    # Decimal("sNaN") != itself raises InvalidOperation: the check before the
    # charge let a decimal error through instead of naming the missing label
    from decimal import Decimal

    with pytest.raises(ValueError, match="missing label"):
        group_codes([Decimal("sNaN"), Decimal(1)])


def test_groups_with_the_same_rows_draw_independently():
    # two groups of rows {0, 1}, k = 1: the four joint choices equally likely
    X = np.array([[0.0], [1.0], [0.0], [1.0]])
    counts = np.zeros(4)
    for seed in range(800):
        kept = kept_rows([5, 5, "b", "b"], 1, seed, [X])
        counts[int(X[kept[0], 0]) * 2 + int(X[kept[1], 0])] += 1
    assert stats.chisquare(counts).pvalue > 1e-3
