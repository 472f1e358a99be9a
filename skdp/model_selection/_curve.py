"""Privacy–utility curves: the test score of a private estimator against epsilon."""

from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.metrics import check_scoring
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils._optional_dependencies import check_pandas_support
from sklearn.utils.parallel import Parallel, delayed

from skdp.accounting._composition import exact
from skdp.accounting._rounding import float_up as _float_up
from skdp.metrics._scorer import PrivateScorer, charged_to
from skdp.model_selection._cost import (
    check_private_model,
    route_accountant,
)
from skdp.model_selection._scoring_cost import score_method_scorers, scoring_costs
from skdp.utils._progress import Progress, plural

__all__ = ["PrivacyUtilityCurve", "privacy_utility_curve"]
from skdp.model_selection._curve_plan import (
    _check_budget,
    _check_epsilons,
    _check_ledger,
    _check_non_private,
    _fit_and_score,
    _n_features,
    _private_fit_and_score,
    _PrivatePlan,
    _scoring_name,
)

_MAX_SEED = 2**31 - 1


@dataclass(frozen=True, eq=False)
class PrivacyUtilityCurve:
    """Scores of a private estimator at several privacy levels.

    The result of :func:`privacy_utility_curve`; plot it with
    :meth:`PrivacyUtilityDisplay.from_curve
    <skdp.model_selection._plot.PrivacyUtilityDisplay.from_curve>`. The arrays
    are read-only.

    Parameters
    ----------
    epsilons : ndarray of shape (n_epsilons,)
        The privacy levels, in increasing order.
    scores : ndarray of shape (n_epsilons, n_repeats)
        ``scores[i, r]`` is the test score of repeat ``r`` at ``epsilons[i]``.
    reference_score : float or None, default=None
        Test score of the non-private reference estimator, if one was given.
    scoring : str, default="score"
        Name of the score: the ``scoring`` string, the name of a callable
        scorer, or ``"score"`` for the estimator's own ``score`` method.
    estimator_name : str or None, default=None
        Class name of the private estimator whose ε was varied.
    param_name : str, default="epsilon"
        The parameter that was set to each ε.
    epsilon_spent, delta_spent : float, default=0.0
        What the accountant counted during the sweep (every private fit), in
        the accountant's privacy unit.

    Attributes
    ----------
    mean_scores : ndarray of shape (n_epsilons,)
        Mean score over the repeats at each ε.
    std_scores : ndarray of shape (n_epsilons,)
        Standard deviation (``ddof=0``) of the scores over the repeats.

    See Also
    --------
    privacy_utility_curve : Compute the curve.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.model_selection import PrivacyUtilityCurve
    >>> curve = PrivacyUtilityCurve(
    ...     epsilons=np.array([0.1, 1.0]),
    ...     scores=np.array([[0.6, 0.7], [0.8, 0.8]]),
    ...     scoring="accuracy",
    ... )
    >>> curve.mean_scores
    array([0.65, 0.8 ])
    >>> curve.to_frame()  # doctest: +SKIP
       epsilon  repeat  score
    0      0.1       0    0.6
    1      0.1       1    0.7
    2      1.0       0    0.8
    3      1.0       1    0.8
    """

    epsilons: np.ndarray
    scores: np.ndarray
    reference_score: float | None = None
    scoring: str = "score"
    estimator_name: str | None = None
    param_name: str = "epsilon"
    epsilon_spent: float = 0.0
    delta_spent: float = 0.0

    def __post_init__(self):
        epsilons = np.array(self.epsilons, dtype=np.float64)
        scores = np.array(self.scores, dtype=np.float64)
        if epsilons.ndim != 1 or scores.ndim != 2:
            raise ValueError(
                "epsilons must be 1-D and scores 2-D (n_epsilons, n_repeats); got "
                f"shapes {epsilons.shape} and {scores.shape}."
            )
        if scores.shape[0] != epsilons.shape[0]:
            raise ValueError(
                f"scores has {scores.shape[0]} rows for {epsilons.shape[0]} epsilons."
            )
        epsilons.setflags(write=False)
        scores.setflags(write=False)
        # frozen: assign the validated copies through object.__setattr__
        object.__setattr__(self, "epsilons", epsilons)
        object.__setattr__(self, "scores", scores)

    @property
    def mean_scores(self):
        """Mean score over the repeats, one per ε."""
        return self.scores.mean(axis=1)

    @property
    def std_scores(self):
        """Standard deviation of the scores over the repeats, one per ε."""
        return self.scores.std(axis=1)

    def to_frame(self):
        """The scores as a long-format :class:`pandas.DataFrame`.

        Requires pandas.

        Returns
        -------
        frame : pandas.DataFrame
            One row per fit, ordered by ε then repeat, with columns
            ``epsilon`` (float), ``repeat`` (int) and ``score`` (float).
        """
        pd = check_pandas_support(f"{type(self).__name__}.to_frame")
        n_epsilons, n_repeats = self.scores.shape
        return pd.DataFrame(
            {
                "epsilon": np.repeat(self.epsilons, n_repeats),
                "repeat": np.tile(np.arange(n_repeats), n_epsilons),
                "score": self.scores.ravel(),
            }
        )


def privacy_utility_curve(
    estimator,
    X,
    y=None,
    *,
    epsilons,
    n_repeats=10,
    scoring=None,
    param_name="epsilon",
    test_size=0.25,
    reference_estimator=None,
    accountant=None,
    random_state=None,
    n_jobs=None,
    verbose=0,
):
    """Test score of a private estimator at several privacy levels ε.

    ``X, y`` is split once into a train and a test part (stratified for a
    classifier). For every ε and every repeat, a clone of ``estimator`` with
    ``param_name`` set to ε is fitted on the train part and scored on the
    test part. An optional non-private ``reference_estimator`` is fitted and
    scored once on the same split.

    **Every private fit is charged to the accountant.** The sweep spends
    ``n_repeats * sum(epsilons)`` (plus the cost of any other private step),
    so run it on data whose privacy is not at stake (public or synthetic data
    resembling the real data) or on data whose budget accounts for it. The
    whole cost is checked against the budget before anything is fitted.

    Parameters
    ----------
    estimator : estimator object
        A private estimator (or a pipeline or meta-estimator containing one)
        whose cost per fit is bounded by its ε parameter, see Notes.
    X : array-like of shape (n_samples, n_features)
        The data, split into train and test parts.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs), default=None
        Targets (``None`` for unsupervised estimators).
    epsilons : array-like of shape (n_epsilons,)
        The privacy levels: finite, positive and distinct. They are sorted.
    n_repeats : int, default=10
        Fits per ε, each with its own random state when ``random_state`` is
        given.
    scoring : str, callable or None, default=None
        A single scorer, as in :func:`sklearn.metrics.check_scoring`; ``None``
        uses the estimator's ``score`` method (a search's ``score`` with a
        private scorer charges too, and is planned). A private scorer
        (:func:`~skdp.metrics.make_private_scorer`) makes every test score a
        release charged to the sweep's accountant: its cost, times the
        number of scores (they read the same test rows, so they compose
        sequentially), is part of the budget check before the sweep; every
        step of ``estimator`` fitted on data must then be private (the
        scores take the fitted models as public releases).
    param_name : str, default="epsilon"
        The ε parameter to vary, as accepted by ``set_params`` (for a pipeline
        e.g. ``"sampleaggregateestimator__epsilon"``). It must be the
        ``epsilon`` parameter of a private estimator: one with an
        ``accountant`` parameter.
    test_size : float or int, default=0.25
        Size of the test part, as in
        :func:`~sklearn.model_selection.train_test_split`.
    reference_estimator : estimator object or None, default=None
        A non-private estimator (e.g. ``LogisticRegression()``) fitted once on
        the train part; its test score is the curve's ``reference_score``. It
        may contain free skdp steps (those whose
        :func:`~skdp.model_selection.fit_cost` is zero, such as a scaler with
        public ``bounds``), e.g. the private pipeline's preprocessing followed
        by a plain model; a step that costs anything is refused.
    accountant : BudgetAccountant or None, default=None
        Charged by every private fit. It replaces every ``accountant``
        parameter of ``estimator``. ``None`` uses the accountant the
        estimator's private steps name, or, if they name none,
        :func:`~skdp.default_accountant` as it is when the function is called.
    random_state : int, RandomState instance or None, default=None
        Seeds the train/test split and, through
        :class:`numpy.random.SeedSequence`, one seed per repeat that is set on
        every ``random_state`` parameter of the estimator, and one more for
        the noise of a private ``scoring``. Repeat ``r`` uses the same seeds
        at every ε (common random numbers: differences between
        ε are not blurred by different partitions or noise draws). ``None``
        draws a random split and leaves the estimator's own
        ``random_state`` parameters as they are. Seeded noise is reproducible,
        not secret: fine for an experiment, not for a release.
    n_jobs : int or None, default=None
        Fits run in parallel with :class:`sklearn.utils.parallel.Parallel`,
        preferring threads, which share the in-memory accountant. A process
        backend set with ``joblib.parallel_config`` needs an accountant with a
        SQLite ledger (``BudgetAccountant(..., ledger="budget.sqlite")``): a
        copy of an in-memory accountant in a worker process refuses to spend.
        ``None`` means 1 unless in a joblib context.
    verbose : int, default=0
        Progress on standard output, in scikit-learn's style: ``>= 1`` the
        plan (``Fitting 10 repeats for each of 4 epsilons, totalling 40
        fits``) and one line per ε with its mean score; ``>= 2`` one line per
        fit with its time; ``>= 3`` also each fit's score and joblib's own
        messages. The scores printed are those the returned curve holds
        (test scores are this function's output, see the warning above about
        the data it is run on); nothing else computed from the rows is
        printed.

    Returns
    -------
    curve : PrivacyUtilityCurve
        ``epsilons`` (sorted), ``scores`` of shape ``(n_epsilons,
        n_repeats)``, ``reference_score``, ``scoring`` and what was spent.

    Raises
    ------
    ValueError
        For invalid arguments, an unknown ``param_name``, or a private step
        whose cost cannot be bounded. Nothing is charged.
    BudgetExceededError
        When the whole sweep does not fit in the remaining budget; raised
        before anything is fitted, and nothing is charged.
    RuntimeError
        When a fit reports spending more than its ε and δ parameters (the
        sweep stops), or when the accountant recorded a different total than
        the fits reported.

    See Also
    --------
    PrivacyUtilityDisplay : Plot the curve.
    sklearn.model_selection.validation_curve : Scores against any parameter,
        with cross-validation.

    Notes
    -----
    **Cost.** The cost of a fit is not known in general, so the function
    requires that it is bounded by the estimator's parameters: the private
    estimator that owns ``param_name`` costs at most (ε, ``delta``) and any
    other private step (another estimator with an ``accountant`` parameter)
    at most its own (``epsilon``, ``delta``). The sweep's whole cost, every
    fit and every private score (:func:`~skdp.model_selection.fit_cost` of
    each fit, the scorer's cost per score), is passed to
    :meth:`BudgetAccountant.check <skdp.BudgetAccountant.check>` before the
    first fit, each release a part, so the accountant composes them as it
    will compose the spends (a ``"zcdp"``, ``"pld"`` or advanced
    accountant admits what it will record); the refusal names the fits and
    the scores. Another
    thread spending from the same accountant during the sweep can still make
    a later fit fail: the accountant never overspends.

    After each fit, the ``epsilon_spent_`` and ``delta_spent_`` of its
    private steps are compared with those bounds, and after the sweep their
    sum with the ledger's new entries. A step that does not expose
    ``epsilon_spent_`` (for example inside a meta-estimator that fits
    clones) cannot be checked and is skipped. An estimator whose cost is not
    paid in ``fit`` is refused by the first check, for example
    :class:`~skdp.ensemble.SampleAggregateEstimator` with ``aggregate='vote'``
    or ``'mean'``, which charges ε per predicted row when scored.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdp import BudgetAccountant, SampleAggregateEstimator
    >>> from skdp.model_selection import privacy_utility_curve
    >>> X, y = make_classification(n_samples=2000, n_features=4,
    ...                            n_redundant=0, random_state=0)
    >>> clf = SampleAggregateEstimator(LogisticRegression(), classes=[0, 1],
    ...                                n_blocks=20, output_bounds=("l2", 5.0))
    >>> acc = BudgetAccountant(epsilon=10.0)
    >>> curve = privacy_utility_curve(
    ...     clf, X, y, epsilons=[1.0, 0.1, 0.5], n_repeats=3,
    ...     reference_estimator=LogisticRegression(), accountant=acc,
    ...     random_state=0)
    >>> curve.epsilons, curve.scores.shape
    (array([0.1, 0.5, 1. ]), (3, 3))
    >>> acc.total()  # 3 repeats * (0.1 + 0.5 + 1.0)
    (4.8, 0.0)
    >>> bool(curve.mean_scores[-1] <= curve.reference_score + 0.05)
    True
    """
    epsilons = _check_epsilons(epsilons)
    if isinstance(n_repeats, bool) or not isinstance(n_repeats, Integral):
        raise TypeError(f"n_repeats must be an int; got {n_repeats!r}.")
    if n_repeats < 1:
        raise ValueError(f"n_repeats must be >= 1; got {n_repeats}.")
    if isinstance(verbose, bool) or not isinstance(verbose, Integral):
        raise TypeError(f"verbose must be an int; got {verbose!r}.")
    if isinstance(scoring, list | tuple | set | dict):
        raise ValueError(
            "scoring must be a single scorer (a string, a callable or None); "
            f"got {type(scoring).__name__}."
        )

    plan = _PrivatePlan(estimator, param_name)
    acc = plan.resolve_accountant(accountant)
    if reference_estimator is not None:
        reference_estimator = _check_non_private(reference_estimator, _n_features(X))

    check_random_state(random_state)  # rejects invalid seeds up front
    if random_state is None:
        split_state, seeds = None, None
        plan.warn_if_fixed_random_state(n_repeats)
    else:
        if isinstance(random_state, Integral):
            split_state = int(random_state)
        else:
            split_state = int(check_random_state(random_state).randint(_MAX_SEED))
        children = np.random.SeedSequence(split_state).spawn(n_repeats)
        # per repeat: the estimator's seed, then the private scores' seed
        states = [c.generate_state(2) % _MAX_SEED for c in children]
        seeds = [int(state[0]) for state in states]
        score_seeds = [int(state[1]) for state in states]

    base = route_accountant(clone(estimator), acc)
    private = isinstance(scoring, PrivateScorer)  # each score a charged release
    if private:  # the scores treat the fitted models as public releases
        check_private_model(estimator)
    scorer = charged_to(scoring, acc) if private else check_scoring(base, scoring)
    reference_scorer = (
        None
        if reference_estimator is None
        else scorer
        if private
        else check_scoring(reference_estimator, scoring=scoring)
    )

    n_fits = epsilons.size * n_repeats
    n_scores = n_fits + (reference_estimator is not None) if private else 0
    # the scores read the same test rows: they compose sequentially
    score_costs = scoring_costs(scoring, n_scores)
    if scoring is None:  # the estimator's own score may be a private scorer
        own = score_method_scorers(estimator)
        score_costs += scoring_costs(own, n_fits)
        n_scores = n_fits * len(own)
    per_score = (
        (exact(scoring.cost.epsilon), exact(scoring.cost.delta)) if private else (0, 0)
    )
    fit_costs = [plan.cost(estimator, eps, _n_features(X)) for eps in epsilons]
    per_fit = [(c.epsilon, c.delta) for c in fit_costs]
    planned = [c for c in fit_costs for _ in range(n_repeats)] + score_costs
    # before the data is split or any estimator is fitted
    _check_budget(acc, planned, n_fits, n_scores)

    stratify = y if (y is not None and is_classifier(estimator)) else None
    parts = train_test_split(
        *((X,) if y is None else (X, y)),
        test_size=test_size,
        random_state=split_state,
        stratify=stratify,
    )
    if y is None:
        (X_train, X_test), y_train, y_test = parts, None, None
    else:
        X_train, X_test, y_train, y_test = parts

    reference_score = None
    if reference_estimator is not None:
        reference_score = _fit_and_score(
            clone(reference_estimator),
            X_train,
            y_train,
            X_test,
            y_test,
            reference_scorer,
        )

    progress = Progress("privacy_utility_curve", verbose)
    progress(
        1,
        f"Fitting {plural(n_repeats, 'repeat')} for each of "
        f"{plural(epsilons.size, 'epsilon')}, totalling {plural(n_fits, 'fit')}",
    )
    n_entries_before = len(acc.entries)
    parallel = Parallel(
        n_jobs=n_jobs,
        prefer="threads",
        return_as="generator",
        verbose=verbose if verbose > 2 else 0,
    )
    results = parallel(
        delayed(_private_fit_and_score)(
            base,
            plan,
            {
                param_name: float(eps),
                **plan.seed_params(None if seeds is None else seeds[r]),
            },
            per_fit[i],
            X_train,
            y_train,
            X_test,
            y_test,
            scorer
            if not private or seeds is None
            else charged_to(scoring, acc, random_state=score_seeds[r]),
        )
        for i, eps in enumerate(epsilons)
        for r in range(n_repeats)
    )

    scores = np.empty((epsilons.size, n_repeats))
    reported = []
    for k, (score, spent, elapsed) in enumerate(results):
        i, r = divmod(k, n_repeats)
        scores[i, r] = score
        reported.append(spent and (spent[0] + per_score[0], spent[1] + per_score[1]))
        shown = f", score={score:.4g}" if verbose > 2 else ""
        progress(
            2,
            f"END epsilon={epsilons[i]:g}, repeat {r + 1}/{n_repeats}{shown}; "
            f"total time={elapsed:.1f}s",
        )
        if r == n_repeats - 1:
            progress(
                1,
                f"epsilon={epsilons[i]:g}: {n_repeats}/{n_repeats} fits, "
                f"mean score {scores[i].mean():.4g}",
            )

    new_entries = acc.entries[n_entries_before:]
    # the fits report their costs as stated (in their own privacy unit)
    ledger_eps = sum((exact(e.epsilon) for e in new_entries), Fraction(0))
    ledger_delta = sum((exact(e.delta) for e in new_entries), Fraction(0))
    if all(spent is not None for spent in reported):
        _check_ledger(reported, ledger_eps, ledger_delta)
    # what the accountant counted, in its unit (a row-level fit counts
    # max_rows_per_group times in a person-level accountant)
    counted_eps = sum((exact(e.cost[0]) for e in new_entries), Fraction(0))
    counted_delta = sum((exact(e.cost[1]) for e in new_entries), Fraction(0))

    return PrivacyUtilityCurve(
        epsilons=epsilons,
        scores=scores,
        reference_score=reference_score,
        scoring=_scoring_name(scoring),
        estimator_name=plan.owner_name,
        param_name=param_name,
        epsilon_spent=_float_up(counted_eps),
        delta_spent=_float_up(counted_delta),
    )
