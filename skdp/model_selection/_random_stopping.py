"""Hyper-parameter search by random stopping: ``RandomStoppingSearchCV``."""

import math
import warnings
from numbers import Integral, Real

from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import indexable

from skdp.accounting import PrivacyCost
from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms import check_random_source
from skdp.model_selection._cost import (
    check_fit_inputs,
    check_private_model,
    fit_cost,
    largest_cost,
    route_accountant,
    sum_costs,
)
from skdp.model_selection._holdout import (
    check_fits_on_zero_rows,
    check_holdout_targets,
    fit_on_part,
)
from skdp.model_selection._holdout_parts import held_out_scorer, split_parts
from skdp.model_selection._random_stopping_cost import (
    STOPPING_RULES,
    check_rdp_accountable,
    random_stopping_epsilon,
    repeat_and_select,
    sample_repetitions,
    stopping_distribution,
    stopping_label,
)
from skdp.model_selection._search_common import (
    BestEstimatorMixin,
    check_search_rows,
    in_memory_shape,
    seed_if_reproducible,
    with_group_bound,
)
from skdp.model_selection._validation import (
    _check_scorer_inputs,
    _evaluate,
    _fold_seeds,
    _predictions,
    _resolved_scorer,
)
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._progress import Progress, format_params, plural
from skdp.utils._validation import check_delta

__all__ = ["RandomStoppingSearchCV"]


class RandomStoppingSearchCV(
    BestEstimatorMixin,
    GroupsMixin,
    PrivateEstimatorMixin,
    MetaEstimatorMixin,
    BaseEstimator,
):
    """Tune hyper-parameters privately by random stopping (Papernot–Steinke).

    Each run draws a candidate uniformly from the public ``param_grid``, fits
    it privately on the training part of the rows and scores it privately
    (``scoring``, a private scorer) on the held-out part. The runs are
    repeated a random number ``K`` of times, ``K`` drawn from a truncated
    negative binomial or a Poisson distribution of mean ``n_iter``, and only
    the best run (by its released score) is released. The whole cost, Rényi
    DP of the repeated search converted to ``(ε, δ)``, is computed from the
    public parameters and charged as one ledger entry before any data is
    read; ``cost_`` reports it.

    Parameters
    ----------
    estimator : estimator instance
        A private skdp estimator (or a pipeline of them) whose releases have
        a Rényi DP curve: Gaussian releases or pure ε-DP ones (e.g.
        :class:`~skdp.PrivateLogisticRegression`,
        :class:`~skdp.PrivateGaussianNB`). Releases stated only as
        ``(ε, δ)`` (propose-test-release, smooth sensitivity) are refused.
    param_grid : dict or list of dicts
        The public candidates, as for
        :class:`~sklearn.model_selection.GridSearchCV`; each run draws one of
        them uniformly at random (with replacement). To sample a continuous
        range, give a fine grid (e.g. ``np.geomspace``).
    scoring : PrivateScorer
        From :func:`~skdp.metrics.make_private_scorer`; its cost is part of
        each run's. A classification scorer needs public labels: its
        ``labels`` or the estimator's ``classes``.
    n_iter : float, default=10.0
        ``E[K]``, the expected number of runs (greater than 1).
    stopping : {"truncated_negative_binomial", "poisson"}, \
            default="truncated_negative_binomial"
        The distribution of ``K``: ``D_{η,γ}`` of the paper (``γ`` is solved
        from ``n_iter``), or Poisson of mean ``n_iter``.
    eta : float, default=1.0
        The shape ``η > -1`` of the truncated negative binomial: 1 is the
        geometric distribution, 0 the logarithmic one. A smaller ``η`` costs
        less ε at the same mean but makes few runs likelier (``P[K = 1]``
        is 0.10 at ``η = 1``, 0.27 at ``η = 0``, for a mean of 10).
    delta : float, default=1e-6
        The δ of the conversion to ``(ε, δ)``: the search's whole δ.
    holdout_size : float, default=0.3
        Each row (each group, with ``groups``) is held out for scoring
        independently with this probability; the others train the candidates.
    refit : bool, default=False
        ``False``: ``best_estimator_`` is the winning run's model, trained
        on the training part and already paid for. ``True``: the winning
        parameters are fitted again on all the rows, another release,
        charged as a second ledger entry (the largest candidate fit cost).
    accountant : BudgetAccountant or None, default=None
        Charged for the whole cost; ``None`` uses the default accountant.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows with ``fit(..., groups=...)``
        (required then, refused without): the candidates (which must take
        groups) fit with it, and the score keeps at most ``k`` rows of each
        group. See Notes, **Groups**, and :ref:`user_level_privacy`.
    random_state : None, int or numpy.random.RandomState, default=None
        Source of ``K``, of the candidates drawn, of the split and of the
        fits' and scores' noise. ``None`` draws from the operating system's
        secure generator (``K`` must stay secret: see Notes).
    verbose : int, default=0
        ``>= 1``: the plan, the charged cost and the released choice. Never
        a line per run: the number of runs is secret.

    Attributes
    ----------
    best_index_ : int or None
        Index of the released candidate in ``ParameterGrid(param_grid)``
        (None when no run was made, see Notes).
    best_params_ : dict or None
        Its parameters.
    best_score_ : float
        Its released private score (scikit-learn's sign: greater is
        better; NaN when no run was made).
    best_estimator_ : estimator
        The winning run's model (``refit=False``, absent if its fit failed)
        or its refit on all rows (``refit=True``).
    cost_ : PrivacyCost
        What was charged.
    n_candidates_ : int
        The size of the public grid (not the number of runs).
    gamma_ : float or None
        ``γ`` of the truncated negative binomial (None for Poisson).
    epsilon_spent_, delta_spent_ : float
        Same as ``cost_``.
    classes_ : ndarray
        Class labels of ``best_estimator_`` (classifiers).

    See Also
    --------
    NoisyMaxSearchCV : Private selection among all candidates at once.
    skdp.model_selection.cross_validate : Private K-fold evaluation.

    Notes
    -----
    **The base run** ``Q`` (Papernot and Steinke [1]_): a candidate drawn
    from the public grid, its private fit on the training part (cost
    ``c_r``) and one private score on the held-out part (cost ``s``). Each
    row is in one part by its own coin, so a row added or removed moves the
    fit (the score on fixed held-out rows is then post-processing) or the
    score, never both; with the candidate drawn independently of the data,
    the run is a mixture of pairs each within ``max(max_r D_α(c_r),
    D_α(s))``, and by the joint convexity of ``exp((α-1) D_α)`` the run is
    within that Rényi curve. Curves: a Gaussian release of noise multiplier
    ``r`` has ``D_α = α/(2r²)`` (Mironov 2017); a pure ε-DP release
    ``min(ε, α ε²/2)`` (pure ε-DP implies ``ε``-RDP at every order and
    ``ε²/2``-zCDP, Bun and Steinke 2016, Prop. 3.3; the tighter
    ``sinh`` form of that proposition is not used); releases within one
    fit add up. A release stated only as ``(ε, δ)`` with ``δ > 0`` has no
    curve and is refused before the charge.

    **Groups** (``fit(X, y, groups=g)``, ``max_rows_per_group=k``):
    neighbours add or remove a whole group. A group is held out when the
    keyed hash of its label's value is below ``holdout_size`` (one 64-bit
    key from ``random_state``, never the rows), so for every key a group
    lands whole in one part and no other group moves. The candidates fit
    their part with its groups and ``k`` (their costs are stated for a
    group); the scorer's metric gets the held-out part's groups and ``k``
    (at most ``k`` rows of a group, ``k`` times a row's noise: its cost
    holds for a group). So the base run's argument holds for a group,
    given the key, hence for the mixture over keys; the charge is recorded
    in the group unit.

    **Repeat and select.** All runs use the same split; conditioned on it
    (and on the added row's coin) they are independent runs of one
    mechanism with the curve above, so the theorems apply, and the mixture
    over the coin stays within their bound (joint convexity again).
    With ``K ~ D_{η,γ}`` (Theorem 2 of [1]_), for all orders ``λ > 1``,
    ``λ̂ >= 1``: ``ε'(λ) = ε(λ) + (1+η)[(1 - 1/λ̂) ε(λ̂) + log(1/γ)/λ̂]
    + log(E[K])/(λ - 1)``; the bracket is minimised over ``λ̂`` once (it does
    not depend on ``λ``). With ``K ~ Poisson(μ)`` (Theorem 6 of [1]_):
    ``ε'(λ) = ε(λ) + μ δ̂ + log(μ)/(λ - 1)``, with ``δ̂`` the run's δ at
    ``ε̂ = log(1 + 1/(λ - 1))`` (from its curve, or 0 when the run is pure
    ε-DP with ``ε <= ε̂``). The curve is converted to ``(ε, δ)`` by
    ``ε = min_λ ε'(λ) + log(1 - 1/λ) - (log δ + log λ)/(λ - 1)`` (Canonne,
    Kamath and Steinke 2020, Prop. 12), over a fine grid of orders,
    rounded up. ``benchmarks/README.md`` ("Random stopping") compares the
    figures with Google's ``dp_accounting`` (``RepeatAndSelectDpEvent``):
    within 0.1 %, never above it.

    **The ledger entry** is that ``(ε, δ)`` pair. The Rényi curve of the
    repeated search grows without bound as ``λ → 1`` (the ``log E[K]/(λ-1)``
    term), so it has no zCDP parameter: an accountant with
    ``composition="zcdp"`` or ``"pld"`` composes the entry as a generic
    ``(ε, δ)`` release (its ``δ`` outside the accountant's conversion, so
    leave room with ``slack``), which costs more there than under basic
    composition. Plan with :func:`~skdp.model_selection.check_budget`.

    **Ties** in the released score are broken by an independent uniform key
    drawn with each run, so the runs' outputs are totally ordered, as the
    theorems need. **Failures** after the charge follow
    :func:`~skdp.model_selection.cross_validate`'s public rule: a fit that
    fails is scored with the scorer's public predictions.

    **What must stay secret.** The theorems bound the release of the best
    run only. ``K``, the other runs' candidates and scores are never
    released (no ``cv_results_``, no per-run progress lines); releasing
    ``K`` with the winner would cost as much as a fixed number of runs.
    The search's running time grows with ``K``: a caller who publishes it
    publishes an estimate of ``K``. With Poisson stopping ``K = 0`` has
    probability ``exp(-n_iter)``; the search then releases nothing (the
    paper's ``⊥``): ``best_index_`` is None, with a warning.

    **Random stopping or noisy max?** :class:`NoisyMaxSearchCV` fits every
    candidate once and selects with its own ε (``method="holdout"``: the
    fits on the training part compose, the selection is parallel to them);
    random stopping fits ``n_iter`` candidates on average and pays for the
    best of them by Theorem 2, about the cost of a few runs whatever the
    grid's size. Large grids, or candidates costly to fit, favour random
    stopping; a handful of candidates, noisy max.

    References
    ----------
    .. [1] N. Papernot and T. Steinke, "Hyperparameter tuning with Renyi
       differential privacy", ICLR 2022 (arXiv:2110.03620).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant, PrivateLogisticRegression
    >>> from skdp.metrics import make_private_scorer
    >>> from skdp.model_selection import RandomStoppingSearchCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(4000, 3)); y = (X[:, 0] > 0).astype(int)
    >>> search = RandomStoppingSearchCV(
    ...     PrivateLogisticRegression(epsilon=0.5, classes=[0, 1]),
    ...     {"C": [0.1, 1.0, 10.0], "max_iter": [5, 10]},
    ...     scoring=make_private_scorer("accuracy", epsilon=0.1),
    ...     n_iter=5, accountant=BudgetAccountant(epsilon=5, delta=1e-5),
    ...     random_state=0,
    ... ).fit(X, y)
    >>> round(search.cost_.epsilon, 2), search.cost_.delta
    (1.01, 1e-06)
    >>> search.best_score_ > 0.9
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"])],
        "param_grid": [dict, list],
        "scoring": [callable],
        "n_iter": [Interval(Real, 1, 1e4, closed="neither")],
        "stopping": [StrOptions(set(STOPPING_RULES))],
        "eta": [Interval(Real, -1, 1e6, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "holdout_size": [Interval(Real, 0, 1, closed="neither")],
        "refit": ["boolean"],
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
        scoring,
        n_iter=10.0,
        stopping="truncated_negative_binomial",
        eta=1.0,
        delta=1e-6,
        holdout_size=0.3,
        refit=False,
        accountant=None,
        max_rows_per_group=None,
        random_state=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.scoring = scoring
        self.n_iter = n_iter
        self.stopping = stopping
        self.eta = eta
        self.delta = delta
        self.holdout_size = holdout_size
        self.refit = refit
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
        tags.input_tags.sparse = inner.input_tags.sparse
        tags.target_tags.required = True
        tags.non_deterministic = True
        return tags

    # -- public plan: everything decided before the data is read -----------
    def _plan(self, n_features):
        grid = list(ParameterGrid(self.param_grid))
        if not grid or grid == [{}]:
            raise ValueError(
                "param_grid is empty: there is nothing to tune. Nothing was charged."
            )
        candidates = [clone(self.estimator).set_params(**p) for p in grid]
        for candidate in candidates:
            check_private_model(candidate)
        if self.max_rows_per_group is not None:
            role = "each run fits a candidate on the training part"
            k = self.max_rows_per_group
            candidates = [with_group_bound(self, c, k, role) for c in candidates]
        costs = [fit_cost(c, n_features) for c in candidates]
        for params, cost in zip(grid, costs, strict=True):
            check_rdp_accountable(cost, f"the candidate {format_params(params)}")
        scorer = _resolved_scorer(self.scoring, self.estimator)
        check_rdp_accountable(scorer.cost, f"the scorer {scorer!r}")
        delta = check_delta(self.delta)
        mean, gamma = stopping_distribution(self.stopping, self.n_iter, self.eta)
        epsilon = random_stopping_epsilon(
            costs, scorer.cost, self.stopping, mean, float(self.eta), gamma, delta
        )
        plan = {
            "grid": grid,
            "candidates": candidates,
            "costs": costs,
            "scorer": scorer,
            "mean": mean,
            "gamma": gamma,
        }
        label = stopping_label(self.stopping, self.n_iter, self.eta, gamma, scorer)
        items = [(label, PrivacyCost(epsilon, delta))]
        if self.refit:
            plan["refit_cost"] = largest_cost(costs)
            items.append(
                ("refit of the chosen candidate on all rows", plan["refit_cost"])
            )
        return plan, items

    def _check_inputs(self, X, y, plan, unit):
        check_search_rows(self.estimator, X, y)
        y = check_holdout_targets(self.estimator, y)
        fit_params = {} if unit.groups is None else {"groups": unit.groups}
        for model in plan["candidates"]:
            check_fit_inputs(model, X, y, **fit_params)
            check_fits_on_zero_rows(model, X, y, unit.groups)
        _check_scorer_inputs(held_out_scorer(plan["scorer"], unit.groups, unit), y)
        return y

    # -- fit -----------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, groups=None):
        """Tune by random stopping; refit the winner if asked.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Targets.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit (in memory), with ``max_rows_per_group``:
            neighbours add or remove one whole group; a group lands whole in
            the training or the held-out part, the candidates get their
            part's groups and the score is stated for a group (Notes).
            None: one row.

        Returns
        -------
        self : RandomStoppingSearchCV
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y "
                "is None."
            )
        X, y = indexable(X, y)
        n_features = X.shape[1] if hasattr(X, "shape") and X.ndim == 2 else None
        plan, items = self._plan(n_features)
        unit = self._privacy_unit(groups, in_memory_shape(X))
        stated = self._stated_for(items, unit)  # as charged: for the unit
        self._resolve_accountant().check(sum_costs([cost for _, cost in stated]))
        y = self._check_inputs(X, y, plan, unit)
        source = check_random_source(self.random_state)
        progress = Progress(type(self).__name__, self.verbose)
        progress(
            1,
            f"Drawing candidates from {plural(len(plan['grid']), 'setting')}, "
            f"{self.n_iter:g} runs on average (the number of runs is secret)",
        )
        accountant = self._charge(
            [(unit.label(label), cost) for label, cost in items], unit=unit
        )
        self.cost_ = sum_costs([cost for _, cost in items])
        progress(
            1,
            f"charged epsilon={self.cost_.epsilon:.6g}, delta="
            f"{self.cost_.delta:.6g} (computed from public parameters)",
        )
        self.n_candidates_ = len(plan["grid"])
        self.gamma_ = plan["gamma"]
        self._n_features = n_features
        best = self._search(X, y, plan, source, unit)
        fit_params = {} if unit.groups is None else {"groups": unit.groups}
        self._release(best, plan, X, y, source, accountant, progress, fit_params)
        return self

    def _search(self, X, y, plan, source, unit):
        """The best run ``(score, index, model)`` of the K runs, or None."""
        parts = split_parts(X, y, self.holdout_size, source, unit.groups)
        scorer = held_out_scorer(plan["scorer"], parts.held_groups, unit)
        X_train, y_train, fit_params = parts.X_train, parts.y_train, parts.fit_params
        held_part = (scorer, parts.X_held, parts.y_held)
        eta = float(self.eta)
        return repeat_and_select(
            lambda: self._run(plan, source, X_train, y_train, fit_params, held_part),
            lambda: sample_repetitions(
                self.stopping, eta, plan["gamma"], plan["mean"], source
            ),
            source,
        )

    def _run(self, plan, source, X_train, y_train, fit_params, held_part):
        """One run of the base mechanism: draw, fit, score."""
        index = int(source.integers(len(plan["grid"])))
        candidate = route_accountant(clone(plan["candidates"][index]), None)
        candidate = seed_if_reproducible(candidate, self.random_state, source)
        cost = plan["costs"][index]
        model = fit_on_part(candidate, cost, X_train, y_train, **fit_params)
        scorer, X_held, y_held = held_part
        seed = _fold_seeds(self.random_state, source, 1)[0]
        estimate = _evaluate(scorer, _predictions(scorer, model, X_held), y_held, seed)
        score = scorer.sign * float(estimate.value)
        if math.isnan(score):
            score = -math.inf  # a function of the release: the public rule
        return score, index, model

    def _release(self, best, plan, X, y, source, accountant, progress, fit_params):
        if best is None:
            self.best_index_ = self.best_params_ = None
            self.best_score_ = math.nan
            warnings.warn(
                "Random stopping drew K = 0 runs (Poisson, probability "
                f"exp(-{self.n_iter:g})): nothing was selected, as the paper's "
                "mechanism outputs nothing then. The budget was charged.",
                UserWarning,
                stacklevel=3,
            )
            return
        self.best_score_, self.best_index_, model = best
        self.best_params_ = dict(plan["grid"][self.best_index_])
        progress(
            1,
            f"selected candidate {self.best_index_ + 1}/{self.n_candidates_}: "
            f"{format_params(self.best_params_)}, released score "
            f"{self.best_score_:.6g}",
        )
        if self.refit:
            refit = clone(plan["candidates"][self.best_index_])
            refit = seed_if_reproducible(refit, self.random_state, source)
            model = fit_on_part(refit, plan["refit_cost"], X, y, **fit_params)
        if model is not None:
            self.best_estimator_ = route_accountant(model, accountant)
            if hasattr(model, "classes_"):
                self.classes_ = model.classes_

    def _fit_cost(self, n_features=None):
        _, items = self._plan(n_features)
        return sum_costs([cost for _, cost in items])
