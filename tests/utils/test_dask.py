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

from skdp import BudgetAccountant, DPClipper, SVTClipSelector
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


def test_a_failed_computation_keeps_the_charge(X):
    def broken(block):
        raise RuntimeError("cluster lost")

    acc = BudgetAccountant()
    with (
        pytest.raises(RuntimeError, match="cluster lost"),
        dask.config.set(scheduler="sync"),
    ):
        PrivateMean(bounds=(0, 1), accountant=acc).fit(
            da.from_array(X, chunks=100).map_blocks(broken, meta=X[:0])
        )
    assert acc.total() == (1.0, 0.0)


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
