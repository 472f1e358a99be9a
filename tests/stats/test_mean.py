"""PrivateMean with public bounds: sensitivity, budget, noise rule, audit."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant, DPClipper
from skdp.audit import assert_dp, audit_mechanism
from skdp.exceptions import NoiseDominatedWarning
from skdp.mechanisms import check_random_source
from skdp.preprocessing import PrivateMean
from skdp.sensitivity import (
    centre_and_radius,
    normalised_centred_sums,
    normalised_split_sums,
)
from skdp.stats import _mean as mean_module
from skdp.stats import _mean_release as release_module
from skdp.stats._mean import (
    MeanRelease,
    mean_budget_split,
    noisy_count_and_sums,
    plan_mean_release,
)

DOMAIN = [-3.0, 0.0, 0.5, 7.0]  # below, at and inside, above the bounds


def test_sum_sensitivity_by_brute_force_over_add_remove_neighbours():
    # every multiset of <= 3 rows over a 2-feature domain, and every row that
    # can be added: the L1 / L2 change of the normalised sums is <= d / sqrt(d)
    lower, upper = np.array([-1.0, 0.0]), np.array([2.0, 0.5])
    rows = list(itertools.product(DOMAIN, repeat=2))
    worst_l1 = worst_l2 = worst_coord = 0.0
    for n in range(4):
        for data in itertools.combinations_with_replacement(rows, n):
            X = np.array(data, dtype=float).reshape(n, 2)
            base = normalised_centred_sums(X, lower, upper)
            for row in rows:  # add a row (removal is the same pair reversed)
                grown = normalised_centred_sums(np.vstack([X, row]), lower, upper)
                diff = np.abs(grown - base)
                worst_l1 = max(worst_l1, diff.sum())
                worst_l2 = max(worst_l2, np.sqrt((diff**2).sum()))
                worst_coord = max(worst_coord, diff.max())
    assert worst_coord == pytest.approx(1.0)  # attained: a row at a bound
    assert worst_l1 <= 2.0 + 1e-12
    assert worst_l2 <= np.sqrt(2.0) + 1e-12


def test_split_sums_sensitivity_by_brute_force_over_add_remove_neighbours():
    # the paired release: every added row moves the 2d-vector by exactly d in
    # L1 norm, by at most sqrt(d) in L2 norm, all coordinates the same way,
    # and the pairs always add up to the row count
    lower, upper = np.array([-1.0, 0.0]), np.array([2.0, 0.5])
    rows = list(itertools.product(DOMAIN, repeat=2))
    l1, worst_l2 = set(), 0.0
    for n in range(4):
        for data in itertools.combinations_with_replacement(rows, n):
            X = np.array(data, dtype=float).reshape(n, 2)
            base = normalised_split_sums(X, lower, upper)
            np.testing.assert_allclose(base.sum(axis=0), n)
            for row in rows:
                diff = normalised_split_sums(np.vstack([X, row]), lower, upper)
                diff -= base
                assert np.all(diff >= -1e-12)  # monotone: adding never lowers
                l1.add(round(float(diff.sum()), 9))
                worst_l2 = max(worst_l2, float(np.sqrt((diff**2).sum())))
    assert l1 == {2.0}
    assert worst_l2 == pytest.approx(np.sqrt(2.0))  # attained: rows at bounds


def test_uncentred_sensitivity_would_be_larger():
    # a mutation of the sensitivity: bounds far from zero, uncentred sums move
    # by max(|L|, |U|) = 12, the centred ones by (U - L)/2 = 1 (in data units)
    lower, upper = np.array([10.0]), np.array([12.0])
    X = np.array([[11.0]])
    change = normalised_centred_sums(np.vstack([X, [[12.0]]]), lower, upper)
    change -= normalised_centred_sums(X, lower, upper)
    assert abs(change[0]) * (upper - lower)[0] / 2 == pytest.approx(1.0)


def test_budget_split_is_public_and_sums_to_epsilon():
    for d in (1, 2, 10):
        for mech in ("laplace", "gaussian"):
            (en, dn), (es, ds) = mean_budget_split(1.0, 1e-6, d, mech)
            assert en + es == pytest.approx(1.0)
            assert dn + ds == pytest.approx(1e-6)
    (en, _), (es, _) = mean_budget_split(1.0, 0.0, 1, "laplace")
    assert en == es == 0.5


def test_release_plan_is_public_and_picks_the_smaller_variance():
    for mech, delta in (("laplace", 0.0), ("gaussian", 1e-6)):
        for d in (1, 2, 5, 6, 10, 60):
            plan = plan_mean_release(1.0, delta, d, mech)
            costs = [cost for _, cost in plan.cost_items()]
            total = np.sum([(c.epsilon, c.delta) for c in costs], axis=0)
            np.testing.assert_allclose(total, (1.0, delta))
            expected = "gaussian" if delta else "laplace"
            assert {c.mechanism for c in costs} == {expected}
            other = plan._replace(paired=not plan.paired)
            assert plan.worst_case_variance() <= other.worst_case_variance()
    # one feature, Laplace: the paired release has half the variance
    paired = plan_mean_release(1.0, 0.0, 1, "laplace")
    assert paired.paired
    separate = paired._replace(paired=False)
    assert paired.worst_case_variance() == pytest.approx(
        separate.worst_case_variance() / 2
    )
    assert not plan_mean_release(1.0, 0.0, 6, "laplace").paired


@pytest.mark.parametrize(
    "mechanism, delta, n_features, n_draws",
    [
        ("laplace", 0.0, 1, 1500),
        ("laplace", 0.0, 6, 1500),
        # fewer draws: each Gaussian release calibrates σ (slow), and a
        # Gaussian variance estimate is tighter (relative sd sqrt(2/600) ≈ 6%)
        ("gaussian", 1e-6, 6, 600),
    ],
)
def test_noise_variance_matches_the_plan(mechanism, delta, n_features, n_draws):
    # the empirical variance of the count and of a centred sum matches what
    # worst_case_variance assumes, for both kinds of release
    X = np.full((50, n_features), 0.5)
    lower, upper = np.zeros(n_features), np.ones(n_features)
    source = check_random_source(0)
    for paired in (True, False):
        plan = MeanRelease(paired, 1.0, delta, n_features, mechanism)
        draws = [
            noisy_count_and_sums(X, lower, upper, plan, source) for _ in range(n_draws)
        ]
        counts = np.array([c for c, _ in draws])
        sums = np.array([s[0] for _, s in draws])
        assert np.mean(counts) == pytest.approx(50, abs=0.2 * np.std(counts))
        measured = np.var(counts) + np.var(sums)
        # relative sd of each variance estimate <= ~6%: 20% is > 3 sd
        assert measured == pytest.approx(plan.worst_case_variance(), rel=0.2)


@pytest.mark.parametrize("mechanism, delta", [("laplace", 0.0), ("gaussian", 1e-6)])
@pytest.mark.parametrize(
    "n_features, labels",
    [
        (3, ["row count and clipped sums"]),
        (60, ["row count", "clipped sums"]),
    ],
)
def test_charges_exactly_epsilon_and_delta_before_reading(
    mechanism, delta, n_features, labels
):
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    X = np.random.default_rng(0).uniform(0, 1, size=(500, n_features))
    pm = PrivateMean(
        0.7, bounds=(0, 1), mechanism=mechanism, delta=delta, accountant=acc
    ).fit(X)
    assert [e.label for e in acc.entries] == [f"PrivateMean: {x}" for x in labels]
    assert acc.total() == pytest.approx((0.7, delta))
    assert pm.epsilon_spent_ == pytest.approx(0.7)
    assert pm.delta_spent_ == pytest.approx(delta)
    assert np.all((pm.mean_ >= 0) & (pm.mean_ <= 1))


def test_accuracy_on_many_rows():
    X = np.random.default_rng(1).normal(5, 1, size=(100_000, 2))
    pm = PrivateMean(1.0, bounds=(0, 10), random_state=0).fit(X)
    np.testing.assert_allclose(pm.mean_, X.mean(axis=0), atol=0.01)
    # the count released with the means: noise of scale d / epsilon = 2 on
    # each of the 2 x 2 split sums, averaged
    assert abs(pm.count_ - 100_000) < 20


@pytest.mark.parametrize("n_features", [1, 8])  # paired, separate
def test_count_is_the_released_denominator(n_features, monkeypatch):
    X = np.full((1_000, n_features), 0.75)
    calls = []
    real = mean_module.noisy_count_and_sums

    def spy(*args):
        calls.append(real(*args))
        return calls[-1]

    monkeypatch.setattr(mean_module, "noisy_count_and_sums", spy)
    pm = PrivateMean(0.5, bounds=(0, 1), random_state=0).fit(X)
    count, sums = calls[0]
    assert pm.count_ == count
    np.testing.assert_allclose(pm.mean_, np.clip(0.5 + 0.5 * sums / count, 0, 1))


def test_transform_centres_and_inverse_restores():
    X = np.random.default_rng(2).uniform(0, 4, size=(200, 2))
    pm = PrivateMean(bounds=(0, 4), random_state=0).fit(X)
    np.testing.assert_allclose(pm.transform(X), X - pm.mean_)
    np.testing.assert_allclose(pm.inverse_transform(pm.transform(X)), X)


def test_tiny_data_never_gives_nan_or_inf():
    # one row: the noisy count is often <= 0; the rule max(count, 1) and the
    # clip keep every release finite and inside the bounds
    for seed in range(200):
        pm = PrivateMean(0.01, bounds=(-1e308, 1e308), random_state=seed)
        mean = pm.fit(np.array([[1e308]])).mean_
        assert np.all(np.isfinite(mean))


def test_huge_values_do_not_overflow():
    X = np.full((1000, 1), 1e308)
    pm = PrivateMean(1.0, bounds=(-1.7e308, 1.7e308), random_state=0).fit(X)
    assert np.isfinite(pm.mean_).all()


@pytest.mark.parametrize(
    "kwargs, X, match",
    [
        ({"bounds": (0, 1)}, np.array([[np.nan]]), "NaN or inf"),
        ({"bounds": (0, 1)}, np.empty((0, 1)), "0 sample"),
        ({"bounds": (1, 0)}, np.ones((3, 1)), "lower bound must be < upper"),
        ({"bounds": (0, None), "bounds_share": 1.0}, np.ones((3, 1)), "bounds_share"),
        ({"bounds": (None, 1)}, np.ones((3, 1)), "must be numeric|finite"),
        ({"bounds": (0, 1), "epsilon": 0}, np.ones((3, 1)), "epsilon"),
        ({"bounds": (0, 1), "mechanism": "gaussian"}, np.ones((3, 1)), "delta > 0"),
        ({"bounds": (0, 1), "delta": 1e-6}, np.ones((3, 1)), "pure epsilon-DP"),
        ({"bounds": (0, 1), "epsilon": 5.0}, np.ones((3, 1)), "exceed"),
    ],
)
def test_bad_input_charges_nothing(kwargs, X, match):
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    with pytest.raises(Exception, match=match):
        PrivateMean(accountant=acc, **kwargs).fit(X)
    assert acc.entries == ()


@pytest.mark.parametrize(
    "bounds, labels",
    [
        (None, ["bounds sign test (Laplace counts)", "bounds (SVT)"]),
        ((0.0, None), ["upper bounds (SVT)"]),
    ],
)
def test_private_bounds_are_charged_with_the_mean(bounds, labels):
    acc = BudgetAccountant(epsilon=1.0)
    X = np.random.default_rng(3).lognormal(3, 1, size=(20_000, 2))
    pm = PrivateMean(
        1.0, bounds=bounds, bounds_share=0.25, accountant=acc, random_state=0
    ).fit(X)
    expected = [f"PrivateMean: {label}" for label in labels]
    expected += ["PrivateMean: row count and clipped sums"]
    assert [e.label for e in acc.entries] == expected
    assert sum(e.epsilon for e in acc.entries[: len(labels)]) == pytest.approx(0.25)
    assert acc.total()[0] == pytest.approx(1.0)
    assert pm.epsilon_spent_ == pytest.approx(1.0)
    assert np.all(pm.lower_ < pm.upper_)
    # a privately chosen upper bound clips only a little of the tail
    np.testing.assert_allclose(pm.mean_, X.mean(axis=0), rtol=0.05)


def test_a_spent_budget_stops_private_bounds_before_any_data_is_read():
    acc = BudgetAccountant(epsilon=0.5)
    with pytest.raises(Exception, match="exceed"):
        PrivateMean(1.0, accountant=acc).fit(np.ones((5, 1)))
    assert acc.entries == ()


def test_pandas_out_and_pipeline():
    X = pd.DataFrame({"age": [20.0, 40.0, 60.0], "hours": [30.0, 40.0, 50.0]})
    pipe = make_pipeline(
        DPClipper(bounds=(0, 100)), PrivateMean(bounds=(0, 100), random_state=0)
    ).set_output(transform="pandas")
    out = pipe.fit_transform(X)
    assert list(out.columns) == ["age", "hours"]


# -- empirical audit with a mutation twin ------------------------------------

EPS = 1.0
BOUNDS = (0.0, 1.0)
# worst case for the sum: neighbours differ by one row at a bound
D0 = np.zeros((4, 1))
D1 = np.vstack([D0, [[1.0]]])


# Only the mean is released, and it mixes the count's and the sum's noise, so
# on these neighbours the audit sees roughly half of epsilon; the mutants are
# chosen to leak clearly more than the claim through the mean alone.
AUDIT = {"n_samples": 2_500, "n_pilot": 600, "random_state": 0}


def unclipped_sums(X, lower, upper, sample_weight=None):
    """Mutant of exact_centred_sums that forgets to clip (float sums;
    unweighted: the audits pass no weights)."""
    centre, radius = centre_and_radius(lower, upper)
    return ((X - centre) / radius).sum(axis=0)


def unclipped_split_sums(X, lower, upper, sample_weight=None):
    """Mutant of exact_split_sums that forgets to clip (float sums)."""
    n_samples = X.shape[0]
    centred = unclipped_sums(X, lower, upper)
    return np.stack([(n_samples + centred) / 2, (n_samples - centred) / 2])


def use_release(release, monkeypatch):
    """Force the separate release (one feature normally takes the paired)."""
    if release == "separate":
        monkeypatch.setattr(
            mean_module,
            "plan_mean_release",
            lambda eps, delta, d, mech, unit_rows=1: MeanRelease(
                False, eps, delta, d, mech, unit_rows
            ),
        )


@pytest.fixture(params=["paired", "separate"])
def release(request, monkeypatch):
    """Audit both ways of releasing the count and the sums."""
    use_release(request.param, monkeypatch)
    return request.param


def fit_mean(data, seed, noise_for=EPS):
    pm = PrivateMean(noise_for, bounds=BOUNDS, random_state=seed)
    return float(pm.fit(data).mean_[0])


# the added row at the bound, and far outside it (clipped); the separate
# release, unchanged since it was audited at both, keeps the clipped case
@pytest.mark.parametrize(
    "release_name, row",
    [
        ("paired", 1.0),
        # 15 s: runs with pytest -m slow, not in the CI command; the paired
        # release stays audited at 1.0, and its clipping by the twin below
        pytest.param("paired", 50.0, marks=pytest.mark.slow),
        ("separate", 50.0),
    ],
)
def test_audit_private_mean_passes(release_name, row, monkeypatch):
    use_release(release_name, monkeypatch)
    assert_dp(fit_mean, D0, np.vstack([D0, [[row]]]), EPS, **AUDIT)


def test_audit_catches_a_missing_clip(release, monkeypatch):
    monkeypatch.setattr(release_module, "exact_centred_sums", unclipped_sums)
    monkeypatch.setattr(release_module, "exact_split_sums", unclipped_split_sums)
    far = np.vstack([D0, [[50.0]]])
    mutant = audit_mechanism(fit_mean, D0, far, **AUDIT)
    assert mutant.epsilon_lower_bound > 2 * EPS


def test_audit_catches_a_third_of_the_noise():
    # the mutant calibrates its noise to 3 epsilon but claims epsilon (the
    # paired release; the separate one's twin is the missing clip, for time)
    mutant = audit_mechanism(
        lambda d, s: fit_mean(d, s, noise_for=3 * EPS), D0, D1, **AUDIT
    )
    assert mutant.epsilon_lower_bound > EPS


@pytest.mark.parametrize("d", [1, 8])  # paired and separate releases
def test_confidence_interval_covers_the_clipped_mean(d):
    X = np.random.default_rng(3).uniform(0, 10, size=(3_000, d))
    truth = X.mean(axis=0)
    misses, widths = 0, []
    for seed in range(300):
        est = PrivateMean(0.5, bounds=(0, 10), random_state=seed).fit(X)
        low, high = est.confidence_interval(alpha=0.2)
        assert np.all(low <= est.mean_ + 1e-12) and np.all(est.mean_ <= high + 1e-12)
        misses += int(np.any((truth < low) | (truth > high)))
        widths.append(np.mean(high - low))
    assert misses / 300 < 0.2
    assert np.median(widths) < 0.5 * d  # far narrower than the bounds


def test_confidence_interval_when_the_count_may_be_zero():
    est = PrivateMean(0.01, bounds=(0, 10), random_state=0).fit(np.ones((2, 1)))
    low, high = est.confidence_interval()
    assert (low[0], high[0]) == (0.0, 10.0)


@pytest.mark.parametrize("epsilon", [1e-30, 1e-300])
@pytest.mark.parametrize("n_features", [1, 8])  # the paired and separate plans
def test_a_release_that_cannot_be_represented_is_refused_before_the_charge(
    epsilon, n_features
):
    acc = BudgetAccountant()
    est = PrivateMean(epsilon, bounds=(0, 1), accountant=acc)
    with pytest.raises(ValueError, match=r"cannot be released.*Nothing was charged"):
        est.fit(np.ones((5, n_features)))
    assert acc.total() == (0.0, 0.0)


def test_the_release_raises_nothing_under_the_callers_errstate():
    # with np.errstate(all="raise") set by the caller, the exact sums' halving
    # near the float limit (bounds (-1e308, ~1.8e308) from the search)
    # underflowed in a multiply on the neighbour with one subnormal row only:
    # a FloatingPointError after the charge that told the neighbours apart
    base = np.random.default_rng(0).normal(0, 1, 300)
    for X in (base, np.r_[base, 5e-324]):
        acc = BudgetAccountant(np.inf)
        est = PrivateMean(
            bounds=(-1e308, None),
            upper_limit=np.finfo(float).max,
            accountant=acc,
            random_state=1,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoiseDominatedWarning)
            with np.errstate(all="raise"):
                est.fit(X[:, None])
        assert acc.total()[0] == 1.0 and np.isfinite(est.mean_[0])
