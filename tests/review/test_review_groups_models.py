"""Adversarial review of ``groups=`` in the models and meta-estimators
(sample-and-aggregate, NoisyMaxSearchCV, the trees' disjoint rows).

Attacks: one whole group added or removed must change one block (one tree)
whatever its rows are (extreme doubles, signed zeros, a group identical to
another); two different group labels must stay two privacy units; the
search's blocks must be able to vote at all with the inputs the search
accepts (labels of mixed types, candidates that spend delta).
"""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import skdp
from skdp import BudgetAccountant
from skdp.ensemble._blocks import _group_block_indices
from skdp.mechanisms import check_random_source
from skdp.model_selection import NoisyMaxSearchCV, _search_selection
from skdp.model_selection._subsample import _candidate_scores, _splits
from skdp.tree._fit import forest_counts
from skdp.utils._groups import group_codes
from skdp.utils._privacy_unit import PrivacyUnit

pytestmark = pytest.mark.filterwarnings("ignore::skdp.exceptions.NoiseDominatedWarning")


def _extreme_groups(seed=1):
    """7 groups of 1 to 6 rows drawn from extreme doubles (±max, ±subnormal,
    ±0); group 2 has exactly group 1's rows."""
    big, tiny = np.finfo(float).max, 5e-324
    values = np.array([0.0, -0.0, tiny, -tiny, big, -big, 1.0])
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(7), [1, 4, 4, 2, 6, 3, 4])
    X = values[rng.integers(0, values.size, size=(groups.size, 2))]
    y = rng.integers(0, 2, groups.size)
    X[groups == 2], y[groups == 2] = X[groups == 1], y[groups == 1]
    return X, y, groups


def _contents(blocks, X, y):
    """Each block's rows (bit patterns and label), in the block's order."""
    bits = X.view(np.uint64)
    return [tuple((*bits[r], y[r]) for r in rows.tolist()) for rows in blocks]


# -- holds: one group changes one block, for extreme and repeated rows -------


@pytest.mark.parametrize("seed", range(4))
def test_removing_a_group_of_extreme_or_repeated_rows_changes_one_block(seed):
    X, y, groups = _extreme_groups()
    full = _group_block_indices(
        PrivacyUnit(groups, 3), 5, check_random_source(seed), X, y
    )
    for g in np.unique(groups):
        keep = groups != g
        part = _group_block_indices(
            PrivacyUnit(groups[keep], 3), 5, check_random_source(seed), X[keep], y[keep]
        )
        before, after = _contents(full, X, y), _contents(part, X[keep], y[keep])
        assert sum(a != b for a, b in zip(before, after, strict=True)) <= 1


def test_removing_a_group_moves_one_disjoint_trees_counts_only():
    X, y, groups = _extreme_groups()
    X = np.nan_to_num(X / np.finfo(float).max * 4)  # inside the public bounds
    source = check_random_source(0)
    features, thresholds = skdp.tree._random_tree.draw_random_splits(
        np.full(2, -4.0), np.full(2, 4.0), 3, source, 4
    )

    def counts(rows):
        return forest_counts(
            X[rows],
            y[rows],
            2,
            features,
            thresholds,
            "disjoint",
            check_random_source(1),
            groups[rows],
        )[0]

    full = counts(np.arange(groups.size))
    for g in np.unique(groups):
        rows = np.flatnonzero(groups != g)
        moved = np.abs(full - counts(rows)).sum(axis=(1, 2))
        assert np.count_nonzero(moved) <= 1
        assert moved.sum() == np.count_nonzero(groups == g)


# -- finding: two labels that numpy writes alike are one privacy unit -------


@pytest.mark.parametrize(
    "labels", [["a", "a\x00", "b"], [b"a", b"a\x00", b"b"]], ids=["str", "bytes"]
)
def test_labels_differing_in_trailing_nul_stay_two_groups(labels):
    # numpy's fixed-width strings drop trailing NUL characters: a list of
    # labels "a" and "a\x00" became one group, so two people shared one
    # bound of k rows and adding the second changed the first's rows (two
    # group steps, 2 epsilon, while one group is claimed)
    codes, n_codes = group_codes(labels)
    assert n_codes == 3
    assert codes[0] != codes[1]


# -- finding: the search's blocks must be able to vote ----------------------


def _votes(monkeypatch):
    seen = []
    original = _search_selection.vote_histogram

    def spy(choices, n_candidates):
        seen.append(list(choices))
        return original(choices, n_candidates)

    monkeypatch.setattr(_search_selection, "vote_histogram", spy)
    return seen


def test_blocks_vote_with_group_labels_of_mixed_types(monkeypatch):
    # the mixin accepts labels such as [1, "p2", 3, ...] (Python objects,
    # equal by ==); the blocks' internal group split sorted them
    # (np.unique), raised, and every block abstained: a silent random pick
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 2))
    y = (X[:, 0] > 0).astype(int)
    person = np.repeat(np.arange(80), 3)
    groups = [int(p) if p % 2 else f"p{p}" for p in person]
    seen = _votes(monkeypatch)
    for cv in (1, 2):
        NoisyMaxSearchCV(
            LogisticRegression(),
            {"C": [1e-3, 1.0]},
            n_blocks=4,
            cv=cv,
            refit=False,
            max_rows_per_group=3,
            accountant=BudgetAccountant(),
            random_state=0,
        ).fit(X, y, groups=groups)
    assert all(vote != -1 for choices in seen for vote in choices), seen


def test_a_blocks_group_split_reads_only_the_blocks_own_labels():
    # the split must be the same function of the block whatever the other
    # blocks hold: equal labels written as a new set of values give the
    # same folds
    rng = np.random.default_rng(2)
    groups = np.repeat(rng.permutation(30), 3)
    X, y = rng.normal(size=(90, 2)), np.tile([0, 1, 1], 30)
    for cv in (1, 3):
        a = _splits(LogisticRegression(), X, y, cv, groups)
        b = _splits(LogisticRegression(), X, y, cv, groups * 7 + 1000)
        for (ta, sa), (tb, sb) in zip(a, b, strict=True):
            np.testing.assert_array_equal(ta, tb)
            np.testing.assert_array_equal(sa, sb)


def test_a_blocks_candidates_that_spend_delta_get_a_score():
    # skdp's linear models spend delta by default; the blocks fitted them
    # under BudgetAccountant() (delta budget 0): every fit was refused,
    # every block abstained and the search picked at random
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    candidates = [
        skdp.PrivateLogisticRegression(epsilon=1.0, delta=1e-6, classes=[0, 1])
    ]
    scores = _candidate_scores(candidates, X, y, 2, "accuracy")
    assert np.isfinite(scores).all()


def test_a_blocks_candidates_stated_with_a_group_bound_get_a_score():
    # the natural way to ask for a person-level search states the bound on
    # the estimator too; the blocks fit candidates without groups, which a
    # bound refuses: every block abstained (a uniform random pick)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    groups = np.arange(200) // 2
    candidate = skdp.PrivateLogisticRegression(classes=[0, 1], max_rows_per_group=2)
    for cv in (1, 2):
        scores = _candidate_scores([candidate], X, y, cv, "accuracy", groups=groups)
        assert np.isfinite(scores).all()
    assert candidate.max_rows_per_group == 2  # the caller's object is untouched


# -- holds: routing reaches the grouped models and meta-estimators ----------


def test_groups_are_routed_to_the_models_and_the_search():
    from sklearn import config_context
    from sklearn.model_selection import GroupKFold, cross_validate
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from skdp.ensemble import SampleAggregateEstimator

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    groups = np.arange(60) // 3
    accountant = BudgetAccountant(delta=1.0)
    aggregate = SampleAggregateEstimator(
        LogisticRegression(), n_blocks=3, classes=[0, 1], max_rows_per_group=2
    )
    search = NoisyMaxSearchCV(
        skdp.PrivateLogisticRegression(classes=[0, 1]),
        {"C": [1.0, 2.0]},
        n_blocks=3,
        max_rows_per_group=2,
    )
    with config_context(enable_metadata_routing=True):
        cross_validate(
            make_pipeline(
                StandardScaler(), aggregate.set_params(accountant=accountant)
            ),
            X,
            y,
            params={"groups": groups},
            cv=GroupKFold(2),
        )
        make_pipeline(StandardScaler(), search.set_params(accountant=accountant)).fit(
            X, y, groups=groups
        )
    labels = [entry.label for entry in accountant.entries]
    assert len(labels) == 4  # 2 folds, the vote and the refit
    assert all(label.endswith("(unit: group of <= 2 rows)") for label in labels)


def test_sample_aggregate_blocks_fit_an_estimator_stated_with_a_group_bound():
    # as for the search: a block fits its clone without groups, which a
    # bound refuses, so every block failed (all None: abstentions)
    from skdp.ensemble import SampleAggregateEstimator

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 2))
    y = (X[:, 0] > 0).astype(int)
    inner = skdp.PrivateGaussianNB(classes=[0, 1], bounds=(-4, 4), max_rows_per_group=2)
    model = SampleAggregateEstimator(
        inner,
        n_blocks=3,
        classes=[0, 1],
        max_rows_per_group=2,
        accountant=BudgetAccountant(),
        random_state=0,
    ).fit(X, y, groups=np.arange(120) // 3)
    assert all(block is not None for block in model.estimators_)
