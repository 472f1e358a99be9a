"""PrivateLinearRegression's released largest row norm: the histogram moves
by one count per row, it is audited with its twins, and the tighter norm
brings the unscaled diabetes fit to least squares at a large ε."""

import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split

from skdp import BudgetAccountant
from skdp.audit import assert_dp, audit_mechanism
from skdp.decomposition import _pca_scales
from skdp.linear_model import PrivateLinearRegression
from skdp.linear_model._row_norms import (
    N_NORM_BINS,
    release_norm_counts,
    xy_row_norm_histogram,
)
from tests.linear_model.test_scale_audits import (
    DELTA,
    EPS,
    FAST,
    MARGIN,
    RATIO,
    histogram_mechanism,
    spread,
)

AFFINE = (np.array([1.0, -2.0, 0.0]), np.array([2.0, 0.5, 4.0]))
R0 = np.array([[1.0, -2.0, 0.0], [3.0, 0.5, 8.0]])
# a row far out, and rows whose norm overflows or is 0 after scaling
EXTRA = [[1e300, -1e300, 3.0], [1.0, -2.0, 0.0], [5e-324, 7.0, -1.7e308]]


def norms(X):
    return xy_row_norm_histogram(X, None, AFFINE)[None, :]


def test_bins_are_pcas():
    assert N_NORM_BINS == _pca_scales.N_NORM_BINS


@pytest.mark.parametrize("row", EXTRA)
def test_a_row_adds_one_count_dense_and_sparse_alike(row):
    X1 = np.vstack([R0, row])
    for make in (np.asarray, sparse.csr_matrix):
        c0 = xy_row_norm_histogram(make(R0), None, (np.zeros(3), AFFINE[1]))
        c1 = xy_row_norm_histogram(make(X1), None, (np.zeros(3), AFFINE[1]))
        diff = c1 - c0
        assert diff.sum() == 1 and diff.min() == 0
    dense = xy_row_norm_histogram(X1, None, (np.zeros(3), AFFINE[1]))
    csr = xy_row_norm_histogram(sparse.csr_matrix(X1), None, (np.zeros(3), AFFINE[1]))
    np.testing.assert_array_equal(dense, csr)


def honest(counts, multiplier, source):
    return release_norm_counts(counts, multiplier, source)


D0, D1 = (R0,), (np.vstack([R0, EXTRA[0]]),)


def test_row_norms_pass_and_quartered_noise_twin_is_caught():
    assert_dp(histogram_mechanism(norms, D0, D1, honest), D0, D1, EPS, DELTA, **FAST)
    twin = histogram_mechanism(norms, D0, D1, honest, RATIO / 4)
    bad = audit_mechanism(twin, D0, D1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + MARGIN, str(bad)


def test_row_norms_row_in_several_bins_twin_is_caught():
    twin = histogram_mechanism(spread(norms), D0, D1, honest)
    bad = audit_mechanism(twin, D0, D1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + MARGIN, str(bad)


def test_unscaled_diabetes_reaches_least_squares_at_a_large_epsilon():
    # the clipping norm was the diagonal of the released per-feature box
    # (3.6 where the rows' norms are at most 1.35): R² 0.343-0.346 at
    # eps = 1e6 against scikit-learn's 0.359 on this split
    X, y = load_diabetes(return_X_y=True, scaled=False)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
    reference = LinearRegression().fit(X_tr, y_tr).score(X_te, y_te)
    for seed in range(2):
        model = PrivateLinearRegression(
            1e6, accountant=BudgetAccountant(delta=1.0), random_state=seed
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X_tr, y_tr)
        assert model.score(X_te, y_te) == pytest.approx(reference, abs=0.01)
