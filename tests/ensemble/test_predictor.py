"""Flat trees: routing binned rows to leaves, by hand."""

import numpy as np

from skdp.ensemble._hist_gradient_boosting.predictor import TreePredictor
from skdp.ensemble._hist_gradient_boosting.splitting import NO_SPLIT


def test_rows_reach_the_hand_derived_leaves():
    # root: feature 1 <= 2; left child: feature 0 <= 0; right child: no split
    tree = TreePredictor(
        [np.array([1]), np.array([0, 0])],
        [np.array([2]), np.array([0, NO_SPLIT])],
        np.array([10.0, 20.0, 30.0, 40.0]),
    )
    binned = np.array([[0, 0], [1, 2], [0, 3], [5, 9]], dtype=np.uint8)
    assert tree.leaf_of(binned).tolist() == [0, 1, 2, 2]
    assert tree.predict_binned(binned).tolist() == [10.0, 20.0, 30.0, 30.0]
    assert tree.depth == 2
