"""Review of issue 27, round 3: the Laplace smooth-sensitivity median above ε_f = 1.

``SmoothSensitivityMedian(noise="laplace")`` uses ``α = ε_f/2`` and
``β_0 = ε_f/(2ℓ)`` with ``ℓ = max(1, ln(2/δ_f) + ε_f/4)`` for ``ε_f > 1``
(:func:`skdp.stats._smooth.laplace_log_term`). These tests compute the
exact worst-case privacy loss (the hockey-stick divergence) of the release's
noise against a shifted and dilated copy, from first principles:

* continuous Laplace, in closed form with mpmath (the privacy loss is piecewise
  linear, so the region where it exceeds ε is a union of intervals whose
  masses are differences of the Laplace CDF);
* the discrete Laplace actually sampled (pmf ``tanh(1/(2t)) e^{-|z|/t}``),
  by exact sums in log space (no overflow of ``e^ε`` at ε_f = 1e6);
* Nissim–Raskhodnikova–Smith's admissibility split (sliding by ``Δ <= α`` at
  ``ε/2``, dilation by ``|λ| <= β`` at ``(ε/2, δ/2)``).

Each is checked up to ε_f = 1e6, and each is shown able to fail: with NRS's
``ℓ = ln(2/δ_f)`` (no ``ε_f/4`` term), the same computation exceeds δ_f.
"""

import itertools
import math

import mpmath
import numpy as np
import pytest

from skdp.stats._smooth import laplace_log_term, smooth_parameters

mpmath.mp.dps = 60

EPSILONS = [0.5, 1.0, 1.0 + 1e-9, 2.0, 10.0, 30.0, 100.0, 1e4, 1e6]
DELTAS = [1e-12, 1e-6, 0.5, 0.99]


def _beta0(epsilon, delta):
    return epsilon / (2 * laplace_log_term(epsilon, delta))


def _laplace_mass(lo, hi, centre, scale):
    """Exact mass of Laplace(centre, scale) on [lo, hi] (mpmath)."""

    def cdf(z):
        if z == -mpmath.inf:
            return mpmath.mpf(0)
        if z == mpmath.inf:
            return mpmath.mpf(1)
        u = (z - centre) / scale
        return mpmath.exp(u) / 2 if u < 0 else 1 - mpmath.exp(-u) / 2

    return cdf(hi) - cdf(lo)


def _continuous_hockey_stick(epsilon, t, t2, shift):
    """``∫ (p - e^ε q)_+`` for p = Lap(0, t), q = Lap(shift, t2), exactly.

    The loss ``L(z) = ln(t2/t) - |z|/t + |z - shift|/t2`` is linear on each of
    the three pieces cut at 0 and ``shift``; on each the set ``L > ε`` is an
    interval, whose P- and Q-masses are CDF differences.
    """
    eps, t, t2, shift = (mpmath.mpf(v) for v in (epsilon, t, t2, shift))
    cuts = sorted({mpmath.mpf(0), shift})
    edges = [-mpmath.inf, *cuts, mpmath.inf]
    total = mpmath.mpf(0)
    for lo, hi in itertools.pairwise(edges):
        probe = (lo + hi) / 2 if lo != -mpmath.inf and hi != mpmath.inf else None
        if probe is None:
            probe = hi - 1 if lo == -mpmath.inf else lo + 1
        if lo == -mpmath.inf and hi == mpmath.inf:
            probe = mpmath.mpf(0)
        slope = -mpmath.sign(probe) / t + mpmath.sign(probe - shift) / t2
        offset = mpmath.log(t2 / t) - abs(probe) / t + abs(probe - shift) / t2
        offset -= slope * probe  # L(z) = offset + slope z on this piece
        if slope == 0:
            a, b = (lo, hi) if offset > eps else (hi, hi)
        else:
            root = (eps - offset) / slope
            a, b = (max(lo, root), hi) if slope > 0 else (lo, min(hi, root))
        if a < b:
            excess = _laplace_mass(a, b, 0, t) - mpmath.exp(eps) * _laplace_mass(
                a, b, shift, t2
            )
            total += max(excess, 0)
    return total


def _continuous_worst(epsilon, beta, n_lambda=9, n_shift=5):
    """Worst hockey stick over ``|ln(t2/t)| <= β``, shifts ``<= α min(t, t2)``.

    The continuous noise is scale-invariant: ``t = 1`` loses nothing.
    """
    alpha = epsilon / 2
    worst = mpmath.mpf(0)
    for lam in np.linspace(-beta, beta, n_lambda):
        t2 = mpmath.exp(lam)
        for frac in np.linspace(0, 1, n_shift):
            shift = frac * alpha * min(mpmath.mpf(1), t2)
            worst = max(worst, _continuous_hockey_stick(epsilon, 1.0, t2, shift))
            # both directions of the neighbour relation
            worst = max(worst, _continuous_hockey_stick(epsilon, t2, 1.0, shift))
    return worst


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("delta", DELTAS)
def test_continuous_laplace_loss_is_within_epsilon_delta(epsilon, delta):
    worst = _continuous_worst(epsilon, _beta0(epsilon, delta))
    assert worst <= delta


@pytest.mark.parametrize("epsilon, delta", [(30.0, 1e-6), (100.0, 1e-3), (1e4, 1e-6)])
def test_continuous_check_fails_without_the_tail_term(epsilon, delta):
    # the same computation with NRS's ℓ = ln(2/δ) exceeds δ: the check can fail
    beta = epsilon / (2 * max(1.0, math.log(2 / delta)))
    assert _continuous_worst(epsilon, beta) > delta


def _discrete_hockey_stick(epsilon, shift, t, t2):
    """``Σ_z (P(z) - e^ε Q(z))_+``, P = DLap(t), Q = shift + DLap(t2), in logs.

    Exact on ``|z| <= W``; P's mass beyond W is added (an upper bound).
    """
    width = int(60 * max(t, t2)) + shift + 60
    z = np.arange(-width, width + 1, dtype=float)
    log_p = math.log(math.tanh(0.5 / t)) - np.abs(z) / t
    log_q = math.log(math.tanh(0.5 / t2)) - np.abs(z - shift) / t2
    gap = epsilon + log_q - log_p  # the term is p (1 - e^gap)_+
    terms = np.where(gap < 0, np.exp(log_p) * -np.expm1(np.minimum(gap, 0)), 0.0)
    tail = 2 * math.exp(-(width + 1) / t) / (1 + math.exp(-1 / t))
    return float(np.sum(terms)) + tail


def _discrete_worst(epsilon, beta):
    alpha = epsilon / 2
    worst = 0.0
    for t_units in (1.0, 1.7, 5.0, 20.0):  # t >= 1/α since S' >= g
        t = t_units / alpha
        for lam in np.linspace(-beta, beta, 7):
            t2 = t * math.exp(lam)
            if t2 < 1 / alpha:  # S'(x') >= g too
                continue
            top = math.floor(alpha * min(t, t2))
            for shift in sorted({0, top // 2, top}):
                worst = max(worst, _discrete_hockey_stick(epsilon, shift, t, t2))
                worst = max(worst, _discrete_hockey_stick(epsilon, shift, t2, t))
    return worst


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("delta", DELTAS)
def test_discrete_laplace_loss_is_within_epsilon_delta(epsilon, delta):
    assert _discrete_worst(epsilon, _beta0(epsilon, delta)) <= delta


@pytest.mark.parametrize("epsilon, delta", [(30.0, 1e-6), (100.0, 1e-3)])
def test_discrete_check_fails_without_the_tail_term(epsilon, delta):
    beta = epsilon / (2 * max(1.0, math.log(2 / delta)))
    assert _discrete_worst(epsilon, beta) > delta


@pytest.mark.parametrize("epsilon", [e for e in EPSILONS if e > 1])
@pytest.mark.parametrize("delta", DELTAS)
def test_nrs_dilation_and_sliding_hold_separately(epsilon, delta):
    # NRS admissibility: dilation P[Z ∈ S] <= e^{ε/2} P[e^λ Z ∈ S] + δ/2 for
    # |λ| <= β, and sliding P[Z ∈ S] <= e^{ε/2} P[Z + Δ ∈ S] for |Δ| <= α
    beta, alpha = _beta0(epsilon, delta), epsilon / 2
    for lam in (-beta, -beta / 2, beta / 2, beta):
        dilation = _continuous_hockey_stick(epsilon / 2, 1.0, math.exp(lam), 0.0)
        assert dilation <= delta / 2
    assert _continuous_hockey_stick(epsilon / 2, 1.0, 1.0, alpha) == 0


@pytest.mark.parametrize("epsilon", [1e4, 1e6, 1e300])
def test_beta_used_is_below_the_proven_one_at_huge_epsilon(epsilon):
    # float rounding of ℓ at huge ε (ln(2/δ) absorbed into ε/4) keeps β <= 2,
    # where c = α/(e^β - 1) ≈ 0.078 ε_f dwarfs ln(2/δ)
    _, beta, cap = smooth_parameters(epsilon, 1e-6, 1)
    assert 0 < beta < 2 and cap >= 1
    c = (epsilon / 2) / math.expm1(_beta0(epsilon, 1e-6))
    assert c >= math.log(2 / 1e-6)


# -- item 2: PrivatePCA's new releases ---------------------------------------

BIG = np.finfo(float).max


def test_pca_norm_bin_of_an_overflowing_difference_is_the_last():
    # x - centre overflows to inf: the norm is infinite, and the Notes (and the
    # Gram's rule, which maps it to the largest double) put it in the last bin;
    # it used to land in the FIRST (inf/inf = nan -> -inf), so the clipping
    # norm rule never covered such rows
    from skdp.decomposition._pca_scales import N_NORM_BINS, norm_bins

    rows = np.array([[BIG, 0.0], [-BIG, 1.0], [BIG, BIG]])
    centre = np.array([-1.5 * 2.0**1023, 0.0])
    assert list(norm_bins(rows, centre)) == [N_NORM_BINS - 1] * 3


@pytest.mark.parametrize(
    "row",
    [[BIG, 0.0], [-BIG, BIG], [5e-324, -5e-324], [0.0, 0.0], [1e308, 1e-308]],
)
@pytest.mark.parametrize("centre", [[0.0, 0.0], [-1.5 * 2.0**1023, 1.5 * 2.0**1023]])
def test_pca_norm_histogram_moves_by_one_count_per_row(row, centre):
    from skdp.decomposition._pca_scales import norm_histogram

    base = np.array([[1.0, 2.0], [-3.0, 1e300], [0.0, 5e-324]])
    with_row = np.vstack([base, row])
    moved = norm_histogram(with_row, np.array(centre)) - norm_histogram(
        base, np.array(centre)
    )
    assert moved.sum() == 1 and np.abs(moved).sum() == 1


@pytest.mark.parametrize("epsilon", [1e-6, 1e-4])
def test_pca_fit_at_a_tiny_epsilon_and_huge_norm_does_not_raise_after_charge(
    epsilon,
):
    # the noisy mean in data units (~1e157 at max_norm=1e150) overflowed its
    # outer product, the covariance held -inf, and eigh raised LinAlgError
    # AFTER the charge (epsilon=1e-6: "Eigenvalues did not converge")
    import warnings

    from skdp import BudgetAccountant
    from skdp.decomposition import PrivatePCA

    X = np.random.default_rng(0).normal(size=(5, 3))
    acc = BudgetAccountant(epsilon=1.0, delta=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pca = PrivatePCA(
            epsilon=epsilon,
            delta=1e-6,
            max_norm=1e150,
            accountant=acc,
            random_state=0,
        ).fit(X)
    assert np.all(np.isfinite(pca.components_))
    assert np.all(np.isfinite(pca.explained_variance_))
    assert np.all(np.isfinite(pca.get_covariance()))


@pytest.mark.filterwarnings("ignore")
def test_pca_fit_cost_is_the_charge():
    from skdp import BudgetAccountant
    from skdp.decomposition import PrivatePCA

    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    pca = PrivatePCA(epsilon=0.7, delta=1e-6, accountant=acc, random_state=0)
    cost = pca._fit_cost(3)
    pca.fit(np.random.default_rng(1).normal(size=(200, 3)))
    assert acc.total() == (cost.epsilon, cost.delta)


EXTREME_ROWS = [
    [BIG, -BIG, 0.0],
    [5e-324, -5e-324, 1e-308],
    [1e308, 1e308, 1e308],
    [-1.5 * 2.0**1023, 1.0, 3.0],
    [0.0, 0.0, 0.0],
    [1.0, 2.0, 1e-300],
]


@pytest.mark.parametrize("row", EXTREME_ROWS)
@pytest.mark.parametrize(
    "centre", [[0.0, 0.0, 0.0], [-1.5 * 2.0**1023, 1.5 * 2.0**1023, 1e-300]]
)
@pytest.mark.parametrize("max_norm", [1e-150, 1.0, 1e150])
def test_pca_gram_of_one_row_has_upper_triangle_norm_at_most_one(row, centre, max_norm):
    # the released upper triangle moves by q qᵀ's upper triangle, exactly (the
    # sums are additive), whose L2 norm is <= ||q||² <= 1
    from fractions import Fraction

    from skdp.decomposition._pca_scales import centred_moments_gram

    rows = np.array([[1.0, -2.0, 3.0], row])
    both = centred_moments_gram(rows, np.array(centre), max_norm)
    first = centred_moments_gram(rows[:1], np.array(centre), max_norm)
    single = centred_moments_gram(rows[1:], np.array(centre), max_norm)
    assert both.exponent == first.exponent == single.exponent  # public grid
    added = [a - b for a, b in zip(both.numerators, first.numerators, strict=True)]
    assert added == list(single.numerators)
    exact = [Fraction(v) * Fraction(2) ** single.exponent for v in added]
    assert sum(v * v for v in exact) <= 1


@pytest.mark.parametrize("row", EXTREME_ROWS)
def test_pca_exponent_histogram_moves_sqrt_d(row):
    from skdp.linear_model._scaling import exponent_histogram

    base = np.array([[1.0, -2.0, 3.0], [0.0, 5e-324, -BIG]])
    moved = exponent_histogram(np.vstack([base, row])) - exponent_histogram(base)
    assert np.all(moved.sum(axis=1) == 1) and np.abs(moved).sum() == 3


# -- item 3: joint quantiles refined with ε -----------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXTREME_BOUNDS = [
    (-BIG, BIG),
    (0.0, 1e-300),
    (5e-324, 1e-320),  # subnormal bounds: the generic locate path
    (-1e-310, 1e-310),
    (1e300, BIG),
    (-BIG, -1e300),
    (-1.0, 2.0**-1000),
]
_doubles = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 5e-324, -5e-324, BIG, -BIG, 2.0**-1022, 1e-310]),
)


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(EXTREME_BOUNDS),
    st.lists(_doubles, min_size=1, max_size=30),
    st.integers(0, 2),
)
def test_sparse_blocks_are_the_dense_blocks_at_extreme_bounds(bounds, values, refine):
    from skdp.sensitivity._joint_quantile import (
        rank_blocks,
        refined_split_bits,
        relative_grid_counts,
        sparse_rank_blocks,
    )
    from skdp.sensitivity._quantile_grid import RelativeGrid

    grid = RelativeGrid(*bounds, refine)
    split = refined_split_bits(refine)
    column = np.array(values)
    multiplicity = grid.multiplicity(np.arange(grid.first, grid.last + 1))
    dense = rank_blocks(*relative_grid_counts(column, grid), split, multiplicity)
    sparse = sparse_rank_blocks(column, grid, split)
    for a, b in zip(dense, sparse, strict=True):
        np.testing.assert_array_equal(a, np.asarray(b).astype(a.dtype))


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(EXTREME_BOUNDS),
    st.lists(_doubles, min_size=1, max_size=30),
    st.integers(0, 10),
)
def test_locate_is_the_floor_by_the_points_themselves(bounds, values, refine):
    # independent of locate: points(i) <= v < points(i + 1), on_grid iff equal
    from skdp.sensitivity._quantile_grid import RelativeGrid

    grid = RelativeGrid(*bounds, refine)
    low, high = grid.points(np.array([grid.first, grid.last]))
    assert bounds[0] <= low <= high <= bounds[1]
    column = np.clip(np.array(values), low, high)
    index, on_grid = grid.locate(column)
    assert np.all((grid.first <= index) & (index <= grid.last))
    here = grid.points(index)
    assert np.all(here <= column)
    inside = index < grid.last
    assert np.all(grid.points(index[inside] + 1) > column[inside])
    np.testing.assert_array_equal(on_grid, here == column)
    # cumulative differences are the running sums of multiplicities
    a, c = int(index.min()), int(index.max())
    if c - a < 5000:
        running = int(grid.multiplicity(np.arange(a, c)).sum())
        assert (
            int(grid.cumulative(np.array([c]))[0] - grid.cumulative(np.array([a]))[0])
            == running
        )


@pytest.mark.parametrize("refine, exponent", [(7, -1056), (10, -1053), (0, -1063)])
def test_sparse_blocks_match_dense_when_the_fine_step_is_the_coarse_one(
    refine, exponent
):
    # bounds of subnormal width: fine = coarse = -1074 (span 0), every point
    # has multiplicity 1, but cumulative() shifted by -1 (2 << -1) above T1,
    # so the sparse path gave the gap blocks above T1 a wrong size (0 or
    # garbage) while an atom there kept size 1: a base measure that depends
    # on the data, i.e. a point the mechanism can output only if a row is on
    # it. At refine >= 7 (epsilon >= 128) these grids exceed DENSE_POINTS and
    # the release took the sparse path.
    from skdp.sensitivity._joint_quantile import (
        rank_blocks,
        refined_split_bits,
        relative_grid_counts,
        sparse_rank_blocks,
        sparse_state_points,
        state_points,
    )
    from skdp.sensitivity._quantile_grid import RelativeGrid

    grid = RelativeGrid(0.0, 2.0**exponent, refine)
    assert grid.coarse == grid.fine and grid.last > 1 << (grid.bits + 1)
    split = refined_split_bits(refine)
    points = grid.points(np.array([3, grid.last // 2, grid.last - 5]))
    column = np.concatenate([points, [0.0]])
    multiplicity = grid.multiplicity(np.arange(grid.first, grid.last + 1))
    total = grid.cumulative(np.array([grid.last + 1])) - grid.cumulative(
        np.array([grid.first])
    )
    assert int(total[0]) == int(multiplicity.sum())
    dense = rank_blocks(*relative_grid_counts(column, grid), split, multiplicity)
    sparse = sparse_rank_blocks(column, grid, split)
    for a, b in zip(dense, sparse, strict=True):
        np.testing.assert_array_equal(a, np.asarray(b).astype(a.dtype))
    _, sizes, points, gap = sparse
    for block in np.flatnonzero(gap):  # first, middle and last states
        size = int(sizes[block])
        offsets = np.array([0, size // 2, size - 1], dtype=object)
        where, flags = np.full(3, points[block]), np.full(3, True)
        np.testing.assert_array_equal(
            sparse_state_points(where, offsets, flags, grid, split),
            state_points(where, offsets, flags, multiplicity, split),
        )


@pytest.mark.parametrize("refine", range(11))
def test_cumulative_differences_are_running_sums_near_the_subnormal_clamp(refine):
    from skdp.sensitivity._quantile_grid import RelativeGrid

    rng = np.random.default_rng(refine)
    for exponent in range(-1070 + refine, -1030, 3):
        for lower in (0.0, -(2.0**exponent)):
            grid = RelativeGrid(lower, 2.0**exponent, refine)
            if grid.size > 1 << 21:
                continue
            weights = grid.multiplicity(np.arange(grid.first, grid.last + 2))
            running = np.concatenate(([0], np.cumsum(weights)))
            ends = np.sort(rng.integers(grid.first, grid.last + 2, size=(20, 2)))
            got = grid.cumulative(ends[:, 1]) - grid.cumulative(ends[:, 0])
            want = running[ends[:, 1] - grid.first] - running[ends[:, 0] - grid.first]
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("d, epsilon", [(50, 1e-6), (400, 1e-5)])
def test_pca_refuses_a_release_the_sampler_cannot_draw_before_the_charge(d, epsilon):
    # PrivatePCA charged, then its exponent histogram (d x N_BINS values,
    # sensitivity sqrt(d)) raised "Cannot represent a Gaussian release" at
    # d = 50, epsilon = 1e-6: the linear models check their release plan
    # before the charge, PCA did not
    from skdp import BudgetAccountant
    from skdp.decomposition import PrivatePCA

    X = np.random.default_rng(0).normal(size=(5, d))
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    pca = PrivatePCA(epsilon=epsilon, delta=1e-6, accountant=acc, random_state=0)
    with pytest.raises(ValueError, match="Nothing was charged"):
        pca.fit(X)
    assert acc.total() == (0.0, 0.0)


# -- item 4: PrivateLogisticRegression's rules read released values only ------


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    "feature_bounds, count",
    [((-3.0, 3.0), 4000.0), ((-3.0, 3.0), 8000.0), ("scaled", 2000.0)],
)
def test_logistic_clip_norm_is_a_function_of_the_released_count(
    monkeypatch, feature_bounds, count
):
    # with the released count pinned, data of 40 and of 4,000 rows get the
    # same clipping norm: the rule never reads the true n or the rows (these
    # counts put the rule strictly between its floor 1 and its cap)
    import skdp.linear_model._logistic as logistic
    from skdp import BudgetAccountant

    monkeypatch.setattr(logistic, "noisy_count", lambda *args: count)
    norms = []
    for n in (40, 4000):
        rng = np.random.default_rng(n)
        X = rng.normal(size=(n, 4)).clip(-3, 3)
        y = (X[:, 0] > 0).astype(int)
        model = logistic.PrivateLogisticRegression(
            epsilon=2.0,
            delta=1e-6,
            classes=[0, 1],
            feature_bounds=feature_bounds,
            accountant=BudgetAccountant(epsilon=10.0, delta=1e-3),
            random_state=0,
        ).fit(X, y)
        assert model.count_ == count
        norms.append(model.clip_norm_)
    assert norms[0] == norms[1]
    assert 1.0 < norms[0] < 2.0  # between the floor and both caps
