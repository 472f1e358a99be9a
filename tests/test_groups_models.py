"""Meta-estimators and models with ``fit(..., groups=...)``: sample-and-
aggregate and NoisyMaxSearchCV keep every group in one block; PrivatePCA's
three releases, the trees' leaf counts and k-means' split sums move by k
times the row's bound.

Brute force on small data with several rows per group (every group removed
in turn: one block changes, one vote moves), the refusals before the
charge, the same release for any row order, and the unit in the ledger.
The audits and their twins (a group split across blocks) are in
tests/audit/test_group_sample_aggregate_audit.py.
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.compose import make_column_transformer
from sklearn.decomposition import PCA
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
from test_groups_estimators import _people
from test_groups_sensitivity import (
    BASE_GROUPS,
    BASE_X,
    BASE_Y,
    ROWS,
    _changes,
    _groups_to_add,
)
from test_groups_sensitivity import K as SENSITIVITY_K

import skdp
from skdp import BudgetAccountant
from skdp.cluster import _kmeans
from skdp.cluster._kmeans import cluster_split_sums
from skdp.decomposition._pca_scales import centred_moments_gram, norm_histogram
from skdp.ensemble._blocks import _group_block_indices, _vote_histogram
from skdp.linear_model._scaling import exponent_histogram
from skdp.mechanisms import check_random_source
from skdp.model_selection import NoisyMaxSearchCV, _search_selection
from skdp.model_selection._subsample import _splits
from skdp.tree import _fit as _tree_fit
from skdp.tree._leaf_counts import group_leaf_count_sensitivity
from skdp.tree._random_tree import draw_random_splits
from skdp.utils._groups import group_blocks
from skdp.utils._privacy_unit import PrivacyUnit

K = 3

pytestmark = pytest.mark.filterwarnings("ignore::skdp.exceptions.NoiseDominatedWarning")


def _small_groups():
    """8 groups of 1 to 5 rows (some rows repeated) and a binary label."""
    rng = np.random.default_rng(3)
    sizes = [1, 5, 2, 4, 3, 1, 5, 2]
    groups = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.integers(0, 3, size=(groups.size, 2)).astype(float)
    y = (X[:, 0] + groups) % 2
    return X, y.astype(int), groups


def _block_contents(blocks, X, y, groups):
    """Each block as the tuple of its rows (content and group), in order."""
    return [tuple((groups[r], *X[r], y[r]) for r in rows.tolist()) for rows in blocks]


@pytest.mark.parametrize("seed", range(3))
def test_removing_any_group_changes_one_block_and_keeps_groups_whole(seed):
    X, y, groups = _small_groups()
    n_blocks = 4

    def blocks_of(keep):
        source = check_random_source(seed)
        unit = PrivacyUnit(groups[keep], K)
        blocks = _group_block_indices(unit, n_blocks, source, X[keep], y[keep])
        return _block_contents(blocks, X[keep], y[keep], groups[keep])

    full = blocks_of(np.ones(groups.size, dtype=bool))
    for contents in full:  # a whole group in one block, at most K of its rows
        for g in np.unique(groups):
            rows = [row for row in contents if row[0] == g]
            assert len(rows) in (0, min(K, np.sum(groups == g)))
    for g in np.unique(groups):
        without = blocks_of(groups != g)
        changed = [b for b in range(n_blocks) if full[b] != without[b]]
        assert len(changed) == 1
        assert {row[0] for row in full[changed[0]]} - {
            row[0] for row in without[changed[0]]
        } == {g}


def test_the_blocks_are_the_same_for_any_row_order():
    X, y, groups = _small_groups()
    order = np.random.default_rng(0).permutation(groups.size)
    a = group_blocks(groups, 3, 11, [X, y])
    b = [
        order[rows] for rows in group_blocks(groups[order], 3, 11, [X[order], y[order]])
    ]
    # the same rows in each block, and the same contents in the same order
    # (equal rows of two groups may swap: no fit can tell them apart)
    assert [sorted(rows.tolist()) for rows in a] == [sorted(r.tolist()) for r in b]
    no_group = np.zeros(groups.size, dtype=int)
    assert _block_contents(a, X, y, no_group) == _block_contents(b, X, y, no_group)


def _vote_model(seed, accountant=None):
    return skdp.SampleAggregateEstimator(
        DummyClassifier(),
        aggregate="vote",
        n_blocks=4,
        classes=[0, 1],
        max_rows_per_group=K,
        accountant=accountant or BudgetAccountant(),
        random_state=seed,
    )


@pytest.mark.parametrize("seed", range(2))
def test_one_group_moves_one_vote_of_sample_and_aggregate(seed):
    # brute force over every group removed: the vote histogram of any query
    # row moves by one vote at most (the sensitivity the noise is set for)
    X, y, groups = _small_groups()
    queries = np.array([[0.0, 0.0], [2.0, 1.0]])

    def votes(keep):
        model = _vote_model(seed).fit(X[keep], y[keep], groups=groups[keep])
        return _vote_histogram(model.estimators_, queries, model.classes_)

    full = votes(np.ones(groups.size, dtype=bool))
    for g in np.unique(groups):
        moved = np.abs(full - votes(groups != g))
        assert moved.max() <= 1 and moved.sum(axis=1).max() <= 2


def test_sample_aggregate_refuses_groups_without_a_bound_before_the_charge():
    X, y, groups = _people()
    accountant = BudgetAccountant()
    model = skdp.SampleAggregateEstimator(
        LogisticRegression(), classes=[0, 1], n_blocks=5, accountant=accountant
    )
    with pytest.raises(ValueError, match=r"max_rows_per_group=5\)"):
        model.fit(X, y, groups=groups)
    with pytest.raises(ValueError, match="fit got no groups"):
        model.set_params(max_rows_per_group=K).fit(X, y)
    with pytest.raises(ValueError, match="one label per row"):
        model.fit(X, y, groups=groups[:-1])
    assert len(accountant.entries) == 0


@pytest.mark.parametrize("aggregate", ["parameters", "vote"])
def test_sample_aggregate_releases_the_same_for_any_row_order(aggregate):
    X, y, groups = _people()
    order = np.random.default_rng(1).permutation(groups.size)
    model = skdp.SampleAggregateEstimator(
        LogisticRegression(),
        classes=[0, 1],
        n_blocks=10,
        aggregate=aggregate,
        max_rows_per_group=K,
        accountant=BudgetAccountant(),
    )
    queries = X[:5]
    released = []
    for rows in (np.arange(groups.size), order):
        fitted = model.set_params(random_state=0).fit(
            X[rows], y[rows], groups=groups[rows]
        )
        coef = fitted.estimator_.coef_ if aggregate == "parameters" else None
        released.append((fitted.predict(queries), coef))
    np.testing.assert_array_equal(released[0][0], released[1][0])
    np.testing.assert_array_equal(released[0][1], released[1][1])


def test_sample_aggregate_names_the_unit_of_its_fit_and_predict_charges():
    X, y, groups = _people()
    accountant = BudgetAccountant()
    model = _vote_model(0, accountant).fit(X, y, groups=groups)
    model.predict(X[:2])
    labels = [e.label for e in accountant.entries]
    assert len(labels) == 2
    assert all(lab.endswith(f"(unit: group of <= {K} rows)") for lab in labels)


# -- NoisyMaxSearchCV ----------------------------------------------------------
def _search(**params):
    defaults = {
        "n_blocks": 5,
        "refit": False,
        "max_rows_per_group": K,
        "accountant": BudgetAccountant(delta=1.0),
        "random_state": 0,
    }
    return NoisyMaxSearchCV(
        LogisticRegression(), {"C": [1e-3, 1.0]}, **{**defaults, **params}
    )


def test_each_block_of_the_search_holds_whole_groups(monkeypatch):
    X, y, groups = _people()
    seen = []

    def spy(candidates, X, y, blocks, **kwargs):
        seen.append((blocks, kwargs["groups"]))
        return [0] * len(blocks)

    monkeypatch.setattr(_search_selection, "block_votes", spy)
    _search().fit(X, y, groups=groups)
    ((blocks, passed),) = seen
    np.testing.assert_array_equal(passed, groups)
    block_of = np.empty(groups.size, dtype=int)
    for b, rows in enumerate(blocks):
        block_of[rows] = b
    assert sorted(np.concatenate(blocks).tolist()) == list(range(groups.size))
    for g in np.unique(groups):
        assert np.unique(block_of[groups == g]).size == 1


def test_the_search_takes_groups_with_a_dataframe_of_strings():
    # the blocks read only the group labels, never the rows: any X the
    # candidates take (here a string column, encoded inside the pipeline)
    pd = pytest.importorskip("pandas")
    X, y, groups = _people()
    frame = pd.DataFrame({"a": X[:, 0], "c": np.where(X[:, 1] > 5, "hi", "lo")})
    encode = make_column_transformer(
        (OneHotEncoder(categories=[["hi", "lo"]]), ["c"]), remainder="passthrough"
    )
    search = NoisyMaxSearchCV(
        make_pipeline(encode, LogisticRegression()),
        {"logisticregression__C": [1e-3, 1.0]},
        n_blocks=5,
        refit=False,
        max_rows_per_group=K,
        accountant=BudgetAccountant(),
        random_state=0,
    )
    assert search.fit(frame, y, groups=groups.astype(str)).best_index_ in (0, 1)


@pytest.mark.parametrize("cv", [1, 2, GroupKFold(3)], ids=["half", "int", "splitter"])
def test_a_blocks_internal_split_keeps_groups_whole(cv):
    X, y, groups = _people(40)
    for train, test in _splits(LogisticRegression(), X, y, cv, groups):
        assert not set(groups[train]) & set(groups[test])
        assert train.size and test.size


def test_the_search_refuses_what_its_groups_cannot_cover_before_the_charge():
    X, y, groups = _people()
    accountant = BudgetAccountant(delta=1.0)
    cases = [
        (_search(max_rows_per_group=None), groups, r"max_rows_per_group=5\)"),
        (_search(), None, "fit got no groups"),
        (
            # every skdp model takes groups since the boosting merge: a
            # Pipeline has no max_rows_per_group of its own
            _search(
                refit=lambda p: make_pipeline(
                    skdp.PrivateLogisticRegression(classes=[0, 1])
                )
            ),
            groups,
            "takes no groups",
        ),
        (
            # holdout candidates fit their training part with groups
            NoisyMaxSearchCV(
                make_pipeline(skdp.PrivateLogisticRegression(classes=[0, 1])),
                {"privatelogisticregression__C": [1.0]},
                method="holdout",
                refit=False,
                max_rows_per_group=K,
            ),
            groups,
            "each candidate fits its training part with groups",
        ),
    ]
    for search, passed, message in cases:
        with pytest.raises(ValueError, match=message):
            search.set_params(accountant=accountant).fit(X, y, groups=passed)
    assert len(accountant.entries) == 0


def test_the_search_refits_with_groups_and_names_the_unit():
    X, y, groups = _people()
    accountant = BudgetAccountant(delta=1.0)
    refit = lambda params: skdp.PrivateLogisticRegression(  # noqa: E731
        classes=[0, 1], **params
    )
    search = _search(refit=refit, accountant=accountant).fit(X, y, groups=groups)
    assert search.best_estimator_.max_rows_per_group == K
    labels = [e.label for e in accountant.entries]
    assert len(labels) == 2
    assert all(lab.endswith(f"(unit: group of <= {K} rows)") for lab in labels)


# -- PrivatePCA ------------------------------------------------------------------
class _Counts:
    """Integer counts as the exact ``(numerators, exponent)`` the brute
    force of tests/test_groups_sensitivity.py reads."""

    def __init__(self, counts):
        self.numerators, self.exponent = np.ravel(counts), 0


def _hit(histogram):
    """The bins the brute force's rows can reach (the others stay 0)."""
    rows = np.vstack([BASE_X, [row for row, _ in ROWS]])
    return np.flatnonzero(np.ravel(histogram(rows)))


NORM_BINS = _hit(lambda X: norm_histogram(X, 0.5))
EXPONENT_BINS = _hit(exponent_histogram)
PCA_STATISTICS = {
    # (statistic of the bounded rows, the row's L2 bound)
    "exponent histogram": (
        lambda X, y: _Counts(np.ravel(exponent_histogram(X))[EXPONENT_BINS]),
        np.sqrt(2),
    ),
    "norm histogram": (
        lambda X, y: _Counts(norm_histogram(X, 0.5)[NORM_BINS]),
        1.0,
    ),
    "second moments": (lambda X, y: centred_moments_gram(X, 0.5, 1.5), 1.0),
}


@pytest.mark.parametrize("what", list(PCA_STATISTICS))
def test_pca_releases_move_by_k_times_the_rows_bound(what):
    # every group of 1 to k + 1 rows over a grid added to a base of groups;
    # tests/test_groups_sensitivity.py's brute force, with its k
    statistic, row_bound = PCA_STATISTICS[what]
    for seed in range(2):
        worst = _changes(statistic, seed)[1]
        assert worst <= SENSITIVITY_K * row_bound + 1e-9
        assert worst >= 0.5 * SENSITIVITY_K * row_bound  # the bound is approached
    assert _changes(statistic, bound=False)[1] > SENSITIVITY_K * row_bound + 1e-9


def _pca(**params):
    return skdp.PrivatePCA(
        2, max_rows_per_group=K, accountant=BudgetAccountant(delta=1.0), **params
    )


def test_pca_noise_is_k_times_the_rows_and_the_release_ignores_row_order():
    X, _, groups = _people()
    grouped = _pca(random_state=0).fit(X, groups=groups)
    row = _pca(random_state=0).set_params(max_rows_per_group=None).fit(X)
    assert grouped.noise_std_ == pytest.approx(K * row.noise_std_, rel=1e-15)
    order = np.random.default_rng(1).permutation(groups.size)
    shuffled = _pca(random_state=0).fit(X[order], groups=groups[order])
    np.testing.assert_array_equal(shuffled.components_, grouped.components_)
    np.testing.assert_array_equal(shuffled.mean_, grouped.mean_)


def test_pca_refuses_groups_without_a_bound_before_the_charge():
    X, _, groups = _people()
    accountant = BudgetAccountant(delta=1.0)
    with pytest.raises(ValueError, match=r"max_rows_per_group=5\)"):
        skdp.PrivatePCA(accountant=accountant).fit(X, groups=groups)
    with pytest.raises(ValueError, match="fit got no groups"):
        skdp.PrivatePCA(max_rows_per_group=K, accountant=accountant).fit(X)
    assert len(accountant.entries) == 0


def test_pca_with_one_row_per_duplicated_person_converges_to_pca_on_people():
    # k = 1 keeps one copy of each person: as epsilon grows the axes are
    # scikit-learn's on the de-duplicated table
    rng = np.random.default_rng(2)
    people = rng.normal(size=(3000, 2)) @ [[2.0, 1.0], [0.0, 0.5]]
    groups = np.repeat(np.arange(3000), rng.integers(1, 6, 3000))
    copies = people[groups]
    pca = skdp.PrivatePCA(2, epsilon=1e9, max_rows_per_group=1)
    pca.set_params(accountant=BudgetAccountant(delta=1.0), random_state=0)
    fitted = pca.fit(copies, groups=groups)
    reference = PCA(2).fit(people)
    np.testing.assert_allclose(
        np.abs(fitted.components_), np.abs(reference.components_), atol=1e-3
    )


# -- PrivateDecisionTreeClassifier, PrivateRandomForestClassifier ----------------
def _forest_count_changes(tree_rows, n_trees, bound=True):
    """Largest L1 and L2 change of the exact leaf counts over every group of
    1 to k + 1 grid rows added to the base (tests/test_groups_sensitivity.py's
    domain), each side bounded to k rows per group first."""
    lower, upper = np.array([-3.0, -3.0]), np.array([2.0, 2.0])
    features, thresholds = draw_random_splits(
        lower, upper, 2, check_random_source(0), n_trees
    )

    def counts(X, y, groups):
        source = check_random_source(1)
        if bound:
            unit = PrivacyUnit(groups, SENSITIVITY_K)
            X, y, groups = _tree_fit._bounded(unit, source, X, y)
        return _tree_fit.forest_counts(
            X, y, 2, features, thresholds, tree_rows, source, groups
        )[0].ravel()

    base = counts(BASE_X, BASE_Y, BASE_GROUPS)
    worst_l1 = worst_l2 = 0.0
    for added in _groups_to_add():
        X = np.vstack([BASE_X, [row for row, _ in added]])
        y = np.append(BASE_Y, [label for _, label in added])
        groups = np.append(BASE_GROUPS, np.full(len(added), 99))
        diff = counts(X, y, groups) - base
        worst_l1 = max(worst_l1, float(np.abs(diff).sum()))
        worst_l2 = max(worst_l2, float(np.sqrt((diff**2).sum())))
    return worst_l1, worst_l2


@pytest.mark.parametrize(
    "tree_rows, n_trees, per_row",
    [("all", 1, 1), ("all", 3, 3), ("disjoint", 3, 1)],
    ids=["tree", "forest_all", "forest_disjoint"],
)
def test_leaf_counts_move_by_k_times_the_rows_bound(tree_rows, n_trees, per_row):
    k = SENSITIVITY_K
    l1, l2 = group_leaf_count_sensitivity(per_row, k)
    assert (l1, l2) == (k * per_row, k * np.sqrt(per_row))  # hand-derived
    worst_l1, worst_l2 = _forest_count_changes(tree_rows, n_trees)
    assert worst_l1 == l1 and worst_l2 == pytest.approx(l2)  # attained
    unbounded = _forest_count_changes(tree_rows, n_trees, bound=False)
    assert unbounded[0] > l1


def _trees():
    common = {"bounds": (0, 10), "classes": [0, 1], "max_rows_per_group": K}
    return [
        skdp.PrivateDecisionTreeClassifier(**common),
        skdp.PrivateRandomForestClassifier(3, tree_rows="disjoint", **common),
    ]


@pytest.mark.parametrize("tree", _trees(), ids=["tree", "forest"])
def test_trees_noise_is_k_times_the_rows_and_ignores_row_order(tree):
    X, y, groups = _people()
    accountant = BudgetAccountant()
    grouped = clone(tree).set_params(accountant=accountant, random_state=0)
    grouped.fit(X, y, groups=groups)
    row = clone(tree).set_params(accountant=accountant, max_rows_per_group=None)
    assert grouped.noise_std_ == pytest.approx(K * row.fit(X, y).noise_std_, rel=1e-15)
    order = np.random.default_rng(1).permutation(groups.size)
    shuffled = clone(grouped).fit(X[order], y[order], groups=groups[order])
    np.testing.assert_array_equal(shuffled.predict_proba(X), grouped.predict_proba(X))
    assert accountant.entries[0].label.endswith(f"(unit: group of <= {K} rows)")


@pytest.mark.parametrize(
    "params, fix",
    [
        ({"max_rows_per_group": None}, r"max_rows_per_group=5\)"),
        ({"classes": None}, "classes="),
        ({"bounds": None}, "bounds="),
    ],
    ids=["no_bound", "private_labels", "private_bounds"],
)
def test_trees_refuse_what_is_stated_for_one_row_before_the_charge(params, fix):
    X, y, groups = _people()
    accountant = BudgetAccountant(delta=1.0)
    for tree in _trees():
        model = clone(tree).set_params(accountant=accountant, **params)
        with pytest.raises(ValueError, match=fix):
            model.fit(X, y, groups=groups)
    assert len(accountant.entries) == 0


# -- PrivateKMeans ---------------------------------------------------------------
CENTRES = np.array([[0.0, 0.0], [1.5, 1.5]])


def test_cluster_split_sums_move_by_k_times_the_rows_bound():
    # each row moves its cluster's 2d split sums by at most sqrt(d) in L2
    def statistic(X, y):
        return cluster_split_sums(X, CENTRES, np.full(2, -3.0), np.full(2, 2.0))

    bound = SENSITIVITY_K * np.sqrt(2.0)
    for seed in range(2):
        worst = _changes(statistic, seed)[1]
        assert bound * 0.7 <= worst <= bound + 1e-9
    assert _changes(statistic, bound=False)[1] > bound + 1e-9


def test_kmeans_noise_is_k_times_the_rows_and_ignores_row_order(monkeypatch):
    X, _, groups = _people()
    multipliers = []
    release = _kmeans.gaussian_release

    def spy(statistic, sensitivity, multiplier, **kwargs):
        multipliers.append(multiplier)
        return release(statistic, sensitivity, multiplier, **kwargs)

    monkeypatch.setattr(_kmeans, "gaussian_release", spy)
    model = skdp.PrivateKMeans(
        2, bounds=(0, 10), max_rows_per_group=K, random_state=0
    ).set_params(accountant=BudgetAccountant(delta=1.0))
    grouped = clone(model).fit(X, groups=groups)
    n_steps = len(multipliers)
    clone(model).set_params(max_rows_per_group=None).fit(X)
    np.testing.assert_array_equal(
        multipliers[:n_steps], K * np.asarray(multipliers[n_steps:])
    )
    order = np.random.default_rng(1).permutation(groups.size)
    shuffled = clone(model).fit(X[order], groups=groups[order])
    np.testing.assert_array_equal(shuffled.cluster_centers_, grouped.cluster_centers_)
    with pytest.raises(ValueError, match=r"max_rows_per_group=5\)"):
        clone(model).set_params(max_rows_per_group=None).fit(X, groups=groups)


# -- every estimator of this file ---------------------------------------------------
def _grouped_models():
    return [
        skdp.SampleAggregateEstimator(LogisticRegression(), classes=[0, 1], n_blocks=5),
        _search(),
        skdp.PrivatePCA(2),
        *_trees(),
        skdp.PrivateKMeans(2, bounds=(0, 10)),
    ]


@pytest.mark.parametrize("k", [1, 2**40, 10**30])
def test_a_bound_at_either_end_fits_or_is_refused_before_the_charge(k):
    # a huge k makes the noise too large for some samplers: refused before
    # the charge (nothing spent), never an error after it
    X, y, groups = _people(60)
    for model in _grouped_models():
        accountant = BudgetAccountant(delta=1.0)
        model.set_params(max_rows_per_group=k, accountant=accountant, random_state=0)
        try:
            model.fit(X, y, groups=groups)
        except ValueError as exc:
            assert "max_rows_per_group" in str(exc) or "epsilon" in str(exc)
            assert len(accountant.entries) == 0
        else:
            assert k <= 2**53
