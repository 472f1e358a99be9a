"""Estimators with ``fit(..., groups=...)``: the privacy unit is a group.

Refusals before the charge, the bound applied (hand-derived values), the
same release for any row order, the noise k times the row's, the limit
ε → ∞ on duplicated rows, and ``groups`` routed by scikit-learn's metadata
routing through a Pipeline and cross_validate.
"""

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GroupKFold, cross_validate
from sklearn.pipeline import make_pipeline

import skdp
from skdp import BudgetAccountant

K = 3


def _estimators():
    return [
        skdp.PrivateMean(bounds=(0, 10), max_rows_per_group=K),
        skdp.PrivateHistogram(bounds=(0, 10), max_rows_per_group=K),
        skdp.PrivateLogisticRegression(classes=[0, 1], max_rows_per_group=K),
        skdp.PrivateLinearRegression(target_bounds=(0, 10), max_rows_per_group=K),
        skdp.PrivateGaussianNB(bounds=(0, 10), classes=[0, 1], max_rows_per_group=K),
        skdp.PrivateStandardScaler(bounds=(0, 10), max_rows_per_group=K),
    ]


IDS = ["mean", "histogram", "logistic", "linear", "gaussian_nb", "standard_scaler"]


def _people(n_groups=300, seed=0):
    """1 to 6 rows per person, each a perturbed copy of the person's row."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, n_groups)
    groups = np.repeat(np.arange(n_groups), sizes)
    base = rng.uniform(0, 10, size=(n_groups, 2))
    X = base[groups] + rng.normal(scale=0.1, size=(groups.size, 2))
    y = (X[:, 0] > X[:, 1]).astype(int)
    return X, y, groups


def _fit(estimator, X, y, groups, accountant=None, seed=0):
    model = clone(estimator).set_params(
        accountant=accountant or BudgetAccountant(delta=1.0), random_state=seed
    )
    return model.fit(X, y, groups=groups)


@pytest.mark.parametrize("estimator", _estimators(), ids=IDS)
def test_groups_without_a_bound_and_a_bound_without_groups_are_refused(estimator):
    X, y, groups = _people()
    accountant = BudgetAccountant(delta=1.0)
    no_bound = clone(estimator).set_params(max_rows_per_group=None)
    with pytest.raises(ValueError, match=r"max_rows_per_group=5\)"):
        _fit(no_bound, X, y, groups, accountant)
    with pytest.raises(ValueError, match=r"fit got no groups.*metadata_routing"):
        _fit(estimator, X, y, None, accountant)
    with pytest.raises(ValueError, match="one label per row"):
        _fit(estimator, X, y, groups[:-1], accountant)
    with pytest.raises(ValueError, match="missing label"):
        _fit(estimator, X, y, np.where(groups == 3, np.nan, groups), accountant)
    with pytest.raises(ValueError, match="max_rows_per_group"):
        _fit(clone(estimator).set_params(max_rows_per_group=0), X, y, groups)
    assert len(accountant.entries) == 0


@pytest.mark.parametrize(
    "estimator, fix",
    [
        (skdp.PrivateMean(max_rows_per_group=K), "bounds=\\(L, U\\)"),
        (skdp.PrivateLogisticRegression(max_rows_per_group=K), "classes="),
        (skdp.PrivateGaussianNB(bounds=(0, 1), max_rows_per_group=K), "classes="),
        (skdp.PrivateGaussianNB(classes=[0, 1], max_rows_per_group=K), "bounds="),
        (skdp.PrivateStandardScaler(max_rows_per_group=K), "bounds="),
    ],
    ids=["mean_bounds", "logistic_labels", "nb_labels", "nb_bounds", "scaler_bounds"],
)
def test_a_release_stated_for_one_row_is_refused_with_groups(estimator, fix):
    X, y, groups = _people()
    accountant = BudgetAccountant(delta=1.0)
    with pytest.raises(ValueError, match=fix):
        _fit(estimator, X, y, groups, accountant)
    assert len(accountant.entries) == 0


def test_the_mean_keeps_at_most_k_rows_of_each_group():
    # person A: 1 row at 0; person B: 9 equal rows at 10. Row mean 9; with
    # one row per person the mean is 5 (hand-derived), with 3 it is 7.5
    X = np.array([[0.0]] + [[10.0]] * 9)
    groups = ["A"] + ["B"] * 9
    for k, expected in [(1, 5.0), (3, 7.5), (9, 9.0)]:
        mean = skdp.PrivateMean(1e9, bounds=(0, 10), max_rows_per_group=k)
        mean.set_params(accountant=BudgetAccountant(delta=1.0), random_state=0)
        assert mean.fit(X, groups=groups).mean_[0] == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("estimator", _estimators(), ids=IDS)
def test_the_release_is_the_same_for_any_row_order(estimator):
    X, y, groups = _people()
    order = np.random.default_rng(1).permutation(groups.size)
    a = _fit(estimator, X, y, groups)
    b = _fit(estimator, X[order], y[order], groups[order])
    names = ("mean_", "counts_", "coef_", "intercept_", "theta_", "var_", "scale_")
    for name in names:
        if hasattr(a, name):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_the_histograms_noise_is_k_times_the_rows():
    # Laplace with scale k d / epsilon: standard deviation sqrt(2) k d / eps
    X, y, groups = _people()
    hist = _fit(
        skdp.PrivateHistogram(bounds=(0, 10), max_rows_per_group=K), X, y, groups
    )
    assert hist.noise_std_ == pytest.approx(np.sqrt(2) * K * 2 / 1.0)
    row = _fit(skdp.PrivateHistogram(bounds=(0, 10)), X, y, None)
    assert hist.noise_std_ == pytest.approx(K * row.noise_std_)


def test_the_naive_bayes_noise_is_k_times_the_rows():
    X, y, groups = _people()
    nb = _fit(_estimators()[4], X, y, groups)
    row = _fit(_estimators()[4].set_params(max_rows_per_group=None), X, y, None)
    # Laplace on the moment sums: scale k d / epsilon (hand-derived)
    assert nb.noise_std_ == pytest.approx(np.sqrt(2) * K * 2 / 1.0)
    assert nb.noise_std_ == pytest.approx(K * row.noise_std_)


def test_the_scalers_noise_and_interval_are_k_times_the_rows():
    X, y, groups = _people()
    scaler = _fit(_estimators()[5], X, y, groups)
    row = _fit(_estimators()[5].set_params(max_rows_per_group=None), X, y, None)
    assert scaler.noise_std_ == pytest.approx(np.sqrt(2) * K * 2 / 1.0)
    assert scaler.noise_std_ == pytest.approx(K * row.noise_std_)
    low, high = scaler.confidence_interval()
    row_low, row_high = row.confidence_interval()
    assert np.all(high - low > 2 * (row_high - row_low))  # the margins grow with k


def test_the_ledger_names_the_unit():
    X, y, groups = _people()
    accountant = BudgetAccountant(delta=1.0)
    _fit(_estimators()[2], X, y, groups, accountant)
    assert accountant.entries[-1].label.endswith(f"(unit: group of <= {K} rows)")


def test_one_row_per_duplicated_person_converges_to_least_squares_on_people():
    # every person's rows are copies: k = 1 keeps exactly one copy, and as
    # epsilon grows the fit is scikit-learn's on the de-duplicated table
    rng = np.random.default_rng(2)
    people = rng.uniform(-1, 1, size=(2000, 2))
    target = people @ [1.5, -2.0] + 0.3 + rng.normal(scale=0.3, size=2000)
    copies = rng.integers(1, 6, 2000)
    groups = np.repeat(np.arange(2000), copies)
    model = skdp.PrivateLinearRegression(
        1e9, target_bounds=(-5, 5), feature_bounds=(-1, 1), max_rows_per_group=1
    )
    fitted = _fit(model, people[groups], target[groups], groups)
    reference = LinearRegression().fit(people, target)
    np.testing.assert_allclose(fitted.coef_, reference.coef_, atol=2e-3)


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def test_a_pipeline_routes_groups_to_every_private_step(routing):
    X, y, groups = _people()
    accountant = BudgetAccountant(delta=1.0)
    pipe = make_pipeline(
        skdp.PrivateMean(bounds=(0, 10), max_rows_per_group=K, accountant=accountant),
        skdp.PrivateLogisticRegression(
            classes=[0, 1], max_rows_per_group=K, accountant=accountant
        ),
    )
    pipe.fit(X, y, groups=groups)
    labels = [e.label for e in accountant.entries]
    assert len(labels) == 2 and all(f"group of <= {K} rows" in lab for lab in labels)


def test_cross_validate_routes_groups_to_the_splitter_and_the_estimator(routing):
    X, y, groups = _people()
    accountant = BudgetAccountant(delta=1.0)
    model = skdp.PrivateLogisticRegression(
        classes=[0, 1], max_rows_per_group=K, accountant=accountant
    )
    scores = cross_validate(
        model, X, y, params={"groups": groups}, cv=GroupKFold(3), error_score="raise"
    )
    assert len(scores["test_score"]) == 3
    labels = [e.label for e in accountant.entries]
    assert len(labels) == 3 and all(f"group of <= {K} rows" in lab for lab in labels)


def test_the_request_for_groups_follows_the_stated_bound():
    # unset without a bound: the router refuses a passed groups while it
    # routes (before any fit); requested once the bound is stated
    model = skdp.PrivateLogisticRegression(classes=[0, 1])
    assert model.get_metadata_routing().fit.requests["groups"] is None
    model.set_params(max_rows_per_group=K)
    assert model.get_metadata_routing().fit.requests["groups"] is True
    assert clone(model).get_metadata_routing().fit.requests["groups"] is True


def test_cross_validate_refuses_groups_for_an_unbounded_step_before_any_fit(routing):
    # before: the estimator got groups and refused in its own fit; a
    # pipeline's earlier steps had charged by then
    X, y, groups = _people()
    accountant = BudgetAccountant(delta=1.0)
    pipe = make_pipeline(
        skdp.PrivateMinMaxScaler(max_rows_per_group=K, accountant=accountant),
        skdp.PrivateLogisticRegression(classes=[0, 1], accountant=accountant),
    )
    with pytest.raises(ValueError, match=r"groups.*PrivateLogisticRegression"):
        cross_validate(pipe, X, y, params={"groups": groups}, cv=GroupKFold(3))
    assert accountant.entries == ()


def test_a_step_told_to_ignore_groups_fits_one_row_on_purpose(routing):
    # groups=False is the caller's statement: the groups then feed the
    # splitter only and the step's charge is stated for one row
    X, y, groups = _people()
    accountant = BudgetAccountant(delta=1.0)
    model = skdp.PrivateLogisticRegression(classes=[0, 1], accountant=accountant)
    model.set_fit_request(groups=False)
    cross_validate(
        model, X, y, params={"groups": groups}, cv=GroupKFold(3), error_score="raise"
    )
    assert [e.unit for e in accountant.entries] == ["row"] * 3


def test_without_routing_cross_validate_cannot_drop_the_unit_silently():
    # scikit-learn then passes groups to the splitter only: the estimator's
    # bound without groups is refused instead of fitting row by row
    X, y, groups = _people()
    model = skdp.PrivateLogisticRegression(classes=[0, 1], max_rows_per_group=K)
    model.set_params(accountant=BudgetAccountant(delta=1.0))
    with pytest.raises(ValueError, match="fit got no groups"):
        cross_validate(
            model, X, y, groups=groups, cv=GroupKFold(3), error_score="raise"
        )


@pytest.mark.parametrize("estimator", _estimators(), ids=IDS)
@pytest.mark.parametrize("k", [1, 2**40, 10**30])
def test_a_bound_at_either_end_fits_or_is_refused_before_the_charge(estimator, k):
    # a huge k makes the noise too large for some samplers: refused before
    # the charge (nothing spent), never an error after it
    X, y, groups = _people(60)
    accountant = BudgetAccountant(delta=1.0)
    model = clone(estimator).set_params(max_rows_per_group=k)
    try:
        _fit(model, X, y, groups, accountant)
    except ValueError as exc:
        assert "max_rows_per_group" in str(exc) or "epsilon" in str(exc)
        assert len(accountant.entries) == 0
    else:
        assert len(accountant.entries) == 1
