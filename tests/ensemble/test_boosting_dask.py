"""The boosting on Dask input: the in-memory fit, bit for bit.

With the same seed a Dask fit releases the same bins, baseline, histograms
and leaves as the in-memory fit of the computed arrays (the per-block cell
counts are exact integers; the rounds run on the gathered bin codes), for
uneven chunks with an empty and a one-row block. What has no Dask path is
refused before the charge; a NaN row is dropped and ``±inf`` is the largest
double (the Dask rule), and blocks whose every row is dropped still fit; a
block that fails to compute raises the fixed error with the charge kept.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skdp import BudgetAccountant
from skdp.ensemble import (
    PrivateHistGradientBoostingClassifier,
    PrivateHistGradientBoostingRegressor,
)

da = pytest.importorskip("dask.array")

pytestmark = pytest.mark.filterwarnings("ignore::skdp.NoiseDominatedWarning")

SMALL = {
    "max_iter": 3,
    "max_depth": 2,
    "max_bins": 8,
    "epsilon": 30.0,
    "boosting": "trees",
}
# uneven row chunks: an empty block, a one-row block, and two others
CHUNKS = (0, 1, 120, 179)


def _data(classes=2):
    X, y = make_classification(
        300, 4, n_informative=3, n_redundant=0, n_classes=classes, random_state=0
    )
    return X * 3.0, y


def _model(kind, accountant=None, **params):
    params = {**SMALL, "random_state": 0, **params}
    params["accountant"] = accountant or BudgetAccountant(delta=0.5)
    if kind == "classifier":
        return PrivateHistGradientBoostingClassifier(**params)
    return PrivateHistGradientBoostingRegressor(**params)


def _output(model, X):
    if isinstance(model, PrivateHistGradientBoostingClassifier):
        return model.predict_proba(X)
    return model.predict(X)


def _dask(X, y, chunks=CHUNKS):
    return da.from_array(X, chunks=(chunks, 2)), da.from_array(y, chunks=(chunks,))


CASES = [
    ("classifier", {"classes": [0, 1]}),  # private bins
    ("classifier", {"classes": [0, 1, 2], "feature_bounds": (-9, 9)}),
    ("classifier", {"classes": [0, 1, 2], "max_classes": 2}),  # rows dropped
    ("regressor", {}),  # private bins and private target range
    ("regressor", {"feature_bounds": (-9, 9), "target_bounds": (-1, 3)}),
    ("regressor", {"boosting": "cyclic", "target_bounds": (-1, 3)}),
]


@pytest.mark.parametrize("kind, params", CASES)
def test_a_dask_fit_is_the_in_memory_fit_bit_for_bit(kind, params):
    X, y = _data(
        classes=3 if "classes" in params and len(params["classes"]) == 3 else 2
    )
    y = y if kind == "classifier" else y + X[:, 0] / 10
    memory = _model(kind, **params).fit(X, y)
    accountant = BudgetAccountant(delta=0.5)
    chunked = _model(kind, accountant, **params).fit(*_dask(X, y))
    for mine, theirs in zip(
        chunked.bin_thresholds_, memory.bin_thresholds_, strict=True
    ):
        np.testing.assert_array_equal(mine, theirs)
    np.testing.assert_array_equal(_output(chunked, X), _output(memory, X))
    if kind == "classifier":
        np.testing.assert_array_equal(chunked.classes_, memory.classes_)
    else:
        np.testing.assert_array_equal(chunked.target_range_, memory.target_range_)
    assert accountant.total() == (memory.epsilon_spent_, memory.delta_spent_)
    assert len(set(np.concatenate(memory.bin_thresholds_))) > 4  # bins were cut


def test_nan_rows_are_dropped_and_infinities_are_the_largest_double():
    X, y = _data()
    dirty = X.copy()
    dirty[5, 2] = np.nan
    dirty[77] = np.inf
    dirty[200, 1] = -np.inf
    clean = X.copy()
    clean[77] = np.finfo(float).max
    clean[200, 1] = -np.finfo(float).max
    kept = np.arange(300) != 5
    memory = _model("classifier", classes=[0, 1]).fit(clean[kept], y[kept])
    chunked = _model("classifier", classes=[0, 1]).fit(*_dask(dirty, y))
    np.testing.assert_array_equal(_output(chunked, X), _output(memory, X))


def _unknown_chunks(X, y):
    Xd, yd = _dask(X, y, chunks=100)
    keep = yd > -1  # every row, but Dask no longer knows the block lengths
    return Xd[keep], yd[keep]


@pytest.mark.parametrize(
    "kind, params, fit_params, match",
    [
        ("classifier", {}, {}, r"classes=\[\.\.\.\]"),
        (
            "classifier",
            {"classes": [0, 1]},
            {"sample_weight": 1},
            "sample_weight is supported",
        ),
        ("regressor", {"max_rows_per_group": 2}, {"groups": 1}, "groups is supported"),
        ("regressor", {}, {"unknown": True}, "row chunks of X and y must be known"),
        ("classifier", {"classes": [0, 1]}, {"unknown": True}, "must be known"),
    ],
)
def test_what_dask_cannot_run_is_refused_before_the_charge(
    kind, params, fit_params, match
):
    X, y = _data()
    data = _unknown_chunks(X, y) if fit_params.pop("unknown", False) else _dask(X, y)
    fit_params = {key: np.ones(300) for key in fit_params}
    accountant = BudgetAccountant(delta=0.5)
    with pytest.raises(ValueError, match=match):
        _model(kind, accountant, **params).fit(*data, **fit_params)
    assert accountant.total() == (0.0, 0.0)


def _failing_block():
    raise OSError("a reader failed on value 'secret'")


@pytest.mark.parametrize("params", [{}, {"feature_bounds": (-9, 9)}])
def test_a_block_that_fails_raises_the_fixed_error_and_the_charge_stays(params):
    dask = pytest.importorskip("dask")
    X, y = _data()
    Xd, yd = _dask(X, y, chunks=150)
    bad = da.from_delayed(dask.delayed(_failing_block)(), shape=(5, 4), dtype=float)
    Xd = da.concatenate([Xd, bad.rechunk((5, 2))])
    yd = da.concatenate([yd, da.zeros(5, chunks=5, dtype=yd.dtype)])
    accountant = BudgetAccountant(delta=0.5)
    model = _model("classifier", accountant, classes=[0, 1], **params)
    with pytest.raises(RuntimeError, match="failed after the budget") as info:
        model.fit(Xd, yd)
    assert "secret" not in str(info.value) and info.value.__cause__ is None
    assert accountant.total() == (model.epsilon, model.delta)


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
@pytest.mark.parametrize("params", [{}, {"feature_bounds": (-9, 9)}])
def test_blocks_whose_every_row_is_dropped_fit_without_raising(kind, params):
    # after the charge nothing may raise: no row left is a fit of 0 rows
    X, y = np.full((20, 4), np.nan), np.zeros(20)
    classes = {"classes": [0, 1]} if kind == "classifier" else {}
    model = _model(kind, **classes, **params).fit(*_dask(X, y, chunks=(0, 7, 13)))
    assert np.all(np.isfinite(_output(model, np.zeros((3, 4)))))
