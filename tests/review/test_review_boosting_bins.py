"""Adversarial review of the boosting's private bins (``released_mass``'s
blocks of cells), its ``bin_share`` parameter and its leaf allowance: each
test is a reproducer of a finding (it failed before its fix; an ``xfail`` is
a finding left open) or an attack that held. Figures are hand-derived or
exact (Fractions), never read off the code under test."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.ensemble import (
    PrivateHistGradientBoostingClassifier,
    PrivateHistGradientBoostingRegressor,
)
from skdp.ensemble._hist_gradient_boosting import binning, grower
from skdp.ensemble._hist_gradient_boosting._plan import release_shares
from skdp.linear_model._release import gaussian_fit_cost
from skdp.mechanisms import gaussian_noise_multipliers
from skdp.mechanisms._gaussian import _gaussian_grid
from skdp.model_selection import fit_cost

N_CELLS = binning.N_CELLS
ONE = N_CELLS // 2 + 1 + 256  # the cell of 1.0 (positive side, binade 0)
BIG = np.finfo(float).max
SMALL = {"max_iter": 2, "max_depth": 2, "max_bins": 8, "boosting": "trees"}


def _data(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)


# --- (1) released_mass: post-processing of any released array ---------------


EXTREME = {
    "zeros": np.zeros((2, N_CELLS)),
    "all +max": np.full((2, N_CELLS), BIG),
    "all -max": np.full((2, N_CELLS), -BIG),
    "alternating ±max": np.where(np.arange(N_CELLS) % 2, BIG, -BIG)[None],
    "alternating ±1": np.where(np.arange(N_CELLS) % 2, 1.0, -1.0)[None],
    "one +max": np.eye(1, N_CELLS, ONE) * BIG,
    "inf": np.full((1, N_CELLS), np.inf),
    "±inf": np.where(np.arange(N_CELLS) % 2, np.inf, -np.inf)[None],
    "nan": np.full((1, N_CELLS), np.nan),
    "subnormal": np.full((1, N_CELLS), 5e-324),
}


@pytest.mark.parametrize("noise_sd", [5e-324, 1.0, 1e300])
@pytest.mark.parametrize("name", list(EXTREME))
def test_cuts_of_any_released_array_neither_raise_nor_warn(name, noise_sd):
    """After the charge nothing may raise or warn: the blocks' sums of 64
    released values of ±max overflowed ("overflow encountered in reduce"),
    and so did the cumulative mass. The rule is now defined on every double
    (an infinite sum is infinite mass; NaN is no mass), silently; the cuts
    stay sorted cell indices in ``(0, N_CELLS)``, at most ``max_bins - 1``."""
    noisy = EXTREME[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for max_bins in (2, 255):
            for cuts in binning.cuts_from_counts(noisy, noise_sd, max_bins):
                assert cuts.size <= max_bins - 1
                assert np.all(np.diff(cuts) > 0)
                assert np.all((cuts > 0) & (cuts < N_CELLS))
            mass = binning.released_mass(noisy, noise_sd)
            assert not np.any(mass < 0)


def test_block_mass_is_a_function_of_the_released_values_only():
    """Hand-derived: eight cells of 10 at deviation 5 stand out as a block
    (80 > 4 * 5 * sqrt(8) = 56.6), their mass on the block's last cell; on
    the negative side too (the cell nearest zero). Each feature's mass is a
    function of its own released row (features swapped: masses swapped)."""
    noisy = np.zeros((2, N_CELLS))
    noisy[0, ONE : ONE + 8] = 10.0
    neg = N_CELLS // 2 - 256  # the cell of -1.0 (a block's first cell)
    noisy[1, neg : neg + 8] = 10.0
    mass = binning.released_mass(noisy, 5.0)
    assert np.flatnonzero(mass[0]).tolist() == [ONE + 7]
    assert np.flatnonzero(mass[1]).tolist() == [neg + 7]
    np.testing.assert_array_equal(binning.released_mass(noisy[::-1], 5.0), mass[::-1])


def test_a_block_never_reaches_across_zero_or_off_its_alignment():
    """Eight cells of 10 (deviation 5) straddling an aligned boundary of 8
    are two halves of 4 in two aligned blocks of 8 (40 < 56.6 each), and
    meet only in a block of 16 (80, not above 4 * 5 * 4 = 80): no mass.
    Around zero, the last two negative cells (30 > 28.3) and the first two
    positive ones make pairs; the zero cell (15 < 20) joins no block."""
    noisy = np.zeros((1, N_CELLS))
    noisy[0, ONE + 4 : ONE + 12] = 10.0
    assert not binning.released_mass(noisy, 5.0).any()
    around_zero = np.zeros((1, N_CELLS))
    around_zero[0, N_CELLS // 2 - 2 : N_CELLS // 2 + 3] = 15.0  # 5 cells of 15
    mass = binning.released_mass(around_zero, 5.0)[0]
    assert np.flatnonzero(mass).tolist() == [N_CELLS // 2 - 1, N_CELLS // 2 + 2]


def test_vanishing_noise_adds_no_spurious_cut():
    """As the noise vanishes the private bins must become the exact counts'
    bins. They did not: a cell or block of empty cells stands out of its
    own noise with a probability that does not depend on the noise's size
    (4 deviations), and 64-cell blocks doubled it; a tiny "mass" above a
    feature's last real cell kept a cut after that cell (an empty top bin).
    Two cells of 1000 and 1001 rows, deviation 1e-6, 500 features: 1.6 % of
    the features got the spurious cut (0.85 % before the blocks). The rule
    now asks a cell or block to hold at least half a row as well (counts are
    whole rows): at deviations above 1/8 row the floor is not reached, so
    nothing changes at any usual epsilon."""
    counts = np.zeros((500, N_CELLS))
    counts[:, ONE] = 1000.0
    counts[:, ONE + 8] = 1001.0  # the cell of 2.0
    noisy = counts + 1e-6 * np.random.default_rng(0).normal(size=counts.shape)
    cuts = binning.cuts_from_counts(noisy, 1e-6, 8)
    assert all(c.tolist() == [ONE + 1] for c in cuts)


def test_vanishing_noise_bins_are_the_exact_counts_bins_on_real_data():
    """Continuous data (3001 rows, so that no cumulative count ties a
    level): at a noise deviation of 1e-6 rows, every feature's private cuts
    are the cuts of the exact counts, blocks or not."""
    rng = np.random.default_rng(1)
    X = np.exp(rng.normal(0, 3, (3001, 20))) * rng.choice([-1, 1], (3001, 20))
    counts = binning.cell_counts(X)
    exact = binning.cuts_from_counts(counts, 0.0, 8)
    noisy = counts + 1e-6 * rng.normal(size=counts.shape)
    for want, got in zip(exact, binning.cuts_from_counts(noisy, 1e-6, 8), strict=True):
        np.testing.assert_array_equal(got, want)


def test_the_leaf_allowance_vanishes_with_the_noise():
    """λ = l2 + 2 * multiplier * sens + MIN_HESSIAN: linear in the leaf's
    noise multiplier, so at 1e-12 it is l2 + 1e-3 to 1e-11."""
    plan = grower.TreePlan(2, 1e-12, 1e-12, 1.0, 0.25, 0.5, 0.1)
    assert plan.leaf_lambda() == pytest.approx(0.501, abs=1e-11)
    assert grower.LEAF_NOISE_ALLOWANCE == 2.0


# --- (2) bin_share: refused before the charge, never above the budget ---------


@pytest.mark.parametrize(
    "bin_share",
    [0, -0.0, 1, True, False, math.nan, math.inf, None, "0.1", 0.5000000000000001],
)
@pytest.mark.parametrize(
    "cls", [PrivateHistGradientBoostingClassifier, PrivateHistGradientBoostingRegressor]
)
def test_a_bin_share_out_of_range_is_refused_with_nothing_charged(cls, bin_share):
    X, y = _data()
    acc = BudgetAccountant(epsilon=10.0, delta=0.5)
    est = cls(bin_share=bin_share, accountant=acc, **SMALL)
    with pytest.raises(ValueError, match="bin_share"):
        est.fit(X, y)
    assert tuple(acc.total()) == (0.0, 0.0) and not acc.entries


@pytest.mark.parametrize("bin_share", [5e-324, 1e-12])
def test_a_tiny_bin_share_is_refused_before_the_charge_and_named(bin_share):
    """A share so small that the bins' noise is beyond the exact sampler is
    refused before the charge (held); the message used to say "raise
    epsilon or delta, or use fewer features" only, not naming the cause the
    caller chose: it now names bin_share (and feature_bounds)."""
    X, y = _data()
    acc = BudgetAccountant(epsilon=10.0, delta=0.5)
    clf = PrivateHistGradientBoostingClassifier(
        classes=[0, 1], bin_share=bin_share, accountant=acc, **SMALL
    )
    with pytest.raises(ValueError, match="bin_share") as info:
        clf.fit(X, y)
    assert "Nothing was charged" in str(info.value)
    assert tuple(acc.total()) == (0.0, 0.0) and not acc.entries


@pytest.mark.parametrize("composition", ["basic", "zcdp", "pld"])
@pytest.mark.parametrize("bin_share", [0.5, np.float32(0.5), np.float64(1e-3)])
def test_any_accepted_bin_share_charges_exactly_the_planned_cost(
    composition, bin_share
):
    """fit_cost == what the accountant records, whatever the share, for each
    composition and for groups of 3 rows (the unit's cost)."""
    X, y = _data(600)
    for groups in (None, np.arange(600) % 200):
        acc = BudgetAccountant(epsilon=50.0, delta=0.5, composition=composition)
        clf = PrivateHistGradientBoostingClassifier(
            classes=[0, 1], bin_share=bin_share, accountant=acc, random_state=0
        ).set_params(**SMALL, max_rows_per_group=None if groups is None else 3)
        planned = fit_cost(clf)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.fit(X, y, groups=groups)
        (entry,) = acc.entries
        assert (entry.epsilon, entry.delta) == (planned.epsilon, planned.delta)
        assert entry.rho == planned.rho
        assert entry.noise_multiplier == planned.noise_multiplier


def _exact_composition(epsilon, bin_share, max_iter, max_depth):
    """``R² Σ μ_i²`` of a plan's releases: nominal (the float multipliers)
    and real (the sampler's noise: ``(Δ / 2**k)² / σ²_steps``)."""
    shares = release_shares([bin_share], max_iter, max_depth)
    multipliers = gaussian_noise_multipliers(epsilon, 1e-6, shares)
    charged = Fraction(gaussian_fit_cost(epsilon, 1e-6).noise_multiplier) ** 2
    nominal = sum(1 / Fraction(float(r)) ** 2 for r in multipliers)
    real = 0
    for r in multipliers:
        k, sigma2 = _gaussian_grid(2.0, float(r), 4 * N_CELLS)
        real += (Fraction(2) / Fraction(2) ** k) ** 2 / sigma2
    return nominal * charged, real * charged


@pytest.mark.parametrize("bin_share", [1e-9, 0.1, 0.3, 1 / 3, 0.5])
def test_the_released_noise_never_exceeds_the_charged_budget(bin_share):
    """Held, exactly (Fractions): the real noise (the sampler's rounded-up
    sensitivity and ceiled variance) composes to at most the charged
    Gaussian, with about 2e-6 to spare, for every share."""
    for epsilon, rounds, depth in [(0.3, 3, 2), (7.3, 7, 12)]:
        _, real = _exact_composition(epsilon, bin_share, rounds, depth)
        assert real <= 1


@pytest.mark.xfail(
    strict=True,
    reason="open (low, shared code): gaussian_noise_multipliers divides "
    "R by sqrt(share / sum) in floats, which overshoots 1/R² by up to 3.3e-16 "
    "relative (bin_share 0.1 already); the sampler's rounding absorbs it "
    "(test above), unlike equal_shares, which rounds down itself",
)
def test_the_nominal_multipliers_never_exceed_the_charged_budget():
    worst = max(
        _exact_composition(7.3, share, 7, 12)[0] for share in (0.1, 0.3, 1 / 3, 0.5)
    )
    assert worst <= 1


def test_a_fit_at_negligible_noise_has_the_exact_counts_bins():
    """Held: at epsilon = 1e8 (bins' noise deviation about 1e-4 rows) with
    bin_share at its top, a fit's private bins are the bins of the exact
    cell counts (3001 rows: no cumulative count ties a level)."""
    rng = np.random.default_rng(0)
    X = np.exp(rng.normal(0, 2, (3001, 3)))
    clf = PrivateHistGradientBoostingClassifier(
        epsilon=1e8,
        delta=0.4,
        classes=[0, 1],
        bin_share=0.5,
        accountant=BudgetAccountant(delta=0.5),
        random_state=0,
        **SMALL,
    ).fit(X, (X[:, 0] > 1).astype(int))
    exact = binning.cuts_from_counts(binning.cell_counts(X), 0.0, SMALL["max_bins"])
    for want, got in zip(exact, clf._bin_mapper.cuts, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("zeros", [50, 950])
def test_a_binary_feature_has_two_bins_without_noise_whichever_value_is_rare(zeros):
    """scikit-learn bins a 0/1 feature in two. The cut rule dropped any cut
    after a feature's last cell of mass, so with fewer than 1/max_bins of
    the rows at 0 every level fell on the cell of 1 and the feature had ONE
    bin, even on the exact counts (5 % zeros, max_bins=8, the default): no
    tree could split on it at any epsilon (a one-hot column whose 1 is the
    majority). A level reached at the last cell of mass now cuts before it.
    Hand-derived: the cut is the cell after 0's, i.e. 1.0's (cell 769) is
    in bin 1 and 0.0 (cell 512) in bin 0."""
    X = np.array([0.0] * zeros + [1.0] * (1000 - zeros))[:, None]
    (cuts,) = binning.cuts_from_counts(binning.cell_counts(X), 0.0, 8)
    assert cuts.tolist() == [N_CELLS // 2 + 1]


def test_a_tie_at_negligible_noise_keeps_the_exact_cut():
    """Two cells of 500 rows, max_bins=2: the level (half the mass) ties the
    first cell's count, and negligible noise decided whether the cut fell
    after the first cell or after the last (dropped: one bin) — 51 % of
    1,000 features had one bin. Now the cut is after the first cell always,
    as on the exact counts."""
    counts = np.zeros((1000, N_CELLS))
    counts[:, [ONE, ONE + 8]] = 500.0
    noisy = counts + 1e-3 * np.random.default_rng(0).normal(size=counts.shape)
    assert all(
        c.tolist() == [ONE + 1] for c in binning.cuts_from_counts(noisy, 1e-3, 2)
    )
