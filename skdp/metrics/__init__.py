"""Private evaluation metrics: each one release, charged before the labels are read.

Classification metrics come from one noisy confusion matrix, ranking metrics
(ROC, precision-recall, calibration) from noisy histograms of the scores on
public bins, regression metrics from exact clipped sums with public bounds.
Every function returns a :class:`PrivateEstimate` ``(value, std_error)``;
see :ref:`evaluating`.
"""

from skdp.metrics._classification import (
    private_accuracy_score,
    private_balanced_accuracy_score,
    private_confusion_matrix,
    private_f1_score,
    private_precision_recall_fscore_support,
    private_precision_score,
    private_recall_score,
)
from skdp.metrics._classification_report import private_classification_report
from skdp.metrics._confusion import PrivateConfusionMatrix
from skdp.metrics._histograms import PrivateScoreHistograms
from skdp.metrics._log_loss import private_log_loss
from skdp.metrics._ranking import (
    private_average_precision_score,
    private_calibration_curve,
    private_precision_recall_curve,
    private_roc_auc_score,
    private_roc_curve,
    private_score_histograms,
)
from skdp.metrics._regression import (
    private_explained_variance_score,
    private_mean_absolute_error,
    private_mean_squared_error,
    private_r2_score,
    private_regression_report,
)
from skdp.metrics._release import PrivateEstimate
from skdp.metrics._scorer import PrivateScorer, make_private_scorer

__all__ = [
    "PrivateConfusionMatrix",
    "PrivateEstimate",
    "PrivateScoreHistograms",
    "PrivateScorer",
    "make_private_scorer",
    "private_accuracy_score",
    "private_average_precision_score",
    "private_balanced_accuracy_score",
    "private_calibration_curve",
    "private_classification_report",
    "private_confusion_matrix",
    "private_explained_variance_score",
    "private_f1_score",
    "private_log_loss",
    "private_mean_absolute_error",
    "private_mean_squared_error",
    "private_precision_recall_curve",
    "private_precision_recall_fscore_support",
    "private_precision_score",
    "private_r2_score",
    "private_recall_score",
    "private_regression_report",
    "private_roc_auc_score",
    "private_roc_curve",
    "private_score_histograms",
]
