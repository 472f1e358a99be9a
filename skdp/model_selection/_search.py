"""Private model selection by report-noisy-max: ``NoisyMaxSearchCV``."""

from numbers import Integral, Real

from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import indexable

from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms import check_random_source
from skdp.model_selection._cost import (
    check_fit_inputs,
    route_accountant,
    sum_costs,
)
from skdp.model_selection._holdout import (
    _fit_prepaid,
    check_fits_on_zero_rows,
    check_holdout_targets,
)
from skdp.model_selection._search_common import BestEstimatorMixin, in_memory_shape
from skdp.model_selection._search_plan import SearchPlanMixin
from skdp.model_selection._search_selection import SearchSelectionMixin
from skdp.model_selection._subsample import (  # noqa: F401 (re-exported)
    _ABSTAIN,
    _block_vote,
    block_votes,
    is_one_split,
    select_by_votes,
    vote_histogram,
)
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._progress import Progress, format_params

__all__ = ["NoisyMaxSearchCV"]


class NoisyMaxSearchCV(
    SearchPlanMixin,
    SearchSelectionMixin,
    BestEstimatorMixin,
    GroupsMixin,
    PrivateEstimatorMixin,
    MetaEstimatorMixin,
    BaseEstimator,
):
    """Choose hyper-parameters privately, by report-noisy-max.

    Plain cross-validation on private data releases which configuration scored
    best, which depends on every row. ``NoisyMaxSearchCV`` releases the choice
    with differential privacy, then (``refit=True``) fits the chosen
    configuration as a private estimator. The whole cost (selection, candidate
    training, refit) is computed from public parameters and charged to the
    accountant in this process before any data is read or any work is
    dispatched; ``cost_`` reports it.

    Parameters
    ----------
    estimator : estimator instance
        The model whose parameters are searched. With ``method='subsample'``
        it is fitted on small blocks, non-privately (only the vote is
        released): give the plain model, e.g. ``LogisticRegression()``, and a
        private ``refit``. With ``method='holdout'`` it must be private (see
        Notes).
    param_grid : dict or list of dicts
        Candidate settings, as for :class:`~sklearn.model_selection.GridSearchCV`.
    epsilon : float, default=1.0
        Privacy budget of the selection step.
    method : {"subsample", "holdout"}, default="subsample"
        ``"subsample"``: split the rows into ``n_blocks`` disjoint blocks;
        each block votes for the candidate with the best internal CV score;
        the winner is drawn by permute-and-flip over the votes.
        ``"holdout"``: train every (private) candidate on one part of the
        rows and score it on the disjoint rest with a bounded per-row score;
        the winner is drawn by permute-and-flip over the summed scores.
    n_blocks : int, default=50
        Number of blocks for ``"subsample"``. More blocks give more votes (the
        noise is a few votes) but fewer rows per block, so noisier
        per-block choices. It is not checked against the number of rows
        (private): a block without rows, or whose fits fail, abstains.
    cv : int or cross-validation generator, default=2
        Internal validation inside each block (``"subsample"``). An integer
        ``k >= 2``: ``k``-fold cross-validation, stratified for classifiers
        as in scikit-learn. Two folds score every row of a block once, as
        more folds do, with the fewest fits (the block fits are most of the
        search's time); their models train on half a block instead of two
        thirds with 3 folds. ``1``: one split per block, one fit per
        candidate and block, about twice as fast as ``2``: the candidates
        train on one half of the block and are scored on the other (the
        rows alternate between the halves in their order in the block,
        within each class for a classifier). Scoring half the rows makes
        each block's vote noisier: on UCI Adult it made the same choices as
        ``2`` at 50 and 100 blocks, but with smaller vote margins and a
        lower chance of a good choice at 20 and 50 blocks (see Notes). Or
        any scikit-learn splitter or iterable of splits (seed a shuffling
        one for reproducible votes).
    scoring : str, callable or None, default=None
        ``"subsample"``: any scikit-learn scoring (it is computed inside the
        blocks). ``"holdout"``: ``None`` or ``"accuracy"`` (classifiers: the
        number of correct predictions, sensitivity 1), or
        ``"neg_absolute_error"`` / ``"neg_squared_error"`` with a
        ``loss_bound`` (regressors: per-row losses clipped to
        ``[0, loss_bound]``, sensitivity ``loss_bound``). A private scorer
        (:func:`~skdp.metrics.make_private_scorer`) is read as its metric:
        the scores are never released, so its ε is not spent.
    loss_bound : float or None, default=None
        Public clip of per-row losses for the regression scorings of
        ``"holdout"``.
    holdout_size : float, default=0.3
        Each row is held out independently with this probability
        (``"holdout"``).
    refit : bool or callable, default=True
        ``True``: fit ``estimator`` with the chosen parameters on all the
        rows; it must then be private. A callable ``refit(params)`` returns
        the unfitted private estimator to fit instead (e.g. a
        :class:`~skdp.SampleAggregateEstimator` around the chosen plain
        model). ``False``: release ``best_params_`` only (with ``"holdout"``
        the winning candidate, trained on the training part and already paid
        for, becomes ``best_estimator_``).
    n_jobs : int or None, default=None
        Parallel jobs for the block or candidate fits (any joblib backend,
        processes included: workers never charge the accountant). The
        ``"subsample"`` blocks prefer worker processes (joblib's ``loky``
        unless a backend is configured): their small fits hold the GIL, so
        threads would run them one at a time. Each worker receives one
        block's rows at a time; starting the workers costs about a second
        on the first parallel call of a session (several on a busy machine).
    accountant : BudgetAccountant or None, default=None
        Charged for the whole cost; ``None`` uses the default accountant.
        Candidates' own ``accountant`` parameters are overridden.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows with ``fit(..., groups=...)``
        (required then, refused without). ``"subsample"``: a whole group
        goes to one block, so the vote does not depend on ``k``;
        ``"holdout"``: the candidates fit with it and a held-out group
        counts as at most ``k`` rows. The refit gets it (it must take
        groups). See Notes, **Groups**, and :ref:`user_level_privacy`.
    random_state : None, int or numpy.random.RandomState, default=None
        Source of the partition, the selection noise and the candidates'
        seeds. ``None`` draws from the operating system's secure generator.
    verbose : int, default=0
        Progress on standard output, as scikit-learn's searches print it:
        ``>= 1`` the plan (``Fitting 2 folds for each of 4 candidates in each
        of 50 blocks, totalling 400 fits``), the charged cost and, once
        released, the chosen candidate; ``>= 2`` one line per block
        (``"subsample"``) or per candidate (``"holdout"``) with its parameters
        and time; ``>= 3`` also joblib's own messages. Only public things are
        printed (counts, parameters, timings, the cost from public parameters,
        the released choice): never a block's vote or a candidate's score on
        the rows, which are exactly what the private selection protects.

    Attributes
    ----------
    best_index_ : int
        Index of the chosen candidate in ``ParameterGrid(param_grid)``.
    best_params_ : dict
        The chosen parameter setting.
    best_estimator_ : estimator
        The private model refitted (or, for ``"holdout"`` with
        ``refit=False``, trained) with ``best_params_``. Absent for
        ``"holdout"`` with ``refit=False`` if the chosen candidate's fit
        failed (see Notes, "After the charge").
    cost_ : PrivacyCost
        What was charged: selection + candidate training + refit.
    n_candidates_ : int
        Number of candidate settings.
    epsilon_spent_, delta_spent_ : float
        Same as ``cost_``.
    classes_ : ndarray
        Class labels of ``best_estimator_`` (classifiers).

    See Also
    --------
    fit_cost : The cost of one fit of an estimator, before any data.
    skdp.SampleAggregateEstimator : A private model from any estimator.

    Notes
    -----
    **Privacy (add/remove one row).**

    ``"subsample"`` (Dwork–Roth Example 7.1; Programming-DP ch. 9): blocks
    come from independent uniform row labels, so adding or removing a row
    changes one block, hence one block's vote: every vote count changes by at
    most 1, but one goes up while another goes down. The votes are therefore
    1-sensitive and **not** monotone, and permute-and-flip uses
    ``exp(ε (v_r − v*) / 2)``: ε-DP. Blocks whose internal CV fails abstain,
    which moves a vote to or from abstention, covered by the same bound.
    Only the winner's index is released, never the votes. Cost: ``epsilon``
    plus the refit. A vote may be any function of its block's rows, so the
    internal split (``cv``) does not enter the privacy argument; but it must
    be a function of *its own* rows: every ``random_state`` of the block's
    fits (the candidates', their parameter objects', a shuffling ``cv``
    splitter's) that is not an integer is set to a seed of the block's own,
    drawn before any block runs, where left at None (or a generator object)
    it would draw from a generator all blocks share and one block's rows
    would move the draws of the next. A candidate that
    draws from the global generator without a ``random_state`` parameter
    cannot be isolated: give it one.

    **Internal split** (``"subsample"``). What the noise has to beat is the
    winner's margin in votes, and a block's vote is only as good as its
    internal score. With ``cv=1`` each block scores half of its rows, so its
    votes scatter more: on UCI Adult (6 values of ``C`` for a logistic
    regression, 24,420 rows, selection ε = 1; ``benchmarks/README.md``,
    "One split per block") the winner's mean margin at 50 blocks was 11.9
    votes with ``cv=1`` against 21.0 with ``cv=2`` (noise scale 2 votes), and
    the probability over the noise of choosing a configuration within one
    accuracy point of the best private one was 0.98 against 1.00 (0.89
    against 0.98 at 20 blocks). ``cv=2`` therefore stays the default;
    ``cv=1`` halves the block fits where the vote margin allows it (many
    blocks, or a grid with a clear winner).

    ``"holdout"``: each row is held out independently (a data-independent
    rule). A row in the training part changes the candidates, which are
    private with their own costs ``c_r``; the selection is post-processing
    of them. A row in the held-out part changes every summed score in the
    same direction by at most ``Δ`` (1 for correct predictions; the loss
    bound for clipped losses): monotone, so permute-and-flip at ``Δ/ε`` is
    ε-DP. The parts are disjoint, so the two compose in parallel:
    ``max(Σ c_r, ε)`` (δ: ``Σ δ_r``), plus the refit on all rows.

    **After the charge** (``"holdout"``) the parts are drawn, so what they
    hold is private, and nothing may raise, warn or change path on it. The
    rules, all public:

    - A candidate is fitted on its part whatever the part holds: zero rows
      (probability ``holdout_size ** n``), one class, any values. skdp's
      estimators take zero rows there (and only there): their release on
      the empty data set is the same mechanism, sums of zero with noise
      from public parameters, so the part's size is never revealed by a
      refusal. (A direct call still refuses an empty input before its
      charge.) Before the charge every candidate is probed on the schema
      of the input with no rows, and one that refuses them is refused with
      nothing charged (scikit-learn's transformers refuse zero rows: apply
      public preprocessing before the search). A classifier with
      ``classes=None`` selects its labels privately on its part; when fewer
      than two are released its fit fails after its own charge, a
      function of its release, and it scores the worst. Its refit on all
      rows can fail the same way after the search's charge (state
      ``classes`` to rule that out).
    - Each held-out row's score is computed from that row alone (and from
      the candidate, a private release from the disjoint training part),
      so one held-out row moves every total by at most ``Δ``, in the same
      direction. Predictions and targets are compared row by row, one row
      of outputs per held-out row (``y`` of shape ``(n, 1)`` is made 1-D
      before the charge for a single-output estimator, as scikit-learn's
      ``column_or_1d`` does, and ``y`` of several columns is refused for
      it); a prediction of another shape than the targets' (public: the
      candidate's outputs and ``y``'s columns) scores the worst. The
      held-out rows are predicted together, and if that fails (an
      exception, another shape, a score that is not finite) each row is
      predicted alone: a row whose own prediction fails scores the worst
      alone (0, or a loss of ``loss_bound``), and the other rows keep
      their scores. This rests on ``predict`` treating the rows of its
      input independently (scikit-learn's contract), so that a row gets
      the same prediction in the batch as alone.
    - A candidate whose fit fails all the same scores the worst possible on
      every held-out row (0 correct predictions, or a loss of
      ``loss_bound``): a function of the candidate's own private release,
      since skdp's estimators do not fail after their charge. With
      ``refit=False`` such a candidate, if chosen, leaves no
      ``best_estimator_``.
    - An empty held-out part sums to 0 for every candidate (the sum over no
      rows): the selection is then uniform.
    - The totals are formed in units of ``Δ``: each row adds a score in
      ``[0, 1]`` or ``[-1, 0]`` (a loss is the mean over the row's outputs
      of each output's error clipped to ``loss_bound`` and divided by it;
      an error that is NaN counts as ``loss_bound``), rounded to a multiple
      of ``2**-24``, so that the sum is exact up to ``2**29`` held-out rows
      and never overflows, whatever ``loss_bound``.
    - Warnings raised by the candidates' fits and predictions after the
      charge are silenced (whether a fit warns depends on its rows).

    The refit runs on all the rows, which were validated before the charge
    by the refit estimator itself (up to its charge), so it sees exactly
    the input it accepted.

    **Groups** (``fit(X, y, groups=g)``, ``max_rows_per_group=k``).
    Neighbours add or remove a whole group. ``"subsample"``: each group
    gets an independent uniform block label, so with or without any one
    group the others' labels are alike and that group lands in one block:
    one vote moves, for a group of any size (``k`` does not enter the
    selection). A block's internal split keeps groups whole (``cv=1``
    alternates them, an integer uses group k-fold, a splitter gets
    ``groups``). ``"holdout"``: a group is held out when the keyed hash of
    its label's value is below ``holdout_size`` (a key from
    ``random_state``, never the rows), so it lands whole in one part and
    no other group moves. The candidates fit their part with its groups
    and ``k``; a held-out group of ``m`` rows adds ``min(m, k) / k`` times
    their mean score (the expected sum of ``min(m, k)`` rows drawn
    uniformly, over ``k``): in ``[0, 1]`` (``[-1, 0]``) in units of
    ``k Δ``, so permute-and-flip at ``k Δ / ε``, and the parallel
    composition above holds for a group. The refit gets ``groups``, ``k``.

    The refit is charged at the largest cost among the candidates (the
    winner is unknown when the charge is made). Candidate and refit fits run
    under a fresh accountant holding exactly their share of the charge, so a
    fit that would spend more than its declared cost fails instead of
    spending unrecorded budget (a ``"holdout"`` candidate that fails so
    scores the worst, below).

    **What is public.** The number of rows and features (to check
    ``n_blocks``), the grid, and everything the estimators treat as public.
    No per-candidate scores are exposed (there is no ``cv_results_``).

    References
    ----------
    .. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
       Privacy", §3.3 and Example 7.1, 2014.
    .. [2] R. McKenna and D. Sheldon, "Permute-and-Flip: A new mechanism for
       differentially private selection", NeurIPS 2020.
    .. [3] J. Liu and K. Talwar, "Private selection from private candidates",
       STOC 2019.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdp import BudgetAccountant, SampleAggregateEstimator
    >>> from skdp.model_selection import NoisyMaxSearchCV
    >>> X, y = make_classification(n_samples=6000, n_features=5, random_state=0)
    >>> acc = BudgetAccountant(epsilon=3.0)
    >>> search = NoisyMaxSearchCV(
    ...     LogisticRegression(),
    ...     {"C": [1e-4, 1e-2, 1.0]},
    ...     epsilon=1.0,
    ...     n_blocks=20,
    ...     refit=lambda params: SampleAggregateEstimator(
    ...         LogisticRegression(**params), classes=[0, 1], n_blocks=100,
    ...         epsilon=1.0, output_bounds=('l2', 5.0)),
    ...     accountant=acc,
    ...     random_state=0,
    ... ).fit(X, y)
    >>> search.best_params_
    {'C': 1.0}
    >>> acc.total()
    (2.0, 0.0)
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"])],
        "param_grid": [dict, list],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "method": [StrOptions({"subsample", "holdout"})],
        "n_blocks": [Interval(Integral, 2, None, closed="left")],
        "cv": [Interval(Integral, 1, None, closed="left"), "cv_object"],
        "scoring": [str, callable, None],
        "loss_bound": [Interval(Real, 0, None, closed="neither"), None],
        "holdout_size": [Interval(Real, 0, 1, closed="neither")],
        "refit": ["boolean", callable],
        "n_jobs": [Integral, None],
        "accountant": [HasMethods(["spend_many"]), None],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator,
        param_grid,
        *,
        epsilon=1.0,
        method="subsample",
        n_blocks=50,
        cv=2,
        scoring=None,
        loss_bound=None,
        holdout_size=0.3,
        refit=True,
        n_jobs=None,
        accountant=None,
        max_rows_per_group=None,
        random_state=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.method = method
        self.n_blocks = n_blocks
        self.cv = cv
        self.scoring = scoring
        self.loss_bound = loss_bound
        self.holdout_size = holdout_size
        self.refit = refit
        self.n_jobs = n_jobs
        self.accountant = accountant
        self.max_rows_per_group = max_rows_per_group
        self.random_state = random_state
        self.verbose = verbose

    @property
    def _estimator_type(self):
        return get_tags(self.estimator).estimator_type

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        tags.target_tags.required = True
        tags.non_deterministic = True
        return tags

    # -- fit -----------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, groups=None):
        """Select a configuration privately and, if asked, refit it privately.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (any input the estimator accepts, e.g. a DataFrame).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit (in memory), with ``max_rows_per_group``:
            neighbours add or remove one whole group; each block or part
            holds whole groups, and the fits get them (Notes). None: one
            row.

        Returns
        -------
        self : NoisyMaxSearchCV
        """
        if y is None:
            # scikit-learn's wording (validate_data), which its checks expect
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y "
                "is None."
            )
        X, y = indexable(X, y)
        n_features = X.shape[1] if hasattr(X, "shape") and X.ndim == 2 else None
        plan, items = self._plan(n_features)
        unit = self._privacy_unit(groups, in_memory_shape(X))
        fit_params = {} if unit.groups is None else {"groups": unit.groups}
        stated = self._stated_for(items, unit)  # as charged: for the unit
        self._resolve_accountant().check(sum_costs([cost for _, cost in stated]))
        self._check_rows(X, y)
        if self.method == "holdout":
            y = check_holdout_targets(self.estimator, y)
        for model in plan["refits"] or ():
            check_fit_inputs(model, X, y, **fit_params)
        if self.method == "holdout":
            for model in plan["candidates"]:
                check_fit_inputs(model, X, y, **fit_params)
                check_fits_on_zero_rows(model, X, y, unit.groups)
        source = check_random_source(self.random_state)
        progress = Progress(type(self).__name__, self.verbose)
        progress(1, self._plan_message(plan))
        accountant = self._charge(
            [(unit.label(label), *cost) for label, *cost in items], unit=unit
        )
        self.cost_ = sum_costs([cost for _, cost in items])
        progress(
            1,
            f"charged epsilon={self.cost_.epsilon:.6g}, delta="
            f"{self.cost_.delta:.6g} (computed from public parameters)",
        )

        if self.method == "subsample":
            self.best_index_ = self._select_subsample(
                X, y, plan, source, progress, unit.groups
            )
            trained = None
        else:
            self.best_index_, trained = self._select_holdout(
                X, y, plan, source, progress, unit
            )
        self.best_params_ = dict(plan["grid"][self.best_index_])
        self.n_candidates_ = len(plan["grid"])
        self._n_features = n_features
        progress(
            1,
            f"selected candidate {self.best_index_ + 1}/{self.n_candidates_} "
            f"(released by permute-and-flip): {format_params(self.best_params_)}",
        )

        best = None
        if plan["refits"] is not None:
            model = self._seed_if_reproducible(plan["refits"][self.best_index_], source)
            best = progress.timed(
                1,
                lambda: _fit_prepaid(model, plan["refit_cost"], X, y, **fit_params),
                "END refit of the selected candidate on all rows",
            )
        elif trained is not None:
            best = trained
        if best is not None:
            # later charges (e.g. per-row predict) go to the real accountant
            self.best_estimator_ = route_accountant(best, accountant)
            if hasattr(best, "classes_"):
                self.classes_ = best.classes_
        return self
