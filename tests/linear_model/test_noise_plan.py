"""The public switch between a Gaussian and a Laplace plan of a fit's releases.

PrivatePCA and PrivateLinearRegression release a fixed plan of sums. At large
epsilon a Gaussian multiplier falls like 1/sqrt(2 epsilon), a Laplace scale
like 1/epsilon: the Laplace plan is used where every release gets less noise
(issue 27: PCA on unscaled breast cancer was 0.040 rad off at epsilon = 1e6).
"""

import hashlib
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from _gaussian_audit import likelihood_ratio

from skdp import BudgetAccountant, PrivateLinearRegression, PrivatePCA
from skdp.audit import assert_dp, audit_mechanism
from skdp.decomposition._pca import pca_releases
from skdp.decomposition._pca_scales import centred_moments_gram, norm_histogram
from skdp.linear_model._linear_plan import linear_releases
from skdp.linear_model._noise_plan import (
    LaplaceNoise,
    gram_l1_sensitivity,
    plan_noise,
    sum_l1_sensitivity,
)
from skdp.linear_model._scaling import exponent_histogram
from skdp.linear_model._target_range import regression_sums
from skdp.mechanisms import analytic_gaussian_sigma
from skdp.model_selection import fit_cost

BIG = np.finfo(float).max
TINY = 5e-324


def budget():
    return BudgetAccountant(1e9, 0.5)


# -- the switch: a public rule, as the Notes state it ------------------------


def pca_laplace_by_hand(epsilon, delta, d):
    """PrivatePCA's rule from its Notes: every release less noise."""
    r = analytic_gaussian_sigma(1.0, epsilon, delta)
    centre = 3.0 * d / (0.1 * epsilon) / math.sqrt(d) < r / math.sqrt(0.1)
    norms = 3.0 / (0.2 * epsilon) < r / math.sqrt(0.2)
    gram = math.sqrt(2.0) * (d + 2) / 2 / (0.7 * epsilon) < r / math.sqrt(0.7)
    return centre and norms and gram


@pytest.mark.parametrize("d", [1, 30])
def test_the_switch_is_the_documented_rule(d):
    for epsilon in (0.3, 1.0, 10.0, 300.0, 3e3, 1e6):
        noises, cost = plan_noise(epsilon, 1e-6, pca_releases(d))
        laplace = isinstance(noises[0], LaplaceNoise)
        assert laplace == pca_laplace_by_hand(epsilon, 1e-6, d), epsilon
        assert all(isinstance(n, LaplaceNoise) == laplace for n in noises)
        assert cost.delta == (0.0 if laplace else 1e-6)
    # d = 30: Gaussian at the default epsilon, Laplace at 1e6
    assert not pca_laplace_by_hand(1.0, 1e-6, 30)
    assert pca_laplace_by_hand(1e6, 1e-6, 30)


def test_laplace_epsilons_compose_to_at_most_epsilon():
    for epsilon in (1e5, 1e6 / 3, 3.3e7):
        releases = linear_releases(True, True, 7, 8)
        noises, _ = plan_noise(epsilon, 1e-6, releases, unit_rows=3)
        assert all(isinstance(n, LaplaceNoise) for n in noises)
        assert sum(Fraction(n.epsilon) for n in noises) <= Fraction(epsilon)
        # the group's L1 sensitivity is k times the row's, rounded up
        for item, noise in zip(releases, noises, strict=True):
            assert Fraction(noise.l1) >= 3 * Fraction(item.l1)


# -- the default is unchanged (byte-identical to the Gaussian-only code) ----


def digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=float).tobytes())
    return h.hexdigest()[:16]


def pinned_data():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 5)) * [1, 10, 100, 0.1, 3]
    y = X @ [1.0, 0.1, 0.01, 5.0, -1.0] + rng.normal(size=400)
    return X, y


def test_fits_at_epsilon_1_are_the_gaussian_ones_bit_for_bit():
    # pinned on the Gaussian-only code (before the switch)
    X, y = pinned_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pca = PrivatePCA(3, accountant=budget(), random_state=3).fit(X)
        regs = [
            PrivateLinearRegression(accountant=budget(), random_state=3, **kw).fit(X, y)
            for kw in ({}, {"data_norm": 400.0, "target_bounds": (-50, 50)})
        ]
    released = [pca.get_covariance(), pca.mean_, [pca.clip_norm_, pca.n_samples_]]
    assert digest(*released) == "e70e6aece3cc52e4"
    coefs = [digest(np.round(r.coef_, 9), [round(r.intercept_, 9)]) for r in regs]
    assert coefs == ["19a32f640135b155", "d217e1c9a0ac98ed"]
    assert pca.delta_spent_ == regs[1].delta_spent_ == 1e-6


# -- the charge: fit_cost is what fit charges, in both regimes ---------------


def estimators(epsilon, acc):
    return [
        PrivatePCA(2, epsilon=epsilon, accountant=acc, random_state=0),
        PrivateLinearRegression(epsilon, accountant=acc, random_state=0),
        PrivateLinearRegression(
            epsilon,
            data_norm=400.0,
            target_bounds=(-50, 50),
            accountant=acc,
            random_state=0,
        ),
    ]


@pytest.mark.parametrize(("epsilon", "mechanism"), [(1.0, None), (1e6, "laplace")])
def test_fit_cost_is_the_charge(epsilon, mechanism):
    X, y = pinned_data()
    acc = budget()
    for est in estimators(epsilon, acc):
        planned = fit_cost(est, n_features=X.shape[1])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X) if isinstance(est, PrivatePCA) else est.fit(X, y)
        entry = acc.entries[-1]
        assert (entry.epsilon, entry.delta, entry.rho) == (
            planned.epsilon,
            planned.delta,
            planned.rho,
        )
        assert entry.noise_multiplier == planned.noise_multiplier
        assert (entry.mechanism == "laplace") == (mechanism == "laplace")
        assert est.delta_spent_ == (0.0 if mechanism else 1e-6)


def test_nothing_is_charged_on_a_validation_error_in_the_laplace_regime():
    X, y = pinned_data()
    acc = budget()
    with pytest.raises(ValueError, match="n_components"):
        PrivatePCA(9, epsilon=1e6, accountant=acc).fit(X)
    with pytest.raises(ValueError, match="target_bounds"):
        PrivateLinearRegression(1e6, target_bounds=(1, 1), accountant=acc).fit(X, y)
    assert acc.total() == (0.0, 0.0) and not acc.entries


# -- sensitivities: exact arithmetic, brute force, extreme doubles -----------


def test_gram_l1_bound_by_exact_enumeration():
    # every integer vector of squared norm <= M² (a lattice of the ball),
    # exact: Σ_{i<=j} |q_i q_j| <= (D + 1)/2 M²; attained at |q_i| = M/sqrt(D)
    M = 6
    for D in (1, 2, 3):
        axes = [range(-M, M + 1)] * D
        grid = np.array(np.meshgrid(*axes)).reshape(D, -1).T
        grid = grid[(grid**2).sum(axis=1) <= M * M]
        upper = np.triu_indices(D)
        l1 = np.abs(grid[:, :, None] * grid[:, None, :])[:, upper[0], upper[1]]
        assert Fraction(int(l1.sum(axis=1).max())) <= gram_l1_sensitivity(D) * M * M
    assert gram_l1_sensitivity(4) == 2.5 and sum_l1_sensitivity(4) >= 2.0


def fixed_l1(a, b):
    """Exact L1 distance of two FixedPoint sums."""
    assert a.exponent == b.exponent
    steps = sum(abs(x - y) for x, y in zip(a.numerators, b.numerators, strict=True))
    return Fraction(steps) * Fraction(2) ** a.exponent


def extreme_rows(d, norm):
    yield np.full(d, norm / math.sqrt(d))  # the L1-worst direction
    for value in (TINY, -TINY, 1e-300, 1.0, -norm, BIG, -BIG):
        yield np.full(d, value)
    yield np.r_[BIG, np.full(d - 1, TINY)]


@pytest.mark.parametrize("norm", [2.0**-500, 1.0, 2.0**500])
@pytest.mark.parametrize("k", [1, 3])
def test_regression_sums_l1_with_extreme_rows(norm, k):
    d, rng = 2, np.random.default_rng(0)
    X = rng.normal(size=(5, d)) * norm
    y = rng.normal(size=5)
    base = regression_sums(X, y, norm, -1.0, 1.0, True)
    worst = Fraction(0)
    for row in extreme_rows(d, norm):
        for target in (1.0, -BIG):
            X1 = np.vstack([X, np.tile(row, (k, 1))])
            gram, cross = regression_sums(X1, np.r_[y, [target] * k], norm, -1, 1, True)
            l1 = fixed_l1(base[0], gram)
            assert l1 <= k * Fraction(gram_l1_sensitivity(d + 1))
            assert fixed_l1(base[1], cross) <= k * Fraction(sum_l1_sensitivity(d + 1))
            worst = max(worst, l1)
    # k rows at the norm with equal coordinates attain the bound up to the
    # intercept coordinate, fixed at 1/sqrt(2): ((sqrt(d) + 1)²/4 + 1/2) k
    attained = k * ((math.sqrt(d) + 1) ** 2 / 4 + 0.5)
    assert attained < k * gram_l1_sensitivity(d + 1)
    assert worst > Fraction(attained * 0.999)


@pytest.mark.parametrize("norm", [1e-150, 1e150])
def test_pca_moments_and_histograms_l1_with_extreme_rows(norm):
    d, rng = 3, np.random.default_rng(1)
    X = rng.normal(size=(4, d)) * norm
    centre = np.zeros(d)
    base = centred_moments_gram(X, centre, norm)
    for row in extreme_rows(d, norm):
        X1 = np.vstack([X, row])
        moved = fixed_l1(base, centred_moments_gram(X1, centre, norm))
        assert moved <= Fraction(gram_l1_sensitivity(d + 1))
        hist = np.abs(exponent_histogram(X1) - exponent_histogram(X)).sum()
        assert hist == d  # one count per feature: L1 = d
        norms = np.abs(norm_histogram(X1, centre) - norm_histogram(X, centre))
        assert norms.sum() == 1


# -- audit of the Laplace plan, with a twin of halved L1 sensitivities -------

EPS = 1.0
FAST = {"n_samples": 50_000, "n_pilot": 10_000, "random_state": 0}


def laplace_regression(twin=False):
    """One feature (D = 2): the plan is Laplace at epsilon = 1."""
    releases = linear_releases(False, False, 1, 2)
    noises, cost = plan_noise(EPS, 1e-6, releases)
    assert cost.delta == 0.0 and isinstance(noises[0], LaplaceNoise)
    if twin:  # noise for half the L1 sensitivities
        noises = [noise._replace(l1=noise.l1 / 2) for noise in noises]
    d0 = (np.array([[0.5]]), np.array([0.3]))
    d1 = (np.array([[0.5], [1.0]]), np.array([0.3, 1.0]))  # |q_i| = 1/sqrt(2)
    sums = {id(d): list(regression_sums(*d, 1.0, -1.0, 1.0, True)) for d in (d0, d1)}
    return likelihood_ratio(sums, list(enumerate(noises)), d0, d1), d0, d1


def test_audit_of_the_laplace_plan_passes_and_a_halved_sensitivity_twin_is_caught():
    mech, d0, d1 = laplace_regression()
    assert_dp(mech, d0, d1, EPS, 0.0, **FAST)
    twin, d0, d1 = laplace_regression(twin=True)
    bad = audit_mechanism(twin, d0, d1, delta=0.0, **FAST)
    assert bad.epsilon_lower_bound > EPS + 0.2, str(bad)


# -- the public choice: mechanism="gaussian" / "laplace" ---------------------


def one_feature():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 1)) * 10
    return X, 2.0 * X[:, 0] + rng.normal(size=400)


def test_a_stated_gaussian_mechanism_gives_back_the_release_before_the_switch():
    # one feature with a stated norm and target: "auto" takes the Laplace plan
    # at epsilon = 1; "gaussian" is main's release before the switch, pinned
    # on 9200d8c (same seed, coef and intercept rounded to 1e-9)
    X, y = one_feature()
    acc = budget()
    fits = {
        mechanism: PrivateLinearRegression(
            data_norm=40.0,
            target_bounds=(-100, 100),
            mechanism=mechanism,
            accountant=acc,
            random_state=3,
        ).fit(X, y)
        for mechanism in ("auto", "gaussian")
    }
    pinned = fits["gaussian"]
    assert digest(np.round(pinned.coef_, 9), [round(pinned.intercept_, 9)]) == (
        "455743b01e019415"
    )
    assert [entry.mechanism for entry in acc.entries] == ["laplace", "gaussian"]
    assert fits["auto"].delta_spent_ == 0.0 and pinned.delta_spent_ == 1e-6


@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
def test_a_stated_mechanism_is_planned_exactly_without_the_feature_count(mechanism):
    X, y = pinned_data()
    for epsilon in (1.0, 1e6):
        acc = budget()
        for est in estimators(epsilon, acc):
            est.set_params(mechanism=mechanism)
            planned = fit_cost(est)  # n_features unknown
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X) if isinstance(est, PrivatePCA) else est.fit(X, y)
            entry = acc.entries[-1]
            assert entry.mechanism == mechanism
            assert (entry.epsilon, entry.delta, entry.rho) == (
                planned.epsilon,
                planned.delta,
                planned.rho,
            )
            assert entry.noise_multiplier == planned.noise_multiplier


def test_an_unknown_mechanism_is_refused_before_the_charge():
    X, y = pinned_data()
    acc = budget()
    with pytest.raises(ValueError, match="mechanism"):
        PrivatePCA(2, mechanism="cauchy", accountant=acc).fit(X)
    with pytest.raises(ValueError, match="mechanism"):
        PrivateLinearRegression(mechanism="exponential", accountant=acc).fit(X, y)
    assert not acc.entries
