"""A block's vote must depend on that block's rows only.

The privacy argument of ``NoisyMaxSearchCV(method='subsample')`` (votes
1-sensitive under add/remove of one row) needs every vote to be a function
of its own block. Candidates or splitters with ``random_state=None`` draw
from NumPy's global generator, and how many numbers a block's fits draw
depends on its rows (here: one uniform prediction per held-out row), so the
next blocks' fits start from a state that depends on an earlier block.
Found by the adversarial review; ``skdp/model_selection/_subsample.py`` was
being changed by another helper, so the test is marked xfail(strict) until
the block tasks get randomness of their own (see the review report).
"""

import numpy as np
import pytest
from sklearn.dummy import DummyClassifier

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
        cv=2,
        scoring=None,
        n_jobs=None,
        progress=Progress("test", 0),
    )


@pytest.mark.xfail(
    strict=True,
    reason="block fits share NumPy's global generator: an earlier block's "
    "rows change the later blocks' votes (review finding)",
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
