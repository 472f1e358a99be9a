"""Linear models and PCA on Dask input: the in-memory release, one charge.

``PrivatePCA`` and ``PrivateLinearRegression`` release exact sums over rows
(a clipped Gram matrix, cross products with clipped targets), which add up
over blocks: on Dask input their releases must equal the in-memory ones for
a seed, for any chunking, and everything invalid must be refused before the
charge.
"""

import warnings

import numpy as np
import pytest

from skdp import BudgetAccountant, NoiseDominatedWarning
from skdp.decomposition import PrivatePCA
from skdp.linear_model import PrivateLinearRegression, PrivateLogisticRegression
from skdp.naive_bayes import PrivateGaussianNB

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

N_ROWS = 500


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = rng.normal(0, 2, size=(N_ROWS, 3))
    X[:5] *= 1e6  # rows far beyond the norm bound: clipped
    y = X @ np.array([1.5, -2.0, 0.5]) + rng.normal(0, 1, N_ROWS) + 4.0
    y[5] = 1e12  # a target far beyond its bounds
    return X, y


CHUNKINGS = [
    ((N_ROWS,), (3,)),
    ((0, 1, 1, 200, N_ROWS - 202), (3,)),
    ((N_ROWS // 2, N_ROWS // 2), (1, 2)),
]
CHUNK_IDS = ["one", "tiny+empty", "columns"]


def budget():
    return BudgetAccountant(delta=0.5)


def pca(acc):
    return PrivatePCA(2, epsilon=1.0, max_norm=5.0, accountant=acc, random_state=3)


def regression(acc, fit_intercept=True):
    return PrivateLinearRegression(
        epsilon=1.0,
        data_norm=8.0,
        target_bounds=(-20.0, 30.0),
        fit_intercept=fit_intercept,
        accountant=acc,
        random_state=3,
    )


def assert_same(a, b, names):
    for name in names:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), name)
    assert (a.epsilon_spent_, a.delta_spent_) == (b.epsilon_spent_, b.delta_spent_)


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=CHUNK_IDS)
def test_pca_release_equals_the_in_memory_one(data, chunks):
    X, _ = data
    with dask.config.set(scheduler="threads"):
        chunked = pca(budget()).fit(da.from_array(X, chunks=chunks))
    in_memory = pca(budget()).fit(X)
    names = ["components_", "explained_variance_", "mean_", "n_samples_"]
    assert_same(in_memory, chunked, names)
    assert chunked.n_features_in_ == 3


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("chunks", CHUNKINGS, ids=CHUNK_IDS)
def test_regression_release_equals_the_in_memory_one(data, chunks, fit_intercept):
    X, y = data
    X_dask = da.from_array(X, chunks=chunks)
    y_dask = da.from_array(y, chunks=(chunks[0],))  # block k holds block k's y
    with dask.config.set(scheduler="threads"):
        chunked = regression(budget(), fit_intercept).fit(X_dask, y_dask)
    in_memory = regression(budget(), fit_intercept).fit(X, y)
    assert_same(in_memory, chunked, ["coef_", "intercept_"])
    assert chunked.n_features_in_ == 3


def test_regression_in_worker_processes(data):
    # The block statistic and its arguments travel to other processes.
    X, y = data
    with dask.config.set(scheduler="processes", num_workers=2):
        chunked = regression(budget()).fit(
            da.from_array(X, chunks=150), da.from_array(y, chunks=150)
        )
    in_memory = regression(budget()).fit(X, y)
    assert_same(in_memory, chunked, ["coef_", "intercept_"])


def test_a_row_whose_target_is_not_finite_is_dropped_without_a_word(data):
    # In memory a NaN target is refused before the charge; on Dask the data
    # is read after it, so the public per-row rule drops the row.
    X, y = data
    bad = y.copy()
    bad[[7, 300]] = np.nan
    acc = budget()
    with dask.config.set(scheduler="threads"):
        chunked = regression(acc).fit(
            da.from_array(X, chunks=100), da.from_array(bad, chunks=100)
        )
    keep = np.isfinite(bad)
    in_memory = regression(budget()).fit(X[keep], y[keep])
    assert_same(in_memory, chunked, ["coef_", "intercept_"])
    assert len(acc.entries) == 1


def test_targets_that_are_not_numbers_drop_their_rows_without_a_word(data):
    # Blocks that declare float64 but hold a string (a lying schema, or a
    # reader's fallback): the string reads as NaN and its row is dropped;
    # nothing raises or warns after the charge.
    X, y = data

    def with_a_string(block, block_info=None):
        block = block.astype(object)
        if block_info[0]["chunk-location"][0] == 1:
            block[3] = "alice-123"
        return block

    y_dask = da.from_array(y, chunks=100).map_blocks(with_a_string, meta=y[:0])
    with dask.config.set(scheduler="sync"), warnings.catch_warnings():
        warnings.simplefilter("error")
        # the release's own notes (post-processing of released values, the
        # same as in memory) may speak; nothing about the dropped row may
        warnings.filterwarnings("ignore", category=NoiseDominatedWarning)
        chunked = regression(budget()).fit(da.from_array(X, chunks=100), y_dask)
    keep = np.arange(N_ROWS) != 103
    in_memory = regression(budget()).fit(X[keep], y[keep])
    assert_same(in_memory, chunked, ["coef_", "intercept_"])


@pytest.mark.parametrize(
    "make_y, error, message",
    [
        (lambda y: y, TypeError, "both as Dask"),  # y in memory
        (lambda y: da.from_array(y[:-1], chunks=100), ValueError, "row chunks"),
        (lambda y: da.from_array(y, chunks=97), ValueError, "row chunks of X"),
        (lambda y: da.from_array(y.astype(str), chunks=100), ValueError, "numeric"),
        (lambda y: da.from_array(np.c_[y, y], chunks=100), ValueError, "1-D"),
    ],
    ids=["y in memory", "y shorter", "y other chunks", "y strings", "y 2 columns"],
)
def test_invalid_supervised_inputs_raise_before_any_charge(
    data, make_y, error, message
):
    X, y = data
    acc = budget()
    with pytest.raises(error, match=message):
        regression(acc).fit(da.from_array(X, chunks=100), make_y(y))
    assert acc.entries == ()


def test_a_dataframe_x_is_refused_before_any_charge(data):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe", exc_type=ImportError)
    X, y = data
    frame = dd.from_pandas(pd.DataFrame(X, columns=["a", "b", "c"]), npartitions=2)
    acc = budget()
    with pytest.raises(ValueError, match="to_dask_array"):
        regression(acc).fit(frame, da.from_array(y, chunks=100))
    assert acc.entries == ()


def test_pca_of_a_dataframe_keeps_its_feature_names(data):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe", exc_type=ImportError)
    X, _ = data
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    with dask.config.set(scheduler="threads"):
        chunked = pca(budget()).fit(dd.from_pandas(frame, npartitions=3))
    in_memory = pca(budget()).fit(frame)
    assert_same(in_memory, chunked, ["components_", "explained_variance_"])
    assert list(chunked.feature_names_in_) == ["a", "b", "c"]


def logistic(acc, classes):
    return PrivateLogisticRegression(
        1.0, max_iter=5, classes=classes, accountant=acc, random_state=3
    )


@pytest.mark.parametrize(
    "labels",
    [[0, 1], ["cat", "dog", "eel"], [-3, 0, 2, 7]],
    ids=["binary", "three strings", "four integers"],
)
@pytest.mark.parametrize("chunks", CHUNKINGS, ids=CHUNK_IDS)
def test_logistic_release_equals_the_in_memory_one(data, chunks, labels):
    X, _ = data
    classes = np.array(labels)
    y = classes[np.arange(N_ROWS) % classes.size]
    y_dask = da.from_array(y, chunks=(chunks[0],))
    with dask.config.set(scheduler="threads"):
        chunked = logistic(budget(), labels).fit(
            da.from_array(X, chunks=chunks), y_dask
        )
    in_memory = logistic(budget(), labels).fit(X, y)
    assert_same(in_memory, chunked, ["coef_", "intercept_", "count_", "classes_"])


def test_a_label_outside_the_public_classes_drops_its_row(data):
    # In memory such a label is refused before the charge; on Dask the
    # per-row rule drops the row (as a label that is not a number).
    X, _ = data
    y = np.where(np.arange(N_ROWS) % 3 == 0, "yes", "no").astype(object)
    y[[4, 250]] = ["maybe", None]
    with dask.config.set(scheduler="sync"), warnings.catch_warnings():
        warnings.simplefilter("error")
        chunked = logistic(budget(), ["no", "yes"]).fit(
            da.from_array(X, chunks=100), da.from_array(y, chunks=100)
        )
    keep = ~np.isin(np.arange(N_ROWS), [4, 250])
    in_memory = logistic(budget(), ["no", "yes"]).fit(X[keep], y[keep].astype(str))
    assert_same(in_memory, chunked, ["coef_", "intercept_", "count_"])


@pytest.mark.parametrize(
    "classes, message",
    [
        (None, "public classes"),
        ([0.5, 1.5], "Unknown label type"),
        ([1], "at least 2 public classes"),
    ],
)
def test_logistic_on_dask_needs_valid_public_classes_before_any_charge(
    data, classes, message
):
    X, y = data
    acc = budget()
    with pytest.raises(ValueError, match=message):
        logistic(acc, classes).fit(
            da.from_array(X, chunks=100), da.from_array(y > 0, chunks=100)
        )
    assert acc.entries == ()


def naive_bayes(acc, bounds):
    return PrivateGaussianNB(
        epsilon=2.0,
        bounds=bounds,
        classes=["no", "yes", "unsure"],
        accountant=acc,
        random_state=3,
    )


@pytest.mark.parametrize("bounds", [(-10.0, 10.0), None], ids=["public", "private"])
@pytest.mark.parametrize("chunks", CHUNKINGS, ids=CHUNK_IDS)
def test_naive_bayes_release_equals_the_in_memory_one(data, chunks, bounds):
    # With bounds=None the private bounds are searched on the feature columns
    # only, never on the joined class index.
    X, _ = data
    y = np.array(["no", "yes", "unsure"])[np.arange(N_ROWS) % 3]
    y_dask = da.from_array(y, chunks=(chunks[0],))
    with dask.config.set(scheduler="threads"):
        chunked = naive_bayes(budget(), bounds).fit(
            da.from_array(X, chunks=chunks), y_dask
        )
    in_memory = naive_bayes(budget(), bounds).fit(X, y)
    names = ["theta_", "var_", "class_count_", "lower_", "upper_", "classes_"]
    assert_same(in_memory, chunked, names)


def test_naive_bayes_on_dask_needs_public_classes_before_any_charge(data):
    X, y = data
    acc = budget()
    with pytest.raises(ValueError, match="public classes"):
        PrivateGaussianNB(accountant=acc).fit(
            da.from_array(X, chunks=100), da.from_array(y > 0, chunks=100)
        )
    assert acc.entries == ()


def test_label_codes_are_total():
    # Every value maps to its class index or NaN, without raising: other
    # types, unhashable values, NaN, booleans against integer classes.
    from skdp.utils._dask_xy import _label_codes

    words = np.array(["no", "unsure", "yes"])
    odd = np.array([["yes"], [None], [1.0], [[1]], [b"no"], ["no"]], dtype=object)
    np.testing.assert_array_equal(
        _label_codes(odd, words).ravel(), [2, np.nan, np.nan, np.nan, np.nan, 0]
    )
    numbers = np.array([[0.0], [1.0], [2.0], [np.nan], [-0.0]])
    np.testing.assert_array_equal(
        _label_codes(numbers, np.array([0, 2])).ravel(), [0, np.nan, 1, np.nan, 0]
    )
    flags = np.array([[True], [False]])
    np.testing.assert_array_equal(_label_codes(flags, np.array([0, 1])).ravel(), [1, 0])
    assert _label_codes(np.ones((3, 2)), words).shape == (0, 1)  # not one column
