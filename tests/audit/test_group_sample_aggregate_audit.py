"""Audits of sample-and-aggregate's vote and of NoisyMaxSearchCV's
subsample vote with groups as the privacy unit, and their twins that split
a group across blocks (each row to a block of its own), which the audits
must catch."""

import numpy as np
import pytest
from sklearn.dummy import DummyClassifier

from skdp import BudgetAccountant, SampleAggregateEstimator
from skdp.audit import assert_dp, audit_mechanism
from skdp.ensemble import _blocks
from skdp.ensemble._blocks import (
    _fit_blocks,
    _group_block_indices,
    _noisy_vote,
    _vote_histogram,
)
from skdp.mechanisms import check_random_source
from skdp.model_selection import NoisyMaxSearchCV, _search_selection
from skdp.utils._groups import row_hashes
from skdp.utils._privacy_unit import PrivacyUnit
from skdp.utils._progress import Progress

pytestmark = pytest.mark.filterwarnings("ignore::skdp.exceptions.NoiseDominatedWarning")

# Neighbours: D0, one row of class 0 (one block votes 0, the others
# abstain); D1, D0 plus one group of 20 rows of class 1. Kept whole, the
# group changes one block: one vote moves (permute-and-flip at scale 2/eps,
# eps-DP). Split across 20 blocks it wins about 13 votes at the same noise.
EPS, N_BLOCKS, K = 1.0, 20, 20
CLASSES = np.array([0, 1])
QUERY = np.zeros((1, 1))
# the twins score about 2.4 at this size (their true epsilon is far larger)
AUDIT = {"n_samples": 400, "n_pilot": 100, "random_state": 0}
D0 = (np.zeros((1, 1)), np.array([0]), np.array([0]))
D1 = (
    np.vstack([D0[0], np.arange(1.0, K + 1.0)[:, None]]),
    np.append(D0[1], [1] * K),
    np.append(D0[2], [1] * K),
)


def _released_label(data, seed):
    # SampleAggregateEstimator's steps after the charge in 'vote' mode:
    # block seeds, blocks, block fits, one predicted row
    X, y, groups = data
    source = check_random_source(seed)
    seeds = source.integers(2**31 - 1, size=N_BLOCKS)
    blocks = _group_block_indices(PrivacyUnit(groups, K), N_BLOCKS, source, X, y)
    models = _fit_blocks(DummyClassifier(), X, y, y, blocks, seeds, CLASSES, None)
    return int(_noisy_vote(_vote_histogram(models, QUERY, CLASSES), EPS, source)[0])


def test_the_steps_are_the_estimators():
    model = SampleAggregateEstimator(
        DummyClassifier(),
        aggregate="vote",
        n_blocks=N_BLOCKS,
        classes=CLASSES,
        epsilon=EPS,
        max_rows_per_group=K,
        accountant=BudgetAccountant(),
    )
    for seed in range(5):
        fitted = model.set_params(random_state=seed).fit(*D1[:2], groups=D1[2])
        assert fitted.predict(QUERY)[0] == _released_label(D1, seed)


def test_audit_of_the_grouped_vote_passes():
    assert_dp(_released_label, D0, D1, EPS, **AUDIT)


def _rows_split_across_blocks(groups, n_blocks, seed, columns):
    hashes = row_hashes(seed, columns)
    labels = (hashes % np.uint64(n_blocks)).astype(np.int64)
    order = np.argsort(labels, kind="stable")
    return np.split(order, np.cumsum(np.bincount(labels, minlength=n_blocks))[:-1])


def test_audit_catches_a_group_split_across_blocks(monkeypatch):
    monkeypatch.setattr(_blocks, "group_blocks", _rows_split_across_blocks)
    mutant = audit_mechanism(_released_label, D0, D1, **AUDIT)
    assert mutant.epsilon_lower_bound > EPS


# -- NoisyMaxSearchCV(method="subsample"): the same neighbours. The blocks'
# votes are stubbed by the majority label of the block (a vote may be any
# function of its block's rows; the audit is of the partition and the
# selection, the steps that groups change).
SEARCH = NoisyMaxSearchCV(
    DummyClassifier(), {"strategy": ["prior"]}, n_blocks=N_BLOCKS, epsilon=EPS
)
PLAN = {"candidates": [DummyClassifier(), DummyClassifier()]}


def _majority_votes(candidates, X, y, blocks, **kwargs):
    return [-1 if b.size == 0 else int(np.bincount(y[b]).argmax()) for b in blocks]


def _selected(data, seed):
    X, y, groups = data
    source = check_random_source(seed)
    return SEARCH._select_subsample(X, y, PLAN, source, Progress("", 0), groups)


@pytest.fixture
def stubbed_votes(monkeypatch):
    monkeypatch.setattr(_search_selection, "block_votes", _majority_votes)


def test_audit_of_the_grouped_search_passes(stubbed_votes):
    assert_dp(_selected, D0, D1, EPS, **AUDIT)


def test_audit_catches_a_search_that_splits_a_group(stubbed_votes, monkeypatch):
    def row_labels(groups, n_blocks, source):
        return _blocks._block_labels(len(groups), n_blocks, source)

    monkeypatch.setattr(_search_selection, "_group_block_labels", row_labels)
    mutant = audit_mechanism(_selected, D0, D1, **AUDIT)
    assert mutant.epsilon_lower_bound > EPS
