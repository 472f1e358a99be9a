"""Distribution and robustness tests of the exact discrete samplers."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtr

from skdp.mechanisms import (
    bernoulli_exp,
    check_random_source,
    discrete_gaussian,
    discrete_laplace,
)
from skdp.mechanisms._discrete import (
    _bernoulli_exp_minus_one,
    _bernoulli_exp_product,
    _bernoulli_lazy,
    _discrete_laplace,
    _geometric_exp1,
)

ALPHA = 1e-7  # per test; ~200 draws-based tests must not flake in CI
N = 100_000


@pytest.fixture(params=["secure", "seeded"])
def source(request):
    return check_random_source(None if request.param == "secure" else 2024)


def _chisquare_pvalue(samples, edges, probs):
    """Chi-square test of integer samples binned on [edges[i], edges[i+1])."""
    counts = np.array(
        [np.count_nonzero((samples >= lo) & (samples < hi)) for lo, hi in edges]
    )
    expected = np.asarray(probs) * samples.size
    assert np.isclose(expected.sum(), samples.size, rtol=1e-9)
    # Merge neighbouring bins until each expects at least 5 draws (the chi-square
    # approximation is poor for tiny expected counts, e.g. far tails).
    merged_counts, merged_expected = [], []
    acc_c = acc_e = 0.0
    for c, e in zip(counts, expected, strict=True):
        acc_c, acc_e = acc_c + c, acc_e + e
        if acc_e >= 5:
            merged_counts.append(acc_c)
            merged_expected.append(acc_e)
            acc_c = acc_e = 0.0
    merged_counts[-1] += acc_c
    merged_expected[-1] += acc_e
    return stats.chisquare(merged_counts, merged_expected).pvalue


def _laplace_bins(q, cut):
    """Bins of the discrete Laplace with ratio q: ..., [x, x+1), ..., two tails.

    P(X = x) = (1 - q) / (1 + q) q^|x| and P(X >= a) = q^a / (1 + q), a >= 1.
    """
    c = (1 - q) / (1 + q)
    edges = [(-(2**62), -cut + 1)]
    probs = [q**cut / (1 + q)]
    for x in range(-cut + 1, cut):
        edges.append((x, x + 1))
        probs.append(c * q ** abs(x))
    edges.append((cut, 2**62))
    probs.append(q**cut / (1 + q))
    return edges, probs


def _laplace_wide_bins(q, width, n_bins):
    """Bins of width ``width`` for large scales, probabilities from the tails."""

    def tail(a):  # P(X >= a)
        return q**a / (1 + q) if a >= 1 else 1 - q ** (1 - a) / (1 + q)

    cuts = [-(n_bins * width) + 1 + i * width for i in range(2 * n_bins)]
    edges = [(-(2**62), cuts[0])]
    probs = [1 - tail(cuts[0])]
    for lo, hi in itertools.pairwise(cuts):
        edges.append((lo, hi))
        probs.append(tail(lo) - tail(hi))
    edges.append((cuts[-1], 2**62))
    probs.append(tail(cuts[-1]))
    return edges, probs


@pytest.mark.parametrize(
    ("num", "den"), [(0, 1), (1, 3), (1, 1), (7, 2), (10, 1), (2**40, 2**41 + 3)]
)
def test_bernoulli_exp_frequency(source, num, den):
    x = bernoulli_exp(num, den, size=N, random_state=source)
    p = math.exp(-num / den)
    assert stats.binomtest(int(x.sum()), N, p).pvalue > ALPHA


def test_bernoulli_exp_broadcasts_arrays():
    num = np.array([[0], [1], [3]])
    out = bernoulli_exp(num, 2, random_state=0)
    assert out.shape == (3, 1) and out.dtype == bool
    assert out[0, 0]  # gamma = 0 always succeeds


@pytest.mark.parametrize(
    ("a1", "b1", "a2", "b2"),
    [
        (3, 2, 5, 4),  # gamma = 1.875, split into 2 * 2 pieces
        (2**60, 2**61 - 1, 3 * 2**59, 2**60 - 1),  # large integers, gamma ~ 0.75
        (5, 1, 1, 7),  # gamma = 5/7
    ],
)
def test_bernoulli_exp_product(source, a1, b1, a2, b2):
    n = N
    args = [np.full(n, v, dtype=np.int64) for v in (a1, b1, a2, b2)]
    x = _bernoulli_exp_product(*args, source)
    p = math.exp(-(a1 / b1) * (a2 / b2))
    assert stats.binomtest(int(x.sum()), n, p).pvalue > ALPHA


@pytest.mark.parametrize(("num", "den"), [(1, 3), (94, 256), (1, 2**40 + 1)])
def test_bernoulli_lazy(source, num, den):
    x = _bernoulli_lazy(np.full(N, num, dtype=np.int64), den, source)
    assert stats.binomtest(int(x.sum()), N, num / den).pvalue > ALPHA


def test_bernoulli_lazy_array_den(source):
    num = np.array([1, 2, 0, 5] * 25_000, dtype=np.int64)
    den = np.array([3, 3, 9, 5] * 25_000, dtype=np.int64)
    x = _bernoulli_lazy(num, den, source)
    assert not x[num == 0].any() and x[num == den].all()
    sel = (num == 1) & (den == 3)
    assert stats.binomtest(int(x[sel].sum()), int(sel.sum()), 1 / 3).pvalue > ALPHA


def test_bernoulli_exp_minus_one_and_geometric(source):
    x = _bernoulli_exp_minus_one(N, source)
    assert stats.binomtest(int(x.sum()), N, math.exp(-1)).pvalue > ALPHA
    v = _geometric_exp1(N, source)
    q = math.exp(-1)
    cut = 8
    probs = [(1 - q) * q**j for j in range(cut)] + [q**cut]
    edges = [(j, j + 1) for j in range(cut)] + [(cut, 2**62)]
    assert _chisquare_pvalue(v, edges, probs) > ALPHA


@pytest.mark.parametrize(("s", "d"), [(1, 1), (3, 1), (7, 3), (10, 1), (1, 4)])
def test_discrete_laplace_pmf(source, s, d):
    x = discrete_laplace(s, d, size=N, random_state=source)
    q = math.exp(-d / s)
    cut = max(2, int(6 * s / d))
    edges, probs = _laplace_bins(q, cut)
    assert _chisquare_pvalue(x, edges, probs) > ALPHA


@pytest.mark.parametrize(("s", "d"), [(2**20, 1), (2**31 + 1, 1), (2**40 + 1, 3)])
def test_discrete_laplace_large_scale(source, s, d):
    x = discrete_laplace(s, d, size=N, random_state=source)
    q = math.exp(-d / s)
    width = max(1, s // d // 4)
    edges, probs = _laplace_wide_bins(q, width, 24)
    assert _chisquare_pvalue(x, edges, probs) > ALPHA


def _gaussian_pmf_bins(sigma2, cut):
    xs = np.arange(-cut, cut + 1)
    w = np.exp(-(xs.astype(float) ** 2) / (2 * sigma2))
    big = np.arange(-60 * (cut + 1), 60 * (cut + 1) + 1)
    norm = np.exp(-(big.astype(float) ** 2) / (2 * sigma2)).sum()
    p = w / norm
    tail = (1 - p.sum()) / 2
    edges = [(-(2**62), -cut)] + [(x, x + 1) for x in xs] + [(cut + 1, 2**62)]
    return edges, [tail, *p, tail]


@pytest.mark.parametrize(("a", "b"), [(1, 1), (4, 1), (1, 3), (25, 2), (100, 7)])
def test_discrete_gaussian_pmf(source, a, b):
    sigma2 = a / b
    x = discrete_gaussian(a, b, size=N, random_state=source)
    cut = max(2, int(4 * math.sqrt(sigma2)))
    edges, probs = _gaussian_pmf_bins(sigma2, cut)
    assert _chisquare_pvalue(x, edges, probs) > ALPHA


@pytest.mark.parametrize(("a", "b"), [(2**40, 1), (3 * 10**12 + 1, 3)])
def test_discrete_gaussian_large_sigma(source, a, b):
    # For sigma >> 1 the discrete Gaussian's bin masses equal the continuous
    # ones over half-integer-shifted edges up to exp(-2 pi^2 sigma^2).
    sigma = math.sqrt(a / b)
    x = discrete_gaussian(a, b, size=N, random_state=source)
    cuts = np.linspace(-3.5, 3.5, 29) * sigma
    cuts = np.round(cuts).astype(np.int64)
    edges = [(-(2**62), cuts[0])]
    edges += list(itertools.pairwise(cuts))
    edges += [(cuts[-1], 2**62)]
    cdf = ndtr((np.concatenate([cuts]) - 0.5) / sigma)
    probs = [cdf[0], *np.diff(cdf), 1 - cdf[-1]]
    assert _chisquare_pvalue(x, edges, probs) > ALPHA


def test_reproducible_with_seed():
    a = discrete_laplace(5, 2, size=100, random_state=3)
    b = discrete_laplace(5, 2, size=100, random_state=3)
    np.testing.assert_array_equal(a, b)
    g = discrete_gaussian(9, size=(4, 5), random_state=np.random.RandomState(1))
    h = discrete_gaussian(9, size=(4, 5), random_state=np.random.RandomState(1))
    np.testing.assert_array_equal(g, h)
    assert g.shape == (4, 5) and g.dtype == np.int64


def test_not_reproducible_without_seed():
    assert not np.array_equal(
        discrete_laplace(2**30, size=20), discrete_laplace(2**30, size=20)
    )


def test_empty_and_scalar_sizes():
    assert discrete_laplace(3, size=0, random_state=0).shape == (0,)
    assert discrete_gaussian(3, random_state=0).shape == ()
    assert bernoulli_exp(np.array([], dtype=np.int64), 1).shape == (0,)


@pytest.mark.parametrize(
    ("func", "args", "error"),
    [
        (discrete_laplace, (0,), ValueError),
        (discrete_laplace, (2**52 + 1,), ValueError),
        (discrete_laplace, (3, 0), ValueError),
        (discrete_laplace, (1.5,), TypeError),
        (discrete_laplace, (True,), TypeError),
        (discrete_gaussian, (0,), ValueError),
        (discrete_gaussian, (2**60 + 1,), ValueError),
        (discrete_gaussian, (2**58,), ValueError),  # (floor(sigma)+1)^2 > 2^52
        (discrete_gaussian, (4, 2**60), ValueError),  # den * t^2 > 2^52
        (bernoulli_exp, (-1, 1), ValueError),
        (bernoulli_exp, (1, 0), ValueError),
        (bernoulli_exp, (2**61, 1), ValueError),
        (bernoulli_exp, (np.array([0.5]), 1), TypeError),
    ],
)
def test_unrepresentable_parameters_raise(func, args, error):
    with pytest.raises(error):
        func(*args, random_state=0)


def test_overflow_guard_raises_instead_of_wrapping():
    source = check_random_source(0)
    with pytest.raises(OverflowError, match="nothing was released"):
        # max_abs = scale: any V >= 1 would exceed it; 10^4 draws hit that.
        _discrete_laplace(1000, 1, 10_000, source, max_abs=1000)


def test_extreme_parameters_stay_in_int64():
    x = discrete_laplace(2**52, 1, size=10_000, random_state=1)
    assert x.dtype == np.int64 and np.all(np.abs(x) < 2**62)
    y = discrete_gaussian(2**52 - 2**27, 1, size=10_000, random_state=1)
    assert abs(y.std() / 2**26 - 1) < 0.05
    z = discrete_laplace(1, 2**52, size=1000, random_state=1)
    assert np.all(z == 0)
