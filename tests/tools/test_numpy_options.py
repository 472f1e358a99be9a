"""numpy's keepdims=, dtype= and density= on skdp.tools, and the NaN-tolerant
quantiles with private default bounds: compared with numpy at huge ε."""

import warnings

import numpy as np
import pytest

from skdp import BudgetAccountant, PrivateQuantile, tools
from skdp.mechanisms import check_random_source
from skdp.tools import _nan_quantiles

BIG = 1e9
RNG = np.random.default_rng(0)
X = RNG.uniform(1, 9, size=(1_000, 3))
BOUNDS = (0.0, 10.0)
X_NAN = X.copy()
X_NAN[RNG.random(X.shape) < 0.3] = np.nan

# (skdp function, numpy function, whether it takes dtype, takes bounds)
REDUCTIONS = [
    (tools.mean, np.mean, True, True),
    (tools.sum, np.sum, True, True),
    (tools.var, np.var, True, True),
    (tools.std, np.std, True, True),
    (tools.count_nonzero, np.count_nonzero, False, False),
]
NAN_REDUCTIONS = [
    (tools.nanmean, np.nanmean),
    (tools.nansum, np.nansum),
    (tools.nanvar, np.nanvar),
    (tools.nanstd, np.nanstd),
]
# 1-D input; 2-D per column; 2-D one column with axis=None
INPUTS = [(X[:, 0], None), (X, 0), (X[:, :1], None)]


def _call(function, data, axis, takes_bounds, **kwargs):
    if takes_bounds:
        return function(data, BIG, BOUNDS, axis, random_state=0, **kwargs)
    return function(data, BIG, axis, random_state=0, **kwargs)


@pytest.mark.parametrize("data, axis", INPUTS)
@pytest.mark.parametrize("function, reference, has_dtype, takes_bounds", REDUCTIONS)
def test_keepdims_gives_numpys_shape_and_values(
    function, reference, has_dtype, takes_bounds, data, axis
):
    got = _call(function, data, axis, takes_bounds, keepdims=True)
    expected = reference(data, axis=axis, keepdims=True)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-5)


@pytest.mark.parametrize("data, axis", INPUTS[:2])
@pytest.mark.parametrize(
    "function, reference, has_dtype, takes_bounds",
    [entry for entry in REDUCTIONS if entry[2]],  # count_nonzero has no dtype
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_gives_numpys_result_type(
    function, reference, has_dtype, takes_bounds, data, axis, dtype
):
    got = _call(function, data, axis, takes_bounds, dtype=dtype)
    expected = reference(data, axis=axis, dtype=dtype)
    assert type(got) is type(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(got, expected, rtol=1e-5)


@pytest.mark.parametrize("function, reference", NAN_REDUCTIONS)
@pytest.mark.parametrize("axis, keepdims", [(None, True), (0, True), (0, False)])
def test_nan_functions_take_keepdims_and_dtype(function, reference, axis, keepdims):
    data = X_NAN[:, 1] if axis is None else X_NAN
    got = function(
        data, BIG, BOUNDS, axis, np.float32, keepdims, random_state=0
    )  # diffprivlib's positions: axis, dtype, keepdims
    expected = reference(data, axis=axis, dtype=np.float32, keepdims=keepdims)
    assert np.shape(got) == np.shape(expected)
    assert np.asarray(got).dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-4)


QUANTILES = [
    (tools.quantile, np.quantile, [0.25, 0.75]),
    (tools.percentile, np.percentile, [25, 75]),
    (tools.nanquantile, np.nanquantile, [0.25, 0.75]),
    (tools.nanpercentile, np.nanpercentile, [25, 75]),
]


@pytest.mark.parametrize("function, reference, levels", QUANTILES)
@pytest.mark.parametrize(
    "scalar, data, axis",
    [(False, X[:, 0], None), (True, X[:, 0], None), (False, X, 0), (True, X, 0)],
)
def test_quantiles_take_keepdims(function, reference, levels, scalar, data, axis):
    q = levels[0] if scalar else levels
    got = function(data, q, BIG, BOUNDS, axis, True, random_state=0)
    expected = reference(data, q, axis=axis, keepdims=True)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, atol=0.05)


@pytest.mark.parametrize(
    "function, reference", [(tools.median, np.median), (tools.nanmedian, np.nanmedian)]
)
def test_medians_take_keepdims(function, reference):
    got = function(X, BIG, BOUNDS, 0, keepdims=True, random_state=0)
    assert got.shape == (1, 3)
    np.testing.assert_allclose(got, reference(X, axis=0, keepdims=True), atol=0.05)


@pytest.mark.parametrize(
    "call",
    [
        lambda acc: tools.mean(X, 1.0, BOUNDS, 0, dtype="U3", accountant=acc),
        lambda acc: tools.nanvar(X, 1.0, BOUNDS, 0, dtype="nope", accountant=acc),
        lambda acc: tools.sum(X, 1.0, BOUNDS, 0, keepdims="yes", accountant=acc),
        lambda acc: tools.median(X, 1.0, BOUNDS, 0, keepdims=2, accountant=acc),
        lambda acc: tools.histogram(X[:, 0], 1.0, 4, BOUNDS, "yes", accountant=acc),
        lambda acc: tools.nanmedian(X, 1.0, None, 0, keepdims=None, accountant=acc),
    ],
)
def test_bad_options_are_refused_before_the_charge(call):
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(TypeError, match="Nothing was charged"):
        call(acc)
    assert acc.entries == ()


# -- density ------------------------------------------------------------------
def test_histogram_density_converges_to_numpys():
    counts, edges = tools.histogram(X[:, 0], BIG, 5, BOUNDS, True, random_state=0)
    expected, expected_edges = np.histogram(X[:, 0], 5, BOUNDS, density=True)
    np.testing.assert_allclose(counts, expected, rtol=1e-6)
    np.testing.assert_array_equal(edges, expected_edges)
    given = [0.0, 1.0, 5.0, 10.0]  # unequal public edges
    counts, _ = tools.histogram(X[:, 0], BIG, given, density=True, random_state=0)
    expected = np.histogram(X[:, 0], given, density=True)[0]
    np.testing.assert_allclose(counts, expected, rtol=1e-6, atol=1e-9)


def test_histogramdd_and_2d_density_converge_to_numpys():
    bins = [[0.0, 2.0, 10.0], 4]
    got, _ = tools.histogramdd(X[:, :2], BIG, bins, BOUNDS, True, random_state=0)
    ranges = [BOUNDS, BOUNDS]
    expected, _ = np.histogramdd(X[:, :2], [bins[0], 4], ranges, density=True)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    got, *_ = tools.histogram2d(X[:, 0], X[:, 1], BIG, 3, BOUNDS, True, random_state=0)
    expected = np.histogram2d(X[:, 0], X[:, 1], 3, [BOUNDS] * 2, density=True)[0]
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_density_is_post_processing_of_the_same_release():
    acc = BudgetAccountant()
    counts, edges = tools.histogram(
        X[:, 0], 0.5, 4, BOUNDS, accountant=acc, random_state=3
    )
    density, _ = tools.histogram(
        X[:, 0], 0.5, 4, BOUNDS, True, accountant=acc, random_state=3
    )
    np.testing.assert_allclose(density, counts / counts.sum() / np.diff(edges))
    assert [e.epsilon for e in acc.entries] == [0.5, 0.5]  # the same charge


@pytest.mark.parametrize("seed", range(12))
def test_a_released_total_not_above_zero_gives_nan_without_a_warning(seed):
    # three rows at epsilon=0.01: the noisy total is negative about half the time
    sample = np.array([1.0, 2.0, 3.0])
    counts, _ = tools.histogram(sample, 0.01, 4, BOUNDS, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        density, _ = tools.histogram(sample, 0.01, 4, BOUNDS, True, random_state=seed)
    if counts.sum() <= 0:
        assert np.all(np.isnan(density))
    else:
        assert np.sum(density * 2.5) == pytest.approx(1.0)


def test_the_seeds_above_release_both_signs_of_total():
    totals = [
        tools.histogram(np.array([1.0, 2.0, 3.0]), 0.01, 4, BOUNDS, random_state=s)[
            0
        ].sum()
        for s in range(12)
    ]
    assert min(totals) <= 0 < max(totals)


# -- nan quantiles --------------------------------------------------------------
def test_nan_quantiles_choose_bounds_privately_by_default():
    acc = BudgetAccountant()
    got = tools.nanmedian(X_NAN, 1e6, None, 0, accountant=acc, random_state=0)
    np.testing.assert_allclose(got, np.nanmedian(X_NAN, axis=0), atol=0.2)
    assert acc.total()[0] == pytest.approx(1e6)
    assert len(acc.entries) == 3  # one charge: one entry per column


def test_one_column_nanquantile_is_private_quantile_of_the_present_values():
    column = X_NAN[:, 0]
    present = column[~np.isnan(column)][:, None]
    # the column's seed, drawn from random_state as for any number of columns
    seed = int(check_random_source(7).integers(2**31 - 1, size=1)[0])
    got = tools.nanquantile(column, [0.1, 0.9], 0.8, None, random_state=7)
    fitted = PrivateQuantile([0.1, 0.9], epsilon=0.8, random_state=seed).fit(present)
    np.testing.assert_array_equal(got, fitted.quantiles_[:, 0])


def test_an_all_missing_column_is_released_like_any_other():
    data = X_NAN.copy()
    data[:, 2] = np.nan
    acc = BudgetAccountant()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = tools.nanquantile(data, 0.5, 1.0, None, 0, accountant=acc, random_state=0)
    assert got.shape == (3,) and np.all(np.isfinite(got))
    plain = BudgetAccountant()
    tools.nanquantile(X_NAN, 0.5, 1.0, None, 0, accountant=plain, random_state=0)
    assert [e.label for e in acc.entries] == [e.label for e in plain.entries]
    assert acc.total() == plain.total()


def test_nan_quantile_refusals_charge_nothing():
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError, match="inf"):
        tools.nanmedian(np.r_[1.0, np.inf], accountant=acc)
    with pytest.raises(ValueError):
        tools.nanquantile(X_NAN, 1.5, 1.0, BOUNDS, 0, accountant=acc)
    with pytest.raises(ValueError, match="axis=1"):
        tools.nanmedian(X_NAN, 1.0, BOUNDS, 1, accountant=acc)
    assert acc.entries == ()


def _column_releases(data, levels, epsilon, seed):
    """Each column's PrivateQuantile at ``epsilon`` on its present values,
    with the seed the function draws for it."""
    d = data.shape[1]
    seeds = check_random_source(seed).integers(2**31 - 1, size=d)
    return np.column_stack(
        [
            PrivateQuantile(levels, epsilon=epsilon, random_state=int(seeds[j]))
            .fit(data[~np.isnan(data[:, j]), j][:, None])
            .quantiles_[:, 0]
            for j in range(d)
        ]
    )


def test_each_column_is_private_quantile_at_its_share_and_a_twin_is_caught(
    monkeypatch,
):
    # the guarantee is the composition of d PrivateQuantile releases (audited
    # in tests/stats/test_quantile.py), each at epsilon/d on its column's
    # present values: checked release by release, with the seeds fixed
    levels = [0.2, 0.5]
    got = tools.nanquantile(X_NAN, levels, 0.9, None, 0, random_state=3)
    np.testing.assert_array_equal(got, _column_releases(X_NAN, levels, 0.3, 3))
    # the twin gives every column the whole budget (3 epsilon claimed as 1)
    monkeypatch.setattr(_nan_quantiles, "equal_shares", lambda total, n: total)
    twin = tools.nanquantile(X_NAN, levels, 0.9, None, 0, random_state=3)
    assert not np.array_equal(twin, _column_releases(X_NAN, levels, 0.3, 3))
