"""Adversarial review of ``groups=`` in the statistics and the preprocessing
transformers (quantiles, medians, IQR, SVT bounds, joint histogram, clipper,
scalers, discretizer, one-hot encoder).

Attacks: nothing may raise after the charge, whatever the cells and however
small the row budget ``ε/k`` gets; the row-level run's group cost must fit in
what is charged (exact rationals, not float readings); a refusal before the
charge names the cause.
"""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import skdp
from skdp.stats import _smooth


def _grouped(n=40, per=4, seed=0):
    X = np.random.default_rng(seed).uniform(0, 10, (n, 2))
    return X, np.arange(n) // per


# --- the encoder: a cell's digest must not fail after the charge ----------


@pytest.mark.parametrize("k", [None, 3])
def test_an_int_cell_beyond_the_int_to_str_limit_does_not_raise_after_the_charge(k):
    # Python refuses to write an int of more than 4300 digits in decimal;
    # the digest of a cell's canonical value was taken from its repr, after
    # the charge, so one such cell turned a fit into an exception (with and
    # without groups): the cell's presence was visible
    cells = np.empty(12, dtype=object)
    cells[:] = ["a"] * 11 + [10**5000]
    groups = None if k is None else np.arange(12) // 4
    accountant = skdp.BudgetAccountant(delta=1.0)
    encoder = skdp.PrivateOneHotEncoder(
        epsilon=1.0, max_rows_per_group=k, accountant=accountant, random_state=0
    )
    encoder.fit(cells[:, None], groups=groups)
    assert len(accountant.entries) == 1
    assert all(c.dtype == object for c in encoder.categories_)


def test_the_encoder_keeps_the_same_rows_of_other_groups_for_huge_ints():
    from skdp.preprocessing._encoders import _column_values, _content
    from skdp.utils._groups import kept_rows

    def kept(cells, groups):
        column = np.empty((len(cells), 1), dtype=object)
        column[:, 0] = cells
        content = _content(_column_values(column, 0, 0), 0)
        return kept_rows(groups, 1, 3, [content])

    cells = [10**5000, 10**5000 + 1, -(10**400), 2**1100, 7, "7"] * 2
    groups = np.repeat(np.arange(4), 3)
    before = set(kept(cells, groups).tolist())
    new = [10**5001, 2**1100, "x"]
    after = kept(new + cells, np.r_[[9, 9, 9], groups]) - 3
    assert before == {i for i in after.tolist() if i >= 0}
    assert len(before) == 4  # one row per group


# --- the quantile selections at a row budget that underflows --------------


@pytest.mark.parametrize(
    "method, epsilon, k",
    [
        ("exponential", 1e-300, 2**31),
        ("exponential", 1e-290, 2**53),
        ("exponential", 1e-310, None),
        ("permute_and_flip", 5e-324, None),  # ε/(levels d) rounds to 0
    ],
)
def test_a_selection_whose_epsilon_underflows_is_refused_before_the_charge(
    method, epsilon, k
):
    # ε/k/(levels d) too small: the exponential mechanism's window
    # (UNDERFLOW_GAP + ln(points)) / scale became inf and int(inf) raised,
    # permute-and-flip got ε = 0: both after the charge
    X, groups = _grouped()
    accountant = skdp.BudgetAccountant(delta=1.0)
    model = skdp.PrivateQuantile(
        epsilon=epsilon,
        method=method,
        bounds=(0, 10),
        max_rows_per_group=k,
        accountant=accountant,
        random_state=0,
    )
    with pytest.raises(ValueError, match="epsilon"):
        model.fit(X, groups=None if k is None else groups)
    assert accountant.entries == ()


# --- the group cost of the row-level run fits in the charge ----------------


def test_the_smooth_medians_group_cost_fits_in_what_is_charged(monkeypatch):
    # ε = 1, k = 2, d = 10: ε_r = 0.5 and ε_f = fl(0.5/10) = 0.05 is above
    # 1/20, so the ten releases cost k d ε_f = 1 + 5.6e-17 > the charged 1
    plans = []

    def spy(*args, **kwargs):
        plans.append(real(*args, **kwargs))
        return plans[-1]

    real = _smooth.smooth_plan
    monkeypatch.setattr(_smooth, "smooth_plan", spy)
    X = np.random.default_rng(0).uniform(0, 10, (40, 10))
    k, d = 2, 10
    accountant = skdp.BudgetAccountant(delta=1.0)
    skdp.SmoothSensitivityMedian(
        epsilon=1.0,
        delta=1e-6,
        bounds=(0, 10),
        max_rows_per_group=k,
        accountant=accountant,
        random_state=0,
    ).fit(X, groups=np.arange(40) // 4)
    charged = sum(Fraction(e.epsilon) for e in accountant.entries)
    assert k * d * Fraction(plans[-1].eps_feature) <= charged


# --- a refusal before the charge names the cause ---------------------------


@pytest.mark.parametrize(
    "estimator",
    [
        skdp.PTRMedian(bounds=(0, 10), proposed_sensitivity=0.5),
        skdp.IQRScale(method="dwork_lei", bounds=(0, 10)),
    ],
    ids=["ptr", "iqr_dwork_lei"],
)
def test_a_ptr_threshold_beyond_the_floats_is_refused_with_its_cause(estimator):
    # ε_r = 1e-300 / 2**31: the threshold ln(d/δ)/ε_t overflowed and
    # math.ceil(inf) raised a bare OverflowError ("cannot convert float
    # infinity to integer"), naming neither epsilon nor the bound
    X, groups = _grouped()
    accountant = skdp.BudgetAccountant(delta=1.0)
    model = estimator.set_params(
        epsilon=1e-300, max_rows_per_group=2**31, accountant=accountant
    )
    with pytest.raises(ValueError, match="epsilon") as info:
        model.fit(X, groups=groups)
    assert "max_rows_per_group" in str(info.value)
    assert accountant.entries == ()
    assert math.isfinite(1e-300)  # the stated ε itself is an ordinary double


@pytest.mark.parametrize("k", [None, 2])
def test_the_ptr_tests_and_releases_cost_at_most_the_charge(k, monkeypatch):
    # d = 5: eps_f = fl(eps_r / 10) = 0.1 (k = 1) or 0.05 (k = 2), both above
    # the exact share, so 2 d eps_f (times k) exceeds the charged 1.0
    from skdp.stats import _ptr

    seen = []
    real = _ptr.ptr_release

    def spy(distances, medians, proposals, eps_test, eps_release, *args, **kw):
        seen.append((eps_test, eps_release))
        return real(distances, medians, proposals, eps_test, eps_release, *args, **kw)

    monkeypatch.setattr(_ptr, "ptr_release", spy)
    X, groups = _grouped(n=60, per=3)
    X = np.c_[X, X[:, :1], X]  # d = 5
    accountant = skdp.BudgetAccountant(delta=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a refusal is a release too
        skdp.PTRMedian(
            epsilon=1.0,
            bounds=(0, 10),
            proposed_sensitivity=0.5,
            max_rows_per_group=k,
            accountant=accountant,
            random_state=0,
        ).fit(X, groups=None if k is None else groups)
    eps_test, eps_release = seen[-1]
    spent = (k or 1) * 5 * (Fraction(eps_test) + Fraction(eps_release))
    assert spent <= sum(Fraction(e.epsilon) for e in accountant.entries)


# --- routing: a later step's refusal comes after an earlier step's charge --


def test_a_pipeline_refusing_groups_in_a_later_step_charges_nothing():
    import sklearn
    from sklearn.pipeline import make_pipeline

    X, groups = _grouped()
    accountant = skdp.BudgetAccountant(delta=1.0)
    pipe = make_pipeline(
        skdp.PrivateMinMaxScaler(max_rows_per_group=3, accountant=accountant),
        skdp.PrivateQuantile(accountant=accountant),  # no bound: refuses
    )
    with sklearn.config_context(enable_metadata_routing=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # scikit-learn's router refuses while it routes, before any fit
            with pytest.raises(ValueError, match=r"groups.*PrivateQuantile\.fit"):
                pipe.fit(X, groups=groups)
    assert accountant.entries == ()


# --- a refused refit leaves the fitted unit (rank_error_bound) alone -------


def test_a_refused_refit_keeps_the_rank_error_bound_of_the_fitted_groups():
    # _unit_rows was set before the charge: a refit refused for its budget
    # left quantiles_ of groups of <= 3 rows with the bound of one row, a
    # rank error k = 3 times too small
    X, groups = _grouped()
    model = skdp.PrivateQuantile(
        bounds=(0, 10),
        max_rows_per_group=3,
        accountant=skdp.BudgetAccountant(),
        random_state=0,
    ).fit(X, groups=groups)
    fitted = model.rank_error_bound()
    model.set_params(
        max_rows_per_group=None, accountant=skdp.BudgetAccountant(epsilon=0.5)
    )
    with pytest.raises(skdp.BudgetExceededError):
        model.fit(X)
    np.testing.assert_array_equal(model.rank_error_bound(), fitted)
