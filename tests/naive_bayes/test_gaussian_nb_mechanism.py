"""PrivateGaussianNB(mechanism="auto"), the default: the moment sums get the
noise whose standard deviation is smaller for the fit's public shape (Laplace
with few features or a very large epsilon, the analytic Gaussian with many),
chosen without the data; its cost is what fit_cost plans; the Gaussian sums
are audited at a setting that "auto" selects."""

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.model_selection import cross_validate as sk_cross_validate

from skdp import BudgetAccountant, PrivateGaussianNB
from skdp.audit import assert_dp, audit_mechanism
from skdp.mechanisms import check_random_source
from skdp.model_selection import fit_cost, privacy_utility_curve
from skdp.naive_bayes._cost import moment_sums_mechanism
from skdp.preprocessing import _standard
from skdp.preprocessing._standard import release_moment_sums
from skdp.sensitivity import exact_moment_sums

pytestmark = pytest.mark.filterwarnings("ignore::skdp.exceptions.NoiseDominatedWarning")


def data(n_features, n=300, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return scale * rng.normal(y[:, None], 1.0, size=(n, n_features)), y


def fitted(mechanism, X, y, epsilon=1.0, **params):
    params = {"bounds": (-4, 5), "classes": [0, 1], **params}
    accountant = BudgetAccountant(delta=1e-3)
    model = PrivateGaussianNB(
        epsilon, mechanism=mechanism, accountant=accountant, random_state=3, **params
    )
    return model.fit(X, y), accountant


def release(model):
    arrays = (model.class_count_, model.theta_, model.var_, model.lower_)
    return [a.tobytes() for a in arrays], model.noise_std_


@pytest.mark.parametrize(
    "n_features, epsilon, expected",
    [(1, 1.0, "laplace"), (64, 1.0, "gaussian"), (64, 1e6, "laplace")],
)
def test_auto_is_the_chosen_mechanism_byte_for_byte(n_features, epsilon, expected):
    # one feature at epsilon 1: Laplace's std sqrt(2)/1 = 1.41 against the
    # Gaussian's 4.22; 64 features: 90.5 against 33.8; 64 features at
    # epsilon 1e6: 9.1e-5 against 5.7e-3
    X, y = data(n_features)
    auto, spent = fitted("auto", X, y, epsilon)
    stated, _ = fitted(expected, X, y, epsilon)
    assert auto.mechanism_ == expected
    assert release(auto) == release(stated)
    assert spent.total()[1] == (1e-6 if expected == "gaussian" else 0.0)


@pytest.mark.parametrize(
    "n_features, bounds, expected",
    # at epsilon 2.1 the crossover is 10.03 features with the whole epsilon
    # on the sums, 9.5 when private bounds take 30 % of it
    [(10, (-4, 5), "laplace"), (10, None, "gaussian"), (11, (-4, 5), "gaussian")],
)
def test_auto_takes_the_smaller_noise_at_the_sums_own_budget(
    n_features, bounds, expected
):
    X, y = data(n_features)
    stds = {
        mechanism: fitted(mechanism, X, y, 2.1, bounds=bounds)[0].noise_std_
        for mechanism in ("laplace", "gaussian")
    }
    assert min(stds, key=stds.get) == expected
    assert fitted("auto", X, y, 2.1, bounds=bounds)[0].mechanism_ == expected


def test_the_choice_never_reads_the_data():
    # the same shape, data as different as can be: the same mechanism, the
    # one the public plan gives without any data
    model = PrivateGaussianNB(1.0, bounds=(-4, 5), classes=[0, 1])
    for n_features in (8, 9):
        plan = moment_sums_mechanism(model, n_features)
        tame, y = data(n_features)
        wild = np.full_like(tame, 1e300)
        wild[::2] = -5e-324
        choices = {fitted("auto", X, y)[0].mechanism_ for X in (tame, wild)}
        assert choices == {plan}
    assert [moment_sums_mechanism(model, d) for d in (8, 9)] == ["laplace", "gaussian"]


def _tight():
    # zCDP keeps each release's mechanism: a Laplace and a Gaussian fit of
    # the same (epsilon, delta) record different totals
    return BudgetAccountant(1000.0, 1e-2, slack=5e-3, composition="zcdp")


@pytest.mark.parametrize("n_features", [2, 16])
@pytest.mark.parametrize(
    "fit_params",
    [
        {"classes": [0, 1], "bounds": (-4, 5)},
        {"classes": None, "bounds": (-4, 5)},
        {"classes": None, "bounds": None},
        {"classes": [0, 1], "bounds": None, "weights": True},
        {"classes": [0, 1], "bounds": (-4, 5), "groups": 2},
    ],
)
def test_fit_cost_is_what_the_auto_fit_records(fit_params, n_features):
    params = dict(fit_params)
    weights, k = params.pop("weights", False), params.pop("groups", None)
    X, y = data(n_features, n=2000)  # the label selection keeps both labels
    kwargs = {"sample_weight": np.linspace(0, 1, y.size)} if weights else {}
    if k is not None:
        kwargs["groups"] = np.arange(y.size) // 3
    model = PrivateGaussianNB(2.0, max_rows_per_group=k, random_state=0, **params)
    recorded = _tight()
    model.set_params(accountant=recorded).fit(X, y, **kwargs)
    assert model.mechanism_ == ("gaussian" if n_features == 16 else "laplace")
    plan = _tight()
    plan.spend(fit_cost(model, n_features), label="plan")
    assert recorded.total() == plan.total()
    assert model.delta_spent_ == fit_cost(model, n_features).delta


@pytest.mark.parametrize("bounds", [(-4, 5), None])
def test_fit_cost_without_the_feature_count_covers_the_gaussian(bounds):
    # with "auto" the sums' noise depends on the number of features: without
    # it the plan must hold the Gaussian's delta (stated classes: all of it)
    model = PrivateGaussianNB(2.0, bounds=bounds, classes=[0, 1], delta=1e-5)
    upper = fit_cost(model)
    assert (upper.epsilon, upper.delta) == (2.0, 1e-5)
    X, y = data(64)
    accountant = BudgetAccountant(delta=1e-3)
    model.set_params(accountant=accountant, random_state=0).fit(X, y)
    assert accountant.total() == (upper.epsilon, upper.delta)
    pure = fit_cost(model.set_params(delta=0.0))
    assert (pure.epsilon, pure.delta) == (2.0, 0.0)


def test_searches_plan_auto_on_the_columns_they_fit():
    # the plans of cross_validate, scikit-learn's searches and the curve
    # bounded "auto" over every number of features (the Gaussian's delta)
    # and refused a pure-epsilon accountant that the 2-feature fits fit in
    X, y = data(2, n=400)
    model = PrivateGaussianNB(0.5, bounds=(-4, 5), classes=[0, 1], random_state=0)
    accountant = BudgetAccountant(100.0)  # delta 0
    with accountant:
        sk_cross_validate(model, X, y, cv=2, error_score="raise")
        GridSearchCV(model, {"var_smoothing": [1e-9]}, cv=2).fit(X, y)
    privacy_utility_curve(
        model, X, y, epsilons=[0.5], n_repeats=1, accountant=accountant,
        random_state=0,
    )  # fmt: skip
    assert accountant.total() == (0.5 * (2 + 3 + 1), 0.0)


def test_nothing_is_charged_on_a_validation_error():
    X, y = data(64)  # "auto" would take the Gaussian
    accountant = BudgetAccountant(1.0, 1e-6)
    bad_labels = PrivateGaussianNB(
        bounds=(-4, 5), classes=[0, 5], accountant=accountant
    )
    with pytest.raises(ValueError, match="not in the public classes"):
        bad_labels.fit(X, y)
    with pytest.raises(ValueError, match="mechanism"):
        bad_labels.set_params(classes=[0, 1], mechanism="Auto").fit(X, y)
    assert accountant.total() == (0.0, 0.0)


# -- audit of the Gaussian sums at a setting "auto" selects --------------------

EPS, DELTA, D = 1.0, 1e-6, 16
AUDIT = {"n_samples": 15_000, "n_pilot": 4_000, "random_state": 0, "delta": DELTA}
BOUNDS = (np.zeros(D), np.ones(D))
D0 = (np.full((2, D), 0.5), np.array([0, 1]))
D1 = (np.full((3, D), 0.5) * [[1], [1], [0]], np.array([0, 1, 0]))  # a = 0 row


def exact_sums(data):
    X, y = data
    return exact_moment_sums(X, *BOUNDS, y, 2).as_float()  # k 2**-32: exact


def noise_step(sums, seed):
    """What :func:`release_moment_sums` does to the exact sums."""
    sensitivities = _standard.per_feature_sensitivities(D)
    source = check_random_source(seed)
    return _standard.additive_release(sums, *sensitivities, EPS, DELTA, source)


def released_first_terms(data, seed, n_runs):
    """``n_runs`` releases of the sums in one call, reduced to class 0's
    ``(1 - a)²`` sums over the features, the coordinates the added row moves
    (post-processing)."""
    runs = np.broadcast_to(exact_sums(data), (n_runs, 2, 3, D))
    return noise_step(runs, seed)[:, 0, 0, :].sum(axis=1)


def test_the_audited_step_is_the_release_of_the_sums():
    X, y = D1
    source = check_random_source(7)
    released, _ = release_moment_sums(X, *BOUNDS, EPS, DELTA, source, y, 2)
    assert released.tobytes() == noise_step(exact_sums(D1), 7).tobytes()


def test_audit_gaussian_sums_and_a_noise_sized_for_one_feature_twin(monkeypatch):
    chosen = PrivateGaussianNB(EPS, bounds=(0, 1), classes=[0, 1], delta=DELTA)
    assert moment_sums_mechanism(chosen, D) == "gaussian"
    assert_dp(released_first_terms, D0, D1, EPS, **AUDIT)
    # the twin sizes the Gaussian for one feature's move (L2 1, not sqrt(d))
    monkeypatch.setattr(
        _standard, "per_feature_sensitivities", lambda d, k=1: (k * d, float(k))
    )
    mutant = audit_mechanism(released_first_terms, D0, D1, **AUDIT)
    assert mutant.epsilon_lower_bound > EPS, str(mutant)
