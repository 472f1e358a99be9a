"""Private K-fold cross-validation: private fits, private scores, one charge."""

import copy
from numbers import Integral

import numpy as np
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _num_samples, indexable

from skdp.ensemble._blocks import _block_indices, _block_labels
from skdp.mechanisms import check_random_source
from skdp.metrics._release import resolve_accountant
from skdp.metrics._scorer import PrivateScorer, stated_labels
from skdp.model_selection._cost import (
    _ChargeReached,
    _ProbeAccountant,
    check_fit_inputs,
    check_private_model,
    fit_cost,
    prepaid_accountant,
    sum_costs,
)
from skdp.model_selection._curve_plan import _n_features
from skdp.model_selection._holdout import fit_on_part
from skdp.utils._warnings import silenced

__all__ = ["cross_validate"]


def _check_cv(cv):
    if isinstance(cv, bool) or not isinstance(cv, Integral) or cv < 2:
        raise ValueError(
            f"cv must be an integer of at least 2 (the number of folds); got "
            f"{cv!r}. skdp assigns each row to a fold at random, independently "
            "of the other rows: index-based splitters (KFold, StratifiedKFold) "
            "move rows between folds when one row is added, which breaks the "
            "add/remove argument of the fits and of the parallel composition "
            "of the scores. Nothing was charged."
        )
    return int(cv)


def _resolved_scorer(scoring, estimator):
    """A copy of ``scoring`` whose public labels are fixed before any fit:
    the scorer's own, else the estimator's ``classes`` parameter."""
    if not isinstance(scoring, PrivateScorer):
        raise TypeError(
            "scoring must be a private scorer, e.g. "
            "skdp.metrics.make_private_scorer('accuracy', epsilon=0.5): a "
            "scikit-learn scorer would release the fold scores without noise. "
            f"Got {scoring!r}. Nothing was charged."
        )
    scorer = copy.copy(scoring)
    scorer.kwargs = dict(scoring.kwargs)
    if scorer._kind not in ("labels", "ranking"):
        return scorer
    labels = scorer.kwargs.pop("labels", None)
    if labels is None:
        labels = stated_labels(estimator)
    if scorer._kind == "ranking":
        if labels is not None and "pos_label" not in scorer.kwargs:
            scorer.kwargs["pos_label"] = np.asarray(labels)[-1]
        return scorer
    if labels is None:
        raise ValueError(
            f"The private {scorer.name!r} scorer needs public labels before the "
            "folds are fitted: pass make_private_scorer(..., labels=[...]) or "
            "set the estimator's classes parameter. Nothing was charged."
        )
    scorer.kwargs["labels"] = np.asarray(labels)
    return scorer


def _check_scorer_inputs(scorer, y):
    """The scorer's input checks on ``y`` (labels outside the public set,
    non-finite targets), with public predictions, stopped at its charge."""
    predictions = scorer.fallback_predictions(_num_samples(y))
    try:
        scorer.evaluate_predictions(
            predictions, y, accountant=_ProbeAccountant(), random_state=0
        )
    except _ChargeReached:
        pass


def _plan(estimator, scorer, n_folds, n_features=None):
    """The charge: the fits (each row in ``K - 1`` of them) and one
    evaluation (the test folds are disjoint). Every fold's fit sees the
    ``n_features`` columns of ``X``: the cost of a fit whose noise follows
    them (e.g. naive Bayes's ``mechanism="auto"``) is then the exact one,
    not the bound over every number of features."""
    cost = fit_cost(estimator, n_features)
    if not (cost.epsilon > 0 or cost.delta > 0):
        raise ValueError(
            f"{type(estimator).__name__} costs nothing to fit, so it is not a "
            "private estimator: its fold models, and hence the fold scores, "
            "would reveal their training rows. Cross-validate an skdp "
            "estimator (or a pipeline of them). Nothing was charged."
        )
    # a private step does not make the rest private: every step fitted on
    # the rows must be, or the fold models (and the scores) leak them
    check_private_model(estimator)
    fits = sum_costs([cost] * (n_folds - 1))
    items = [
        (f"cross_validate: {n_folds} fits, each row in {n_folds - 1}", fits),
        (
            f"cross_validate: {scorer.name} on {n_folds} disjoint test folds "
            "(parallel composition)",
            scorer.cost,
        ),
    ]
    return cost, items


def _fold_seeds(random_state, source, n_folds):
    """Seeds of the folds' metric releases: None (the OS's CSPRNG) unless
    the caller fixed ``random_state`` (reproducible, not secure)."""
    if random_state is None:
        return [None] * n_folds
    return [int(s) for s in source.integers(2**31 - 1, size=n_folds)]


def _predictions(scorer, model, X_test):
    """The model's predictions under the scorer's per-row public rule
    (:meth:`~skdp.metrics.PrivateScorer.usable_predictions`)."""
    return scorer.usable_predictions(model, X_test)


def _evaluate(scorer, predictions, y_test, seed):
    with silenced():
        try:
            return scorer.evaluate_predictions(
                predictions,
                y_test,
                accountant=prepaid_accountant(scorer.cost),
                random_state=seed,
            )
        except Exception:  # predictions the metric refuses: the public ones
            public = scorer.fallback_predictions(_num_samples(y_test))
            return scorer.evaluate_predictions(
                public,
                y_test,
                accountant=prepaid_accountant(scorer.cost),
                random_state=seed,
            )


def cross_validate(
    estimator,
    X,
    y,
    *,
    scoring,
    cv=5,
    accountant=None,
    random_state=None,
    return_estimator=False,
):
    """Evaluate a private estimator by K-fold cross-validation, privately.

    Each row is assigned to one of ``cv`` folds at random; for every fold
    the estimator is fitted (privately, as it fits) on the other folds and
    scored (privately, by ``scoring``) on that fold. The whole cost is
    charged once, before any data is read.

    Parameters
    ----------
    estimator : estimator instance
        A private skdp estimator or a pipeline of them (its fit cost is
        known from its parameters: :func:`~skdp.model_selection.fit_cost`).
    X : array-like of shape (n_samples, n_features)
        The private rows.
    y : array-like of shape (n_samples,)
        Their targets.
    scoring : PrivateScorer
        From :func:`~skdp.metrics.make_private_scorer`. A classification
        scorer needs public labels before the fits: its ``labels`` or the
        estimator's ``classes`` parameter.
    cv : int, default=5
        The number of folds (at least 2).
    accountant : BudgetAccountant or None, default=None
        Charged once for the whole cross-validation; ``None`` uses the
        default accountant in effect.
    random_state : int, RandomState instance or None, default=None
        The folds' assignment and the scores' noise. ``None`` draws from the
        operating system's CSPRNG; an int is reproducible, not secure. The
        estimator's own ``random_state`` is left as set.
    return_estimator : bool, default=False
        Also return the fold models (releases of their private fits).

    Returns
    -------
    results : dict
        ``"test_score"``: ndarray of shape (cv,), the released scores in
        scikit-learn's sign (losses negated); ``"test_std_error"``: their
        error bars (:class:`~skdp.metrics.PrivateEstimate`);
        ``"estimator"`` with ``return_estimator``. The fold sizes are not
        returned: they are counts of private rows. Nor are scikit-learn's
        ``"fit_time"`` and ``"score_time"``: the time of a fit grows with
        its number of rows, so it would release those counts without noise.

    Raises
    ------
    ValueError, TypeError
        Before any charge: a ``cv`` that is not an integer ``>= 2``, a
        scorer that is not private or lacks public labels, an estimator
        that costs nothing or holds a step fitted without noise (a
        scikit-learn learner after a private scaler), an input the
        estimator or the metric refuses.
    BudgetExceededError
        When the accountant cannot pay the whole cost; nothing is charged.

    Notes
    -----
    **What is charged.** ``(K - 1) ×`` the estimator's fit cost plus **one**
    scorer cost, in one atomic charge (two ledger entries), before any data
    is read.

    *Fits.* Each row lies in the training set of the ``K - 1`` folds other
    than its own, so adding or removing it changes ``K - 1`` fits, which
    compose sequentially. (Conditioned on every fold label, a row of fold
    ``j`` enters the fits of the other folds only; the release is a mixture
    over its label ``j`` of mechanisms each within that bound of the data
    without it, hence within the bound too.)

    *Scores: parallel composition.* The test folds are disjoint: a row is in
    exactly one of them, so it enters exactly one evaluation; the other
    evaluations read none of its rows (they see it only through the fold
    models, which the fits' charge covers). The K evaluations together
    therefore cost one evaluation's ε and δ (McSherry 2009, parallel
    composition), not K times it. This needs a row's fold to be decided by
    that row alone: skdp draws an independent uniform fold label per row
    (as :class:`~skdp.ensemble.SampleAggregateEstimator` draws its blocks),
    because with index-based folds (``KFold``) adding a row shifts the
    boundary rows of every later fold.

    **After the charge** nothing raises. A fit that fails (e.g. on an empty
    part) gives the scorer's public predictions (the first label, uniform
    probabilities, the middle of the target bounds) on its whole test fold,
    a function of the fold model. A prediction the metric would refuse (a
    label outside the public ones, a non-finite score, target or
    probability row) is replaced by the public prediction of that row
    alone, and a model whose ``predict`` fails on the fold as a whole is
    asked again row by row: a per-row rule, so that one row cannot move
    the other rows' predictions (which would move the released metric by
    far more than the one row its noise is calibrated to).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant, PrivateGaussianNB
    >>> from skdp.metrics import make_private_scorer
    >>> from skdp.model_selection import cross_validate
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 2)); y = (X[:, 0] > 0).astype(int)
    >>> model = PrivateGaussianNB(epsilon=0.5, classes=[0, 1], bounds=(-4, 4),
    ...                           random_state=0)
    >>> acc = BudgetAccountant(epsilon=3.0)
    >>> scores = cross_validate(model, X, y, cv=3, accountant=acc, random_state=0,
    ...                         scoring=make_private_scorer("accuracy", epsilon=0.5))
    >>> bool((scores["test_score"] > 0.9).all())
    True
    >>> acc.total()  # 2 x 0.5 for the fits + 0.5 for the three scores
    (1.5, 0.0)
    """
    n_folds = _check_cv(cv)
    X, y = indexable(X, y)
    scorer = _resolved_scorer(scoring, estimator)
    fit_one, items = _plan(estimator, scorer, n_folds, _n_features(X))
    check_fit_inputs(estimator, X, y)
    _check_scorer_inputs(scorer, y)
    source = check_random_source(random_state)
    resolve_accountant(accountant).spend_many(items)

    folds = _block_indices(_block_labels(_num_samples(X), n_folds, source), n_folds)
    seeds = _fold_seeds(random_state, source, n_folds)
    scores, errors, models = [], [], []
    for k, test in enumerate(folds):
        train = np.concatenate([f for j, f in enumerate(folds) if j != k])
        X_test, y_test = _safe_indexing(X, test), _safe_indexing(y, test)
        model = fit_on_part(
            estimator, fit_one, _safe_indexing(X, train), _safe_indexing(y, train)
        )
        predictions = _predictions(scorer, model, X_test)
        estimate = _evaluate(scorer, predictions, y_test, seeds[k])
        scores.append(scorer.sign * estimate.value)
        errors.append(estimate.std_error)
        models.append(model)
    results = {
        "test_score": np.array(scores),
        "test_std_error": np.array(errors),
    }
    if return_estimator:
        results["estimator"] = models
    return results
