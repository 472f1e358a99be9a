"""Fitting on Dask arrays and DataFrames: same release, one charge, no compute
before the charge."""

import os
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy import sparse

from skdp import BudgetAccountant, DPClipper, NoiseDominatedWarning, SVTClipSelector
from skdp.preprocessing import (
    PrivateHistogram,
    PrivateMean,
    PrivateMinMaxScaler,
    PrivateQuantile,
    PrivateStandardScaler,
)
from skdp.utils._dask import finite_rows, is_dask_collection

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

N_ROWS = 600


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(0)
    X = rng.lognormal(2, 1, size=(N_ROWS, 3))
    X[::7, 1] *= -1  # one feature on both sides of 0
    return X


# Blocks of every size, of one row, an empty block, and columns split in two.
CHUNKINGS = [
    ((N_ROWS,), (3,)),
    ((0, 1, 1, 250, N_ROWS - 252), (3,)),
    ((N_ROWS // 2, N_ROWS // 2), (1, 2)),
]

ESTIMATORS = [
    lambda acc: PrivateMean(2.0, bounds=(0, 100), accountant=acc, random_state=3),
    lambda acc: PrivateMean(2.0, bounds=None, accountant=acc, random_state=3),
    lambda acc: PrivateMean(
        2.0,
        bounds=(0, None),
        mechanism="gaussian",
        delta=1e-6,
        accountant=acc,
        random_state=3,
    ),
    lambda acc: SVTClipSelector(1.0, accountant=acc, random_state=3),
    lambda acc: DPClipper(accountant=acc, random_state=3),
    lambda acc: PrivateStandardScaler(1.0, bounds=None, accountant=acc, random_state=3),
    lambda acc: PrivateMinMaxScaler(epsilon=1.0, accountant=acc, random_state=3),
    lambda acc: PrivateHistogram(
        7, epsilon=1.0, bounds=(-20, 60), accountant=acc, random_state=3
    ),
    lambda acc: PrivateQuantile(
        [0.25, 0.5, 0.75],
        epsilon=1.0,
        bounds=(-20, 60),
        method="permute_and_flip",
        accountant=acc,
        random_state=3,
    ),
]
RELEASED = [
    "mean_",
    "count_",
    "lower_",
    "upper_",
    "scale_",
    "n_samples_seen_",
    "data_min_",
    "data_max_",
    "counts_",
    "quantiles_",
]


def assert_same_release(a, b):
    compared = [name for name in RELEASED if hasattr(a, name)]
    assert compared
    for name in compared:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), name)
    assert (a.epsilon_spent_, a.delta_spent_) == (b.epsilon_spent_, b.delta_spent_)


def labels(acc):
    return [entry.label for entry in acc.entries]


def fit_both(make, X, X_dask):
    acc_memory, acc_dask = BudgetAccountant(delta=0.5), BudgetAccountant(delta=0.5)
    in_memory = make(acc_memory).fit(X)
    chunked = make(acc_dask).fit(X_dask)
    assert labels(acc_dask) == labels(acc_memory)
    return in_memory, chunked


def test_importing_skdp_does_not_import_dask():
    code = (
        "import sys, skdp, skdp.preprocessing, skdp.linear_model, "
        "skdp.utils._dask; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'dask'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_duck_typing(X):
    assert is_dask_collection(da.from_array(X))
    assert not is_dask_collection(X)
    assert not is_dask_collection(X.tolist())


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=["one", "tiny+empty", "columns"])
@pytest.mark.parametrize("make", ESTIMATORS)
def test_threaded_release_equals_the_in_memory_one(X, make, chunks):
    with dask.config.set(scheduler="threads"):
        in_memory, chunked = fit_both(make, X, da.from_array(X, chunks=chunks))
    assert_same_release(in_memory, chunked)
    assert chunked.n_features_in_ == 3


def test_many_features_use_the_separate_release(X):
    # 8 features: count and sums released apart (two ledger entries)
    wide = np.hstack([X, X, X[:, :2]])

    def make(acc):
        return PrivateMean(1.0, bounds=(-50, 50), accountant=acc, random_state=1)

    with dask.config.set(scheduler="sync"):
        in_memory, chunked = fit_both(make, wide, da.from_array(wide, chunks=(97, 3)))
    assert len(chunked.accountant.entries) == 2
    assert_same_release(in_memory, chunked)


def test_blocks_with_and_without_the_bin_lookup_table():
    # 2**14 rows or more are binned by lookup, fewer directly: same tallies
    big = np.random.default_rng(1).normal(0, 30, size=(20_000, 2))
    with dask.config.set(scheduler="sync"):
        in_memory, chunked = fit_both(
            ESTIMATORS[1], big, da.from_array(big, chunks=(17_000, 2))
        )
    assert_same_release(in_memory, chunked)


def test_extreme_magnitudes():
    rng = np.random.default_rng(5)
    big = rng.normal(0, 1, size=(300, 2)) * np.array([1e307, 1e-300])
    big[:5, 0] = [1.7e308, -1.7e308, 1e308, 5e-324, -0.0]

    def make(acc):
        return PrivateMean(
            3.0, bounds=None, upper_limit=1.7e308, accountant=acc, random_state=1
        )

    with dask.config.set(scheduler="sync"):
        in_memory, chunked = fit_both(make, big, da.from_array(big, chunks=(7, 1)))
    assert_same_release(in_memory, chunked)


def test_unknown_row_count(X):
    keep = X[:, 0] > 5
    masked = da.from_array(X, chunks=(100, 3))
    masked = masked[masked[:, 0] > 5]
    assert np.isnan(masked.shape[0])
    make = ESTIMATORS[1]
    with dask.config.set(scheduler="sync"):
        in_memory, chunked = fit_both(make, X[keep], masked)
    assert_same_release(in_memory, chunked)


def test_non_finite_values_follow_the_public_row_rule(X):
    dirty = X.copy()
    dirty[5, 0] = np.nan
    dirty[9, 2] = np.inf
    dirty[11, 1] = -np.inf
    cleaned = np.delete(dirty, 5, axis=0)
    cleaned[cleaned == np.inf] = np.finfo(float).max
    cleaned[cleaned == -np.inf] = -np.finfo(float).max
    np.testing.assert_array_equal(finite_rows(dirty), cleaned)
    for make in ESTIMATORS:
        with warnings.catch_warnings(), dask.config.set(scheduler="sync"):
            warnings.simplefilter("error")
            # release-based notes (NoiseDominatedWarning, decided from released
            # values only) are allowed on these few rows; anything else fails
            warnings.simplefilter("ignore", NoiseDominatedWarning)
            in_memory, chunked = fit_both(make, cleaned, da.from_array(dirty, 50))
        assert_same_release(in_memory, chunked)


def test_finite_blocks_pass_unchanged_even_if_their_sum_overflows():
    block = np.array([[1e308, 1.0], [1e308, -2.0]])
    np.testing.assert_array_equal(finite_rows(block), block)


@pytest.mark.parametrize(
    "bad, message",
    [
        (lambda: da.ones(10), "2-D"),
        (lambda: da.ones((4, 2, 2)), "2-D"),
        (lambda: da.from_array(np.array([["a", "b"]] * 3)), "numeric"),
        (lambda: da.zeros((0, 3)), "0 sample"),
        (lambda: da.eye(6, chunks=3).map_blocks(sparse.csr_matrix), "dense"),
        (lambda: (lambda a: a[a[:, 0] > 0].T)(da.ones((4, 4))), "unknown chunk"),
    ],
)
def test_invalid_schemas_raise_before_any_charge(bad, message):
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match=message):
        PrivateMean(bounds=(0, 1), accountant=acc).fit(bad())
    assert acc.entries == ()


def test_quantile_clipper_refuses_dask_before_any_charge(X):
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="quantile"):
        DPClipper(method="quantile", accountant=acc).fit(da.from_array(X))
    assert acc.entries == ()


def test_public_bounds_read_nothing(X):
    def never(block):
        raise AssertionError("the data was read")

    untouched = da.from_array(X, chunks=100).map_blocks(never, meta=X[:0])
    clipper = DPClipper(bounds=(0, 1), accountant=BudgetAccountant()).fit(untouched)
    assert clipper.n_features_in_ == 3 and clipper.epsilon_spent_ == 0


def test_a_failed_computation_keeps_the_charge_and_quotes_nothing(X):
    def broken(block):
        raise ValueError("could not convert string to float: 'alice-123-45-6789'")

    acc = BudgetAccountant()
    with (
        pytest.raises(RuntimeError, match="failed after the budget was charged") as e,
        dask.config.set(scheduler="sync"),
    ):
        PrivateMean(bounds=(0, 1), accountant=acc).fit(
            da.from_array(X, chunks=100).map_blocks(broken, meta=X[:0])
        )
    assert acc.total() == (1.0, 0.0)
    assert "alice" not in str(e.value)
    assert e.value.__cause__ is None and e.value.__context__ is None


def test_dask_dataframe_gives_feature_names(X):
    pd = pytest.importorskip("pandas")
    # dask.dataframe needs pyarrow (the "dask" extra has it)
    dd = pytest.importorskip("dask.dataframe", exc_type=ImportError)
    frame = pd.DataFrame(X, columns=["age", "income", "hours"])
    frame["count"] = np.arange(N_ROWS) % 5  # an integer column
    for make in ESTIMATORS[:2]:
        with dask.config.set(scheduler="sync"):
            in_memory, chunked = fit_both(
                make, frame, dd.from_pandas(frame, npartitions=7)
            )
        assert_same_release(in_memory, chunked)
        assert list(chunked.feature_names_in_) == list(frame.columns)
    # a missing value of a nullable column drops its row, as NaN does
    nullable = frame.astype({"count": "Int64"})
    nullable.loc[3, "count"] = pd.NA
    with dask.config.set(scheduler="sync"):
        in_memory, chunked = fit_both(
            ESTIMATORS[0], frame.drop(index=3), dd.from_pandas(nullable, 3)
        )
    assert_same_release(in_memory, chunked)
    frame["name"] = "x"
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="non-numeric column"):
        PrivateMean(accountant=acc).fit(dd.from_pandas(frame, npartitions=2))
    assert acc.entries == ()


# -- on a LocalCluster of worker processes (started once for these tests) ---


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def test_cluster_charges_once_in_the_client(X, client, tmp_path):
    # A file ledger is shared by every process: a charge in a worker would show.
    acc = BudgetAccountant(epsilon=10.0, ledger=tmp_path / "ledger.sqlite")
    estimator = pickle.loads(pickle.dumps(ESTIMATORS[1](acc)))
    chunked = estimator.fit(da.from_array(X, chunks=(75, 2)))
    in_memory = ESTIMATORS[1](BudgetAccountant()).fit(X)
    assert_same_release(in_memory, chunked)
    assert labels(acc) == labels(in_memory.accountant)
    assert len(set(client.run(os.getpid).values()) | {os.getpid()}) == 3


def test_a_worker_killed_mid_fit(X, client, tmp_path):
    flag = str(tmp_path / "killed")

    def kill_once(block):  # the first block read kills its worker process
        if block.size and not os.path.exists(flag):  # not dask's meta probe
            open(flag, "w").close()
            os._exit(1)
        return block

    workers_before = set(client.run(os.getpid).values())
    acc = BudgetAccountant()
    data = da.from_array(X, chunks=(60, 3)).map_blocks(kill_once, meta=X[:0])
    chunked = ESTIMATORS[1](acc).fit(data)
    client.wait_for_workers(2, timeout=30)
    assert set(client.run(os.getpid).values()) != workers_before  # one restarted
    in_memory = ESTIMATORS[1](BudgetAccountant()).fit(X)
    assert_same_release(in_memory, chunked)
    assert labels(acc) == labels(in_memory.accountant)


@pytest.mark.parametrize("method", ["exponential", "joint"])
def test_quantiles_other_than_permute_and_flip_refuse_dask_before_the_charge(X, method):
    acc = BudgetAccountant()
    est = PrivateQuantile(0.5, bounds=(0, 100), method=method, accountant=acc)
    with pytest.raises(ValueError, match=r"permute_and_flip.*Nothing was charged"):
        est.fit(da.from_array(X))
    assert len(acc.entries) == 0


def _lying_array(blocks, declared_width):
    """A Dask array whose blocks are not what its schema says."""
    delayed = pytest.importorskip("dask.delayed")
    parts = [
        da.from_delayed(
            delayed.delayed(lambda b=b: b)(),
            shape=(len(b), declared_width),
            dtype=np.float64,
            meta=np.empty((0, declared_width)),
        )
        for b in blocks
    ]
    return da.concatenate(parts, axis=0)


def test_blocks_wider_than_the_schema_hold_no_rows(X):
    # a block of 2 columns under a 1-column schema must not lengthen the
    # release (its noise is calibrated for 1 feature): it holds no rows
    honest = X[:100, :1]
    lying = _lying_array([honest, X[:3, :2]], declared_width=1)
    with dask.config.set(scheduler="sync"):
        for make in (ESTIMATORS[0], ESTIMATORS[5]):
            in_memory, chunked = fit_both(make, honest, lying)
            assert_same_release(in_memory, chunked)
            assert chunked.mean_.shape == (1,)


def test_values_that_are_not_real_numbers_drop_their_rows_without_a_word(X):
    clean = X[:60]
    odd = np.array(
        [[1.0, "x", 2.0], [3 + 1j, 1.0, 1.0], [np.datetime64("2020"), 1, 1]],
        dtype=object,
    )
    mixed = np.concatenate([clean[:30].astype(object), odd, clean[30:]])
    lying = _lying_array([mixed[:40], mixed[40:]], declared_width=3)
    with dask.config.set(scheduler="threads"), warnings.catch_warnings():
        warnings.simplefilter("error")
        # release-based notes (NoiseDominatedWarning, decided from released
        # values only) are allowed on these few rows; anything else fails
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        for make in ESTIMATORS:
            in_memory, chunked = fit_both(make, clean, lying)
            assert_same_release(in_memory, chunked)


def test_long_doubles_beyond_the_doubles_neither_warn_nor_raise(X):
    big = X[:50].astype(np.longdouble)
    big[7, 0] = np.longdouble(10) ** 400  # inf as a double: clipped to max
    expected = X[:50].copy()
    expected[7, 0] = np.finfo(np.float64).max
    with dask.config.set(scheduler="threads"), warnings.catch_warnings():
        warnings.simplefilter("error")
        in_memory, chunked = fit_both(
            ESTIMATORS[0], expected, da.from_array(big, chunks=20)
        )
    assert_same_release(in_memory, chunked)


def test_dataframe_partitions_are_read_by_the_schemas_column_names(X):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe", exc_type=ImportError)
    names = ["age", "income", "hours"]
    good = pd.DataFrame(X[:50], columns=names)
    # columns swapped, one extra, and a value that is not a number
    drifted = pd.DataFrame(X[50:100], columns=names)[["hours", "age", "income"]]
    drifted["extra"] = 1.0
    drifted = drifted.astype({"age": object})
    drifted.iloc[3, drifted.columns.get_loc("age")] = "alice"
    frame = dd.from_map(
        lambda i: [good, drifted][i], [0, 1], meta=good.iloc[:0], enforce_metadata=False
    )
    expected = np.delete(X[:100], 53, axis=0)
    with dask.config.set(scheduler="sync"), warnings.catch_warnings():
        warnings.simplefilter("error")
        in_memory, chunked = fit_both(ESTIMATORS[0], expected, frame)
    assert_same_release(in_memory, chunked)


def test_in_memory_objects_with_a_dask_method_are_not_dask():
    class InMemory:
        def __dask_graph__(self):
            return None  # as an in-memory xarray object answers

    assert not is_dask_collection(InMemory())


TRANSFORMERS = [
    lambda acc: PrivateMean(2.0, bounds=(0, 100), accountant=acc, random_state=3),
    lambda acc: PrivateStandardScaler(1.0, bounds=None, accountant=acc, random_state=3),
    lambda acc: SVTClipSelector(1.0, accountant=acc, random_state=3),
    lambda acc: DPClipper(
        bounds=(0, 50), norm="l2", max_norm=30.0, accountant=acc, random_state=3
    ),
]


@pytest.mark.parametrize("make", TRANSFORMERS)
def test_transform_of_a_dask_input_is_lazy_and_equals_the_in_memory_one(X, make):
    est = make(BudgetAccountant()).fit(X)
    X_dask = da.from_array(X, chunks=((0, 1, 250, N_ROWS - 251), (1, 2)))
    out = est.transform(X_dask)
    assert is_dask_collection(out)
    with dask.config.set(scheduler="threads"):
        np.testing.assert_array_equal(out.compute(), est.transform(X))
        if hasattr(est, "inverse_transform"):
            back = est.inverse_transform(out).compute()
            np.testing.assert_array_equal(back, est.inverse_transform(est.transform(X)))
    with pytest.raises(ValueError, match="features"):
        est.transform(da.from_array(X[:, :2]))  # the schema is checked lazily


def test_a_dask_pipeline_with_nan_charges_every_step_and_raises_nothing(X):
    from sklearn.pipeline import make_pipeline

    dirty = X.copy()
    dirty[5, 0], dirty[9, 2] = np.nan, np.inf
    acc = BudgetAccountant()
    pipe = make_pipeline(
        SVTClipSelector(1.0, accountant=acc, random_state=3),
        PrivateMean(1.0, bounds=(-50, 50), accountant=acc, random_state=4),
    )
    with dask.config.set(scheduler="threads"), warnings.catch_warnings():
        warnings.simplefilter("error")
        # release-based notes (NoiseDominatedWarning, decided from released
        # values only) are allowed on these few rows; anything else fails
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        pipe.fit(da.from_array(dirty, chunks=100))
    assert acc.total() == (2.0, 0.0)
    # the same as in memory without the NaN row (inf clipped by the first step)
    clean_acc = BudgetAccountant()
    clean = make_pipeline(
        SVTClipSelector(1.0, accountant=clean_acc, random_state=3),
        PrivateMean(1.0, bounds=(-50, 50), accountant=clean_acc, random_state=4),
    )
    finite = np.delete(dirty, 5, axis=0)
    finite[8, 2] = np.finfo(np.float64).max
    clean.fit(finite)
    np.testing.assert_array_equal(pipe[-1].mean_, clean[-1].mean_)


def test_check_dask_input_tells_what_a_fit_would_drop_before_any_charge(X):
    from skdp.utils import check_dask_input

    clean = da.from_array(X, chunks=100)
    with dask.config.set(scheduler="threads"):
        assert check_dask_input(clean) is clean
        dirty = X.copy()
        dirty[3, 1], dirty[9, 2] = np.nan, -np.inf
        with pytest.raises(ValueError, match=r"column\(s\) '1', '2':"):
            check_dask_input(da.from_array(dirty, chunks=100))
        wide = _lying_array([X[:10], X[:5, :2]], declared_width=3)
        with pytest.raises(ValueError, match=r"some block.*do not match.*some rows"):
            check_dask_input(wide)


def test_check_dask_input_names_columns_of_a_dataframe_never_values(X):
    from skdp.utils import check_dask_input

    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe", exc_type=ImportError)
    frame = pd.DataFrame(X[:40], columns=["age", "income", "hours"])
    odd = frame.astype({"income": object})
    odd.iloc[4, 1] = "alice-123"
    parts = dd.from_map(
        lambda i: [frame, odd][i], [0, 1], meta=frame.iloc[:0], enforce_metadata=False
    )
    with dask.config.set(scheduler="sync"):
        with pytest.raises(ValueError, match=r"column\(s\) 'income':") as error:
            check_dask_input(parts)
    assert "alice" not in str(error.value) and "1" not in str(error.value)
