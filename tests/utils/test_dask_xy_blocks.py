"""Supervised Dask input whose blocks do not hold their declared shapes.

The data is read after the charge, so the join of ``y`` to the rows of
``X`` must be total: a block of ``y`` of another length, another number of
dimensions or not an array at all drops its block's rows, as a block of
``X`` of the wrong shape does, and the fit neither raises nor warns.
"""

import warnings

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.linear_model import PrivateLinearRegression, PrivateLogisticRegression
from skdp.utils._dask_xy import _label_codes

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

N_ROWS = 40


def regression(acc):
    return PrivateLinearRegression(
        epsilon=1.0,
        data_norm=5.0,
        target_bounds=(-10.0, 10.0),
        accountant=acc,
        random_state=1,
    )


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N_ROWS, 2))
    return X, X @ np.array([1.0, 2.0])


def second_block(change):
    def apply(block, block_info=None):
        return change(block) if block_info[0]["chunk-location"][0] == 1 else block

    return apply


ODD_BLOCKS = {
    "one row short": lambda b: b[:-1],
    "two columns": lambda b: np.c_[b, b],
    "a scalar": lambda b: np.float64(1.0),
    "a list": list,
}


def odd_cases():
    for case, change in ODD_BLOCKS.items():
        yield pytest.param(change, 10, id=case)


@pytest.mark.parametrize("change, y_chunks", list(odd_cases()))
def test_a_block_of_y_not_of_its_declared_shape_drops_its_rows(data, change, y_chunks):
    X, y = data
    y_dask = da.from_array(y, chunks=y_chunks).map_blocks(
        second_block(change), meta=y[:0]
    )
    acc = BudgetAccountant(delta=0.5)
    with dask.config.set(scheduler="sync"), warnings.catch_warnings():
        warnings.simplefilter("error")
        regression(acc).fit(da.from_array(X, chunks=(10, 2)), y_dask)
    assert len(acc.entries) == 1


def test_a_target_of_one_column_is_the_in_memory_target(data):
    X, y = data
    y_dask = da.from_array(y[:, None], chunks=(10, 1))
    with dask.config.set(scheduler="sync"):
        chunked = regression(BudgetAccountant(delta=0.5)).fit(
            da.from_array(X, chunks=(10, 2)), y_dask
        )
    in_memory = regression(BudgetAccountant(delta=0.5)).fit(X, y)
    np.testing.assert_array_equal(chunked.coef_, in_memory.coef_)


def test_a_same_length_block_of_y_with_two_columns_drops_only_its_block(data):
    X, y = data
    y_dask = da.from_array(y, chunks=10).map_blocks(
        second_block(lambda b: np.c_[b, b]), meta=y[:0]
    )
    with dask.config.set(scheduler="sync"):
        chunked = regression(BudgetAccountant(delta=0.5)).fit(
            da.from_array(X, chunks=(10, 2)), y_dask
        )
    keep = (np.arange(N_ROWS) < 10) | (np.arange(N_ROWS) >= 20)
    in_memory = regression(BudgetAccountant(delta=0.5)).fit(X[keep], y[keep])
    np.testing.assert_array_equal(chunked.coef_, in_memory.coef_)


class _FailingComparison:
    """A hashable label whose comparison with a class raises."""

    def __hash__(self):
        return hash(1)

    def __eq__(self, other):
        raise ValueError("no comparison")


def test_a_label_whose_comparison_raises_is_no_label():
    labels = np.empty((2, 1), dtype=object)
    labels[:, 0] = [_FailingComparison(), 1]
    codes = _label_codes(labels, np.array([0, 1]))
    np.testing.assert_array_equal(codes.ravel(), [np.nan, 1])


def test_logistic_with_odd_label_blocks_neither_raises_nor_warns(data):
    X, _ = data
    y = np.array(["a", "b"])[np.arange(N_ROWS) % 2].astype(object)
    y_dask = da.from_array(y, chunks=10).map_blocks(
        second_block(lambda b: b[:-1]), meta=y[:0]
    )
    acc = BudgetAccountant(delta=0.5)
    with dask.config.set(scheduler="sync"), warnings.catch_warnings():
        warnings.simplefilter("error")
        PrivateLogisticRegression(
            1.0, max_iter=3, classes=["a", "b"], accountant=acc, random_state=0
        ).fit(da.from_array(X, chunks=(10, 2)), y_dask)
    assert len(acc.entries) >= 1


def joined_rows(X_dask, y_dask):
    from skdp.utils._dask_xy import validate_dask_xy

    estimator = regression(BudgetAccountant(delta=0.5))
    with dask.config.set(scheduler="sync"):
        return validate_dask_xy(estimator, X_dask, y_dask).rows.compute()


def test_y_of_other_row_chunks_is_refused_before_any_charge(data):
    # Rechunking y to X's declared rows would cut y's blocks at declared
    # offsets while X's blocks are read whole (review finding, MEDIUM).
    X, y = data
    acc = BudgetAccountant(delta=0.5)
    with pytest.raises(ValueError, match="row chunks of X"):
        regression(acc).fit(
            da.from_array(X, chunks=(10, 2)), da.from_array(y, chunks=8)
        )
    assert acc.entries == ()


def test_one_added_row_changes_one_joined_row(data):
    # D' holds one row more than D, at position 10: in the second block of X
    # and of y (declared rows 10-19, which the metadata of D' still says).
    # Per row, the joined rows of D' must be those of D and the added one.
    X, y = data
    X_dask = da.from_array(X, chunks=(10, 2))
    y_dask = da.from_array(y, chunks=10)
    before = joined_rows(X_dask, y_dask)
    X_added = X_dask.map_blocks(
        second_block(lambda b: np.r_[[[0.5, -0.5]], b]), meta=X[:0]
    )
    y_added = y_dask.map_blocks(second_block(lambda b: np.r_[[7.0], b]), meta=y[:0])
    after = joined_rows(X_added, y_added)
    assert {tuple(r) for r in before} <= {tuple(r) for r in after}
    assert len(after) == len(before) + 1
