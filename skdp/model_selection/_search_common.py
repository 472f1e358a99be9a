"""Pieces the private searches share: input checks, seeding, delegation.

:class:`~skdp.model_selection.NoisyMaxSearchCV` and
:class:`~skdp.model_selection.RandomStoppingSearchCV` both release one chosen
model, ``best_estimator_``, and delegate to it.
"""

import numpy as np
from sklearn.utils import get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _num_samples, check_array, check_is_fitted

from skdp.model_selection._cost import is_param

__all__ = [
    "BestEstimatorMixin",
    "check_search_rows",
    "in_memory_shape",
    "seed_if_reproducible",
    "with_group_bound",
]

_MAX_SEED = 2**31 - 1


def best_has(attr):
    """Whether the fitted (else the unfitted) model has ``attr``."""

    def check(self):
        if hasattr(self, "best_estimator_"):
            return hasattr(self.best_estimator_, attr)
        if hasattr(self, "best_index_"):
            return False  # fitted without a model: refit=False, 'subsample'
        return hasattr(self.estimator, attr)

    return check


def check_search_rows(estimator, X, y):
    """Refuse, before the charge, input that no fit of the search can use.

    Empty input, and NaN or infinite values where ``estimator`` does not
    declare that it takes NaN (its ``allow_nan`` tag): with
    ``refit=False`` and ``"subsample"`` nothing else probes the input
    before the charge, and every block would abstain after it. As for
    every skdp estimator, that the input is non-empty and finite is a
    public precondition, checked before anything is charged.
    """
    allow_nan = get_tags(estimator).input_tags.allow_nan
    try:
        check_array(
            X,
            accept_sparse=True,
            dtype=None,
            ensure_2d=False,
            allow_nd=True,
            ensure_all_finite="allow-nan" if allow_nan else True,
            input_name="X",
            estimator=estimator,
        )
        check_array(y, dtype=None, ensure_2d=False, input_name="y")
    except ValueError as exc:
        raise ValueError(
            f"{exc}\nThe search needs rows, and finite values unless its "
            "estimator takes NaN: impute or drop missing values with a "
            "data-independent rule first. Nothing was charged."
        ) from exc


_TAKES_GROUPS = (
    "Give a private skdp estimator that takes groups (a Pipeline has no "
    "max_rows_per_group of its own)."
)


def with_group_bound(search, model, k, role, fix=_TAKES_GROUPS):
    """``model`` with the search's ``max_rows_per_group=k``: one bound states
    the unit of the whole fit. ``role`` says what the model fits with
    groups; a model that takes no groups is refused (before the charge),
    with ``fix``."""
    if "max_rows_per_group" not in model.get_params(deep=False):
        raise ValueError(
            f"{type(search).__name__}: with groups {role} with groups, but "
            f"{type(model).__name__} takes no groups (no max_rows_per_group "
            f"parameter). {fix} Nothing was charged."
        )
    return model.set_params(max_rows_per_group=k)


def seed_if_reproducible(model, random_state, source):
    """Seed ``model``'s unset random states from the search's seeded source.

    Only when the search itself is seeded: with ``random_state=None`` the
    models keep drawing their noise from the operating system's secure
    generator. (An integer seed derived from that generator would leave
    only 2**31 possible noise streams, which an attacker could enumerate.)
    """
    if random_state is None:
        return model
    unset = [
        key
        for key, value in model.get_params(deep=True).items()
        if is_param(key, "random_state") and value is None
    ]
    for key in unset:
        model.set_params(**{key: int(source.integers(_MAX_SEED))})
    return model


class BestEstimatorMixin:
    """``predict`` and the other methods of ``best_estimator_``, and the
    input's ``n_features_in_`` / ``feature_names_in_``."""

    @property
    def n_features_in_(self):
        """Number of features seen during ``fit``."""
        if hasattr(self, "best_estimator_"):
            return self.best_estimator_.n_features_in_
        if getattr(self, "_n_features", None) is None:
            raise AttributeError("n_features_in_ is not known before fit.")
        return self._n_features

    @property
    def feature_names_in_(self):
        """Names of the features seen during ``fit`` (when all are strings)."""
        return self.best_estimator_.feature_names_in_

    @available_if(best_has("predict"))
    def predict(self, X):
        """Predict with ``best_estimator_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    @available_if(best_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities from ``best_estimator_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)

    @available_if(best_has("decision_function"))
    def decision_function(self, X):
        """Decision function of ``best_estimator_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    @available_if(best_has("transform"))
    def transform(self, X):
        """Transform with ``best_estimator_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.transform(X)

    @available_if(best_has("score"))
    def score(self, X, y, sample_weight=None):
        """Score of ``best_estimator_`` on ``X, y`` (given, not private, data).

        On private rows the score is a release: exact, and charged to no
        accountant. Evaluate privately with :mod:`skdp.metrics` (e.g.
        :func:`~skdp.metrics.private_accuracy_score`,
        :func:`~skdp.metrics.private_r2_score`); see :ref:`evaluating`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to ``best_estimator_.score``.
        """
        check_is_fitted(self, "best_estimator_")
        kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
        return self.best_estimator_.score(X, y, **kwargs)


def in_memory_shape(X):
    """``X`` for the groups check (:meth:`~skdp.utils._privacy_unit.
    GroupsMixin._privacy_unit`): a Dask input as it is (refused there);
    anything else the search takes (a DataFrame, a list of rows) is in
    memory, and only its row count is read."""
    if type(X).__module__.split(".")[0] == "dask":
        return X
    return np.empty((_num_samples(X), 0))
