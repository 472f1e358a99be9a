"""Adversarial review of user-level privacy (``groups=``, contribution bounding).

Attacks on :func:`skdp.utils._groups.kept_rows` and the estimators that take
``groups``: the kept rows of the other groups must not move when one whole
group (of any content) is added, for any row order and any hash truncation;
nothing may raise after the charge; a ``groups`` given to a fit must not be
silently dropped by a private step (row-level noise under a person-level
belief).
"""

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.pipeline import make_pipeline

import skdp
from skdp.utils import _groups
from skdp.utils._groups import group_codes, kept_rows

K = 2


def _kept_by_group(groups, X, k=K, seed=5):
    """Each group's kept rows, as sorted tuples of their content bits."""
    kept = kept_rows(groups, k, seed, [X])
    labels = list(groups)
    out = {}
    for row in kept:
        out.setdefault(labels[row], []).append(X[row].view(np.uint64).tobytes())
    return {label: sorted(rows) for label, rows in out.items()}


def _unchanged_by_a_new_group(groups, X, new_label, new_rows):
    before = _kept_by_group(groups, X)
    X2 = np.vstack([new_rows, X])  # the new group first: every index shifts
    dtype = object if isinstance(new_label, str) else None
    groups2 = np.r_[np.full(len(new_rows), new_label, dtype=dtype), groups]
    after = _kept_by_group(groups2, X2)
    del after[new_label]
    return before == after


# -- 1. integer labels of a small dtype --------------------------------------


@pytest.mark.parametrize(
    "labels",
    [
        np.array([-100, -100, 100, 100, 100], dtype=np.int8),
        np.repeat(np.array([-17000, 17000], dtype=np.int16), 10000),
    ],
)
def test_small_signed_integer_labels_with_a_wide_range_are_distinct_codes(labels):
    # codes were (labels - min) in the labels' dtype: 100 - (-100) wrapped
    # to -56 in int8, and np.bincount raised after the charge
    codes, n_codes = group_codes(labels)
    assert codes.min() >= 0 and codes.max() < n_codes
    low = labels == labels.min()
    assert np.unique(codes[low]).size == np.unique(codes[~low]).size == 1
    assert codes[low][0] != codes[~low][0]


def test_int8_groups_do_not_raise_after_the_charge():
    accountant = skdp.BudgetAccountant()
    groups = np.array([-100, -100, 100, 100, 100], dtype=np.int8)
    est = skdp.PrivateMean(
        bounds=(0, 10), max_rows_per_group=2, accountant=accountant, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", skdp.NoiseDominatedWarning)
        est.fit(np.arange(5.0)[:, None], groups=groups)
    assert accountant.total() == (2.0, 0.0)  # a group fit counts 2ε per row
    assert np.isfinite(est.mean_).all()


# -- 2. labels of different types in a plain list ----------------------------


def test_labels_of_different_types_in_a_list_are_different_groups():
    # np.asarray([1, "1"]) is ['1', '1']: two people became one group
    codes, n_codes = group_codes([1, "1", 2])
    assert n_codes == 3 and len(set(codes.tolist())) == 3


def test_a_person_labelled_1_does_not_move_the_rows_kept_of_person_1_string():
    X = np.arange(12.0)[:, None]
    groups = ["1"] * 6 + [2] * 6  # a plain list, as a user would pass it
    before = _kept_by_group(groups, X)
    new = np.array([[100.0], [101.0], [102.0]])
    labels = [1] * 3 + groups
    kept = kept_rows(labels, K, 5, [np.vstack([new, X])])
    people = np.array(labels, dtype=object)[kept]
    assert sum(1 for p in people if p == "1") == len(before["1"]) == K


# -- 3. the other groups' kept rows, under degenerate hashes ------------------


def _few_hash_bits(bits):
    real = _groups.row_hashes

    def collapsed(seed, columns):  # only the leading ``bits`` bits vary
        return real(seed, columns) & np.uint64(((1 << bits) - 1) << (64 - bits))

    return collapsed


@pytest.mark.parametrize("bits", [1, 3, 64])
@pytest.mark.parametrize("fallback", [False, True])
def test_a_new_group_of_any_content_moves_no_other_groups_rows(
    monkeypatch, bits, fallback
):
    # full-hash ties everywhere (bits=1): the content must break them; the
    # fallback (lexicographic) path must keep the same rows as the packed one
    if bits < 64:
        monkeypatch.setattr(_groups, "row_hashes", _few_hash_bits(bits))
    if fallback:
        monkeypatch.setattr(_groups, "_MIN_HASH_BITS", 64)
    rng = np.random.default_rng(bits)
    specials = [np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324, 1.8e308]
    for trial in range(20):
        n = int(rng.integers(5, 30))
        groups = rng.integers(0, 6, n) * 1000 + trial  # range or unique path
        X = rng.choice([*specials, 1.0, 2.0], size=(n, 2))
        new_rows = rng.choice(specials, size=(int(rng.integers(1, 8)), 2))
        for label in (-(2**62), 500, "a person"):  # labels not used
            assert _unchanged_by_a_new_group(groups, X, label, new_rows)
        order = rng.permutation(n)
        assert _kept_by_group(groups, X) == _kept_by_group(groups[order], X[order])


# -- 4. routing: a private step that does not take groups --------------------


@pytest.mark.parametrize(
    "step",
    [
        lambda acc: skdp.DPClipper(accountant=acc, random_state=0),
        lambda acc: skdp.PrivateMinMaxScaler(accountant=acc, random_state=0),
    ],
)
def test_a_routed_pipeline_never_mixes_row_and_group_units_silently(step):
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (60, 2))
    y = (X[:, 0] > 0.5).astype(int)
    groups = np.repeat(np.arange(12), 5)
    accountant = skdp.BudgetAccountant(epsilon=np.inf, delta=1.0)
    clf = skdp.PrivateLogisticRegression(
        classes=[0, 1], max_rows_per_group=5, accountant=accountant, random_state=0
    )
    pipe = make_pipeline(step(accountant), clf)
    with sklearn.config_context(enable_metadata_routing=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                pipe.fit(X, y, groups=groups)
            except (TypeError, ValueError):
                assert accountant.total() == (0.0, 0.0)  # refused: fine
                return
    labels = [entry.label for entry in accountant.entries]
    assert all("unit: group" in label for label in labels), labels


# -- 5. the exact tie path's size (after the charge: no MemoryError) ---------


def _spy_content_rows(monkeypatch):
    seen = []
    real = _groups._content_key

    def spy(columns, rows):
        seen.append(len(rows))
        return real(columns, rows)

    monkeypatch.setattr(_groups, "_content_key", spy)
    return seen


def test_the_fallback_sorts_by_content_only_the_groups_tied_at_the_cut(monkeypatch):
    # the fallback (taken from ~8e6 rows on) sorted every row by its content,
    # all columns densified: n x d after the charge; now only tied groups
    monkeypatch.setattr(_groups, "_MIN_HASH_BITS", 64)
    seen = _spy_content_rows(monkeypatch)
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(300), 10)
    X = rng.normal(size=(groups.size, 3))  # distinct rows: no tie at the cut
    X[:10] = 1.0  # one group of equal rows: tied at the cut
    kept = kept_rows(groups, 4, 1, [X])
    assert np.bincount(groups[kept]).tolist() == [4] * 300
    assert sum(seen) <= 10


def test_sparse_ties_densify_only_the_stored_columns():
    from scipy import sparse

    wide = sparse.csr_matrix(
        (np.ones(4), ([0, 1, 2, 3], [7, 7, 10**6 - 2, 7])), shape=(4, 10**6)
    )
    keys = _groups._content_key([wide], np.arange(4))
    assert len(keys) == 2  # columns 7 and 10**6 - 2, not all 10**6
    groups = [0, 0, 0, 0]
    kept = kept_rows(groups, 2, 3, [wide])  # rows 0, 1, 3 are equal
    dense_content = {tuple(wide[[r]].indices) for r in kept}
    assert len(kept) == 2 and dense_content <= {(7,), (10**6 - 2,)}


# -- 6. public parameters at the end of their range ---------------------------


@pytest.mark.parametrize(
    "estimator",
    [
        skdp.PrivateMean(bounds=(0, 1)),
        skdp.PrivateLogisticRegression(classes=[0, 1], feature_bounds=(0, 1)),
    ],
    ids=["mean", "logistic"],
)
def test_an_astronomical_bound_is_refused_by_name_before_the_charge(estimator):
    # max_rows_per_group=10**400 passed the Integral constraint and raised
    # "OverflowError: int too large to convert to float"
    X = np.linspace(0, 1, 12)[:, None]
    y = (X[:, 0] > 0.5).astype(int)
    accountant = skdp.BudgetAccountant(delta=1.0)
    estimator.set_params(max_rows_per_group=10**400, accountant=accountant)
    with pytest.raises(ValueError, match="max_rows_per_group=1000"):
        estimator.fit(X, y, groups=np.arange(12) // 3)
    assert len(accountant.entries) == 0


# -- 7. the accountant's unit (issue item 3) ----------------------------------


def test_row_and_group_charges_are_not_composed_as_the_same_unit():
    # A row-unit accountant counts a group-level fit at 2 ε: one row added
    # or removed either adds/removes a whole new group (one group step) or
    # changes an existing group's rows (remove the group, add its new
    # version: two group steps), so a release that is ε-DP for one group is
    # 2ε-DP for one row (group privacy). Summed as one unit it counted 1 + 1.
    X = np.linspace(0, 1, 12)[:, None]
    accountant = skdp.BudgetAccountant(delta=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        skdp.PrivateMean(bounds=(0, 1), accountant=accountant).fit(X)
        skdp.PrivateMean(
            bounds=(0, 1), max_rows_per_group=3, accountant=accountant
        ).fit(X, groups=np.arange(12) // 3)
    assert accountant.total() == (1.0 + 2 * 1.0, 0.0)
    row, group = accountant.entries
    assert (row.unit, row.counted) == ("row", None)
    assert (group.unit, group.group_rows, group.epsilon) == ("group", 3, 1.0)
    assert group.counted[0] == 2.0


# -- 8. end to end: what each fit releases moves by at most its stated bound --


def _as_floats(value):
    if hasattr(value, "numerators"):  # a FixedPoint: exact integers * 2**e
        numerators = np.array([float(v) for v in value.numerators])
        return (numerators * 2.0**value.exponent).reshape(value.shape)
    return np.array(value, dtype=float)


class _Coupled:
    """Record every release's exact input; on the neighbour, return the
    first data set's outputs (a coupling: all post-processing identical), so
    each exact input is compared at the same public parameters."""

    def __init__(self, monkeypatch):
        from skdp.linear_model import _release, _scaling
        from skdp.preprocessing import _standard
        from skdp.stats import _histogram, _mean_release

        self.calls, self.outputs, self.replay = [], [], False
        for module in (_histogram, _mean_release, _standard):
            monkeypatch.setattr(
                module, "additive_release", self._wrap(module.additive_release, 2)
            )
        for module in (_release, _scaling):
            monkeypatch.setattr(
                module, "gaussian_release", self._wrap(module.gaussian_release, 1)
            )

    def _wrap(self, real, n_bounds):
        def release(value, *args, **kwargs):
            bounds = [float(b) for b in args[:n_bounds]]
            self.calls.append((_as_floats(value), bounds, args))
            if self.replay:
                return self.outputs[len(self.calls) - 1 - self.offset]
            out = real(value, *args, **kwargs)
            self.outputs.append(out)
            return out

        return release

    def fit_both(self, estimator, X, y, groups, X2, y2, groups2):
        estimator.fit(X, y, groups=groups)
        first = self.calls
        self.calls, self.replay, self.offset = [], True, 0
        estimator.fit(X2, y2, groups=groups2)
        return first, self.calls


def _people_table(seed=0):
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(15), rng.integers(1, 6, 15))
    X = rng.uniform(0, 1, (groups.size, 2))
    X[::4] = X[0]  # equal rows, within and across groups
    y = (X[:, 0] + rng.normal(0, 0.3, groups.size) > 0.5).astype(int)
    return groups, X, y


K_END = 3
END_TO_END = {
    "mean": skdp.PrivateMean(bounds=(0, 1)),
    "mean_gaussian": skdp.PrivateMean(bounds=(0, 1), mechanism="gaussian", delta=1e-6),
    "histogram": skdp.PrivateHistogram(bounds=(0, 1), bins=4),
    "scaler": skdp.PrivateStandardScaler(bounds=(0, 1)),
    "naive_bayes": skdp.PrivateGaussianNB(bounds=(0, 1), classes=[0, 1]),
    "logistic": skdp.PrivateLogisticRegression(
        classes=[0, 1], feature_bounds=(0, 1), max_iter=3
    ),
    "logistic_scales": skdp.PrivateLogisticRegression(classes=[0, 1], max_iter=2),
    "linear": skdp.PrivateLinearRegression(feature_bounds=(0, 1)),
}


@pytest.mark.parametrize("name", list(END_TO_END))
@pytest.mark.parametrize("new", ["extreme", "copies"])
def test_every_release_of_a_fit_moves_by_its_stated_bound_for_a_new_group(
    monkeypatch, name, new
):
    groups, X, y = _people_table()
    rows = np.ones((3 * K_END, 2)) if new == "extreme" else np.repeat(X[:1], 9, 0)
    X2 = np.vstack([rows, X])  # the new group first: every index shifts
    y2 = np.r_[np.ones(len(rows), dtype=int), y]
    groups2 = np.r_[np.full(len(rows), 99), groups]
    estimator = END_TO_END[name].set_params(
        max_rows_per_group=K_END,
        random_state=0,
        accountant=skdp.BudgetAccountant(delta=1.0),
    )
    if name == "linear":
        y, y2 = X[:, 0] + y, X2[:, 0] + y2  # a numeric target
    coupled = _Coupled(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first, second = coupled.fit_both(estimator, X, y, groups, X2, y2, groups2)
        # the row-level fit's multipliers (Gaussian releases state a row's
        # L2 bound; the group's is that times the multipliers' ratio)
        coupled.calls, coupled.replay = [], False
        estimator.set_params(max_rows_per_group=None).fit(X, y)
    rows_level = coupled.calls
    assert len(first) == len(second) == len(rows_level) > 0
    for (a, bounds, args), (b, _, _), (_, _, row_args) in zip(
        first, second, rows_level, strict=True
    ):
        change = (b - a).ravel()
        if len(bounds) == 2:  # additive: (L1, L2) of the group
            assert np.abs(change).sum() <= bounds[0] * (1 + 1e-12)
            assert np.linalg.norm(change) <= bounds[1] * (1 + 1e-12)
        else:  # Gaussian: a row's L2 bound times the multipliers' ratio
            group_bound = bounds[0] * float(args[1]) / float(row_args[1])
            assert np.linalg.norm(change) <= group_bound * (1 + 1e-12)


# -- 9. labels that only partially order --------------------------------------


def test_equal_labels_that_sort_partially_are_one_group():
    # np.unique sorted frozensets by inclusion (a partial order) and split
    # frozenset({1}) into two groups: one person, up to 2 k rows
    labels = [frozenset({1}), frozenset({2}), frozenset({1}), frozenset({2})]
    codes, _ = group_codes(labels)
    assert codes[0] == codes[2] != codes[1] == codes[3]
    kept = kept_rows(labels, 1, 0, [np.arange(4.0)[:, None]])
    assert len(kept) == 2


def test_an_unhashable_label_is_refused_by_name_before_the_charge():
    accountant = skdp.BudgetAccountant()
    estimator = skdp.PrivateMean(
        bounds=(0, 1), max_rows_per_group=2, accountant=accountant
    )
    with pytest.raises(ValueError, match="cannot be hashed"):
        estimator.fit(np.zeros((3, 1)), groups=[{1}, {1}, {2}])
    assert len(accountant.entries) == 0
