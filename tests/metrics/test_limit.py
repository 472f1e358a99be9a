"""Every private metric converges to scikit-learn's as epsilon grows.

One parametrised test over all metrics: with epsilon = 1e7 the noise on each
released count or sum is below 1e-6, so the private value must equal
scikit-learn's on the same rows to 1e-5. Scores sit at bin centres and the
targets inside their bounds, where binning and clipping change nothing.
"""

import numpy as np
import pytest
from sklearn import metrics as skm

from skdp import metrics as dpm

HUGE = {"epsilon": 1e7, "random_state": 0}
RNG = np.random.default_rng(0)
N = 600

# multiclass labels (strings: labels need not be numbers)
LABELS = np.array(["a", "b", "c"])
Y3 = LABELS[RNG.integers(0, 3, N)]
P3 = np.where(RNG.random(N) < 0.7, Y3, LABELS[RNG.integers(0, 3, N)])
# binary labels and scores on the centres of 100 bins over [0, 1]
Y2 = RNG.integers(0, 2, N)
P2 = np.where(RNG.random(N) < 0.8, Y2, 1 - Y2)
SCORE = np.clip(np.round(50 + 20 * (Y2 - 0.5) + RNG.normal(0, 20, N)), 0, 99) + 0.5
SCORE = SCORE / 100
# regression targets inside the bounds (0, 10)
YR = RNG.uniform(0, 10, N)
PR = np.clip(YR + RNG.normal(0, 1.5, N), 0, 10)
PROB3 = RNG.dirichlet(np.ones(3), N) * 0.9 + 0.1 / 3


def _value(estimate):
    return np.asarray(estimate.value, dtype=float)


CASES = {
    "accuracy": (
        lambda: dpm.private_accuracy_score(Y3, P3, labels=LABELS, **HUGE),
        lambda: skm.accuracy_score(Y3, P3),
    ),
    "balanced_accuracy": (
        lambda: dpm.private_balanced_accuracy_score(Y3, P3, labels=LABELS, **HUGE),
        lambda: skm.balanced_accuracy_score(Y3, P3),
    ),
    "confusion_matrix": (
        lambda: dpm.private_confusion_matrix(
            Y3, P3, labels=LABELS[::-1], **HUGE
        ).confusion_matrix(),
        lambda: skm.confusion_matrix(Y3, P3, labels=LABELS[::-1]),
    ),
    "precision_binary": (
        lambda: dpm.private_precision_score(Y2, P2, labels=[0, 1], **HUGE),
        lambda: skm.precision_score(Y2, P2),
    ),
    "recall_binary_pos0": (
        lambda: dpm.private_recall_score(Y2, P2, labels=[0, 1], pos_label=0, **HUGE),
        lambda: skm.recall_score(Y2, P2, pos_label=0),
    ),
    "f1_binary": (
        lambda: dpm.private_f1_score(Y2, P2, labels=[0, 1], **HUGE),
        lambda: skm.f1_score(Y2, P2),
    ),
    **{
        f"prfs_{average}_{k}": (
            lambda average=average, k=k: dpm.private_precision_recall_fscore_support(
                Y3, P3, labels=LABELS, average=average, **HUGE
            )[k],
            lambda average=average, k=k: skm.precision_recall_fscore_support(
                Y3, P3, labels=LABELS, average=average
            )[k],
        )
        for average in (None, "micro", "macro", "weighted")
        for k in (0, 1, 2)
    },
    "support": (
        lambda: dpm.private_precision_recall_fscore_support(
            Y3, P3, labels=LABELS, **HUGE
        )[3],
        lambda: skm.precision_recall_fscore_support(Y3, P3, labels=LABELS)[3],
    ),
    "report_weighted_f1": (
        lambda: dpm.private_classification_report(Y3, P3, labels=LABELS, **HUGE)[
            "weighted avg"
        ]["f1-score"],
        lambda: skm.classification_report(Y3, P3, output_dict=True)["weighted avg"][
            "f1-score"
        ],
    ),
    "roc_auc": (
        lambda: dpm.private_roc_auc_score(Y2, SCORE, **HUGE),
        lambda: skm.roc_auc_score(Y2, SCORE),
    ),
    "average_precision": (
        lambda: dpm.private_average_precision_score(Y2, SCORE, **HUGE),
        lambda: skm.average_precision_score(Y2, SCORE),
    ),
    "calibration_prob_true": (
        lambda: dpm.private_calibration_curve(Y2, SCORE, n_bins=5, **HUGE)[0],
        lambda: _calibration()[0],
    ),
    "calibration_prob_pred": (
        lambda: dpm.private_calibration_curve(Y2, SCORE, n_bins=5, **HUGE)[1],
        lambda: _calibration()[1],
    ),
    "mse": (
        lambda: dpm.private_mean_squared_error(YR, PR, target_bounds=(0, 10), **HUGE),
        lambda: skm.mean_squared_error(YR, PR),
    ),
    "mae": (
        lambda: dpm.private_mean_absolute_error(YR, PR, target_bounds=(0, 10), **HUGE),
        lambda: skm.mean_absolute_error(YR, PR),
    ),
    "r2": (
        lambda: dpm.private_r2_score(YR, PR, target_bounds=(0, 10), **HUGE),
        lambda: skm.r2_score(YR, PR),
    ),
    "explained_variance": (
        lambda: dpm.private_explained_variance_score(
            YR, PR, target_bounds=(0, 10), **HUGE
        ),
        lambda: skm.explained_variance_score(YR, PR),
    ),
    "report_r2": (
        lambda: dpm.private_regression_report(YR, PR, target_bounds=(0, 10), **HUGE)[
            "r2"
        ],
        lambda: skm.r2_score(YR, PR),
    ),
    "log_loss": (
        lambda: dpm.private_log_loss(
            Y3, PROB3 / PROB3.sum(1, keepdims=True), labels=LABELS, **HUGE
        ),
        lambda: skm.log_loss(Y3, PROB3 / PROB3.sum(1, keepdims=True), labels=LABELS),
    ),
}


def _calibration():
    from sklearn.calibration import calibration_curve

    return calibration_curve(Y2, SCORE, n_bins=5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_private_metric_matches_scikit_learn_as_epsilon_grows(name):
    private, reference = CASES[name]
    estimate = private()
    np.testing.assert_allclose(_value(estimate), reference(), rtol=1e-5, atol=1e-5)
    # the error bar shrinks with the noise
    assert np.all(np.asarray(estimate.std_error) < 1e-4)


def test_public_edges_tie_nothing_that_equal_bins_would():
    # probabilities piled up near 0 (3 % positives): 100 equal bins tie most
    # rows in the first bin; 100 bins equal on the logit scale do not
    rng = np.random.default_rng(3)
    y = (rng.random(3000) < 0.03).astype(int)
    logit = rng.normal(-6 + 3 * y, 1.5)
    edges = np.concatenate([[0.0], 1 / (1 + np.exp(-np.linspace(-12, 4, 99))), [1.0]])
    centres = (edges[:-1] + edges[1:]) / 2
    bins = np.clip(np.searchsorted(edges, 1 / (1 + np.exp(-logit))) - 1, 0, 99)
    score = centres[bins]  # scores on the bins' centres: binning ties nothing new
    reference = skm.roc_auc_score(y, score)
    logit_bins = dpm.private_roc_auc_score(y, score, bins=edges, **HUGE)
    assert logit_bins.value == pytest.approx(reference, abs=1e-6)
    equal_bins = dpm.private_roc_auc_score(y, score, bins=100, **HUGE)
    assert abs(equal_bins.value - reference) > 0.01


def _unique_points(x, y):
    points = np.round(np.column_stack([x, y]), 6)
    return {tuple(p) for p in points}


def test_private_curves_have_scikit_learns_points_as_epsilon_grows():
    fpr, tpr, _ = dpm.private_roc_curve(Y2, SCORE, **HUGE)
    ref_fpr, ref_tpr, _ = skm.roc_curve(Y2, SCORE, drop_intermediate=False)
    assert _unique_points(fpr.value, tpr.value) == _unique_points(ref_fpr, ref_tpr)
    precision, recall, _ = dpm.private_precision_recall_curve(Y2, SCORE, **HUGE)
    ref_p, ref_r, _ = skm.precision_recall_curve(Y2, SCORE)
    # empty bins repeat a point (their precision is that of the next bin
    # down only where no row is above them: the start, precision 1)
    ours = _unique_points(precision.value, recall.value)
    assert _unique_points(ref_p, ref_r) <= ours
    assert ours - _unique_points(ref_p, ref_r) <= {(1.0, 0.0)}
