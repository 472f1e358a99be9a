"""Consistency: as ε grows, every estimator becomes its non-private counterpart.

Issue 27, item 1. Each case below fits one public estimator, at its defaults
where it has usable ones, on data as a user has it before anyone prepared it:
unscaled columns from 1e-3 to 1e5, a lognormal, a zero-inflated (85 % zeros)
and a 0/1 column (``tests/_consistency_data.py``), and scikit-learn's bundled
breast-cancer and (unscaled) diabetes sets. Three properties are checked:

1. at ε = 1e6 (δ at its default) the output is within a stated tolerance of
   the scikit-learn or numpy counterpart: accuracy within 0.5 points, R²
   within 0.01, statistics within 0.1 % relative or one rank, encoder
   categories exactly. Where the estimator's definition differs from the
   counterpart's, the case compares with the counterpart of the same
   definition and says why;
2. the error is non-increasing on average over ε ∈ {0.3, 1, 3, 10, 100}
   (see `test_error_does_not_grow_with_epsilon` for the rule);
3. a classifier's mean accuracy is never below the majority rate at any ε
   of that ladder (a silent collapse).

Cases that fail today are marked ``xfail(strict=True)`` with the measured
figure and the work expected to fix them, so that the fix flips them.
"""

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from _consistency_data import (
    BLOBS_BOUNDS,
    QUANTILES,
    SYNTHETIC_BOUNDS,
    SYNTHETIC_NORM,
    WIDTH,
    accuracy_gap,
    best_candidate_error,
    bin_edges_error,
    blobs,
    breast_cancer,
    categorical_column,
    categories_error,
    chose_the_same,
    diabetes,
    dwork_lei_error,
    features,
    histogram_error,
    iqr_error,
    joint_histogram_error,
    kmeans_cost_error,
    mean_error,
    median_error,
    minmax_bounds_error,
    nb_accuracy_gap,
    nb_statistics_error,
    pca_error,
    quantiles_error,
    r2_gap,
    robust_scaler_error,
    standard_scaler_error,
    standardized_breast_cancer,
    standardized_classification,
    standardized_regression,
    svt_bounds_error,
    synthetic_classification,
    synthetic_regression,
    upper_clip_quantile_error,
)
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from test_common import public_estimator_classes
from threadpoolctl import threadpool_limits

import skdp
from skdp.ensemble._hist_gradient_boosting._settings import resolved_setting

#: ε at which the output must have converged.
LARGE_EPSILON = 1e6
#: The ε ladder of the monotonicity and majority-rate checks.
EPSILONS = (0.3, 1.0, 3.0, 10.0, 100.0)


def budget():
    """A budget no fit of this file exhausts (δ = 0.5 covers every default)."""
    return skdp.BudgetAccountant(1e9, 0.5)


@dataclass(frozen=True)
class Case:
    """One estimator configuration, its data and its distance to the target.

    ``make(epsilon, seed)`` returns the unfitted estimator; ``data()``
    returns ``(X, y)`` (``y`` None for transformers); ``error(est, X, y)``
    is the distance of the fitted estimator to its counterpart, which must
    be at most ``tol`` at ε = 1e6. ``converge_xfail`` / ``monotone_xfail``
    / ``majority_xfail`` hold the reason of a known failure of a property.
    ``converge_seeds`` fits are checked at ε = 1e6 (all must pass), and
    ``seeds`` per ε of the ladder (fewer where fits are slow).
    """

    id: str
    make: Callable
    data: Callable
    error: Callable
    tol: float
    converge_xfail: str | None = None
    monotone_xfail: str | None = None
    majority_xfail: str | None = None
    seeds: int = 20
    converge_seeds: int = 5

    def fitted(self, epsilon, seed):
        """The estimator fitted at ``epsilon`` with ``seed``, fitted once.

        The monotonicity and the majority-rate checks read the same fits.
        """
        key = (self.id, epsilon, seed)
        if key not in _FITS:
            X, y = self.data()
            est = self.make(epsilon, seed)
            _FITS[key] = est.fit(X) if y is None else est.fit(X, y)
        return _FITS[key]

    def fit(self, epsilon, seed):
        """The distance to the counterpart of the fit at ``epsilon``, ``seed``."""
        X, y = self.data()
        return self.error(self.fitted(epsilon, seed), X, y)


_FITS = {}


LINEAR_SCALING = "fixed by the linear models' private per-feature scaling"


def _boosting_reference(est, X, y, binned=None):
    """scikit-learn's histogram boosting with the private model's trees, on
    its bins (``binned``) or on X with as many bins. (The limit on the same
    bins is tested in ``tests/ensemble/test_gradient_boosting.py``: its
    reference moves with the released bins, so it is no fixed target for
    the ε ladder.)"""
    classifier = hasattr(est, "classes_")
    kind = (
        HistGradientBoostingClassifier if classifier else HistGradientBoostingRegressor
    )
    names = ("max_iter", "learning_rate", "max_bins")
    params = {k: resolved_setting(est, k) for k in names}  # "auto": public rule
    params["max_depth"] = est.max_depth
    params["max_features"] = est.max_features  # features sampled per node
    if binned is not None:
        del params["max_bins"]
    with threadpool_limits(1):
        ref = kind(
            **params,
            min_samples_leaf=1,
            early_stopping=False,
            l2_regularization=est.l2_regularization,
        ).fit(X if binned is None else binned, y)
    return ref.score(X if binned is None else binned, y), 100 if classifier else 1


_RAW_REFERENCE = {}


def _reference_gap(key, reference, est, X, y):
    """``est``'s score gap to scikit-learn's boosting with ``reference``'s
    trees on X (:func:`_boosting_reference`), computed once per ``key``."""
    if key not in _RAW_REFERENCE:
        _RAW_REFERENCE[key] = _boosting_reference(reference, X, y)
    score, unit = _RAW_REFERENCE[key]
    return abs(est.score(X, y) - score) * unit


def raw_boosting_gap(est, X, y):
    """Accuracy (points) or R² gap to scikit-learn's boosting on X with as
    many bins and the same trees (a fixed target, computed once)."""
    return _reference_gap((id(X), type(est).__name__), est, est, X, y)


def _gini_decrease(counts):
    """A tree's Gini impurity decrease from its root to its leaves, leaf by
    leaf (``counts``: exact, of shape (n_leaves, n_classes))."""

    def gini(row):
        return 1.0 - np.sum((row / row.sum()) ** 2) if row.sum() > 0 else 0.0

    total = counts.sum()
    below = sum(leaf.sum() / total * gini(leaf) for leaf in counts)
    return gini(counts.sum(axis=0)) - below


def random_trees_gap(est, X, y):
    """Largest gap, in hundredths of probability, between the class
    probabilities of the private random trees on their training rows and
    those of the same trees with exact leaf frequencies, weighted by their
    exact Gini impurity decreases (a forest's public rule for the weights,
    applied to the exact counts; one tree weighs 1): the trees' splits come
    from the bounds and the random source only, so the counterpart at
    ε → ∞ is the same trees counted without noise (every leaf a training row
    reaches holds that row, so each frequency is defined)."""
    from skdp.tree._random_tree import leaf_indices

    X = np.asarray(X, dtype=float)
    features, thresholds, _, _ = est._stacked_trees()
    leaves = leaf_indices(X, features, thresholds)
    codes = np.searchsorted(est.classes_, y)
    n_leaves, n_classes = features.shape[1] + 1, len(est.classes_)
    per_tree, decreases = [], []
    for tree_leaves in leaves:
        counts = np.zeros((n_leaves, n_classes))
        np.add.at(counts, (tree_leaves, codes), 1)
        reached = counts[tree_leaves]
        per_tree.append(reached / reached.sum(axis=1, keepdims=True))
        decreases.append(_gini_decrease(counts))
    total = np.sum(decreases)  # no tree with a decrease: all weigh the same
    n_trees = len(decreases)
    weights = np.asarray(decreases) / total if total > 0 else np.ones(n_trees) / n_trees
    exact = np.tensordot(weights, np.asarray(per_tree), axes=1)
    return np.abs(est.predict_proba(X) - exact).max() / 0.01


def default_boosting_gap(est, X, y):
    """Accuracy gap (points) of the classifier at its defaults to
    scikit-learn's boosting with the trees ``"auto"`` grows from ε = 1000
    on (:data:`~skdp.ensemble._hist_gradient_boosting._settings.TREES_FROM_EPSILON`),
    on X with as many bins: below that ε the default is cyclic boosting, a
    private additive model, so the ladder checks that it approaches the
    target without moving away as ε grows."""
    large = skdp.PrivateHistGradientBoostingClassifier(LARGE_EPSILON)
    return _reference_gap((id(X), "defaults"), large, est, X, y)


# every feature per node: sampled features (the default 0.3) converge to
# scikit-learn's max_features only in distribution (other random draws)
BOOSTING_SMALL = {"max_iter": 10, "max_features": 1.0, "boosting": "trees"}


def case(id, make, data, error, tol=1.0, **kwargs):
    return Case(id, make, data, error, tol, **kwargs)


CASES = [
    # --- private bounds --------------------------------------------------
    case(
        "SVTClipSelector-synthetic",
        lambda e, s: skdp.SVTClipSelector(e, accountant=budget(), random_state=s),
        features,
        svt_bounds_error,
        converge_seeds=10,
    ),
    case(
        "SVTClipSelector-breast_cancer",
        lambda e, s: skdp.SVTClipSelector(e, accountant=budget(), random_state=s),
        lambda: (breast_cancer()[0], None),
        svt_bounds_error,
        seeds=10,
        converge_seeds=10,
    ),
    case(
        "DPClipper-svt-synthetic",
        lambda e, s: skdp.DPClipper(epsilon=e, accountant=budget(), random_state=s),
        features,
        svt_bounds_error,
        converge_seeds=10,
    ),
    case(
        "DPClipper-quantile-synthetic",
        lambda e, s: skdp.DPClipper(
            method="quantile", epsilon=e, accountant=budget(), random_state=s
        ),
        features,
        upper_clip_quantile_error,
    ),
    case(
        "PrivateMinMaxScaler-synthetic",
        lambda e, s: skdp.PrivateMinMaxScaler(e, accountant=budget(), random_state=s),
        features,
        minmax_bounds_error,
        converge_seeds=10,
    ),
    # --- means and scales ------------------------------------------------
    case(
        "PrivateMean-synthetic",
        lambda e, s: skdp.PrivateMean(e, accountant=budget(), random_state=s),
        features,
        mean_error,
    ),
    case(
        "PrivateMean-public_bounds-synthetic",
        lambda e, s: skdp.PrivateMean(
            e, bounds=SYNTHETIC_BOUNDS, accountant=budget(), random_state=s
        ),
        features,
        mean_error,
    ),
    case(
        "PrivateMean-breast_cancer",
        lambda e, s: skdp.PrivateMean(e, accountant=budget(), random_state=s),
        lambda: (breast_cancer()[0], None),
        mean_error,
        seeds=10,
    ),
    case(
        "PrivateStandardScaler-synthetic",
        lambda e, s: skdp.PrivateStandardScaler(e, accountant=budget(), random_state=s),
        features,
        standard_scaler_error,
    ),
    case(
        "PrivateStandardScaler-breast_cancer",
        lambda e, s: skdp.PrivateStandardScaler(e, accountant=budget(), random_state=s),
        lambda: (breast_cancer()[0], None),
        standard_scaler_error,
        seeds=10,
    ),
    # --- quantiles, medians, IQR -------------------------------------------
    case(
        "PrivateQuantile-joint-synthetic",
        lambda e, s: skdp.PrivateQuantile(
            QUANTILES,
            epsilon=e,
            bounds=SYNTHETIC_BOUNDS,
            accountant=budget(),
            random_state=s,
        ),
        features,
        quantiles_error,
    ),
    case(
        "PrivateQuantile-default-synthetic",
        lambda e, s: skdp.PrivateQuantile(
            QUANTILES, epsilon=e, accountant=budget(), random_state=s
        ),
        features,
        quantiles_error,
        seeds=10,
        converge_seeds=2,
    ),
    case(
        "PrivateQuantile-permute_and_flip-synthetic",
        lambda e, s: skdp.PrivateQuantile(
            QUANTILES,
            epsilon=e,
            bounds=SYNTHETIC_BOUNDS,
            method="permute_and_flip",
            accountant=budget(),
            random_state=s,
        ),
        features,
        best_candidate_error,
    ),
    case(
        "PTRMedian-synthetic",
        lambda e, s: skdp.PTRMedian(
            e,
            bounds=SYNTHETIC_BOUNDS,
            proposed_sensitivity=WIDTH / 1000,
            accountant=budget(),
            random_state=s,
        ),
        features,
        median_error,
    ),
    case(
        "SmoothSensitivityMedian-laplace-synthetic",
        lambda e, s: skdp.SmoothSensitivityMedian(
            e, bounds=SYNTHETIC_BOUNDS, accountant=budget(), random_state=s
        ),
        features,
        median_error,
    ),
    case(
        "SmoothSensitivityMedian-cauchy-synthetic",
        lambda e, s: skdp.SmoothSensitivityMedian(
            e,
            bounds=SYNTHETIC_BOUNDS,
            noise="cauchy",
            accountant=budget(),
            random_state=s,
        ),
        features,
        median_error,
    ),
    case(
        "IQRScale-synthetic",
        lambda e, s: skdp.IQRScale(e, accountant=budget(), random_state=s),
        features,
        lambda est, X, y: iqr_error(est.scale_, X),
    ),
    case(
        "IQRScale-dwork_lei-synthetic",
        lambda e, s: skdp.IQRScale(
            e, method="dwork_lei", accountant=budget(), random_state=s
        ),
        features,
        dwork_lei_error,
    ),
    case(
        "PrivateRobustScaler-synthetic",
        lambda e, s: skdp.PrivateRobustScaler(
            e, bounds=SYNTHETIC_BOUNDS, accountant=budget(), random_state=s
        ),
        features,
        robust_scaler_error,
    ),
    case(
        "PrivateRobustScaler-ptr-synthetic",
        lambda e, s: skdp.PrivateRobustScaler(
            e,
            bounds=SYNTHETIC_BOUNDS,
            proposed_sensitivity=WIDTH / 1000,
            accountant=budget(),
            random_state=s,
        ),
        features,
        robust_scaler_error,
    ),
    # --- histograms, bins, categories -------------------------------------
    case(
        "PrivateHistogram-synthetic",
        lambda e, s: skdp.PrivateHistogram(
            epsilon=e, bounds=SYNTHETIC_BOUNDS, accountant=budget(), random_state=s
        ),
        features,
        histogram_error,
    ),
    case(
        "PrivateJointHistogram-synthetic",
        lambda e, s: skdp.PrivateJointHistogram(
            (8, 8),
            epsilon=e,
            bounds=(SYNTHETIC_BOUNDS[0][4:], SYNTHETIC_BOUNDS[1][4:]),
            accountant=budget(),
            random_state=s,
        ),
        lambda: (features()[0][:, 4:], None),
        joint_histogram_error,
    ),
    case(
        "PrivateKMeans-blobs",
        lambda e, s: skdp.PrivateKMeans(
            5, epsilon=e, bounds=BLOBS_BOUNDS, accountant=budget(), random_state=s
        ),
        blobs,
        kmeans_cost_error,
        tol=0.01,
        seeds=10,
    ),
    case(
        "PrivateKBinsDiscretizer-quantile-synthetic",
        lambda e, s: skdp.PrivateKBinsDiscretizer(
            epsilon=e, bounds=SYNTHETIC_BOUNDS, accountant=budget(), random_state=s
        ),
        features,
        bin_edges_error,
    ),
    case(
        "PrivateOneHotEncoder",
        lambda e, s: skdp.PrivateOneHotEncoder(
            epsilon=e, accountant=budget(), random_state=s
        ),
        categorical_column,
        categories_error,
        tol=0,
    ),
    # --- PCA ---------------------------------------------------------------
    case(
        "PrivatePCA-synthetic",
        lambda e, s: skdp.PrivatePCA(2, epsilon=e, accountant=budget(), random_state=s),
        features,
        pca_error,
    ),
    case(
        "PrivatePCA-stated_norm-synthetic",
        lambda e, s: skdp.PrivatePCA(
            2,
            epsilon=e,
            max_norm=SYNTHETIC_NORM,
            accountant=budget(),
            random_state=s,
        ),
        features,
        pca_error,
    ),
    case(
        "PrivatePCA-stated_norm-diabetes",
        lambda e, s: skdp.PrivatePCA(
            2, epsilon=e, max_norm=500.0, accountant=budget(), random_state=s
        ),
        lambda: (diabetes()[0], None),
        pca_error,
    ),
    case(
        "PrivatePCA-stated_norm-standardized-breast_cancer",
        lambda e, s: skdp.PrivatePCA(
            2, epsilon=e, max_norm=25.0, accountant=budget(), random_state=s
        ),
        lambda: (standardized_breast_cancer(), None),
        pca_error,
    ),
    # --- classifiers -------------------------------------------------------
    case(
        "PrivateGaussianNB-synthetic",
        lambda e, s: skdp.PrivateGaussianNB(
            e, classes=[0, 1], accountant=budget(), random_state=s
        ),
        synthetic_classification,
        nb_accuracy_gap,
        tol=0.5,
        seeds=10,
    ),
    case(
        "PrivateGaussianNB-breast_cancer",
        lambda e, s: skdp.PrivateGaussianNB(
            e, classes=[0, 1], accountant=budget(), random_state=s
        ),
        breast_cancer,
        nb_accuracy_gap,
        tol=0.5,
        seeds=10,
    ),
    case(
        "PrivateGaussianNB-statistics-synthetic",
        lambda e, s: skdp.PrivateGaussianNB(
            e, classes=[0, 1], accountant=budget(), random_state=s
        ),
        synthetic_classification,
        lambda est, X, y: nb_statistics_error(est, X, y) / 1e-3,
    ),
    case(
        "PrivateHistGradientBoostingClassifier-synthetic",
        lambda e, s: skdp.PrivateHistGradientBoostingClassifier(
            e, classes=[0, 1], accountant=budget(), random_state=s, **BOOSTING_SMALL
        ),
        synthetic_classification,
        raw_boosting_gap,
        tol=1.0,  # the private quantile bins are not scikit-learn's
        seeds=4,
        converge_seeds=2,
    ),
    case(
        "PrivateHistGradientBoostingClassifier-defaults-synthetic",
        lambda e, s: skdp.PrivateHistGradientBoostingClassifier(
            e, classes=[0, 1], accountant=budget(), random_state=s
        ),
        synthetic_classification,
        default_boosting_gap,
        tol=1.0,  # other bins, and other sampled features per node
        seeds=4,
        converge_seeds=2,
    ),
    case(
        "PrivateHistGradientBoostingRegressor-synthetic",
        lambda e, s: skdp.PrivateHistGradientBoostingRegressor(
            e, accountant=budget(), random_state=s, **BOOSTING_SMALL
        ),
        synthetic_regression,
        raw_boosting_gap,
        tol=0.03,  # other bins; and near-tie splits (scikit-learn sums in float32)
        seeds=4,
        converge_seeds=2,
    ),
    case(
        "PrivateHistGradientBoostingRegressor-diabetes",
        lambda e, s: skdp.PrivateHistGradientBoostingRegressor(
            e, accountant=budget(), random_state=s
        ),
        diabetes,
        raw_boosting_gap,
        tol=0.03,
        seeds=5,
        converge_seeds=2,
        converge_xfail=(
            "training R² 0.044-0.056 from scikit-learn's boosting with as many "
            "bins at ε=1e6 (2 seeds): 442 rows, the private quantile bins are "
            "not HGB's; on the same bins the limit holds "
            "(tests/ensemble/test_gradient_boosting.py)"
        ),
    ),
    case(
        "PrivateRandomForestClassifier-synthetic",
        lambda e, s: skdp.PrivateRandomForestClassifier(
            epsilon=e, classes=[0, 1], accountant=budget(), random_state=s
        ),
        synthetic_classification,
        random_trees_gap,
        seeds=5,
        converge_seeds=2,
    ),
    case(
        "PrivateDecisionTreeClassifier-breast_cancer",
        lambda e, s: skdp.PrivateDecisionTreeClassifier(
            e, classes=[0, 1], accountant=budget(), random_state=s
        ),
        breast_cancer,
        random_trees_gap,
        seeds=5,
        converge_seeds=2,
    ),
    case(
        "PrivateLogisticRegression-synthetic",
        lambda e, s: skdp.PrivateLogisticRegression(
            e, classes=[0, 1], accountant=budget(), random_state=s
        ),
        synthetic_classification,
        accuracy_gap,
        tol=0.5,
        seeds=10,
        converge_seeds=2,
    ),
    case(
        "PrivateLogisticRegression-breast_cancer",
        lambda e, s: skdp.PrivateLogisticRegression(
            e, classes=[0, 1], accountant=budget(), random_state=s
        ),
        breast_cancer,
        accuracy_gap,
        tol=0.5,
        seeds=10,
        converge_seeds=2,
    ),
    case(
        "PrivateLogisticRegression-standardized-breast_cancer",
        lambda e, s: make_pipeline(
            StandardScaler(),
            skdp.PrivateLogisticRegression(
                e, classes=[0, 1], accountant=budget(), random_state=s
            ),
        ),
        breast_cancer,
        accuracy_gap,
        tol=0.5,
        seeds=10,
        converge_seeds=2,
    ),
    case(
        "SampleAggregateEstimator-classifier-standardized",
        lambda e, s: skdp.SampleAggregateEstimator(
            LogisticRegression(),
            classes=[0, 1],
            epsilon=e,
            accountant=budget(),
            random_state=s,
        ),
        standardized_classification,
        accuracy_gap,
        tol=0.5,
        seeds=5,
        converge_seeds=2,
    ),
    case(
        "NoisyMaxSearchCV-standardized",
        lambda e, s: skdp.NoisyMaxSearchCV(
            LogisticRegression(),
            {"C": [1e-5, 1.0]},
            epsilon=e,
            n_blocks=10,
            refit=False,
            accountant=budget(),
            random_state=s,
        ),
        standardized_classification,
        chose_the_same,
        tol=0,
        seeds=5,
        converge_seeds=2,
    ),
    # --- regressors --------------------------------------------------------
    case(
        "PrivateLinearRegression-synthetic",
        lambda e, s: skdp.PrivateLinearRegression(
            e, accountant=budget(), random_state=s
        ),
        synthetic_regression,
        r2_gap,
        tol=0.01,
    ),
    case(
        "PrivateLinearRegression-diabetes",
        lambda e, s: skdp.PrivateLinearRegression(
            e, accountant=budget(), random_state=s
        ),
        diabetes,
        r2_gap,
        tol=0.01,
    ),
    case(
        "PrivateLinearRegression-stated_norm-synthetic",
        lambda e, s: skdp.PrivateLinearRegression(
            e,
            data_norm=SYNTHETIC_NORM,
            target_bounds=(-100, 1000),
            accountant=budget(),
            random_state=s,
        ),
        synthetic_regression,
        r2_gap,
        tol=0.01,
        converge_xfail=(
            "PrivateLinearRegression(data_norm=1.02e6): R² 0.4145 (5 seeds, "
            "Laplace plan at ε=1e6; 0.404 with the Gaussian one) against 0.903. "
            "Not noise: a stated data_norm alone keeps the rows as given, and "
            "the exact sums hold a row on a grid of data_norm * sqrt(2) / 2**16 "
            "(22 units here), so the 5e-3 column and the 0/1 column are 0 in "
            "every row (least squares on the rows so rounded, noise-free: "
            "0.428); on an exact grid the 5e-3 column's centred energy in the "
            "Gram, 1.4e-15 in its units, would still be 1e-10 of the noise "
            "(sd 1.1e-5 at ε=1e6). By design: a stated data_norm means rows "
            "in their own units (docs/linear_models.rst, 'When to state "
            "data_norm'); the fit names the lost features and the fix "
            "(tests/linear_model/test_stated_norm_warning.py), and the "
            "default, which scales each feature privately, converges"
        ),
    ),
    case(
        "PrivateLinearRegression-stated_norm-standardized",
        lambda e, s: skdp.PrivateLinearRegression(
            e,
            data_norm=40.0,
            target_bounds=(-100, 1000),
            accountant=budget(),
            random_state=s,
        ),
        standardized_regression,
        r2_gap,
        tol=0.01,
    ),
    case(
        "SampleAggregateEstimator-regressor-standardized",
        lambda e, s: skdp.SampleAggregateEstimator(
            LinearRegression(),
            output_bounds=(-100, 200),
            epsilon=e,
            accountant=budget(),
            random_state=s,
        ),
        standardized_regression,
        r2_gap,
        tol=0.01,
        seeds=5,
        converge_seeds=2,
    ),
]


def estimator_class(case):
    est = case.make(1.0, 0)
    return type(est.steps[-1][1] if hasattr(est, "steps") else est).__name__


def test_every_public_estimator_has_a_consistency_case():
    covered = {estimator_class(case) for case in CASES}
    assert public_estimator_classes() <= covered, (
        "add a consistency case for "
        f"{sorted(public_estimator_classes() - covered)} to CASES"
    )


def with_xfail(reason_of):
    return [
        pytest.param(
            case,
            id=case.id,
            marks=(
                [pytest.mark.xfail(strict=True, reason=reason_of(case))]
                if reason_of(case)
                else []
            ),
        )
        for case in CASES
    ]


@pytest.mark.filterwarnings("ignore")  # PTR refusals, noise-dominated notes
@pytest.mark.parametrize("case", with_xfail(lambda case: case.converge_xfail))
def test_converges_to_the_counterpart(case):
    # several seeds: a release whose noise does not shrink with ε (as the
    # bound searches' overshoot) can pass on one seed by luck
    errors = [case.fit(LARGE_EPSILON, seed) for seed in range(case.converge_seeds)]
    assert max(errors) <= case.tol, (
        f"{case.id}: {np.round(errors, 4)} > {case.tol} at ε = 1e6"
    )


def mean_log_errors(case):
    """Per ε of the ladder: mean and standard error of ``log1p(error)``.

    ``log1p`` of an error in units of the tolerance: a collapsed release can
    be off by 10⁶ tolerances, and one such seed would otherwise make the
    spread, hence the allowance, too wide to see anything else.
    """
    seeds = range(case.seeds)
    errors = np.log1p([[case.fit(e, seed) for seed in seeds] for e in EPSILONS])
    return errors.mean(axis=1), errors.std(axis=1, ddof=1) / np.sqrt(case.seeds)


def allowed_rise(mean, se, next_se, tol):
    """The largest later mean that is not a degradation from ``mean``.

    Three standard errors of the difference of the two means (a one-sided
    z-test at about 0.1 %), and never less than a rise of the error itself
    by ``tol`` (a change inside the convergence tolerance is not a
    degradation). The means are of ``log1p(error)``.
    """
    by_spread = mean + 3 * np.hypot(se, next_se)
    by_tolerance = np.log1p(np.expm1(mean) + tol)
    return max(by_spread, by_tolerance)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", with_xfail(lambda case: case.monotone_xfail))
def test_error_does_not_grow_with_epsilon(case):
    """The mean error over seeds is non-increasing along the ε ladder.

    Every larger ε is compared with every smaller one (`allowed_rise`), so
    a slow drift is caught as well as a step. With fixed seeds the outcome
    is reproducible. Sized on the seeds' spread: a PrivateMean whose
    effective ε falls back to 1 by ε = 100 is caught (7.2 against an
    allowance of 6.89), and so, just, is a logistic model on standardized
    data whose effective ε drops to 0.5 at ε = 10 (1.60 against 1.59;
    checked by replacing ``make`` in a copy of a case). A model that swings
    between one class and the other from seed to seed (the unscaled
    logistic regression of issue 27) has too wide a spread for this check;
    the convergence check at ε = 1e6 and the majority-rate
    check catch it.
    """
    means, errors = mean_log_errors(case)
    for i, j in itertools.combinations(range(len(EPSILONS)), 2):
        limit = allowed_rise(means[i], errors[i], errors[j], case.tol)
        assert means[j] <= limit, (
            f"{case.id}: mean log1p(error) {means[i]:.3g} at ε = {EPSILONS[i]} "
            f"rises to {means[j]:.3g} at ε = {EPSILONS[j]} (allowed "
            f"{limit:.3g}); means over the ladder {np.round(means, 3)}"
        )


def is_classifier_case(case):
    return case.error in (accuracy_gap, nb_accuracy_gap)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    "case",
    [
        param
        for param in with_xfail(lambda case: case.majority_xfail)
        if is_classifier_case(param.values[0])
    ],
)
def test_classifier_is_never_below_the_majority_rate(case):
    """At every ε of the ladder, the mean accuracy is at least the majority
    rate (within three standard errors over the seeds, or 0.5 point): below
    it, a constant prediction stated without any data beats the private
    model, which is the silent collapse of issue 27."""
    X, y = case.data()
    majority = np.bincount(y).max() / len(y)
    for epsilon in EPSILONS:
        scores = [case.fitted(epsilon, s).score(X, y) for s in range(case.seeds)]
        slack = max(3 * np.std(scores, ddof=1) / np.sqrt(case.seeds), 0.005)
        assert np.mean(scores) >= majority - slack, (
            f"{case.id}: mean accuracy {np.mean(scores):.3f} at ε = {epsilon} "
            f"is below the majority rate {majority:.3f} (slack {slack:.3f})"
        )
