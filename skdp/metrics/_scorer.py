"""Private scorers: a private metric with its budget, called on a model."""

import copy

import numpy as np
from sklearn.utils.validation import _num_samples

from skdp.accounting._channel import carried_here
from skdp.accounting._default import (
    _explicit_default,
    carried_default,
    default_accountant,
)
from skdp.mechanisms._additive import additive_cost
from skdp.metrics import _classification, _log_loss, _ranking, _regression
from skdp.metrics._scorer_rows import (
    check_row_level_scorer,
    column_of,
    columns_in_order,
    predictions_row_by_row,
    usable_per_row,
)
from skdp.metrics._tables import encode_labels
from skdp.utils._search_hint import check_search_plan
from skdp.utils._validation import check_delta, check_epsilon
from skdp.utils._warnings import silenced

__all__ = ["PrivateScorer", "charged_to", "make_private_scorer"]

# name: (metric, response, sign, kind)
_REGISTRY = {
    "accuracy": (_classification.private_accuracy_score, "predict", 1, "labels"),
    "balanced_accuracy": (
        _classification.private_balanced_accuracy_score,
        "predict",
        1,
        "labels",
    ),
    "f1": (_classification.private_f1_score, "predict", 1, "labels"),
    "precision": (_classification.private_precision_score, "predict", 1, "labels"),
    "recall": (_classification.private_recall_score, "predict", 1, "labels"),
    "roc_auc": (_ranking.private_roc_auc_score, "positive_proba", 1, "ranking"),
    "average_precision": (
        _ranking.private_average_precision_score,
        "positive_proba",
        1,
        "ranking",
    ),
    "neg_mean_squared_error": (
        _regression.private_mean_squared_error,
        "predict",
        -1,
        "target",
    ),
    "neg_mean_absolute_error": (
        _regression.private_mean_absolute_error,
        "predict",
        -1,
        "target",
    ),
    "r2": (_regression.private_r2_score, "predict", 1, "target"),
    "explained_variance": (
        _regression.private_explained_variance_score,
        "predict",
        1,
        "target",
    ),
    "neg_log_loss": (_log_loss.private_log_loss, "proba", -1, "labels"),
}
_BY_FUNCTION = {entry[0]: name for name, entry in _REGISTRY.items()}


def _final_step(estimator):
    steps = getattr(estimator, "steps", None)
    return steps[-1][1] if steps else estimator


def stated_labels(estimator):
    """The label set an estimator states before it is fitted (its
    ``classes`` parameter, or its final step's), or None."""
    params = _final_step(estimator).get_params(deep=False)
    classes = params.get("classes")
    return None if classes is None else np.asarray(classes)


def released_labels(model):
    """The classes of a fitted private model (stated or released privately);
    None for a model whose classes were read from the data without a DP step."""
    from skdp.base import PrivateEstimatorMixin  # at call time: no import circle

    final = _final_step(model)
    if isinstance(final, PrivateEstimatorMixin) and hasattr(final, "classes_"):
        return np.asarray(final.classes_)
    return None


class PrivateScorer:
    """A private metric and its budget, called as ``scorer(model, X, y)``.

    Made by :func:`make_private_scorer`. Each call is one release charged to
    the accountant (``accountant=None``: the default accountant in effect;
    in a worker process of a search with ``n_jobs``, the one in effect where
    the scorer was sent from, as for estimators), so it can stand where
    scikit-learn takes ``scoring=``; its :attr:`cost` is known before any
    data is read, for planning
    (:func:`skdp.model_selection.cross_validate` charges it once for all
    its disjoint test folds).

    Parameters
    ----------
    name : str
        A scoring name that :func:`make_private_scorer` knows.
    epsilon, delta : float
        The budget of each call.
    kwargs : dict
        Public parameters of the metric.

    Attributes
    ----------
    name : str
        The metric's scikit-learn scoring name (e.g. ``"accuracy"``).
    cost : PrivacyCost
        The cost of one call.
    sign : int
        ``-1`` for losses, whose value is negated as scikit-learn's scorers
        do (greater is better).

    Examples
    --------
    >>> from skdp.metrics import make_private_scorer
    >>> scorer = make_private_scorer("r2", epsilon=0.5, target_bounds=(0, 10))
    >>> scorer.cost
    PrivacyCost(epsilon=0.5, delta=0.0, rho=0.125, mechanism='laplace')
    """

    def __init__(self, name, epsilon, delta, kwargs):
        metric, response, sign, kind = _REGISTRY[name]
        self.name, self.sign = name, sign
        self._metric, self._response, self._kind = metric, response, kind
        self.epsilon, self.delta, self.kwargs = epsilon, delta, dict(kwargs)
        self.cost = additive_cost(epsilon, delta)
        self.__name__ = f"private {name}"

    def __repr__(self):
        return (
            f"make_private_scorer({self.name!r}, epsilon={self.epsilon}, "
            f"delta={self.delta})"
        )

    def _metric_kwargs(self, model):
        kwargs = dict(self.kwargs)
        if self._kind in ("labels", "ranking") and "labels" not in kwargs:
            labels = released_labels(model)
            if labels is None:
                labels = stated_labels(model)
            if labels is None and self._kind == "labels":
                raise ValueError(
                    f"The private {self.name!r} scorer needs public labels: pass "
                    "make_private_scorer(..., labels=[...]), or score a private "
                    "skdp classifier (its classes_ are stated or released). "
                    "Nothing was charged."
                )
            if labels is not None:
                kwargs["labels"] = labels
        if self._kind == "ranking":
            labels = kwargs.pop("labels", None)
            if "pos_label" not in kwargs and labels is not None:
                kwargs["pos_label"] = labels[-1]
        return kwargs

    def _predictions(self, model, X):
        if self._response == "predict":
            return model.predict(X)
        proba = model.predict_proba(X)
        classes = getattr(model, "classes_", None)
        kwargs = self._metric_kwargs(model)
        if self._response == "positive_proba":
            return proba[:, column_of(classes, kwargs.get("pos_label", 1))]
        return proba[:, columns_in_order(classes, kwargs["labels"])]

    def usable_predictions(self, model, X):
        """The model's predictions on ``X``, each replaced by the public one
        of its row where the metric could not use it: a per-row rule, for
        a caller that evaluates after a charge.

        A row whose prediction the metric would refuse (a label outside the
        public ones, a non-finite score, target or probability row) gets
        the public prediction alone (:meth:`fallback_predictions`); a model
        whose ``predict`` fails on ``X`` as a whole is asked again row by
        row, so one row that makes it raise changes that row's prediction
        only. A model that is None (its fit failed) or cannot predict at
        all gives the public predictions on every row (a function of the
        model). Nothing raises or warns on the data (a scorer without public
        labels for a model that states none is refused, as by the metric).

        Parameters
        ----------
        model : estimator or None
            A fitted model (public), or None.
        X : array-like of shape (n_samples, n_features)
            The private evaluation rows.

        Returns
        -------
        predictions : ndarray
        """
        n_rows = _num_samples(X)
        if model is None:
            return self.fallback_predictions(n_rows)
        public = self.fallback_predictions(n_rows, model)  # public labels
        with silenced():
            try:
                predictions = self._predictions(model, X)
            except Exception:  # a failure after the charge: row by row
                predictions = self._row_by_row(model, X, n_rows)
            return self._usable_per_row(predictions, public, model)

    def usable_rows(self, y, model=None):
        """Which rows of ``y`` the metric can read: a label among the public
        ones, a finite target (every row for a ranking metric). A per-row
        rule, for a caller that drops the others after a charge (a dropped
        row is a removed row: the guarantee is unchanged).

        Parameters
        ----------
        y : array-like of shape (n_samples,)
        model : estimator or None, default=None
            Supplies public classes when the scorer states none.

        Returns
        -------
        keep : ndarray of bool of shape (n_samples,)
        """
        y = np.asarray(y)
        with silenced():
            try:
                if self._kind == "labels":
                    labels = np.asarray(self._metric_kwargs(model)["labels"])
                    return encode_labels(y, labels) >= 0
                if self._kind == "target":
                    return np.isfinite(y.astype(np.float64))
            except Exception:  # labels of another type than y's: none match
                return np.zeros(_num_samples(y), dtype=bool)
        return np.ones(_num_samples(y), dtype=bool)

    def _row_by_row(self, model, X, n_rows):
        return predictions_row_by_row(self, model, X, n_rows)

    def _usable_per_row(self, predictions, public, model):
        return usable_per_row(self, predictions, public, model)

    def fallback_predictions(self, n_rows, model=None):
        """Public predictions for ``n_rows`` rows, for a model that failed.

        The first label, uniform probabilities, the middle of the score
        range or of the target bounds: nothing read from data.

        Parameters
        ----------
        n_rows : int
            Number of rows (of the evaluated part).
        model : estimator or None, default=None
            A fitted model whose public classes complete the scorer's.

        Returns
        -------
        predictions : ndarray
        """
        kwargs = self._metric_kwargs(model) if model is not None else self.kwargs
        if self._response == "positive_proba":
            low, high = kwargs.get("score_range", (0.0, 1.0))
            return np.full(n_rows, low / 2 + high / 2)
        if self._kind == "target":
            low, high = kwargs["target_bounds"]
            return np.full(n_rows, low / 2 + high / 2)
        labels = np.asarray(kwargs["labels"])
        if self._response == "proba":
            return np.full((n_rows, labels.size), 1.0 / labels.size)
        return np.repeat(labels[:1], n_rows)

    def evaluate(self, model, X, y, *, accountant=None, random_state=None):
        """The metric of ``model`` on ``(X, y)``, released privately.

        Parameters
        ----------
        model : estimator
            A fitted model (public: a release, or trained on other data).
        X : array-like of shape (n_samples, n_features)
            The private evaluation rows.
        y : array-like of shape (n_samples,)
            Their targets.
        accountant : BudgetAccountant or None, default=None
            Charged once; ``None``: the default accountant in effect.
        random_state : int, RandomState instance or None, default=None
            ``None`` draws from the operating system's CSPRNG.

        Returns
        -------
        estimate : PrivateEstimate
            The metric itself (a loss is not negated here) and its error bar.
        """
        return self.evaluate_predictions(
            self._predictions(model, X),
            y,
            model=model,
            accountant=accountant,
            random_state=random_state,
        )

    def evaluate_predictions(
        self, predictions, y, *, model=None, accountant=None, random_state=None
    ):
        """The private metric of given predictions (one release).

        Parameters
        ----------
        predictions : array-like
            Predicted labels, scores, probabilities or targets (as the
            metric takes them).
        y : array-like of shape (n_samples,)
            The private targets.
        model : estimator or None, default=None
            Supplies public classes when the scorer states none.
        accountant, random_state
            As for :meth:`evaluate`.

        Returns
        -------
        estimate : PrivateEstimate
        """
        kwargs = self._metric_kwargs(model) if model is not None else self.kwargs
        accountant = self._accountant(accountant)
        # public: a running search's parameters and the budget (its scores,
        # when its fits do not charge this accountant, are planned here)
        check_search_plan(default_accountant() if accountant is None else accountant)
        return self._metric(
            y,
            predictions,
            epsilon=self.epsilon,
            delta=self.delta,
            accountant=accountant,
            random_state=random_state,
            **kwargs,
        )

    def charging(self, accountant):
        """A copy whose calls without ``accountant=`` charge ``accountant``
        (``None``: the default in effect when it scores), as a
        meta-estimator routes its accountant to the estimators it holds.

        Parameters
        ----------
        accountant : BudgetAccountant or None

        Returns
        -------
        scorer : PrivateScorer
        """
        scorer = copy.copy(self)
        scorer.kwargs = dict(self.kwargs)
        scorer.__dict__.pop("_carried_accountant", None)
        scorer._routed_accountant = accountant
        return scorer

    def _accountant(self, accountant):
        """The accountant a call charges: the one given; else the one a
        meta-estimator routed to it (:meth:`charging`); else one put in
        effect in this process; else, in another process (a worker of a
        search with ``n_jobs``), the default in effect where the scorer was
        pickled, as estimators carry it; else the default here (``None``)."""
        if accountant is not None:
            return accountant
        routed = self.__dict__.get("_routed_accountant")
        if routed is not None:
            return routed
        if _explicit_default() is not None:
            return accountant
        carried = self.__dict__.get("_carried_accountant")
        if carried is not None and carried_here(carried[1]):
            return carried[0]
        return None

    def __getstate__(self):
        state = dict(self.__dict__)
        carried = carried_default(state.pop("_carried_accountant", None))
        if carried is not None:  # the default in effect here and now
            state["_carried_accountant"] = carried
        return state

    def __call__(self, estimator, X, y, *, accountant=None, random_state=None):
        """``sign * value`` of :meth:`evaluate`: scikit-learn's scorer form."""
        estimate = self.evaluate(
            estimator, X, y, accountant=accountant, random_state=random_state
        )
        return self.sign * estimate.value


def charged_to(scorer, accountant, random_state=None):
    """``scorer`` as a plain scikit-learn scorer that charges ``accountant``
    (for a sweep that plans and checks every score's cost itself).

    Examples
    --------
    >>> from skdp import BudgetAccountant
    >>> from skdp.metrics import make_private_scorer
    >>> from skdp.metrics._scorer import charged_to
    >>> score = charged_to(make_private_scorer("accuracy", epsilon=0.5),
    ...                    BudgetAccountant(epsilon=1.0))
    >>> callable(score)
    True
    """

    def score(model, X, y):
        # after the sweep's fits were charged: per-row public rules, so that
        # a prediction or a label the metric refuses cannot stop the sweep
        keep = scorer.usable_rows(y, model)
        predictions = scorer.usable_predictions(model, X)
        estimate = scorer.evaluate_predictions(
            predictions[keep],
            np.asarray(y)[keep],
            model=model,
            accountant=accountant,
            random_state=random_state,
        )
        return scorer.sign * estimate.value

    score.__name__ = scorer.__name__
    return score


def make_private_scorer(metric, *, epsilon=1.0, delta=0.0, **kwargs):
    """A scorer that evaluates a model with a private metric.

    Parameters
    ----------
    metric : str or callable
        A scikit-learn scoring name (``"accuracy"``, ``"balanced_accuracy"``,
        ``"f1"``, ``"precision"``, ``"recall"``, ``"roc_auc"``,
        ``"average_precision"``, ``"neg_mean_squared_error"``,
        ``"neg_mean_absolute_error"``, ``"r2"``, ``"explained_variance"``,
        ``"neg_log_loss"``) or one of the matching functions of
        :mod:`skdp.metrics`.
    epsilon : float, default=1.0
        ε of each evaluation.
    delta : float, default=0.0
        δ of each evaluation (0: Laplace noise).
    **kwargs
        Public parameters of the metric: ``labels`` (classification; by
        default a private model's ``classes_``, or its ``classes``
        parameter), ``average``, ``pos_label``, ``bins``, ``score_range``,
        ``target_bounds`` (required for regression), ``eps``. The unit is
        one test row: ``groups`` is refused (:ref:`user_level_privacy`).

    Returns
    -------
    scorer : PrivateScorer
        ``scorer(model, X, y)`` returns the released value (negated for a
        loss) and charges :attr:`PrivateScorer.cost`.

    Notes
    -----
    Each call releases once (the metric's Notes give the sensitivity); the
    model is taken as public (it is itself a release of a private fit, or
    was trained on other data). Ranking metrics score the probability of
    ``pos_label`` (by default the last public label, scikit-learn's
    positive class), taken from the column of ``predict_proba`` where the
    model's ``classes_`` put it; the log-loss reads the columns in the
    order of ``labels``, reordered from the model's ``classes_``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant, PrivateGaussianNB
    >>> from skdp.metrics import make_private_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2)); y = (X[:, 0] > 0).astype(int)
    >>> model = PrivateGaussianNB(classes=[0, 1], bounds=(-4, 4),
    ...                           random_state=0).fit(X, y)
    >>> scorer = make_private_scorer("accuracy", epsilon=0.5)
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> round(scorer(model, X, y, accountant=acc, random_state=0), 1)
    0.9
    >>> acc.total()
    (0.5, 0.0)
    """
    name = _BY_FUNCTION.get(metric, metric)
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ValueError(
            f"make_private_scorer does not know the metric {metric!r}; use one "
            f"of {sorted(_REGISTRY)} or the matching skdp.metrics function."
        )
    if _REGISTRY[name][3] == "target" and "target_bounds" not in kwargs:
        raise ValueError(
            f"The private {name!r} scorer needs the public "
            "target_bounds=(lower, upper)."
        )
    check_row_level_scorer(kwargs)
    return PrivateScorer(name, check_epsilon(epsilon), check_delta(delta), kwargs)
