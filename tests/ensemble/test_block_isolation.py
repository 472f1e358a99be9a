"""Each block's model must depend on that block's rows only (review).

Sample-and-aggregate's sensitivity argument needs every block's output to be
a function of its own rows and its public seed. ``_seeded_clone`` seeds the
``random_state`` parameters; a splitter given as a parameter
(``LogisticRegressionCV(cv=KFold(shuffle=True))``) has one too but is no
estimator, so it drew from NumPy's global generator, and how much a block
drew (a permutation of its rows) moved the next blocks' folds.
"""

import numpy as np
from sklearn.linear_model import LogisticRegressionCV
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp.ensemble._blocks import _fit_blocks, _seeded_clone


def block_models(estimator, X, y, blocks):
    # the two runs differ only in the rows of block 0
    np.random.seed(0)  # noqa: NPY002 (the global generator is the subject)
    seeds = list(range(len(blocks)))
    return _fit_blocks(estimator, X, y, y, blocks, seeds, np.array([0, 1]), None)


def test_a_row_of_one_block_leaves_the_other_blocks_models_unchanged():
    rng = np.random.RandomState(0)
    n = 400
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 2 * rng.normal(size=n) > 0).astype(int)
    blocks = np.array_split(np.arange(n), 8)
    estimator = make_pipeline(
        StandardScaler(),
        LogisticRegressionCV(
            Cs=[1e-3, 1e-2, 1e-1, 1.0, 10.0], cv=KFold(3, shuffle=True)
        ),
    )
    before = block_models(estimator, X, y, blocks)
    after = block_models(estimator, X, y, [blocks[0][1:], *blocks[1:]])
    for model, neighbour in zip(before[1:], after[1:], strict=True):
        np.testing.assert_array_equal(model[-1].coef_, neighbour[-1].coef_)


def test_splitters_among_the_parameters_get_the_block_seed():
    estimator = LogisticRegressionCV(cv=KFold(3, shuffle=True))
    model = _seeded_clone(estimator, 7)
    assert model.cv.random_state == 7 and model.random_state == 7
    assert estimator.cv.random_state is None  # the original is untouched
