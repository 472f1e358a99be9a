"""Adversarial review of issue 27's changes (round 1): each test is an attack
that fails when it works.

The privacy unit is one row under add/remove neighbours; a stored sparse
matrix is only a representation of its rows, so two representations of the
same rows must give the same fit, and one row may move each statistic by its
stated sensitivity only.
"""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline

from skdp import (
    BudgetAccountant,
    PrivateLinearRegression,
    PrivateLogisticRegression,
    PrivateMean,
    PrivateStandardScaler,
)
from skdp.exceptions import NoiseDominatedWarning
from skdp.linear_model import _scaling
from skdp.model_selection import fit_cost
from skdp.pipeline import set_budget

BIG = np.finfo(float).max


def _accountant():
    return BudgetAccountant(epsilon=100.0, delta=1e-3)


def _table(n=300, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.lognormal(2.0, 1.0, size=(n, d))
    y = np.arange(n) % 2
    return X, y


def _with_duplicates(X, row, column, parts):
    """CSR of ``X`` whose entry ``(row, column)`` is stored as ``parts``
    (duplicate entries: scipy's and scikit-learn's value is their sum)."""
    X = sp.csr_matrix(X)
    data, indices, indptr = [], [], [0]
    for i in range(X.shape[0]):
        start, stop = X.indptr[i], X.indptr[i + 1]
        cols, vals = X.indices[start:stop], X.data[start:stop]
        if i == row:
            keep = cols != column
            cols = np.concatenate([[column] * len(parts), cols[keep]])
            vals = np.concatenate([parts, vals[keep]])
        data.extend(vals)
        indices.extend(cols)
        indptr.append(len(data))
    return sp.csr_matrix(
        (np.asarray(data, float), np.asarray(indices), np.asarray(indptr)),
        shape=X.shape,
    )


def _captured_histograms(monkeypatch):
    seen = []
    release = _scaling.release_exponent_histogram

    def spy(counts, multiplier, source):
        seen.append(np.array(counts, dtype=float))
        return release(counts, multiplier, source)

    monkeypatch.setattr(_scaling, "release_exponent_histogram", spy)
    return seen


# -- sparse matrices with duplicate entries ---------------------------------


def test_duplicate_sparse_entries_keep_the_histogram_sensitivity(monkeypatch):
    """A row stored as 200 duplicate entries of 0.005 (value 1.0) moved the
    feature-scale histogram by 200 counts (sensitivity sqrt(d) claimed)."""
    X, y = _table()
    seen = _captured_histograms(monkeypatch)
    model = PrivateLogisticRegression(classes=[0, 1], random_state=0)
    model.set_params(accountant=_accountant()).fit(sp.csr_matrix(X[1:]), y[1:])
    parts = np.full(200, 0.005)
    X_dup = _with_duplicates(np.vstack([X[:1] * 0 + 1.0, X[1:]]), 0, 0, parts)
    model.set_params(accountant=_accountant()).fit(X_dup, y)
    moved = np.sqrt(np.sum(np.square(seen[1] - seen[0])))
    assert moved <= math.sqrt(X.shape[1]) * (1 + 1e-12)


@pytest.mark.parametrize("Model", [PrivateLogisticRegression, PrivateLinearRegression])
def test_duplicate_sparse_entries_fit_as_their_sum(Model, monkeypatch):
    """Two representations of the same rows must give the same fit: a cell
    stored as two halves counted twice in the histogram (and once less in
    the zero bin), even with the matrix's format flags claiming otherwise."""
    X, y = _table()
    X_dup = _with_duplicates(X, 5, 1, [X[5, 1] / 2, X[5, 1] / 2])
    X_dup.has_canonical_format = True  # a false claim scipy does not check
    seen = _captured_histograms(monkeypatch)
    params = {"classes": [0, 1]} if Model is PrivateLogisticRegression else {}
    fits = [
        Model(random_state=0, accountant=_accountant(), **params).fit(Z, y)
        for Z in (sp.csr_matrix(X), X_dup)
    ]
    np.testing.assert_array_equal(seen[0], seen[1])
    np.testing.assert_array_equal(fits[0].feature_scale_, fits[1].feature_scale_)
    np.testing.assert_allclose(fits[0].coef_, fits[1].coef_, rtol=1e-9)


@pytest.mark.parametrize("Model", [PrivateLogisticRegression, PrivateLinearRegression])
@pytest.mark.parametrize("feature_bounds", [None, "scaled"])
def test_duplicate_entries_summing_to_infinity_are_refused_before_the_charge(
    Model, feature_bounds
):
    """Entries (BIG, BIG) of one cell are each finite, their value is inf:
    the clipped sums then held -2**63 (NaN cast) per entry, an unbounded
    row (coefficients 1e12 against 1 on its neighbour)."""
    X, y = _table()
    X_dup = _with_duplicates(X, 0, 0, [BIG, BIG])
    params = {"classes": [0, 1]} if Model is PrivateLogisticRegression else {}
    if feature_bounds == "scaled":
        params["data_norm" if Model is PrivateLinearRegression else "max_norm"] = 1.0
    accountant = _accountant()
    model = Model(
        feature_bounds=feature_bounds, accountant=accountant, random_state=0, **params
    )
    with pytest.raises(ValueError, match="NaN or inf"):
        model.fit(X_dup, y)
    assert accountant.total() == (0.0, 0.0)


# -- set_budget -------------------------------------------------------------


def _shared_scaler_pipeline():
    scaler = PrivateStandardScaler(epsilon=0.7)
    columns = ColumnTransformer([("a", scaler, [0]), ("b", scaler, [1])])
    model = PrivateLogisticRegression(classes=[0, 1], epsilon=2.0)
    return make_pipeline(columns, model), scaler, model


@pytest.mark.parametrize("weights", [None, [1, 3, 1]])
def test_set_budget_changes_nothing_when_one_object_sits_at_two_paths(weights):
    """One scaler object at two paths of a ColumnTransformer: the uneven
    split raised 'Nothing was changed' and left the scaler at epsilon 0.2
    (its first share, restored in the wrong order). Any outcome must either
    cost at most the total or leave every parameter as it was."""
    pipe, scaler, model = _shared_scaler_pipeline()
    before = (scaler.get_params(), model.get_params())
    try:
        set_budget(pipe, 1.0, 1e-6, weights=weights)
    except ValueError as exc:
        assert "Nothing was changed" in str(exc)
        assert (scaler.get_params(), model.get_params()) == before
    else:
        cost = fit_cost(pipe)
        assert cost.epsilon <= 1.0 and cost.delta <= 1e-6


# -- neighbours: the new defaults, dense and sparse, extreme rows and targets


EXTREME_ROWS = {
    "max_double": ([BIG, -BIG, 1.0], BIG),
    "subnormal": ([5e-324, -5e-324, 2.0**-1060], -5e-324),
    "huge_and_tiny": ([1e300, 1e-300, -1e300], -BIG),
    "zeros": ([0.0, 0.0, 0.0], 0.0),
}
NEIGHBOUR_MODELS = {
    "linear_defaults": PrivateLinearRegression(),
    "linear_stated_features": PrivateLinearRegression(feature_bounds=(0.0, 1e3)),
    "linear_stated_target": PrivateLinearRegression(target_bounds=(-1e3, 1e3)),
    "logistic_defaults": PrivateLogisticRegression(classes=[0, 1]),
}


def _observe(model, X, y, seed):
    from sklearn.base import clone

    model = clone(model).set_params(
        random_state=seed, accountant=BudgetAccountant(epsilon=100.0, delta=0.5)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model.fit(X, y)
        except Exception as exc:
            return {"exception": type(exc).__name__}
    fitted = {
        name: (type(value).__name__, np.shape(value))
        for name, value in vars(model).items()
        if name.endswith("_") and not name.startswith("_")
    }
    finite = {
        name: bool(np.all(np.isfinite(value)))
        for name, value in vars(model).items()
        if name in ("coef_", "intercept_", "feature_scale_", "feature_location_")
    }
    return {
        "fitted": fitted,
        "finite": finite,
        "warnings": sorted({w.category.__name__ for w in caught}),
    }


@pytest.mark.parametrize("sparse_input", [False, True])
@pytest.mark.parametrize("row", list(EXTREME_ROWS))
@pytest.mark.parametrize("name", list(NEIGHBOUR_MODELS))
def test_new_defaults_on_neighbours(name, row, sparse_input):
    """D and D plus one extreme row (features and target): same exceptions,
    fitted attributes, finiteness and warning categories; no warning but
    skdp's own."""
    rng = np.random.default_rng(1)
    n = 400
    X = np.column_stack(
        [
            rng.lognormal(3.0, 1.0, n),
            np.where(rng.random(n) < 0.8, 0.0, rng.exponential(1e4, n)),
            rng.normal(40.0, 10.0, n).round(),
        ]
    )
    model = NEIGHBOUR_MODELS[name]
    classifier = isinstance(model, PrivateLogisticRegression)
    y = (np.arange(n) % 2) if classifier else X @ [1.0, 1e-3, -0.5] + rng.normal(size=n)
    values, target = EXTREME_ROWS[row]
    X2 = np.vstack([X, values])
    y2 = np.append(y, 1 if classifier else target)
    if sparse_input:
        X, X2 = sp.csr_matrix(X), sp.csr_matrix(X2)
    for seed in range(2):
        small, large = _observe(model, X, y, seed), _observe(model, X2, y2, seed)
        assert small == large
        assert set(large.get("warnings", [])) <= {"NoiseDominatedWarning"}


# -- refusals after the charge on public parameters -------------------------


@pytest.mark.parametrize(
    "model",
    [
        PrivateLogisticRegression(classes=[0, 1]),
        PrivateLinearRegression(),
        PrivateLinearRegression(feature_bounds=(0.0, 1.0), target_bounds=(0, 1)),
    ],
    ids=["logistic", "linear_private", "linear_stated"],
)
def test_noise_beyond_the_sampler_is_refused_before_the_charge(model):
    """epsilon=1e-5, 300 features: the feature-scale histogram (77,100
    values) or the Gram matrix (45,451) needs more noise than the exact
    sampler holds; the fit was charged (1e-5, 1e-10) and then raised."""
    rng = np.random.default_rng(0)
    X, y = rng.lognormal(2.0, 1.0, size=(40, 300)), np.arange(40) % 2
    accountant = BudgetAccountant(epsilon=1.0, delta=1e-6)
    model = model.set_params(epsilon=1e-5, delta=1e-10, accountant=accountant)
    with pytest.raises(ValueError, match="Nothing was charged"):
        model.fit(X, y)
    assert accountant.total() == (0.0, 0.0)


def test_the_plan_check_does_not_refuse_what_the_sampler_draws():
    """At epsilon=1e-4 the same fits run (the check is not stricter than the
    sampler): charged once, no exception."""
    rng = np.random.default_rng(0)
    X, y = rng.lognormal(2.0, 1.0, size=(40, 300)), np.arange(40) % 2
    for model in (PrivateLogisticRegression(classes=[0, 1]), PrivateLinearRegression()):
        accountant = BudgetAccountant(epsilon=1.0, delta=1e-6)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.set_params(epsilon=1e-4, delta=1e-10, accountant=accountant).fit(X, y)
        assert accountant.total() == (1e-4, 1e-10)


class _CostFailsBelowHalf(PrivateMean):
    """A private step whose cost computation fails for a small share (as a
    third-party step's may: any exception, not only ValueError)."""

    def _fit_cost(self, n_features=None):
        if self.epsilon < 0.5:
            raise ZeroDivisionError("cost formula failed")
        return super()._fit_cost(n_features)


def test_set_budget_changes_nothing_when_a_cost_raises_any_error():
    """Only ValueError and OverflowError restored the parameters; any other
    exception from fit_cost left the shares set."""
    first, second = _CostFailsBelowHalf(epsilon=3.0), PrivateMean(epsilon=2.0)
    pipe = make_pipeline(first, second)
    with pytest.raises(ZeroDivisionError):
        set_budget(pipe, 1.0, 1e-6, weights=[1, 3])
    assert (first.epsilon, second.epsilon) == (3.0, 2.0)


# -- fit_intercept=False: the feature map must keep the model class ----------


def _off_centre_table(n=20_000):
    rng = np.random.default_rng(0)
    X = rng.normal(50.0, 5.0, size=(n, 2))
    return X, rng


@pytest.mark.parametrize("feature_bounds", [None, (0.0, 100.0)])
def test_linear_regression_without_intercept_converges_to_scikit_learn(
    feature_bounds,
):
    """fit_intercept=False on features centred at 50: the private location
    centred them, so the model was fit through x = location and reported
    without its shift: R2 -677 (private scales) and 0.948 (stated bounds)
    at epsilon=1e6, against scikit-learn's 0.992."""
    from sklearn.linear_model import LinearRegression

    X, rng = _off_centre_table()
    y = X @ [1.0, -2.0] + rng.normal(size=X.shape[0])
    expected = LinearRegression(fit_intercept=False).fit(X, y).score(X, y)
    model = PrivateLinearRegression(
        epsilon=1e6,
        fit_intercept=False,
        feature_bounds=feature_bounds,
        accountant=BudgetAccountant(epsilon=1e7, delta=1e-3),
        random_state=0,
    ).fit(X, y)
    assert model.intercept_ == 0.0
    assert model.score(X, y) >= expected - 0.01


@pytest.mark.parametrize("feature_bounds", [None, (0.0, 100.0)])
def test_logistic_regression_without_intercept_has_none(feature_bounds):
    """fit_intercept=False reported intercept_ = -0.057 (the shift of the
    location): a model through x = location, not through the origin."""
    from sklearn.linear_model import LogisticRegression

    X, rng = _off_centre_table()
    y = (X @ [1.0, -1.0] + rng.logistic(size=X.shape[0]) > 0).astype(int)
    expected = LogisticRegression(fit_intercept=False).fit(X, y)
    model = PrivateLogisticRegression(
        epsilon=1e6,
        classes=[0, 1],
        fit_intercept=False,
        feature_bounds=feature_bounds,
        accountant=BudgetAccountant(epsilon=1e7, delta=1e-3),
        random_state=0,
    ).fit(X, y)
    np.testing.assert_array_equal(model.intercept_, [0.0])
    assert model.score(X, y) >= expected.score(X, y) - 0.005


# -- the penalty is stated in the user's units -------------------------------


@pytest.mark.parametrize("alpha", [1e3, 1e5])
def test_ridge_penalty_is_in_the_users_units(alpha):
    """alpha is documented 'as in sklearn.linear_model.Ridge'; with private
    scales (64 on features centred at 50) it was applied to the scaled
    weights, s**2 = 4096 times stronger: coef 0.111 against Ridge's 0.997
    at alpha=1e3, 0.0012 against 0.836 at 1e5 (epsilon=1e6)."""
    from sklearn.linear_model import Ridge

    X, rng = _off_centre_table()
    y = X @ [1.0, -2.0] + rng.normal(size=X.shape[0])
    expected = Ridge(alpha=alpha).fit(X, y).coef_
    model = PrivateLinearRegression(
        epsilon=1e6,
        alpha=alpha,
        accountant=BudgetAccountant(epsilon=1e7, delta=1e-3),
        random_state=0,
    ).fit(X, y)
    np.testing.assert_allclose(model.coef_, expected, rtol=0.02)


@pytest.mark.parametrize("alpha", [0.0, 1.0, 1e300])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_ridge_penalty_at_extreme_scales_stays_finite(alpha, fit_intercept):
    """A subnormal stated scale squares to 0: alpha / 0 and 0 / 0 must not
    reach the eigensolver as inf or NaN after the charge."""
    X, y = _table()
    model = PrivateLinearRegression(
        alpha=alpha,
        fit_intercept=fit_intercept,
        feature_bounds=(0.0, 2.0**-1000),
        accountant=_accountant(),
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=NoiseDominatedWarning)
        model.fit(X, y.astype(float))
    assert np.all(np.isfinite(model.coef_)) and np.isfinite(model.intercept_)


@pytest.mark.parametrize(
    ("C", "epsilon"), [(5e-324, 1.0), (1e-310, 1.0), (1e-300, 1e-9)]
)
def test_logistic_tiny_C_keeps_the_model_finite(C, epsilon):
    """C is accepted down to the smallest double: the penalty 1/(C N)
    overflowed to inf and the released model came out with a NaN
    intercept (C=5e-324) or NaN coefficients (C=1e-300, epsilon=1e-9)."""
    X, y = _table()
    model = PrivateLogisticRegression(
        C=C,
        epsilon=epsilon,
        classes=[0, 1],
        accountant=BudgetAccountant(epsilon=10.0, delta=1e-3),
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=NoiseDominatedWarning)
        model.fit(X, y)
    assert np.all(np.isfinite(model.coef_)) and np.all(np.isfinite(model.intercept_))


# -- memory: a chunk of rows sized by cells, not rows ------------------------


def test_feature_scale_histogram_and_scaling_stay_within_a_copy_of_X():
    """The histogram read 65,536 rows at a time whatever d, with five
    temporaries per chunk: 3.9 copies of X at peak for 70,000 x 200 (a
    MemoryError after the charge once n passes a threshold that depends on
    d, so on the private n); scale_rows held 2.6 copies (result, a
    temporary, and nan_to_num's copy)."""
    import tracemalloc

    X = np.random.default_rng(0).lognormal(size=(70_000, 200))
    tracemalloc.start()
    try:
        _scaling.exponent_histogram(X)
        histogram_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        Z = _scaling.scale_rows(X, np.ones(200), np.full(200, 2.0))
        scaling_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(Z, (X - 1.0) / 2.0)
    assert histogram_peak <= 0.25 * X.nbytes
    assert scaling_peak <= 1.1 * X.nbytes
