"""What the private scorers of a search charge: one place for their cost.

A private scorer (:func:`~skdp.metrics.make_private_scorer`) is a release:
every call charges its :attr:`~skdp.metrics.PrivateScorer.cost`. A search
that scores with it therefore costs its fits *and* its scores. scikit-learn's
``GridSearchCV``, ``RandomizedSearchCV`` and ``cross_validate`` call each
scorer of ``scoring=`` (one, or the values of a dict) once per fitted split
on the split's test rows, and once more on its training rows with
``return_train_score=True``; the refit of a search is not scored. This
module counts those calls from public parameters, for
:func:`~skdp.model_selection.fit_cost`, :func:`~skdp.model_selection.check_budget`
and the early plan check of :mod:`skdp.utils._search_hint`; skdp's own
searches add the same costs where their scorers score (each states how many
times).
"""

__all__ = [
    "bind_scorers",
    "private_scorers",
    "score_method_scorers",
    "scored_by",
    "scorer_accountant",
    "scorer_keys",
    "scoring_costs",
]

#: ``scoring_costs(..., accountant=ANY)``: every scorer, whichever it charges.
ANY = object()


def private_scorers(scoring):
    """The private scorers among ``scoring`` (a scorer, or the values of a
    dict, or the items of a list or tuple), in order."""
    from skdp.metrics._scorer import PrivateScorer  # at call time: no circle

    if isinstance(scoring, dict):
        scoring = list(scoring.values())
    elif not isinstance(scoring, list | tuple):
        scoring = [scoring]
    return [s for s in scoring if isinstance(s, PrivateScorer)]


def scored_by(scoring, estimator):
    """What scores a search's or ``cross_validate``'s splits: ``scoring``,
    or with ``scoring=None`` the private scorers of ``estimator.score``
    (:func:`score_method_scorers`: an inner search's own private scorer is
    called once per outer split, and on its training rows too with
    ``return_train_score``)."""
    return score_method_scorers(estimator) if scoring is None else scoring


def scorer_accountant(scorer):
    """The accountant a call of ``scorer`` without ``accountant=`` charges
    here and now (its bound one, the default in effect, or the one carried
    to this process)."""
    from skdp.accounting._default import default_accountant

    accountant = scorer._accountant(None)
    return default_accountant() if accountant is None else accountant


def scoring_costs(scoring, n_fits, *, train_scores=False, accountant=ANY):
    """The releases the private scorers of ``scoring`` make when ``n_fits``
    fitted splits are scored.

    Parameters
    ----------
    scoring : object
        A search's ``scoring=``.
    n_fits : int
        The number of fitted splits scored (every candidate on every split).
    train_scores : bool, default=False
        Whether each split is also scored on its training rows
        (``return_train_score``).
    accountant : BudgetAccountant, optional
        Only the scorers that charge this accountant
        (:func:`scorer_accountant`); by default every scorer.

    Returns
    -------
    costs : list of PrivacyCost
        One per call (``n_fits × (1 + train_scores)`` per scorer), to be
        composed with the fits (:func:`~skdp.model_selection._cost.sum_costs`).
    """
    scorers = private_scorers(scoring)
    if accountant is not ANY:
        scorers = [s for s in scorers if scorer_accountant(s) is accountant]
    calls = int(n_fits) * (1 + bool(train_scores))
    return [scorer.cost for scorer in scorers for _ in range(calls)]


def score_method_scorers(estimator):
    """The private scorers that ``estimator.score`` calls: a scikit-learn
    search scores with its ``scoring`` (a dict's ``refit`` metric), a
    pipeline with its final step's ``score``; other estimators call none."""
    from sklearn.model_selection._search import BaseSearchCV

    steps = getattr(estimator, "steps", None)
    if steps:
        return score_method_scorers(steps[-1][1])
    if not isinstance(estimator, BaseSearchCV):
        return []
    scoring = estimator.scoring
    if isinstance(scoring, dict):
        refit = estimator.refit
        scoring = scoring.get(refit) if isinstance(refit, str) else None
    return private_scorers(scoring)


def scorer_keys(estimator):
    """The ``scoring`` parameters of ``estimator`` (nested ones too) that
    hold a private scorer, deepest first."""
    try:
        params = estimator.get_params(deep=True)
    except Exception:
        return []
    keys = [
        key
        for key, value in params.items()
        if (key == "scoring" or key.endswith("__scoring")) and private_scorers(value)
    ]
    keys.sort(key=lambda key: key.count("__"), reverse=True)
    return keys


def bind_scorers(estimator, accountant, keys):
    """Make the private scorers at ``keys`` of ``estimator`` charge
    ``accountant`` (``None``: the default in effect when they score), as a
    meta-estimator routes its ``accountant`` to the estimators it holds."""
    for key in keys:
        scoring = estimator.get_params(deep=True)[key]
        if isinstance(scoring, dict):
            bound = {name: _bound(s, accountant) for name, s in scoring.items()}
        elif isinstance(scoring, list | tuple):
            bound = type(scoring)(_bound(s, accountant) for s in scoring)
        else:
            bound = _bound(scoring, accountant)
        estimator.set_params(**{key: bound})
    return estimator


def _bound(scoring, accountant):
    return scoring.charging(accountant) if private_scorers(scoring) else scoring
