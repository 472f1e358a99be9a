"""The private metrics with ``groups``: one whole group (a person's test
rows) is the privacy unit of the release."""

import itertools

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.audit import assert_dp, audit_mechanism
from skdp.mechanisms import check_random_source
from skdp.mechanisms._additive import additive_release
from skdp.metrics import (
    _release,
    _tables,
    private_confusion_matrix,
    private_log_loss,
    private_regression_report,
    private_roc_auc_score,
    private_score_histograms,
)
from skdp.metrics._inputs import label_rows
from skdp.utils._privacy_unit import PrivacyUnit

RNG = np.random.default_rng(0)
Y = RNG.integers(0, 2, 80)
P = np.clip(0.5 + 0.3 * (Y - 0.5) + RNG.normal(0, 0.2, 80), 0.01, 0.99)
GROUPS = RNG.integers(0, 20, 80)

# each release, as (true, predicted) -> the call; the row's L1 and L2
RELEASES = {
    "confusion": (
        lambda y, p, **kw: private_confusion_matrix(
            y, (p > 0.5).astype(int), labels=[0, 1], **kw
        ),
        1.0,
        1.0,
    ),
    "histograms": (
        lambda y, p, **kw: private_score_histograms(y, p, bins=2, **kw),
        1.0,
        1.0,
    ),
    "log_loss": (
        lambda y, p, **kw: private_log_loss(y, p, labels=[0, 1], eps=0.01, **kw),
        1.0,
        1.0,
    ),
    "regression": (
        lambda y, p, **kw: private_regression_report(
            1.0 * y, p, target_bounds=(0, 1), **kw
        ),
        3.0,
        3.0**0.5,
    ),
}


def _call(name, y, p, **kw):
    return RELEASES[name][0](y, p, **kw)


@pytest.mark.parametrize("name", sorted(RELEASES))
@pytest.mark.parametrize(
    "unit, match",
    [
        ({"groups": GROUPS}, "max_rows_per_group is None"),
        ({"max_rows_per_group": 3}, "got no groups"),
        ({"groups": GROUPS[:-1], "max_rows_per_group": 3}, "one label per row"),
        ({"groups": GROUPS, "max_rows_per_group": 0}, "int >= 1"),
        ({"groups": [None] * 80, "max_rows_per_group": 3}, "missing label"),
    ],
)
def test_refusals_before_the_charge(name, unit, match):
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match=match):
        _call(name, Y, P, accountant=accountant, **unit)
    assert accountant.total() == (0.0, 0.0)


def test_a_dask_input_with_groups_is_refused_before_the_charge():
    da = pytest.importorskip("dask.array")
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match="in-memory data only"):
        private_roc_auc_score(
            da.from_array(Y, chunks=40),
            da.from_array(P, chunks=40),
            groups=GROUPS,
            max_rows_per_group=2,
            accountant=accountant,
        )
    assert accountant.total() == (0.0, 0.0)


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_the_charge_records_the_group_unit_and_the_order_does_not_matter(name):
    accountant = BudgetAccountant()
    kw = {"groups": GROUPS, "max_rows_per_group": 2, "random_state": 4}
    first = _call(name, Y, P, accountant=accountant, **kw)
    (entry,) = accountant.entries
    assert (entry.unit, entry.group_rows) == ("group", 2)
    assert entry.label.endswith("(unit: group of <= 2 rows)")
    order = RNG.permutation(80)
    kw["groups"] = GROUPS[order]
    second = _call(name, Y[order], P[order], accountant=BudgetAccountant(), **kw)
    assert repr(first) == repr(second)


@pytest.fixture
def exact_releases(monkeypatch):
    """Every release returns its exact statistic (no noise), recorded with
    the plan's stated sensitivities."""
    seen = []

    def exact(self, statistic):
        values = statistic.as_float().ravel()
        seen.append((values, self.l1, self.l2))
        return values

    monkeypatch.setattr(_release.ReleasePlan, "release", exact)
    return seen


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_brute_force_one_group_moves_the_statistic_by_k_rows_at_most(
    name, exact_releases
):
    # D: two groups, one with more than k rows (bounding matters); D + G for
    # every group G of 1..k+1 rows over the domain (label, score) in
    # {0, 1} x {0.2, 0.7}: the exact statistic moves by at most the plan's
    # L1 and L2, which are k times the row's (hand-derived above).
    k = 2
    _, row_l1, row_l2 = RELEASES[name]
    domain = list(itertools.product([0, 1], [0.2, 0.7]))
    base = [(0, 0.2), (1, 0.7), (1, 0.2), (0, 0.7)]
    base_groups = [0, 0, 0, 1]

    def release(rows, groups):
        y, p = (np.array(c) for c in zip(*rows, strict=True))
        kw = {"groups": groups, "max_rows_per_group": k, "random_state": 1}
        _call(name, y, p, accountant=BudgetAccountant(), **kw)
        return exact_releases[-1]

    before, l1, l2 = release(base, base_groups)
    assert (l1, l2) == (k * row_l1, pytest.approx(k * row_l2, rel=1e-15))
    for size in range(1, k + 2):
        for added in itertools.product(domain, repeat=size):
            after, _, _ = release(base + list(added), base_groups + [7] * size)
            move = after - before
            assert np.abs(move).sum() <= l1 * (1 + 1e-12)
            assert np.sqrt((move**2).sum()) <= l2 * (1 + 1e-12)


# -- audit of the confusion matrix with groups, and its twin without bounding --
EPS, K = 1.0, 2
AUDIT = {"n_samples": 1_200, "n_pilot": 300, "random_state": 0}
LABELS = np.array([0, 1])
D0 = (np.array([0, 0, 1]), np.array([0, 1, 1]), np.array([0, 0, 1]))
D1 = tuple(np.append(c, [v] * (3 * K)) for c, v in zip(D0, (0, 1, 9), strict=True))


def released_cell(data, seed):
    """Cell (0, 1) of the released table, where the added group's rows fall:
    private_confusion_matrix's steps after the charge (a whole call costs 5
    ms; test_the_audited_steps_are_the_functions checks they are its steps)."""
    y_true, y_pred, groups = data
    rows, codes = label_rows(y_true, y_pred, LABELS, "audit")
    source = check_random_source(seed)
    kept = PrivacyUnit(groups, K).kept(source, codes)
    exact = _tables.contingency_counts(rows[kept], LABELS)
    return float(additive_release(exact, K, K, EPS, 0.0, source).ravel()[1])


def test_the_audited_steps_are_the_functions():
    cm = private_confusion_matrix(
        *D1[:2], labels=LABELS, groups=D1[2], max_rows_per_group=K,
        epsilon=EPS, random_state=3, accountant=BudgetAccountant(),
    )  # fmt: skip
    assert float(cm.counts[0, 1]) == released_cell(D1, 3)


def test_audit_of_the_confusion_matrix_with_groups_passes():
    assert_dp(released_cell, D0, D1, EPS, **AUDIT)


def test_audit_catches_a_confusion_matrix_that_skips_the_bounding(monkeypatch):
    monkeypatch.setattr(PrivacyUnit, "kept", lambda self, source, *c: slice(None))
    mutant = audit_mechanism(released_cell, D0, D1, **AUDIT)
    assert mutant.epsilon_lower_bound > EPS


WRAPPERS = (
    [
        (name, {"labels": [0, 1]}, "label")
        for name in [
            "private_accuracy_score",
            "private_balanced_accuracy_score",
            "private_precision_score",
            "private_recall_score",
            "private_f1_score",
            "private_precision_recall_fscore_support",
            "private_classification_report",
        ]
    ]
    + [
        (name, {}, "score")
        for name in [
            "private_roc_auc_score",
            "private_roc_curve",
            "private_precision_recall_curve",
            "private_average_precision_score",
            "private_calibration_curve",
        ]
    ]
    + [
        (name, {"target_bounds": (0, 1)}, "target")
        for name in [
            "private_mean_squared_error",
            "private_mean_absolute_error",
            "private_r2_score",
            "private_explained_variance_score",
        ]
    ]
)


@pytest.mark.parametrize("name, public, kind", WRAPPERS)
def test_every_metric_passes_the_unit_on_to_its_release(name, public, kind):
    import skdp.metrics

    predictions = {"label": (P > 0.5).astype(int), "score": P, "target": P}[kind]
    accountant = BudgetAccountant()
    getattr(skdp.metrics, name)(
        Y, predictions, groups=GROUPS, max_rows_per_group=3,
        accountant=accountant, random_state=0, **public,
    )  # fmt: skip
    assert [(e.unit, e.group_rows) for e in accountant.entries] == [("group", 3)]


@pytest.mark.parametrize("unit", [{"max_rows_per_group": 3}, {"groups": GROUPS}])
def test_a_scorer_refuses_groups_and_names_the_metric_call_instead(unit):
    from skdp.metrics import make_private_scorer

    with pytest.raises(ValueError, match="groups=person, max_rows_per_group=k"):
        make_private_scorer("accuracy", epsilon=0.5, labels=[0, 1], **unit)
