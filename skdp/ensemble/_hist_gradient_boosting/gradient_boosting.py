"""Private histogram gradient boosting: the estimators, thin over the stages."""

from collections import deque
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from skdp.accounting import PrivacyCost
from skdp.base import PrivateEstimatorMixin
from skdp.ensemble._hist_gradient_boosting._dask_fit import (
    fit_dask_classifier,
    fit_dask_regressor,
)
from skdp.ensemble._hist_gradient_boosting._docs import write_docstrings
from skdp.ensemble._hist_gradient_boosting._plan import (
    BASELINE_SHARE,
    HISTOGRAM_SHARE,
    check_plan,
    check_run_time,
    keep_planned_classes,
    planned_trees,
    release_shares,
    weights_of_planned_classes,
)
from skdp.ensemble._hist_gradient_boosting._regressor_fit import (
    charge_regressor_plan,
    set_regressor_fitted,
)
from skdp.ensemble._hist_gradient_boosting._settings import (
    resolved_boosting,
    resolved_setting,
)
from skdp.ensemble._hist_gradient_boosting.binning import (
    BinMapper,
    release_private_bins,
    warn_collapsed_bins,
)
from skdp.ensemble._hist_gradient_boosting.cyclic import cyclic_round
from skdp.ensemble._hist_gradient_boosting.grower import (
    TreePlan,
    grow_tree,
    joint_bins,
)
from skdp.ensemble._hist_gradient_boosting.loss import (
    BinaryLogistic,
    MultinomialLogistic,
    RowWeighted,
    SquaredError,
    release_baseline,
    scaled_targets,
)
from skdp.ensemble._hist_gradient_boosting.predictor import staged_raw_scores
from skdp.linear_model._release import gaussian_fit_cost, unit_multipliers
from skdp.mechanisms import check_random_source, gaussian_noise_multipliers
from skdp.mechanisms._labels import LabelPlan
from skdp.utils._cells import as_cells
from skdp.utils._dask import is_dask_collection
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._sample_weight import check_row_weights
from skdp.utils._validation import check_bounds, validate_private_data

__all__ = [
    "BASELINE_SHARE",
    "HISTOGRAM_SHARE",
    "PrivateHistGradientBoostingClassifier",
    "PrivateHistGradientBoostingRegressor",
]


class _BaseBoosting(GroupsMixin, PrivateEstimatorMixin, BaseEstimator):
    """What the classifier and the regressor share: plan, bins, rounds."""

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "max_depth": [Interval(Integral, 1, 12, closed="both")],
        "learning_rate": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "max_bins": [Interval(Integral, 2, 255, closed="both"), StrOptions({"auto"})],
        "l2_regularization": [Interval(Real, 0, None, closed="left")],
        "max_features": [Interval(Real, 0, 1, closed="right")],
        "bin_share": [Interval(Real, 0, 0.5, closed="right"), StrOptions({"auto"})],
        "boosting": [StrOptions({"auto", "trees", "cyclic"})],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "feature_bounds": ["array-like", None],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def _bin_plan(self, d):
        """The public bin mapper and no share, or None and the private bins'
        share (before the charge)."""
        if self.feature_bounds is None:
            return None, [resolved_setting(self, "bin_share")]
        lower, upper = check_bounds(self.feature_bounds, d, name="feature_bounds")
        bins = resolved_setting(self, "max_bins")
        return BinMapper.public(lower, upper, bins), []

    def _shares(self, extra_shares, d=None):
        cyclic = d if resolved_boosting(self) == "cyclic" else None
        rounds = resolved_setting(self, "max_iter")
        return release_shares(extra_shares, rounds, self.max_depth, cyclic)

    def _multipliers(self, name, d, n_trees, epsilon, delta, extra, unit, **target):
        """The releases' noise multipliers, once the fit's size is accepted
        (refused before the charge and before its shares are built); ``k``
        times a row's for a group of ``k`` rows (see Notes)."""
        check_run_time(self, name, d, n_trees, **target)
        multipliers = gaussian_noise_multipliers(epsilon, delta, self._shares(extra, d))
        return np.asarray(unit_multipliers(multipliers, unit.unit_rows), dtype=float)

    def _release_bins(self, X, mapper, multipliers, source):
        """The bin mapper and ``X`` binned (private bins: first multiplier)."""
        if mapper is not None:
            return mapper, mapper.transform(X), multipliers
        bins = resolved_setting(self, "max_bins")
        mapper, binned = release_private_bins(X, multipliers[0], bins, source)
        self._bins_collapsed = bool(np.all(mapper.n_bins == 1))  # released
        return mapper, binned, multipliers[1:]

    def _boost(self, binned, target, loss, multipliers, source):
        """The rounds: ``max_iter`` times, one tree per raw score (with
        ``boosting="cyclic"``, one step per feature: :mod:`.cyclic`)."""
        n_bins = self._bin_mapper.n_bins
        offsets = np.concatenate([[0], np.cumsum(n_bins)])
        k, bounds = loss.n_trees_per_iteration, (loss.g_max, loss.h_max)
        self._baseline = release_baseline(loss, target, k, multipliers[0], source)
        multipliers = multipliers[1:]
        raw = np.zeros((binned.shape[0], k)) + self._baseline
        d, cyclic = binned.shape[1], resolved_boosting(self) == "cyclic"
        joint = None if cyclic else joint_bins(binned, offsets, self.max_depth)
        self._predictors = []
        step = d if cyclic else self.max_depth + 1  # a round's releases
        for at in range(0, resolved_setting(self, "max_iter") * step, step):
            shares = multipliers[at : at + step]
            plan = TreePlan.of_round(self, shares, k, *bounds, d)
            if cyclic:
                round_ = cyclic_round(binned, n_bins, raw, target, loss, plan, source)
                self._predictors.append(round_)
                continue
            g, h = loss.gradients(raw, target)
            trees = []
            for c in range(k):
                tree, leaf = grow_tree(
                    binned, offsets, g[:, c], h[:, c], plan, source, joint
                )
                raw[:, c] += tree.leaves[leaf]
                trees.append(tree)
            self._predictors.append(trees)

    def _finish_fit(self, n_trees_per_iteration, offset=0.0, scale=1.0):
        """The fitted attributes every fit (in memory or Dask) ends with, and
        the warning of collapsed private bins (post-processing of released
        values); ``offset`` and ``scale`` map the raw scores to the user's
        units."""
        self.n_trees_per_iteration_ = n_trees_per_iteration
        self.boosting_ = resolved_boosting(self)
        self.n_iter_ = resolved_setting(self, "max_iter")
        self._offset, self._scale = offset, scale
        if self.__dict__.pop("_bins_collapsed", False):
            warn_collapsed_bins(type(self).__name__)

    def _raw_stages(self, X, copy=True):
        check_is_fitted(self)
        X = validate_private_data(self, X, reset=False)
        binned = self._bin_mapper.transform(X)
        for raw in staged_raw_scores(self._predictors, binned, self._baseline):
            yield self._in_target_units(raw) if copy else raw

    def _raw(self, X):
        (raw,) = deque(self._raw_stages(X, copy=False), maxlen=1)  # the model
        return self._in_target_units(raw)

    def _in_target_units(self, raw):
        """Raw scores as outputs: the classifier's log-odds as they are."""
        return self._offset + self._scale * raw

    @property
    def bin_thresholds_(self):
        """Per feature, the values where its bins 1, 2, ... start."""
        check_is_fitted(self)
        return self._bin_mapper.thresholds()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class PrivateHistGradientBoostingClassifier(ClassifierMixin, _BaseBoosting):
    _parameter_constraints = {
        **_BaseBoosting._parameter_constraints,
        "classes": ["array-like", None],
        "max_classes": [Interval(Integral, 2, None, closed="left")],
    }

    def __init__(
        self,
        epsilon=1.0,
        delta=1e-6,
        *,
        max_iter="auto",
        max_depth=3,
        learning_rate="auto",
        max_bins="auto",
        l2_regularization=0.0,
        max_features=0.3,
        bin_share="auto",
        boosting="auto",
        feature_bounds=None,
        max_rows_per_group=None,
        classes=None,
        max_classes=32,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.max_iter = max_iter
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.max_bins = max_bins
        self.l2_regularization = l2_regularization
        self.max_features = max_features
        self.bin_share = bin_share
        self.boosting = boosting
        self.feature_bounds = feature_bounds
        self.max_rows_per_group = max_rows_per_group
        self.classes = classes
        self.max_classes = max_classes
        self.accountant = accountant
        self.random_state = random_state

    def _fit_cost(self, n_features=None):
        selection, (epsilon, delta) = LabelPlan.split(
            self.classes, self.epsilon, self.delta
        )
        model = gaussian_fit_cost(epsilon, delta)
        return model if selection is None else PrivacyCost(*selection) + model

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, groups=None):
        # its docstring: _docs.py
        if is_dask_collection(X) or is_dask_collection(y):
            return fit_dask_classifier(self, X, y, sample_weight, groups)
        name = type(self).__name__
        X, y = validate_private_data(self, X, as_cells(y), order="C")
        check_classification_targets(y)
        weights = check_row_weights(self, sample_weight, X)
        labels, (epsilon, delta) = LabelPlan.from_estimator(
            self.classes, self.epsilon, self.delta, y, name
        )
        n, d = X.shape
        mapper, extra = self._bin_plan(d)
        k = planned_trees(labels.classes, self.max_classes)
        unit = self._privacy_unit(groups, X)
        unit.refuse_private(self, "label set", "classes=[...]", self.classes is None)
        multipliers = self._multipliers(name, d, k, epsilon, delta, extra, unit)
        loss = BinaryLogistic()
        check_plan(self, name, (n, d), multipliers, len(extra) + 1, k, loss)
        source = check_random_source(self.random_state)
        cost = (unit.label("boosted trees"), gaussian_fit_cost(epsilon, delta))
        self._charge([*labels.cost_items(), cost], unit=unit)

        X, y, weights = unit.bound(source, X, y, weights)  # k rows per group
        released, X, codes = labels.run(X, y, source)
        weights = weights_of_planned_classes(
            weights, y, released, codes, self.max_classes
        )
        classes, X, codes = keep_planned_classes(released, X, codes, self.max_classes)
        n_classes = classes.size
        loss = BinaryLogistic() if n_classes == 2 else MultinomialLogistic(n_classes)
        loss = loss if weights is None else RowWeighted(loss, weights)
        with np.errstate(all="ignore"):  # nothing data-dependent may warn now
            self._bin_mapper, binned, multipliers = self._release_bins(
                X, mapper, multipliers, source
            )
            self._boost(binned, codes, loss, multipliers, source)
        self.classes_ = classes
        self._finish_fit(loss.n_trees_per_iteration)
        return self

    def staged_decision_function(self, X):
        """Raw scores after each round (post-processing; free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        decision : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        for raw in self._raw_stages(X):
            yield raw[:, 0] if raw.shape[1] == 1 else raw

    def decision_function(self, X):
        """Raw scores: the log-odds of ``classes_[1]`` for two classes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        decision : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        raw = self._raw(X)
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def _proba(self, raw):
        if raw.shape[1] == 1:
            return BinaryLogistic.proba(raw)
        return MultinomialLogistic.proba(raw)

    def predict_proba(self, X):
        """Class probabilities (post-processing; free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return self._proba(self._raw(X))

    def staged_predict_proba(self, X):
        """Class probabilities after each round.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        proba : ndarray of shape (n_samples, n_classes)
        """
        for raw in self._raw_stages(X):
            yield self._proba(raw)

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def score(self, X, y, sample_weight=None):  # its docstring: _docs.py
        return super().score(X, y, sample_weight=sample_weight)

    def staged_predict(self, X):
        """Predicted class labels after each round.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        for proba in self.staged_predict_proba(X):
            yield self.classes_[np.argmax(proba, axis=1)]


class PrivateHistGradientBoostingRegressor(RegressorMixin, _BaseBoosting):
    _parameter_constraints = {
        **_BaseBoosting._parameter_constraints,
        "target_bounds": [tuple, "array-like", None],
    }

    def __init__(
        self,
        epsilon=1.0,
        delta=1e-6,
        *,
        max_iter="auto",
        max_depth=3,
        learning_rate="auto",
        max_bins="auto",
        l2_regularization=0.0,
        max_features=0.3,
        bin_share="auto",
        boosting="auto",
        feature_bounds=None,
        max_rows_per_group=None,
        target_bounds=None,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.max_iter = max_iter
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.max_bins = max_bins
        self.l2_regularization = l2_regularization
        self.max_features = max_features
        self.bin_share = bin_share
        self.boosting = boosting
        self.feature_bounds = feature_bounds
        self.max_rows_per_group = max_rows_per_group
        self.target_bounds = target_bounds
        self.accountant = accountant
        self.random_state = random_state

    def _fit_cost(self, n_features=None):
        return gaussian_fit_cost(self.epsilon, self.delta)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, groups=None):
        # its docstring: _docs.py
        if is_dask_collection(X) or is_dask_collection(y):
            return fit_dask_regressor(self, X, y, sample_weight, groups)
        X, y = validate_private_data(self, X, y, order="C", y_numeric=True)
        weights = check_row_weights(self, sample_weight, X)
        plan = charge_regressor_plan(self, X.shape, groups, X)
        X, y, weights = plan.unit.bound(plan.source, X, y, weights)  # k per group

        with np.errstate(all="ignore"):  # nothing data-dependent may warn now
            (low, high), multipliers = plan.target_range((X, y), type(self).__name__)
            self._bin_mapper, binned, multipliers = self._release_bins(
                X, plan.mapper, multipliers, plan.source
            )
            z, mid, half = scaled_targets(y, low, high)
            loss = SquaredError()
            loss = loss if weights is None else RowWeighted(loss, weights)
            self._boost(binned, z, loss, multipliers, plan.source)
        set_regressor_fitted(self, (low, high), mid, half)
        return self

    def predict(self, X):
        """Predicted targets (post-processing; free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        return self._raw(X)[:, 0]

    def _in_target_units(self, raw):
        """Scores on [-1, 1] mapped to the target range: the model was fit on
        targets clipped to it, so its predictions are projected onto it
        (post-processing; never farther from a target in the range, and no
        overflow at ranges near the largest double)."""
        return self._offset + self._scale * np.clip(raw, -1.0, 1.0)

    def score(self, X, y, sample_weight=None):  # its docstring: _docs.py
        return super().score(X, y, sample_weight=sample_weight)

    def staged_predict(self, X):
        """Predicted targets after each round.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        y : ndarray of shape (n_samples,)
        """
        for raw in self._raw_stages(X):
            yield raw[:, 0]


write_docstrings(
    PrivateHistGradientBoostingClassifier, PrivateHistGradientBoostingRegressor
)
