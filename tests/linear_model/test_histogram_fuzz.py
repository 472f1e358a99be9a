"""The exponent histograms of the linear models fuzzed with extreme doubles.

One added row (subnormals, ±the largest double, zeros, huge and tiny values)
must move the feature scales' counts by exactly one count per feature (L2
``sqrt(d)``, the sensitivity of ``release_exponent_histogram``), dense or
sparse with duplicate entries, and the target range's counts by exactly one
(L2 1). The brute-force versions are in test_unscaled.py and
test_target_range.py; the audits with twins in test_scale_audits.py.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import sparse

from skdp.linear_model._scaling import (
    cells_stored_once,
    exponent_histogram,
    histogram_sensitivity,
)
from skdp.linear_model._target_range import xy_target_histogram
from tests.sensitivity._extreme_strategies import extreme_doubles, rows

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
FUZZ = settings(max_examples=100, deadline=None)


@st.composite
def table_and_row(draw):
    d = draw(st.integers(1, 4))
    n = draw(st.integers(0, 4))
    X = draw(hnp.arrays(np.float64, (n, d), elements=extreme_doubles))
    return X, draw(rows(d))


def one_row_moves(histogram, X, row):
    change = histogram(np.vstack([X, row])) - histogram(X)
    return change


@FUZZ
@given(table_and_row())
def test_a_row_moves_one_count_per_feature(data):
    X, row = data
    d = X.shape[1]
    change = one_row_moves(exponent_histogram, X, row)
    assert change.min() == 0 and np.array_equal(change.sum(axis=1), np.ones(d))
    assert np.sqrt(np.sum(change**2)) <= histogram_sensitivity(d)


@FUZZ
@given(table_and_row(), st.integers(1, 3))
def test_a_sparse_row_with_duplicates_moves_one_count_per_feature(data, copies):
    # the row's cells stored as ``copies`` entries each, which sum to the
    # cell's value only if every entry is the value / copies: store the
    # value once and ``copies - 1`` explicit zeros, a valid CSR of the row
    X, row = data
    d = X.shape[1]
    cols = np.tile(np.arange(d), copies)
    values = np.concatenate([row, np.zeros(d * (copies - 1))])
    stored = sparse.csr_matrix((values, cols, [0, cols.size]), shape=(1, d))

    def histogram(rows_):
        return exponent_histogram(cells_stored_once(sparse.csr_matrix(rows_)))

    full = exponent_histogram(
        cells_stored_once(sparse.vstack([sparse.csr_matrix(X), stored]).tocsr())
    )
    change = full - histogram(X.reshape(-1, d))
    assert change.min() == 0 and np.array_equal(change.sum(axis=1), np.ones(d))
    assert np.array_equal(full, exponent_histogram(np.vstack([X, row])))


@FUZZ
@given(
    hnp.arrays(np.float64, st.integers(0, 6), elements=extreme_doubles), extreme_doubles
)
def test_a_target_moves_one_count(y, value):
    change = xy_target_histogram(None, np.append(y, value)) - xy_target_histogram(
        None, y
    )
    assert change.shape == (1, change.size) and change.min() == 0
    assert change.sum() == 1


@FUZZ
@given(table_and_row(), st.integers(2, 4))
def test_a_sparse_cell_split_into_entries_moves_one_count_per_feature(data, copies):
    # each cell stored as ``copies`` equal entries that sum to it exactly
    # (value / copies with copies a power of two is exact away from the
    # subnormals): read entry by entry, without summing the duplicates, one
    # row moved the histogram by ``copies`` counts per feature
    X, row = data
    d = X.shape[1]
    copies = 1 << (copies - 1)
    tiny = np.abs(row) < 2.0**-1000
    row = np.where(tiny | ~np.isfinite(row / copies), 1.0, row)
    cols = np.tile(np.arange(d), copies)
    values = np.tile(row / copies, copies)
    stored = sparse.csr_matrix((values, cols, [0, cols.size]), shape=(1, d))
    full = exponent_histogram(
        cells_stored_once(sparse.vstack([sparse.csr_matrix(X), stored]).tocsr())
    )
    assert np.array_equal(full, exponent_histogram(np.vstack([X, row])))
