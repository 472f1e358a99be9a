"""The private transformers of ``skdp.preprocessing`` with ``groups=``.

Refusals before the charge, public fits that stay free, the same release
for any row order, the limit ε → ∞ on people with copied rows, the
encoder's selection checked exactly for a group touching several
categories, the bounding of string cells, and an audit of the encoder's
noisy counts with its twin that skips the bounding.
"""

import itertools

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.pipeline import make_pipeline

import skdp
from skdp import BudgetAccountant
from skdp.accounting._group_privacy import row_budget_for_groups
from skdp.audit import assert_dp, audit_mechanism
from skdp.mechanisms import check_random_source, partition_selection
from skdp.mechanisms._partition import _scale, partition_threshold
from skdp.preprocessing._encoders import _content
from skdp.utils._cells import cell_key
from skdp.utils._privacy_unit import PrivacyUnit

K = 3
pytestmark = pytest.mark.filterwarnings(
    "ignore::skdp.exceptions.NoiseDominatedWarning",
    "ignore::skdp.exceptions.PTRRefusedWarning",
)


def _private():
    return [
        skdp.DPClipper(max_rows_per_group=K),
        skdp.DPClipper(method="quantile", upper_limit=100, max_rows_per_group=K),
        skdp.PrivateMinMaxScaler(max_rows_per_group=K),
        skdp.PrivateRobustScaler(bounds=(0, 10), max_rows_per_group=K),
        skdp.PrivateRobustScaler(
            bounds=(0, 10),
            proposed_sensitivity=0.5,
            scale_method="dwork_lei",
            max_rows_per_group=K,
        ),
        skdp.PrivateKBinsDiscretizer(bounds=(0, 10), max_rows_per_group=K),
        skdp.PrivateOneHotEncoder(max_rows_per_group=K),
    ]


PRIVATE_IDS = ["clip_svt", "clip_quantile", "minmax", "robust", "robust_ptr"]
PRIVATE_IDS += ["kbins", "encoder"]


def _public():
    return [
        skdp.DPClipper(bounds=(0, 10), max_rows_per_group=K),
        skdp.DPClipper(method=None, norm="l2", max_norm=1.0, max_rows_per_group=K),
        skdp.PrivateMinMaxScaler(bounds=(0, 10), max_rows_per_group=K),
        skdp.PrivateKBinsDiscretizer(
            strategy="uniform", bounds=(0, 10), max_rows_per_group=K
        ),
        skdp.PrivateOneHotEncoder(
            categories=[list(range(11))] * 2, max_rows_per_group=K
        ),
    ]


PUBLIC_IDS = ["clip_bounds", "clip_norm", "minmax", "kbins_uniform", "encoder"]


def _people(n_groups=300, seed=0):
    """1 to 6 rows per person, whole numbers in [0, 10] (categories too)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, n_groups)
    groups = np.repeat(np.arange(n_groups), sizes)
    base = rng.uniform(0, 10, size=(n_groups, 2))
    X = np.clip(base[groups] + rng.normal(scale=0.5, size=(groups.size, 2)), 0, 10)
    return X.round(), groups


def _fit(estimator, X, groups, accountant=None, seed=0):
    model = clone(estimator).set_params(
        accountant=accountant or BudgetAccountant(delta=1.0), random_state=seed
    )
    return model.fit(X, groups=groups)


RELEASES = ("lower_", "upper_", "data_min_", "data_max_", "median_", "scale_")


def _released(model):
    out = [getattr(model, name) for name in RELEASES if hasattr(model, name)]
    for name in ("bin_edges_", "categories_", "category_counts_"):
        value = getattr(model, name, None)
        out.extend([] if value is None else list(value))
    return out


@pytest.mark.parametrize("estimator", _private() + _public())
def test_groups_without_a_bound_and_a_bound_without_groups_are_refused(estimator):
    X, groups = _people(60)
    accountant = BudgetAccountant(delta=1.0)
    no_bound = clone(estimator).set_params(max_rows_per_group=None)
    with pytest.raises(ValueError, match=r"max_rows_per_group=5\)"):
        _fit(no_bound, X, groups, accountant)
    with pytest.raises(ValueError, match=r"fit got no groups.*metadata_routing"):
        _fit(estimator, X, None, accountant)
    with pytest.raises(ValueError, match="one label per row"):
        _fit(estimator, X, groups[:-1], accountant)
    assert len(accountant.entries) == 0


@pytest.mark.parametrize("estimator", _public(), ids=PUBLIC_IDS)
def test_public_fits_take_groups_and_stay_free(estimator):
    X, groups = _people(60)
    accountant = BudgetAccountant(delta=1.0)
    grouped = _fit(estimator, X, groups, accountant)
    rows = _fit(clone(estimator).set_params(max_rows_per_group=None), X, None)
    assert len(accountant.entries) == 0 and grouped.epsilon_spent_ == 0.0
    for a, b in zip(_released(grouped), _released(rows), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("estimator", _private(), ids=PRIVATE_IDS)
def test_the_release_is_the_same_for_any_row_order_and_names_the_unit(estimator):
    X, groups = _people()
    order = np.random.default_rng(1).permutation(groups.size)
    accountant = BudgetAccountant(delta=1.0, unit="group")  # counted as stated
    a = _fit(estimator, X, groups, accountant)
    b = _fit(estimator, X[order], groups[order])
    released = _released(a)
    assert released
    for x, y in zip(released, _released(b), strict=True):
        np.testing.assert_array_equal(x, y)
    assert all(e.label.endswith(f"group of <= {K} rows)") for e in accountant.entries)
    # the stated budget is charged, not the row budget the release runs at
    assert accountant.total()[0] == pytest.approx(estimator.epsilon)


@pytest.mark.parametrize("estimator", _private(), ids=PRIVATE_IDS)
def test_a_bound_at_either_end_fits_or_is_refused_before_the_charge(estimator):
    # the row budget eps/k is tiny for a huge k: samplers that cannot run
    # there are refused before the charge, naming the bound; never after
    X, groups = _people(40)
    for k in (1, 2**40, 2**53):
        accountant = BudgetAccountant(delta=1.0)
        model = clone(estimator).set_params(max_rows_per_group=k)
        try:
            _fit(model, X, groups, accountant)
        except ValueError as exc:
            assert f"max_rows_per_group={k}" in str(exc)
            assert len(accountant.entries) == 0
        else:
            assert k < 2**40 or len(accountant.entries) > 0


def test_a_ptr_noise_out_of_range_is_refused_before_the_charge():
    # before, a tiny epsilon passed the plan and the Laplace release of the
    # tests raised after the charge (the budget spent on an exception)
    accountant = BudgetAccountant(delta=1.0)
    scaler = skdp.PrivateRobustScaler(
        3e-17, bounds=(0, 10), proposed_sensitivity=0.5, accountant=accountant
    )
    with pytest.raises(ValueError, match=r"Cannot represent a Laplace.*epsilon"):
        scaler.fit(_people(40)[0])
    assert len(accountant.entries) == 0


def test_a_pipeline_routes_groups_to_the_transformers():
    X, groups = _people()
    y = (X[:, 0] > X[:, 1]).astype(int)
    accountant = BudgetAccountant(delta=1.0)
    pipe = make_pipeline(
        skdp.PrivateKBinsDiscretizer(bounds=(0, 10), encode="onehot-dense"),
        skdp.PrivateOneHotEncoder(),  # the bins as categories, found privately
        skdp.PrivateLogisticRegression(classes=[0, 1]),
    )
    pipe.set_params(
        **{f"{name}__max_rows_per_group": K for name in pipe.named_steps},
        **{f"{name}__accountant": accountant for name in pipe.named_steps},
    )
    with sklearn.config_context(enable_metadata_routing=True):
        pipe.fit(X, y, groups=groups)
    labels = [e.label for e in accountant.entries]
    assert len(labels) == 3 and all(f"group of <= {K} rows" in lab for lab in labels)


def test_with_one_row_per_copied_person_the_edges_become_the_peoples_quantiles():
    # every person's rows are copies: k = 1 keeps one copy, and as epsilon
    # grows the edges are numpy's quantiles of the de-duplicated people
    rng = np.random.default_rng(2)
    people = rng.uniform(0, 10, size=(3000, 1))
    groups = np.repeat(np.arange(3000), rng.integers(1, 6, 3000))
    bins = skdp.PrivateKBinsDiscretizer(
        4, bounds=(0, 10), epsilon=1e6, max_rows_per_group=1
    )
    edges = _fit(bins, people[groups], groups).bin_edges_[0][1:-1]
    reference = np.quantile(people[:, 0], [0.25, 0.5, 0.75])
    np.testing.assert_allclose(edges, reference, atol=0.02)
    duplicated = np.quantile(people[groups, 0], [0.25, 0.5, 0.75])
    assert np.abs(duplicated - reference).max() > 0.05  # the test can tell


def _selection_law(count, t, threshold, support):
    """P(⊥) and P(noisy count = v) for v in ``support`` of one category."""
    if count == 0:  # an absent category is never released
        return np.r_[1.0, np.zeros(support.size)]
    z = support - count
    norm = np.tanh(1 / (2 * t))  # (1 - e^{-1/t}) / (1 + e^{-1/t})
    released = norm * np.exp(-np.abs(z) / t)
    return np.r_[max(0.0, 1.0 - released.sum()), released]


def _hockey_stick(p, q, epsilon):
    return np.maximum(p - np.exp(epsilon) * q, 0.0).sum()


@pytest.mark.parametrize("k, epsilon, delta", [(3, 1.0, 1e-6), (2, 0.1, 1e-3)])
def test_the_encoders_selection_is_dp_for_a_group_touching_several_categories(
    k, epsilon, delta
):
    # one column: every way a group of k rows touches 1 to k categories, each
    # absent before or of count 1 or 40; the exact law of the released
    # (category, noisy count) pairs of the touched categories (the others'
    # are the same on both sides), compared in both directions
    encoder = skdp.PrivateOneHotEncoder(epsilon=epsilon, delta=delta)
    encoder.set_params(max_rows_per_group=k, accountant=BudgetAccountant(delta=1))
    fitted = encoder.fit(np.zeros((k, 1)), groups=np.zeros(k))
    eps_r, delta_r = row_budget_for_groups(epsilon, delta, k)
    threshold = partition_threshold(eps_r, delta_r)
    assert fitted.threshold_ == threshold
    num, den = _scale(eps_r)
    t = num / den
    # noisy counts beyond the support have mass below e^-25 (next to delta)
    support = np.arange(threshold, 40 + k + int(25 * t))
    worst = 0.0
    for touched in range(1, k + 1):
        for split in itertools.combinations_with_replacement(range(1, k + 1), touched):
            if sum(split) > k:
                continue
            for before in itertools.product([0, 1, 40], repeat=touched):
                laws = [
                    [
                        _selection_law(c, t, threshold, support),
                        _selection_law(c + s, t, threshold, support),
                    ]
                    for c, s in zip(before, split, strict=True)
                ]
                p = q = np.ones(1)
                for without, with_group in laws:
                    p, q = np.outer(p, without).ravel(), np.outer(q, with_group).ravel()
                worst = max(
                    worst, _hockey_stick(p, q, epsilon), _hockey_stick(q, p, epsilon)
                )
    assert worst <= delta
    assert worst > delta / 100  # the rule is not far off the stated delta


def test_string_cells_are_bounded_by_their_own_values():
    # the rows a group keeps depend on its own cells only: the same with
    # another group added, and for any order (strings, None, numbers, NaN)
    cells = np.array(["a", "b", None, 1.5, float("nan"), "é", 1.0, 1], dtype=object)
    rng = np.random.default_rng(0)
    for trial in range(20):
        values = rng.choice(cells, size=(9, 1))
        groups = np.array([0] * 5 + [1] * 4)
        extra = np.vstack([values, rng.choice(cells, size=(6, 1))])
        more = np.append(groups, [2] * 6)
        for seed in range(3):
            unit, bigger = PrivacyUnit(groups, 2), PrivacyUnit(more, 2)
            kept = unit.kept(check_random_source(seed), _content(values[:, 0], 0))
            kept_more = bigger.kept(check_random_source(seed), _content(extra[:, 0], 0))
            assert np.array_equal(kept, kept_more[kept_more < 9]), trial
            order = rng.permutation(9)
            shuffled = PrivacyUnit(groups[order], 2).kept(
                check_random_source(seed), _content(values[order, 0], 0)
            )
            key = sorted(repr(cell_key(v, 0)) for v in values[kept, 0])
            again = [repr(cell_key(v, 0)) for v in values[order][shuffled, 0]]
            assert key == sorted(again)
    assert len({tuple(row) for row in _content(cells, 0).tolist()}) == 7  # 1 == 1.0


# The audit: one string column; D0, 40 people of one row "a"; D1 adds a
# person of 3k rows "a". The output is the noisy count of "a" (always kept):
# the bounded person moves it by k at noise scale k/ε; unbounded, by 3k
# (ε 3); at the stated ε instead of the row budget, by k at scale 1/ε (ε k).
EPS, DELTA, KA = 1.0, 1e-6, 2
AUDIT = {"n_samples": 20_000, "n_pilot": 5_000, "random_state": 0}
D0 = (np.array(["a"] * 40), np.arange(40))
D1 = (np.append(D0[0], ["a"] * 3 * KA), np.append(D0[1], [99] * 3 * KA))


def _released_count(data, seed, n_runs=1):
    """PrivateOneHotEncoder.fit's steps after the charge (checked below),
    ``n_runs`` times: the rows of a group here are equal, so which of them a
    run's key keeps changes no count, and one bounding serves every run."""
    column, groups = data
    source = check_random_source(seed)
    unit = PrivacyUnit(groups, KA)
    kept = unit.kept(source, _content(column, 0))
    _, counts = np.unique(column[kept], return_counts=True)
    runs = np.repeat(counts, n_runs)
    budget = unit.row_budget(None, EPS, DELTA)
    _, noisy = partition_selection(runs, *budget, random_state=source)
    return noisy


def test_the_audited_steps_are_the_encoders():
    encoder = skdp.PrivateOneHotEncoder(epsilon=EPS, delta=DELTA, random_state=0)
    encoder.set_params(max_rows_per_group=KA, accountant=BudgetAccountant(delta=1))
    encoder.fit(D1[0][:, None], groups=D1[1])
    assert encoder.category_counts_[0][0] == _released_count(D1, 0)[0]


def test_audit_of_the_encoders_counts_with_groups_passes():
    assert_dp(_released_count, D0, D1, EPS, DELTA, **AUDIT)


def _every_row(self, source, *columns):
    return np.arange(columns[0].shape[0])


def _stated_budget(self, estimator, epsilon, delta=0.0):
    return epsilon, delta


@pytest.mark.parametrize(
    "method, mutation",
    [("kept", _every_row), ("row_budget", _stated_budget)],
    ids=["bounding_skipped", "row_budget_skipped"],
)
def test_audit_catches_an_encoder_without_the_group_route(
    monkeypatch, method, mutation
):
    monkeypatch.setattr(PrivacyUnit, method, mutation)
    mutant = audit_mechanism(_released_count, D0, D1, delta=DELTA, **AUDIT)
    assert mutant.epsilon_lower_bound > EPS
