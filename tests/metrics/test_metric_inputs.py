"""What the private metrics charge, and that invalid input charges nothing."""

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp import metrics as dpm

Y = np.array([0, 1, 1, 0, 1])
P = np.array([0, 1, 0, 0, 1])
S = np.array([0.1, 0.9, 0.4, 0.2, 0.8])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda acc: dpm.private_accuracy_score(Y, P, labels=None, accountant=acc),
         "needs the public labels"),
        (lambda acc: dpm.private_accuracy_score(Y, P, labels=[0], accountant=acc),
         "at least two labels"),
        (lambda acc: dpm.private_accuracy_score(Y, P, labels=[0, 0, 1],
                                                accountant=acc), "repeat a label"),
        (lambda acc: dpm.private_accuracy_score(Y, P + 1, labels=[0, 1],
                                                accountant=acc), "outside the public"),
        (lambda acc: dpm.private_accuracy_score(Y, P[:3], labels=[0, 1],
                                                accountant=acc), "same rows"),
        (lambda acc: dpm.private_accuracy_score(Y, P, labels=[0, 1], epsilon=0,
                                                accountant=acc), "epsilon"),
        (lambda acc: dpm.private_f1_score(Y, P, labels=[0, 1, 2], accountant=acc),
         "exactly two labels"),
        (lambda acc: dpm.private_f1_score(Y, P, labels=[0, 1], average="samples",
                                          accountant=acc), "average must be"),
        (lambda acc: dpm.private_roc_auc_score(Y, S, bins=0, accountant=acc),
         "bins must be"),
        (lambda acc: dpm.private_roc_auc_score(Y, S, score_range=None,
                                               accountant=acc), "bounds"),
        (lambda acc: dpm.private_roc_auc_score(Y, S, score_range=(1, 0),
                                               accountant=acc), "lower"),
        (lambda acc: dpm.private_roc_auc_score(Y, np.append(S[:-1], np.nan),
                                               accountant=acc), "NaN"),
        (lambda acc: dpm.private_calibration_curve(Y, S, n_bins=3, accountant=acc),
         "must divide"),
        (lambda acc: dpm.private_roc_auc_score(Y, S, bins=[0.0, 0.5, 0.5, 1.0],
                                               accountant=acc), "increasing"),
        (lambda acc: dpm.private_roc_auc_score(Y, S, bins=[0.0, np.inf],
                                               accountant=acc), "finite"),
        (lambda acc: dpm.private_calibration_curve(Y, S, n_bins=2,
                                                   bins=[0, 0.2, 0.5, 1],
                                                   accountant=acc), "must divide"),
        (lambda acc: dpm.private_r2_score(Y, P, target_bounds=None, accountant=acc),
         "bounds"),
        (lambda acc: dpm.private_r2_score(Y, P, target_bounds=(-1e308, 1e308),
                                          accountant=acc), "width|overflow"),
        (lambda acc: dpm.private_mean_squared_error(
            Y, np.append(P[:-1], np.inf), target_bounds=(0, 1), accountant=acc),
         "NaN or inf"),
        (lambda acc: dpm.private_log_loss(Y, S, labels=None, accountant=acc),
         "needs the public labels"),
        (lambda acc: dpm.private_log_loss(Y, S, labels=[0, 1], eps=0,
                                          accountant=acc), "eps must be"),
        (lambda acc: dpm.private_log_loss(Y, np.column_stack([S, S, S]),
                                          labels=[0, 1], accountant=acc), "shape"),
        (lambda acc: dpm.private_log_loss(Y + 5, S, labels=[0, 1], accountant=acc),
         "outside the public"),
    ],
)  # fmt: skip
def test_invalid_input_is_refused_before_any_charge(call, match):
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises((ValueError, TypeError), match=match):
        call(acc)
    assert acc.total() == (0.0, 0.0)
    assert len(acc.entries) == 0


@pytest.mark.parametrize(
    "call",
    [
        lambda **b: dpm.private_classification_report(Y, P, labels=[0, 1], **b),
        lambda **b: dpm.private_score_histograms(Y, S, **b),
        lambda **b: dpm.private_regression_report(Y, P, target_bounds=(0, 1), **b),
        lambda **b: dpm.private_log_loss(Y, S, labels=[0, 1], **b),
    ],
)
def test_one_release_is_one_charge_of_epsilon_and_delta(call):
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    call(epsilon=0.5, delta=1e-6, accountant=acc, random_state=0)
    assert len(acc.entries) == 1
    assert acc.total() == pytest.approx((0.5, 1e-6))
    with acc:  # the default accountant in effect is charged
        call(epsilon=0.25, random_state=0)
    assert acc.total()[0] == pytest.approx(0.75)


def test_error_bar_matches_the_spread_of_repeated_releases():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 2000)
    p = np.where(rng.random(2000) < 0.8, y, 1 - y)
    runs = [
        dpm.private_accuracy_score(y, p, labels=[0, 1], epsilon=0.05, random_state=s)
        for s in range(300)
    ]
    spread = np.std([r.value for r in runs])
    reported = np.mean([r.std_error for r in runs])
    assert reported == pytest.approx(spread, rel=0.15)


def test_negative_noisy_cells_read_as_zero_and_ratios_stay_in_range():
    # two rows at epsilon 0.01: the noise dominates every cell
    for seed in range(20):
        cm = dpm.private_confusion_matrix([0, 1], [0, 0], labels=[0, 1],
                                          epsilon=0.01, random_state=seed)  # fmt: skip
        assert np.all(cm.confusion_matrix().value >= 0)
        for estimate in (cm.accuracy(), cm.balanced_accuracy()):
            assert 0.0 <= estimate.value <= 1.0
        auc = dpm.private_roc_auc_score([0, 1], [0.2, 0.7], epsilon=0.01,
                                        random_state=seed)  # fmt: skip
        assert 0.0 <= auc.value <= 1.0


def test_dask_inputs_give_the_in_memory_release():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 1000)
    p = np.where(rng.random(1000) < 0.7, y, rng.integers(0, 3, 1000))
    s = rng.random(1000)
    dy, dp, ds = (da.from_array(v, chunks=137) for v in (y, p, s))
    seed = {"random_state": 5}
    table = dpm.private_confusion_matrix(y, p, labels=[0, 1, 2], **seed)
    dask_table = dpm.private_confusion_matrix(dy, dp, labels=[0, 1, 2], **seed)
    np.testing.assert_array_equal(table.counts, dask_table.counts)
    hist = dpm.private_score_histograms(y == 1, s, pos_label=True, **seed)
    dask_hist = dpm.private_score_histograms(dy == 1, ds, pos_label=True, **seed)
    np.testing.assert_array_equal(hist.positive_counts, dask_hist.positive_counts)
    bounds = {"target_bounds": (0, 1)}
    report = dpm.private_regression_report(s, p / 2, **bounds, **seed)
    dask_report = dpm.private_regression_report(ds, dp / 2, **bounds, **seed)
    assert report == dask_report
    prob = rng.dirichlet(np.ones(3), 1000)
    loss = dpm.private_log_loss(y, prob, labels=[0, 1, 2], **seed)
    dprob = da.from_array(prob, chunks=(137, 3))
    dask_loss = dpm.private_log_loss(dy, dprob, labels=[0, 1, 2], **seed)
    assert loss == dask_loss
    binary = dpm.private_log_loss(y == 1, s, labels=[0, 1], **seed)
    dask_binary = dpm.private_log_loss((dy == 1).astype(int), ds, labels=[0, 1], **seed)
    assert binary == dask_binary


def test_dask_log_loss_drops_a_row_with_an_unknown_label_by_itself():
    # in memory such a row is refused before the charge; read after the
    # charge, it is dropped alone: the release is that of the other rows
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 300)
    prob = rng.random(300)
    seed = {"random_state": 1, "epsilon": 1e6}
    kept = dpm.private_log_loss(y, prob, labels=[0, 1], **seed)
    y_bad = np.append(y, 7).astype(float)
    prob_bad = np.append(prob, 0.5)
    dropped = dpm.private_log_loss(
        da.from_array(y_bad, chunks=50),
        da.from_array(prob_bad, chunks=50),
        labels=[0, 1],
        **seed,
    )
    assert dropped == kept


@pytest.mark.parametrize(
    "call",
    [
        lambda y, acc: dpm.private_confusion_matrix(
            y, y, labels=["a", "b"], accountant=acc
        ),
        lambda y, acc: dpm.private_roc_auc_score(
            y, y.astype(float), pos_label="b", accountant=acc
        ),
    ],
)
def test_dask_labels_that_are_not_numbers_are_refused_before_the_charge(call):
    # Dask labels are read as numbers (float64); a label set or pos_label
    # that is not a number matches no row, so the release was charged and
    # counted nothing (every row dropped, AUC 1/2). Labels are public: the
    # mismatch is refused before the charge, as in memory.
    da = pytest.importorskip("dask.array")
    y = da.from_array(np.array([0, 1, 1, 0] * 50), chunks=50)
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(ValueError, match="numbers"):
        call(y, acc)
    assert acc.total() == (0.0, 0.0)


@pytest.mark.parametrize(
    "y_true, pos_label",
    [(np.array(["a", "b"] * 50), 1), (np.array([0, 1] * 50), "1")],
)
def test_a_pos_label_of_another_type_than_the_labels_is_refused_for_free(
    y_true, pos_label
):
    # string labels with the default pos_label=1 matched no row: the charge
    # bought an AUC of exactly 1/2 (scikit-learn refuses such a call)
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(ValueError, match="pos_label"):
        dpm.private_roc_auc_score(
            y_true, np.linspace(0, 1, 100), pos_label=pos_label, accountant=acc
        )
    assert acc.total() == (0.0, 0.0)
