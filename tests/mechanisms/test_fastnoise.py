"""Exactness tests of the fast discrete samplers (skdp.mechanisms._fastnoise).

Three kinds of evidence:

* the exact building blocks: integer brackets of ``exp(-x)`` checked against
  an independent 60-digit ``decimal`` computation, the float error bounds of
  the fast path checked against exact fractions, and the exact fallbacks
  (forced for every draw) checked for their probabilities;
* goodness of fit of whole samplers against the exact pmf for small
  parameters, sized to detect a 1% error on the central atoms;
* two-sample tests of the new samplers against the original CKS samplers at
  the large parameters of the mechanisms, and seeded reproducibility.
"""

import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from skdp.mechanisms import check_random_source, discrete_gaussian, discrete_laplace
from skdp.mechanisms._discrete import (
    _discrete_gaussian,
    _discrete_gaussian_cks,
    _discrete_laplace,
    _discrete_laplace_cks,
)
from skdp.mechanisms._fastnoise import (
    _exp_neg_bounds,
    _exp_trials,
    _GaussianTable,
    _GeometricTable,
    _layout,
    _uniform_less,
)

ALPHA = 1e-7
getcontext().prec = 60


def _exp_neg_decimal(x):
    x = Fraction(x)
    return (-(Decimal(x.numerator) / Decimal(x.denominator))).exp()


@pytest.fixture(params=["secure", "seeded"])
def source(request):
    return check_random_source(None if request.param == "secure" else 7)


# -- building blocks -------------------------------------------------------------
@pytest.mark.parametrize(
    "x",
    [
        Fraction(0),
        Fraction(1, 3),
        Fraction(1),
        Fraction(7, 2),
        Fraction(2**40 + 1, 2**44),
        Fraction(123456789, 1000),
        Fraction(1, 2**52),
    ],
)
@pytest.mark.parametrize("prec", [16, 53, 96, 150])
def test_exp_neg_bounds_bracket_the_value(x, prec):
    lo, hi = _exp_neg_bounds(x, prec)
    ref = _exp_neg_decimal(x) * (Decimal(2) ** prec)
    # decimal's exp is correctly rounded at 60 digits: a relative error of
    # 1e-59 is far below one unit of 2**-prec for prec <= 150 and x small;
    # for large x the value is tiny and the bracket is checked absolutely.
    slack = ref * Decimal(10) ** -55
    assert Decimal(lo) <= ref + slack and ref - slack <= Decimal(hi)
    assert hi - lo <= 8


@pytest.mark.parametrize(
    ("rho", "kbits"),
    [(Fraction(1, 8), 25), (Fraction(2**22, 35443400), 25), (Fraction(5), 32)],
)
def test_geometric_table_brackets(rho, kbits):
    table = _GeometricTable(rho, kbits)
    for j in range(len(table.lo)):
        ref = _exp_neg_decimal(j * rho)
        assert Decimal(table.lo[j]) <= ref * Decimal(2) ** table.prec
        assert ref * Decimal(2) ** table.prec <= Decimal(table.hi[j])
        assert Decimal(int(table.low[j])) <= ref * Decimal(2) ** kbits
        assert ref * Decimal(2) ** kbits <= Decimal(int(table.high[j]))
    # jmax: the first theta below 2**-kbits
    assert table.hi[table.jmax] <= 1 << 64


@pytest.mark.parametrize(
    ("c", "kbits"),
    [
        (Fraction(1, 2), 25),
        (Fraction(2**44, 2 * 1256234590154448), 25),
        (Fraction(1, 511), 20),
        (Fraction(7, 3), 12),
    ],
)
def test_gaussian_table_brackets(c, kbits):
    table = _GaussianTable(c, kbits)
    w = [_exp_neg_decimal(c * i * i) for i in range(40 * table.n_terms + 40)]
    z = sum(w)
    for j in range(len(table.lo)):
        ref = sum(w[j:]) / z
        assert Decimal(table.lo[j]) <= ref * Decimal(2) ** table.prec
        assert ref * Decimal(2) ** table.prec <= Decimal(table.hi[j])
        assert table.hi[j] - table.lo[j] <= 2 ** (table.prec - table.kbits - 40)
    for j in range(table.jmax + 2):
        ref = sum(w[j:]) / z * Decimal(2) ** kbits
        assert Decimal(int(table.low[j])) <= ref <= Decimal(int(table.high[j]))
    # higher precision (the exact fallback's path)
    lo, hi = table.bounds(3)(table.prec + 40)
    ref = sum(w[3:]) / z * Decimal(2) ** (table.prec + 40)
    assert Decimal(lo) <= ref <= Decimal(hi)


def test_layout_fits_in_a_word():
    for s in range(0, 63):
        kj, ka = _layout(s)
        assert s + 1 + kj + ka <= 64
        assert kj == 0 or 20 <= kj <= 32
        assert ka == 0 or 16 <= ka <= 32


def test_float_gamma_error_bound():
    # The Gaussian acceptance exponent gamma = N b / (2a), N = U (2|x| - U):
    # |fl(fl(N) * fl(b / 2a)) - gamma| <= 3 * 2**-53 gamma < 2**-51 gamma.
    rng = np.random.default_rng(0)
    for _ in range(20):
        b = int(rng.integers(1, 50))
        a = int(rng.integers(2**20, 2**50)) * b + int(rng.integers(0, b))
        t = math.isqrt(a // b) + 1
        mag = rng.integers(0, 40 * t, 200)
        u = np.minimum(rng.integers(0, max(1, t // 8), 200), mag)
        big_n = u * (2 * mag - u)
        f_hat = big_n.astype(np.float64) * (b / (2 * a))
        for fi, ni in zip(f_hat.tolist(), big_n.tolist(), strict=True):
            exact = Fraction(ni * b, 2 * a)
            assert abs(Fraction(fi) - exact) <= exact * Fraction(1, 2**51)


def test_float_thresholds_error_bound():
    # T_k = f**k / k! by the float recurrence, with |f_hat - f| <= 2**-48:
    # error below 2**-43 for k <= 16 (the margin is 2**-40).
    rng = np.random.default_rng(1)
    for _ in range(200):
        f = Fraction(int(rng.integers(0, 2**60)), 2**60)
        f_hat = float(f) + float(rng.uniform(-1, 1)) * 2.0**-48
        t_hat, t = f_hat, f
        for k in range(1, 17):
            if k > 1:
                t_hat = t_hat * f_hat / k
                t = t * f / k
            assert abs(Fraction(t_hat) - t) <= Fraction(1, 2**43)


def test_uniform_less_is_exact_comparison(source):
    # V = (prefix + R) / 2**bits with no bits drawn yet (bits = 0): V < 1/3
    # must have probability exactly 1/3.
    theta = Fraction(1, 3)

    def bounds(prec):
        return math.floor(theta * 2**prec), math.ceil(theta * 2**prec)

    n = 20_000
    hits = sum(_uniform_less(0, 0, bounds, source)[0] for _ in range(n))
    assert stats.binomtest(hits, n, 1 / 3).pvalue > ALPHA


@pytest.mark.parametrize(
    "f", [Fraction(0), Fraction(1, 7), Fraction(1), Fraction(5, 6)]
)
def test_exp_trials_exact_fallback(source, f):
    # ka = 1: every cell straddles the first threshold, so (almost) every
    # trial is finished by the exact rational fallback.
    n = 20_000
    wa = source.uint32(n) & np.uint32(1)
    out = _exp_trials(np.full(n, float(f)), wa, 1, lambda i: f, source)
    assert stats.binomtest(int(out.sum()), n, math.exp(-f)).pvalue > ALPHA


@pytest.mark.parametrize("f", [0.0, 1 / 9, 0.5, 1.0])
def test_exp_trials_fast_path(source, f):
    n = 400_000
    out = _exp_trials(
        np.full(n, f), source.uint32(n), 32, lambda i: Fraction(f), source
    )
    assert stats.binomtest(int(out.sum()), n, math.exp(-f)).pvalue > ALPHA


def test_geometric_inversion_exact_fallback(source):
    # invert_exact from no bits at all: J must be geometric, P(J >= j) = q**j.
    rho = Fraction(2, 3)
    table = _GeometricTable(rho, 20)
    n = 20_000
    j = np.array([table.invert_exact(0, 0, source) for _ in range(n)])
    q = math.exp(-2 / 3)
    cut = 12
    counts = [np.count_nonzero(j == k) for k in range(cut)]
    counts.append(np.count_nonzero(j >= cut))
    probs = [(1 - q) * q**k for k in range(cut)] + [q**cut]
    assert stats.chisquare(counts, np.array(probs) * n).pvalue > ALPHA


def test_gaussian_inversion_exact_fallback(source):
    # P(J = j) ∝ exp(-c j**2), from no bits at all.
    c = Fraction(1, 8)
    table = _GaussianTable(c, 16)
    n = 20_000
    j = np.array([table.invert_exact(0, 0, source) for _ in range(n)])
    w = np.exp(-float(c) * np.arange(60) ** 2)
    p = w / w.sum()
    cut = 6
    counts = [np.count_nonzero(j == k) for k in range(cut)]
    counts.append(np.count_nonzero(j >= cut))
    probs = np.append(p[:cut], p[cut:].sum())
    assert stats.chisquare(counts, probs * n).pvalue > ALPHA


def test_gaussian_inversion_fast_path_agrees_with_exact(source):
    table = _GaussianTable(Fraction(2**44, 2 * 1256234590154448), 25)
    wj = source.uint32(200_000).astype(np.uint64) >> np.uint64(7)
    j = table.invert(wj)
    assert np.mean(j < 0) < 1e-3
    for i in np.flatnonzero(j >= 0)[:300].tolist():
        assert table.invert_exact(int(wj[i]), 25, source) == j[i]


def test_geometric_inversion_fast_path_agrees_with_exact(source):
    table = _GeometricTable(Fraction(2**22, 35443400), 25)
    wj = source.uint32(200_000).astype(np.uint64) >> np.uint64(7)
    j = table.invert(wj)
    assert np.mean(j < 0) < 1e-3
    for i in np.flatnonzero(j >= 0)[:300].tolist():
        assert table.invert_exact(int(wj[i]), 25, source) == j[i]


# -- goodness of fit against the exact pmf ----------------------------------------
def _pmf_laplace(s, d, xs):
    """Exact-to-60-digits pmf of exp(-|x| d / s), as floats."""
    q = _exp_neg_decimal(Fraction(d, s))
    c = (1 - q) / (1 + q)
    return np.array([float(c * q ** abs(int(x))) for x in xs])


def _pmf_gaussian(a, b, xs):
    sigma2 = Fraction(a, b)
    cut = int(40 * math.sqrt(a / b)) + 40
    w = [_exp_neg_decimal(Fraction(x * x) / (2 * sigma2)) for x in range(cut)]
    z = w[0] + 2 * sum(w[1:])
    return np.array([float(w[abs(int(x))] / z) for x in xs])


def _check_pmf(x, xs, p):
    """Chi-square over the central atoms plus the two tails, and each central
    atom's z-score (|z| < 6: a 1% error on an atom of mass p is found with
    N p 1e-4 / (1 - p) >= (6 + 1.3)**2, i.e. N >= 5.3e5 (1 - p) / p)."""
    n = x.size
    counts = np.array([np.count_nonzero(x == v) for v in xs])
    below, above = np.count_nonzero(x < xs[0]), np.count_nonzero(x > xs[-1])
    tail = (1 - p.sum()) / 2
    obs = np.concatenate([counts, [below + above]])
    exp = np.concatenate([p * n, [2 * tail * n]])
    keep = exp >= 5
    obs_m = np.append(obs[keep], obs[~keep].sum())
    exp_m = np.append(exp[keep], exp[~keep].sum())
    if exp_m[-1] == 0:
        obs_m, exp_m = obs_m[:-1], exp_m[:-1]
    exp_m *= obs_m.sum() / exp_m.sum()
    assert stats.chisquare(obs_m, exp_m).pvalue > ALPHA
    z = (counts - n * p) / np.sqrt(n * p * (1 - p))
    assert np.abs(z).max() < 6


def test_pmf_check_detects_a_one_percent_error():
    # Power of _check_pmf: move 1% of the mass of atom 0 to atom 1 in a sample
    # of the right law (t = 1, n = 10**6, as in the test below): rejected.
    rng = np.random.default_rng(5)
    xs = np.arange(-4, 5)
    p = _pmf_laplace(1, 1, np.arange(-60, 61))
    good = rng.choice(np.arange(-60, 61), size=1_000_000, p=p / p.sum())
    _check_pmf(good, xs, _pmf_laplace(1, 1, xs))
    bad = good.copy()
    zeros = np.flatnonzero(bad == 0)
    bad[zeros[: int(0.01 * zeros.size)]] = 1
    with pytest.raises(AssertionError):
        _check_pmf(bad, xs, _pmf_laplace(1, 1, xs))


@pytest.mark.parametrize(
    ("s", "d", "n"),
    [
        (1, 1, 1_000_000),
        (3, 1, 3_000_000),
        (7, 3, 1_000_000),
        (1, 4, 500_000),
        (20, 1, 2_000_000),  # bins of width 2 (t >= 16)
        (100, 1, 2_000_000),  # width 8
        (1000, 3, 1_000_000),  # rational scale, width 32
    ],
)
def test_laplace_matches_exact_pmf(source, s, d, n):
    x = discrete_laplace(s, d, size=n, random_state=source)
    t = s / d
    xs = np.arange(-max(2, int(2 * t)), max(2, int(2 * t)) + 1)
    if s == 1000:  # wide: every third atom keeps the test short
        xs = np.arange(-60, 61)
    _check_pmf(x, xs, _pmf_laplace(s, d, xs))


@pytest.mark.parametrize(
    ("a", "b", "n"),
    [
        (1, 1, 1_000_000),
        (4, 1, 2_000_000),
        (1, 3, 500_000),
        (25, 2, 2_000_000),
        (400, 1, 2_000_000),  # t = 21: bins of width 2
        (10_000, 1, 1_000_000),  # t = 101: width 8
        (10**6 + 1, 7, 1_000_000),  # rational sigma2, t = 378
    ],
)
def test_gaussian_matches_exact_pmf(source, a, b, n):
    x = discrete_gaussian(a, b, size=n, random_state=source)
    sigma = math.sqrt(a / b)
    half = max(2, int(2 * sigma))
    xs = np.arange(-min(half, 60), min(half, 60) + 1)
    _check_pmf(x, xs, _pmf_gaussian(a, b, xs))


# -- old and new samplers agree at the mechanisms' parameters ----------------------
def _two_sample(x, y, bins):
    edges = np.quantile(np.concatenate([x, y]), np.linspace(0, 1, bins + 1)[1:-1])
    cx = np.bincount(np.searchsorted(edges, x), minlength=bins)
    cy = np.bincount(np.searchsorted(edges, y), minlength=bins)
    return stats.chi2_contingency(np.vstack([cx, cy]))[1]


@pytest.mark.parametrize(
    ("num", "den"), [(2**40 + 10**6, 1), (3 * 2**30 + 7, 5), (2**52, 1), (17, 1)]
)
def test_laplace_same_distribution_as_cks(source, num, den):
    n = 300_000
    new = _discrete_laplace(num, den, n, source)
    old = _discrete_laplace_cks(num, den, n, source)
    assert stats.ks_2samp(new, old).pvalue > ALPHA
    assert _two_sample(new, old, 40) > ALPHA
    # the sign and the magnitude's low bits as well
    assert _two_sample(new % 64, old % 64, 16) > ALPHA


@pytest.mark.parametrize(
    ("a", "b"), [(1256234590154448, 1), (2**40 + 3, 1), (10**15 + 1, 3), (2**50, 1)]
)
def test_gaussian_same_distribution_as_cks(source, a, b):
    n = 150_000
    new = _discrete_gaussian(a, b, n, source)
    old = _discrete_gaussian_cks(a, b, n, source)
    assert stats.ks_2samp(new, old).pvalue > ALPHA
    assert _two_sample(new, old, 40) > ALPHA
    assert _two_sample(new % 64, old % 64, 16) > ALPHA


# -- reproducibility ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("func", "args"),
    [
        (_discrete_laplace, (2**40 + 10**6, 1)),
        (_discrete_laplace, (3, 1)),
        (_discrete_gaussian, (1256234590154448, 1)),
        (_discrete_gaussian, (9, 1)),
    ],
)
def test_seeded_outputs_are_reproducible(func, args):
    first = func(*args, 50_000, check_random_source(123))
    again = func(*args, 50_000, check_random_source(123))
    other = func(*args, 50_000, check_random_source(124))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    assert first.dtype == np.int64


def test_sizes_zero_and_one():
    src = check_random_source(0)
    assert _discrete_laplace(5, 1, 0, src).shape == (0,)
    assert _discrete_gaussian(5, 1, 0, src).shape == (0,)
    assert _discrete_laplace(2**40, 1, 1, src).shape == (1,)
    assert _discrete_gaussian(2**40, 1, 1, src).shape == (1,)


@pytest.fixture
def coarse_uniforms(monkeypatch):
    """Force the exact fallbacks inside the whole samplers: 8 bits for the
    inversion uniform (most cells straddle a threshold) and the top 3 bits of
    the acceptance uniform (a prefix of a uniform is a uniform prefix)."""
    import skdp.mechanisms._fastnoise as fast

    propose = fast._propose

    def coarse_propose(m, s, table, kj, ka, source):
        mag, u, negative, wa, ka_used = propose(m, s, table, kj, ka, source)
        return mag, u, negative, wa >> type(wa[0])(ka_used - 3), 3

    monkeypatch.setattr(fast, "_layout", lambda s: (8, 0))
    monkeypatch.setattr(fast, "_propose", coarse_propose)
    fast._geometric_table.cache_clear()
    fast._gaussian_table.cache_clear()
    yield
    fast._geometric_table.cache_clear()
    fast._gaussian_table.cache_clear()


@pytest.mark.parametrize(("s", "d"), [(3, 1), (100, 1), (1000, 3)])
def test_laplace_exact_with_forced_fallbacks(coarse_uniforms, s, d):
    # Most draws here go through the exact fallbacks (Python), hence n = 10**5.
    x = _discrete_laplace(s, d, 100_000, check_random_source(11))
    half = min(60, max(2, int(2 * s / d)))
    xs = np.arange(-half, half + 1)
    _check_pmf(x, xs, _pmf_laplace(s, d, xs))


@pytest.mark.parametrize(("a", "b"), [(4, 1), (10_000, 1), (10**6 + 1, 7)])
def test_gaussian_exact_with_forced_fallbacks(coarse_uniforms, a, b):
    x = _discrete_gaussian(a, b, 200_000, check_random_source(12))
    half = min(60, max(2, int(2 * math.sqrt(a / b))))
    xs = np.arange(-half, half + 1)
    _check_pmf(x, xs, _pmf_gaussian(a, b, xs))
