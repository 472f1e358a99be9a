"""A block's vote must depend on that block's rows only.

The privacy argument of ``NoisyMaxSearchCV(method='subsample')`` (votes
1-sensitive under add/remove of one row) needs every vote to be a function
of its own block. Candidates or splitters with ``random_state=None`` draw
from NumPy's global generator, and how many numbers a block's fits draw
depends on its rows (here: one uniform prediction per held-out row), so the
next blocks' fits start from a state that depends on an earlier block.
Found by the adversarial review; each block now gets a seed of its own for
every ``random_state`` of its fits and of a splitter.
"""

import numpy as np
from sklearn.dummy import DummyClassifier
from sklearn.model_selection import KFold

from skdp.ensemble._blocks import _block_indices, _block_labels
from skdp.mechanisms import check_random_source
from skdp.model_selection._subsample import block_votes
from skdp.utils._progress import Progress


def votes_of(blocks, X, y):
    # random_state=None: the fits draw from NumPy's global generator, seeded
    # here so that the two runs differ only in the removed row
    candidates = [
        DummyClassifier(strategy="uniform"),
        DummyClassifier(strategy="stratified"),
    ]
    np.random.seed(0)  # noqa: NPY002 (the global generator is the subject)
    return block_votes(
        candidates,
        X,
        y,
        blocks,
        cv=KFold(2, shuffle=True),  # a splitter without a seed, too
        scoring=None,
        n_jobs=None,
        progress=Progress("test", 0),
        seeds=np.arange(len(blocks)) + 10,
    )


def test_removing_a_row_of_one_block_leaves_the_other_votes_unchanged():
    rng = np.random.RandomState(0)
    n, k = 600, 12
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    blocks = _block_indices(_block_labels(n, k, check_random_source(0)), k)
    neighbour = [blocks[0][1:], *blocks[1:]]  # one row of block 0 removed
    before = votes_of(blocks, X, y)
    after = votes_of(neighbour, X, y)
    assert before[1:] == after[1:]


def test_a_block_scores_the_same_whatever_the_global_generator_holds():
    # A shuffling splitter and candidates without seeds: the block's scores
    # depend on its rows and its seed only, not on NumPy's global state.
    from sklearn.tree import DecisionTreeClassifier

    from skdp.model_selection._subsample import _candidate_scores

    rng = np.random.RandomState(1)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + rng.normal(size=60) > 0).astype(int)
    candidates = [DecisionTreeClassifier(max_features=1), DummyClassifier()]
    splitter = KFold(3, shuffle=True)
    scores = []
    for state in (0, 1):
        np.random.seed(state)  # noqa: NPY002 (the global generator is the subject)
        scores.append(_candidate_scores(candidates, X, y, splitter, None, seed=7))
    np.testing.assert_array_equal(scores[0], scores[1])
    assert splitter.random_state is None  # the user's splitter is not changed
