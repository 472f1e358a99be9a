"""PrivatePCA at its defaults on unscaled data (issue 27, items 1, 3 and 6).

The centre and the clipping norm are released (a per-feature exponent
histogram and a histogram of the centred rows' norms, inside the fit's
Gaussian composition): the fit converges to scikit-learn's PCA of the raw
rows as epsilon grows, stating the true bound gives the default, and the
warnings are functions of released values only.
"""

import math
import warnings

import numpy as np
import pytest
from _gaussian_audit import likelihood_ratio
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.decomposition import PCA

from skdp import BudgetAccountant, NoiseDominatedWarning, PrivatePCA
from skdp.audit import assert_dp, audit_mechanism
from skdp.decomposition import _pca
from skdp.decomposition._pca import CENTRE_SHARE, GRAM_SHARE, NORM_SHARE
from skdp.decomposition._pca_scales import (
    FALLBACK_NORM,
    N_NORM_BINS,
    NORM_BINS_PER_OCTAVE,
    _bin_edge,
    centred_moments_gram,
    norm_bins,
    norm_histogram,
    norm_rule,
    unresolved_components,
)
from skdp.linear_model._scaling import exponent_histogram
from skdp.mechanisms import gaussian_noise_multipliers
from skdp.mechanisms._grid import FixedPoint


def unscaled(n=3000, seed=0):
    """Columns from 1e-3 to 1e5, skewed, zero-inflated and 0/1."""
    rng = np.random.default_rng(seed)
    return np.column_stack(
        [
            rng.normal(5e-3, 1e-3, n),
            rng.lognormal(7.0, 1.0, n),
            np.where(rng.random(n) < 0.85, 0.0, rng.lognormal(8.0, 1.0, n)),
            (rng.random(n) < 0.3).astype(float),
            rng.normal(40.0, 12.0, n),
            rng.uniform(5e4, 1.5e5, n),
        ]
    )


def budget():
    return BudgetAccountant(1e9, 0.5)


def subspace_angle(a, b):
    return float(np.max(np.arccos(np.clip(np.linalg.svd(a @ b.T)[1], 0, 1))))


def fit(X, epsilon, seed=0, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        return PrivatePCA(
            2, epsilon=epsilon, accountant=budget(), random_state=seed, **params
        ).fit(X)


# -- item 1: converges to scikit-learn's PCA of the raw rows ------------------


def test_default_converges_to_sklearn_on_unscaled_columns():
    # before: max_norm=1 scaled every row to norm 1 (a PCA of the rows'
    # directions): shares (0.63, 0.33) against (0.972, 0.021)
    X = unscaled()
    ref = PCA(2).fit(X)
    for seed in range(3):
        est = fit(X, 1e6, seed)
        assert subspace_angle(est.components_, ref.components_) < 1e-2
        np.testing.assert_allclose(
            est.explained_variance_ratio_, ref.explained_variance_ratio_, atol=1e-3
        )
        # the sums are exact on a grid of clip_norm_ * sqrt(2) / 2**16: the
        # mean is within a few of its units (the 0/1 column is below one)
        atol = 1e-4 * est.clip_norm_
        np.testing.assert_allclose(est.mean_, X.mean(axis=0), rtol=1e-4, atol=atol)


def real_table_errors(X, seeds=3):
    ref = PCA(2).fit(X)
    angles, shares = [], []
    for seed in range(seeds):
        est = fit(X, 1e6, seed)
        angles.append(subspace_angle(est.components_, ref.components_))
        ratios = est.explained_variance_ratio_ - ref.explained_variance_ratio_
        shares.append(np.abs(ratios).max())
    return max(angles), max(shares)


def test_default_converges_on_unscaled_diabetes():
    # before: max_norm=1 gave the PCA of the rows' directions; max_norm=500
    # (a stated bound) 0.015 rad off on the second component
    X = load_diabetes(return_X_y=True, scaled=False)[0]
    angle, share = real_table_errors(X)
    assert angle < 1e-2 and share < 1e-3


def test_default_converges_on_unscaled_breast_cancer():
    # before: 0.040 rad off at eps=1e6 (Gaussian noise ~1/sqrt(2 eps)); the
    # Laplace plan (noise ~1/eps) gives 0.0013-0.0017 rad
    X = load_breast_cancer(return_X_y=True)[0]
    angle, share = real_table_errors(X)
    assert angle < 1e-2 and share < 1e-3


def test_error_shrinks_as_epsilon_grows():
    # before: the error rose with epsilon (5.81 at 0.3, 6.10 at 10)
    X = unscaled()
    ref = PCA(2).fit(X)

    def share_error(epsilon):
        errors = [
            np.abs(
                fit(X, epsilon, s).explained_variance_ratio_
                - ref.explained_variance_ratio_
            ).max()
            for s in range(8)
        ]
        return np.mean(errors)

    errors = [share_error(e) for e in (0.3, 3.0, 100.0)]
    assert errors[0] > errors[1] > errors[2]


def test_the_clipping_norm_covers_every_row_at_large_epsilon():
    X = unscaled()
    est = fit(X, 1e6)
    longest = np.linalg.norm(X - est.centre_, axis=1).max()
    assert longest <= est.clip_norm_ <= 2 ** (1 / NORM_BINS_PER_OCTAVE) * longest


# -- item 3: the max_norm rule ------------------------------------------------


def test_stating_the_true_bound_gives_the_default():
    # before: max_norm=1 was the default and the true bound (1.5e5 here) put
    # noise of order max_norm² on the covariance
    X = unscaled()
    true_bound = float(np.linalg.norm(X, axis=1).max())
    default = fit(X, 1.0, seed=4)
    stated = fit(X, 1.0, seed=4, max_norm=true_bound)
    assert stated.clip_norm_ == default.clip_norm_
    np.testing.assert_array_equal(stated.components_, default.components_)


def test_a_smaller_stated_norm_lowers_the_clipping_norm():
    X = unscaled()
    est = fit(X, 1.0, max_norm=1e3)
    assert est.clip_norm_ == 1e3


def test_a_stated_norm_replaces_the_fallback_when_nothing_is_told():
    X = unscaled(n=20)
    est = fit(X, 1e-3, max_norm=7.0)
    assert est.clip_norm_ == 7.0


def test_out_of_range_max_norm_charges_nothing():
    acc = BudgetAccountant(1.0, 1e-6)
    with pytest.raises(ValueError, match="max_norm=1e\\+200 is out of range"):
        PrivatePCA(max_norm=1e200, accountant=acc).fit(np.ones((5, 2)))
    assert acc.total() == (0.0, 0.0)


# -- the norm histogram and its rule -----------------------------------------


EXTREMES = np.array(
    [
        0.0,
        5e-324,
        2.2e-308,
        1e-150,
        0.75,
        1.0,
        3.0,
        1e150,
        1e300,
        1.7976931348623157e308,
    ]
)


@pytest.mark.parametrize("value", EXTREMES)
def test_a_bins_upper_edge_covers_its_norms(value):
    rows = np.array([[value, 0.0], [value, value], [-value, 0.5 * value]])
    norms = np.array([value, math.hypot(value, value), math.hypot(value, value / 2)])
    for row, norm in zip(rows, norms, strict=True):
        k = norm_bins(row[None, :], 0.0)[0]
        assert 0 <= k < N_NORM_BINS
        edge = _bin_edge(k + 1)
        # clamped to MAX_NORM_RANGE beyond it; the edge covers the norm inside
        assert edge >= min(norm, 1e150) or edge == 1e-150


def test_norm_histogram_moves_by_one_count_per_row():
    # add/remove one row: exactly one bin moves by one, whatever the row
    rng = np.random.default_rng(0)
    X = rng.lognormal(0, 5, size=(200, 4)) * rng.choice([-1, 1], size=(200, 4))
    centre = np.array([1.0, -2.0, 1e3, 0.0])
    base = norm_histogram(X, centre)
    for row in [*X[:20], np.full(4, 1.7e308), np.zeros(4), np.full(4, 5e-324)]:
        moved = norm_histogram(np.vstack([X, row]), centre) - base
        assert np.abs(moved).sum() == 1 and moved.max() == 1


def test_centred_gram_has_sensitivity_one_at_any_centre():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3)) * [1.0, 1e3, 1e-3]
    for centre in ([0.0, 0.0, 0.0], [1e300, -1e300, 5.0], [1.0, 2.0, 3.0]):
        centre = np.array(centre)
        base = centred_moments_gram(X, centre, 2.0).as_float()
        for row in [X[0] * 1e6, np.full(3, -1.7e308), np.zeros(3)]:
            moved = centred_moments_gram(np.vstack([X, row]), centre, 2.0).as_float()
            size = 4
            upper = np.zeros((size, size))
            upper[np.triu_indices(size)] = moved - base
            assert np.sum(upper**2) <= 1.0 + 1e-12


def test_norm_rule_covers_every_occupied_bin_without_noise():
    counts = np.zeros(N_NORM_BINS)
    counts[[100, 2000, 2001]] = [1, 50, 3]
    norm, told = norm_rule(counts, 0.0)
    assert told and norm == _bin_edge(2002)


def test_norm_rule_coarsens_before_falling_back():
    counts = np.zeros(N_NORM_BINS)
    counts[2000:2004] = 40.0  # 40 rows a bin, 160 per factor of 2
    # at a noise deviation of 10 no bin is above 5 deviations, but the
    # group of four bins is above 5 * 10 * 2
    norm, told = norm_rule(counts, 10.0)
    assert told and norm == _bin_edge(2004)
    assert norm_rule(counts, 1e3) == (FALLBACK_NORM, False)


# -- item 6: warnings decided from released values ----------------------------


def test_unresolved_components_reads_the_gaps():
    values = np.array([10.0, 9.5, 3.0, 1.0, 0.9])
    np.testing.assert_array_equal(unresolved_components(values, 1.0, 2), [0, 1])
    np.testing.assert_array_equal(unresolved_components(values, 0.2, 2), [])
    np.testing.assert_array_equal(unresolved_components(values, 0.2, 5), [3, 4])
    np.testing.assert_array_equal(unresolved_components(values, 5.0, 1), [0])


def test_warns_on_unresolved_components_and_not_when_resolved():
    X = unscaled()
    with pytest.warns(NoiseDominatedWarning, match="not resolved"):
        PrivatePCA(2, epsilon=0.3, accountant=budget(), random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatedWarning)
        PrivatePCA(2, epsilon=1e6, accountant=budget(), random_state=0).fit(X)


def test_warns_when_no_norm_is_told_from_noise():
    with pytest.warns(NoiseDominatedWarning, match="fallback"):
        PrivatePCA(epsilon=0.01, accountant=budget(), random_state=0).fit(
            unscaled(n=30)
        )


def test_warnings_are_functions_of_the_releases_only(monkeypatch):
    # with every release fixed, two unrelated data sets warn alike
    d = 6
    fixed_counts = np.zeros((d, 257))
    fixed_counts[:, 200] = 1e4
    fixed_norms = np.zeros(N_NORM_BINS)
    fixed_norms[2100] = 1e4
    gram = np.eye(d + 1) * 1e4
    gram[1, 2] = gram[2, 1] = 10.0
    monkeypatch.setattr(
        _pca, "release_exponent_histogram", lambda *a: (fixed_counts, 1.0)
    )
    monkeypatch.setattr(_pca, "release", lambda *a, **k: fixed_norms)
    monkeypatch.setattr(_pca, "noisy_gram", lambda *a: gram)
    records = []
    for X in (unscaled(), np.zeros((10, d))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            PrivatePCA(3, epsilon=1.0, accountant=budget(), random_state=0).fit(X)
        records.append([str(w.message) for w in caught])
    assert records[0] == records[1] and len(records[0]) == 1


# -- audit: the three Gaussian releases of one fit -----------------------------

EPS, DELTA = 1.0, 1e-6
FAST = {"n_samples": 50_000, "n_pilot": 10_000, "random_state": 0}
D0 = np.array([[1.0, 0.0]])
D1 = np.array([[1.0, 0.0], [1e3, 0.0]])  # a row far outside the norm bound
CENTRE = np.array([1.5, 0.0])  # public: released before, fixed in the audit


def counts_sums(counts0, counts1):
    """The two neighbours' counts on the union of their occupied entries.

    An entry that is 0 in both moves nothing: its noise is independent of
    the data, so leaving it out changes no likelihood ratio (and keeps the
    vectorised audit small).
    """
    counts0, counts1 = np.ravel(counts0), np.ravel(counts1)
    support = np.flatnonzero((counts0 != 0) | (counts1 != 0))
    return [
        FixedPoint(tuple(int(v) for v in c[support]), 0, (support.size,))
        for c in (counts0, counts1)
    ]


def spread_norms(X, centre):
    """Twin: a row counts in its bin and the 63 above (sensitivity 8)."""
    counts = norm_histogram(X, centre)
    return sum(np.roll(counts, shift) for shift in range(64))


def fit_releases(norms):
    ratios = gaussian_noise_multipliers(
        EPS, DELTA, [CENTRE_SHARE, NORM_SHARE, GRAM_SHARE]
    )
    magnitudes = counts_sums(*(exponent_histogram(X) for X in (D0, D1)))
    norm_counts = counts_sums(*(norms(X, CENTRE) for X in (D0, D1)))
    sums = {
        id(X): [magnitudes[i], norm_counts[i], centred_moments_gram(X, CENTRE, 1.0)]
        for i, X in enumerate((D0, D1))
    }
    # the exponent histogram has L2 sensitivity sqrt(d): its noise is
    # ratio * sqrt(d) on counts
    plan = [(0, ratios[0] * math.sqrt(2.0)), (1, ratios[1]), (2, ratios[2])]
    return likelihood_ratio(sums, plan, D0, D1)


def test_audit_of_the_composition_passes_and_a_spread_twin_is_caught():
    assert_dp(fit_releases(norm_histogram), D0, D1, EPS, DELTA, **FAST)
    bad = audit_mechanism(fit_releases(spread_norms), D0, D1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + 0.25, str(bad)
