"""What fitting an estimator costs, known before any data is read."""

import math
from fractions import Fraction
from numbers import Integral
from typing import NamedTuple

from sklearn.base import BaseEstimator, clone
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
from sklearn.model_selection import (
    GridSearchCV,
    ParameterGrid,
    ParameterSampler,
    check_cv,
)
from sklearn.model_selection._search import BaseSearchCV
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, OrdinalEncoder

from skdp.accounting import BudgetAccountant, PrivacyCost, default_accountant
from skdp.accounting._composition import exact
from skdp.accounting._cost import common_unit
from skdp.accounting._units import conversion_note
from skdp.base import PrivateEstimatorMixin
from skdp.exceptions import BudgetExceededError
from skdp.model_selection._scoring_cost import (
    ANY,
    bind_scorers,
    scored_by,
    scorer_keys,
    scoring_costs,
)

__all__ = ["check_budget", "fit_cost"]

# Composites known to fit each estimator they hold exactly once per fit.
_FIT_ONCE = (Pipeline, ColumnTransformer, FeatureUnion, TransformedTargetRegressor)

# Fits run under a prepaid accountant whose budget is the cost charged in the
# parent. The cost is an upper bound computed from the parameters; an
# estimator splits its epsilon internally (eps/2 + eps/2, shares), and the
# accountant sums the decimal representations of those floats exactly, which
# can exceed the nominal epsilon in the 17th digit. The tolerance absorbs that
# representation error and nothing else: a fit that spends more than its
# declared cost by any real amount is still refused.
_REPRESENTATION_TOLERANCE = 1e-12


def _nested_estimators(estimator):
    """The estimators held directly in ``estimator``'s parameters."""
    if not hasattr(estimator, "get_params"):
        return []
    found = []
    for value in estimator.get_params(deep=False).values():
        if isinstance(value, BaseEstimator):
            found.append(value)
        elif isinstance(value, list | tuple):
            for item in value:
                parts = item if isinstance(item, tuple) else (item,)
                found.extend(p for p in parts if isinstance(p, BaseEstimator))
    return found


def fit_cost(estimator, n_features=None):
    """An upper bound on the privacy cost of one ``fit`` of ``estimator``.

    The cost follows from public parameters only, so it can be charged
    before the data is read. Private skdp estimators report their own cost;
    a composite (``Pipeline``, ``ColumnTransformer``, a meta-estimator) costs
    the sum of the private estimators it holds (basic composition). Non-private
    estimators cost nothing here, which does **not** make them private.

    Parameters
    ----------
    estimator : estimator instance
        An unfitted estimator, possibly a composite.
    n_features : int or None, default=None
        Number of input features, if known. Costs of nested estimators are
        computed without it (an upper bound for every number of features).

    Returns
    -------
    cost : PrivacyCost
        ``(epsilon, delta)`` of one fit under basic composition, with its
        ``parts``: every release and its mechanism, which
        :meth:`BudgetAccountant.check` composes the way the accountant does
        (so a ``composition="pld"`` accountant checks a grid of Gaussian fits
        at their PLD total, not at the basic sum).

    Raises
    ------
    ValueError
        For a composite that holds private estimators but may fit them a
        number of times this function cannot know.

    Notes
    -----
    ``Pipeline``, ``ColumnTransformer``, ``FeatureUnion`` and
    ``TransformedTargetRegressor`` fit each estimator they hold once.
    ``GridSearchCV``/``RandomizedSearchCV`` (with an integer ``random_state``,
    so that its candidates are known) fit every candidate on every split
    (the number of splits must be known without data) and refit one candidate,
    charged at the largest candidate cost; a private scorer
    (:func:`~skdp.metrics.make_private_scorer`) in its ``scoring`` (alone or
    among the values of a dict) adds its cost for every candidate on every
    split, twice with ``return_train_score=True`` (the refit is not scored).
    Use this to check a budget before an
    experiment starts, e.g. ``accountant.check(fit_cost(search))`` or
    :func:`check_budget`. Other meta-estimators that
    hold private estimators (one-vs-rest wrappers, bagging, calibration) may
    fit them any number of times and raise. Meta-estimators of skdp run every
    fit under an accountant holding exactly this budget, so a fit that spends
    more fails loudly instead of spending unrecorded budget.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.linear_model import LinearRegression
    >>> from skdp import PrivateMean, SampleAggregateEstimator
    >>> from skdp.model_selection import fit_cost
    >>> pipe = make_pipeline(
    ...     PrivateMean(epsilon=0.5, bounds=(0, 10)),
    ...     SampleAggregateEstimator(LinearRegression(), epsilon=1.0,
    ...                              output_bounds=(-5, 5)),
    ... )
    >>> fit_cost(pipe)
    PrivacyCost(epsilon=1.5, delta=0.0, rho=None)

    The cost is stated for the fit's privacy unit: a group of at most
    ``max_rows_per_group`` rows when that parameter is set (an accountant in
    another unit converts it as it converts the fit's charge):

    >>> fit_cost(PrivateMean(bounds=(0, 10), max_rows_per_group=3))
    PrivacyCost(epsilon=1.0, delta=0.0, rho=None, unit='group', group_rows=3)
    """
    if isinstance(estimator, PrivateEstimatorMixin):
        return estimator._planned_cost(n_features)
    if isinstance(estimator, BaseSearchCV):
        return _search_cost(estimator, n_features)
    nested = _nested_estimators(estimator)
    costs = [fit_cost(est) for est in nested]
    if not isinstance(estimator, _FIT_ONCE) and any(
        c.epsilon > 0 or c.delta > 0 for c in costs
    ):
        raise ValueError(
            f"Cannot tell how many times {type(estimator).__name__} fits the "
            "private estimators it holds (it may fit clones per class, fold or "
            "bag), so its cost is unknown. Compose private estimators with "
            "Pipeline, ColumnTransformer or FeatureUnion, or compute the cost "
            "by hand."
        )
    return sum_costs(costs)


def check_budget(estimator, accountant=None, *, n_features=None):
    """Check that one ``fit`` of ``estimator`` fits the budget, before any fit.

    One call for a planned experiment: the cost of a ``GridSearchCV``,
    ``RandomizedSearchCV``, pipeline or private estimator (:func:`fit_cost`)
    against what the accountant has left. Nothing is charged and no data is
    read; run it before ``fit`` so that a search that cannot finish never
    starts (the folds would otherwise spend the rest of the budget and fail).

    Parameters
    ----------
    estimator : estimator instance
        The unfitted estimator or search.
    accountant : BudgetAccountant or None, default=None
        The accountant ``fit`` will charge; ``None`` uses the default
        accountant (as the estimators do when their ``accountant`` is None).
    n_features : int or None, default=None
        Number of input features, if known (see :func:`fit_cost`).

    Returns
    -------
    cost : PrivacyCost
        The cost of one ``fit``, which fits the remaining budget.

    Raises
    ------
    BudgetExceededError
        When it does not fit; the message names the estimator, the cost, what
        is left and, for a SQLite ledger, that the file keeps its spends
        between runs.

    Examples
    --------
    >>> from sklearn.model_selection import GridSearchCV
    >>> from skdp import BudgetAccountant, PrivateMean
    >>> from skdp.model_selection import check_budget
    >>> search = GridSearchCV(PrivateMean(bounds=(0, 1)),
    ...                       {"epsilon": [0.1, 0.2]}, cv=3)
    >>> check_budget(search, BudgetAccountant(epsilon=2.0))  # 3 x 0.3 + 0.2
    PrivacyCost(epsilon=1.1, delta=0.0, rho=None)
    >>> check_budget(search, BudgetAccountant(epsilon=1.0))
    Traceback (most recent call last):
    ...
    skdp.exceptions.BudgetExceededError: GridSearchCV: one fit costs epsilon=1.1, ...
    """
    cost = fit_cost(estimator, n_features)
    accountant = default_accountant() if accountant is None else accountant
    try:
        accountant.check(cost)
    except BudgetExceededError as exc:
        left_eps, left_delta = accountant.remaining()
        where = (
            f" The ledger {accountant.ledger!r} keeps every spend between runs: "
            "use a new file (or delete it) to start with a fresh budget."
            if accountant.ledger is not None
            else ""
        )
        raise BudgetExceededError(
            f"{type(estimator).__name__}: one fit costs epsilon={cost.epsilon:g}, "
            f"delta={cost.delta:g}{conversion_note(cost, accountant)}"
            f"{_plan_in_words(estimator, n_features)}, "
            f"and the accountant has epsilon={left_eps:g}, "
            f"delta={left_delta:g} left. Nothing was run or charged.{where}"
        ) from exc
    return cost


def _plan_in_words(estimator, n_features):
    """`` (its whole plan: ...)`` for a scikit-learn search, else empty."""
    if not isinstance(estimator, BaseSearchCV):
        return ""
    return f" (its whole plan: {search_plan(estimator, n_features)[1]})"


def sum_costs(costs):
    """Basic composition, summed exactly as the accountant sums; the parts are
    kept, so an accountant with a tight composition composes them its way."""
    atoms = tuple(a for c in costs for a in c.atoms if a.epsilon > 0 or a.delta > 0)
    epsilon = sum((exact(a.epsilon) for a in atoms), Fraction(0))
    delta = sum((exact(a.delta) for a in atoms), Fraction(0))
    if len(atoms) == 1:
        return atoms[0]
    rhos = [a.rho for a in atoms]
    rho = None if None in rhos or not rhos else math.fsum(rhos)
    mechanism = "composite" if atoms else None
    unit, rows = common_unit(atoms)
    return PrivacyCost(
        float(epsilon), float(delta), rho, None, mechanism, atoms, unit, rows
    )


def largest_cost(costs):
    """The cost that covers any one of ``costs`` (unknown which in advance).

    When every cost is made of the same releases, that cost; otherwise the
    ``(max epsilon, max delta)`` pair, which covers each of them (and enters
    a tight composition as a generic ``(epsilon, delta)`` release).
    """
    signatures = {tuple(sorted(map(_signature, c.atoms))) for c in costs}
    if len(signatures) == 1:
        return costs[0]
    unit, rows = common_unit([a for c in costs for a in c.atoms])
    if unit == "mixed":
        raise ValueError(
            "The candidates' costs are stated for different privacy units (one "
            "row for some, one group for others): no single cost covers any "
            "one of them. Give every candidate the same unit (set "
            "max_rows_per_group on all of them, or on none)."
        )
    eps, delta = max(c.epsilon for c in costs), max(c.delta for c in costs)
    return PrivacyCost(eps, delta, unit=unit, group_rows=rows)


def _signature(cost):
    noise = cost.noise_multiplier or 0.0
    return (cost.epsilon, cost.delta, cost.rho or 0.0, noise, cost.unit)


def _search_cost(search, n_features):
    """Every candidate on every split, plus the refit of one of them, plus
    every score of a private scorer (:mod:`._scoring_cost`)."""
    return search_plan(search, n_features)[0]


def search_plan(search, n_features=None, *, accountant=ANY, fits=True):
    """``(cost, what)`` of one ``fit`` of a scikit-learn search: its fits
    (:func:`search_fit_costs`) and the releases of its private scorers
    (:func:`~._scoring_cost.scoring_costs`, those charging ``accountant``
    only if given), with the plan in words ("2 candidates × 3 splits + 1
    refit = 7 fits + 6 private scores"). ``fits=False`` leaves the fits out
    of the cost (they charge another accountant), not out of the words."""
    plan = search_fit_costs(search, n_features)
    train = bool(getattr(search, "return_train_score", False))
    scores = scoring_costs(
        scored_by(search.scoring, search.estimator),
        plan.n_scored,
        train_scores=train,
        accountant=accountant,
    )
    cost = sum_costs((plan.costs if fits else []) + scores)
    return cost, plan.words(len(scores), fits)


class SearchFits(NamedTuple):
    """The fits of a search, from its public parameters."""

    costs: list  # one PrivacyCost per fit, the refit last
    n_candidates: int
    n_splits: int
    refit: bool

    @property
    def n_scored(self):
        """The fits its scorers score: every candidate on every split."""
        return self.n_candidates * self.n_splits

    def words(self, n_scores=0, fits=True):
        """The plan in words, with ``n_scores`` private scores (and, with
        ``fits=False``, that only the scores are costed here)."""
        if self.n_candidates is None:  # cross_validate: one estimator
            what = f"{self.n_splits} splits = {self.n_splits} fits"
        else:
            what = f"{self.n_candidates} candidates × {self.n_splits} splits"
            what += " + 1 refit" if self.refit else ""
            what += f" = {self.n_scored + self.refit} fits"
        what += f" + {n_scores} private scores" if n_scores else ""
        return what if fits else what + " (its fits charge no budget here)"


def search_fit_costs(search, n_features=None):
    """The :class:`SearchFits` of a scikit-learn search: the cost of each of
    its fits (every candidate on every split, then the refit at the largest
    candidate cost), known before any data."""
    if isinstance(search, GridSearchCV):
        grid = list(ParameterGrid(search.param_grid))
    else:
        # RandomizedSearchCV draws its candidates with exactly this sampler;
        # only a fixed integer seed says, before the search, which they are.
        if isinstance(search.random_state, bool) or not isinstance(
            search.random_state, Integral
        ):
            raise ValueError(
                "The cost of a RandomizedSearchCV depends on the candidates it "
                f"draws; with random_state={search.random_state!r} they are not "
                "known in advance. Set an integer random_state."
            )
        grid = list(
            ParameterSampler(
                search.param_distributions,
                search.n_iter,
                random_state=search.random_state,
            )
        )
    refit = search.refit is not False
    if not grid:
        return SearchFits([], 0, 0, refit)
    cv = check_cv(search.cv)
    try:
        n_splits = cv.get_n_splits()
    except TypeError as exc:
        raise ValueError(
            f"The number of splits of cv={search.cv!r} depends on the data; "
            "pass an int or a splitter whose get_n_splits() needs no data."
        ) from exc
    costs = [
        fit_cost(clone(search.estimator).set_params(**params), n_features)
        for params in grid
    ]
    total = [c for c in costs for _ in range(n_splits)]
    if refit:
        total.append(largest_cost(costs))
    return SearchFits(total, len(grid), n_splits, refit)


def prepaid_accountant(cost):
    """A fresh accountant holding exactly ``cost`` (see the module note), in
    the cost's unit: a group cost is held for one group; a sum of row and
    group costs for one row, with the group parts converted as any row
    accountant converts them."""
    unit = "group" if cost.unit == "group" else "row"
    if cost.unit == "mixed":
        parts = BudgetAccountant()._validate_items([("", cost)])
        eps, delta = (math.fsum(p.cost[i] for p in parts) for i in (0, 1))
        cost = PrivacyCost(eps, min(delta, 1.0))
    slack = 1.0 + _REPRESENTATION_TOLERANCE
    delta = min(1.0, cost.delta * slack) if cost.delta > 0 else 0.0
    return BudgetAccountant(cost.epsilon * slack, delta, unit=unit)


def is_param(key, name):
    """Whether ``key`` of ``get_params(deep=True)`` is a (nested) ``name``."""
    return key == name or key.endswith("__" + name)


def accountant_keys(estimator):
    """The ``accountant`` parameters of ``estimator``, nested ones too, and
    its ``scoring`` parameters that hold private scorers (which charge when
    they score, :func:`~._scoring_cost.scorer_keys`).

    Deepest first: setting an outer estimator's params can replace inner
    ones. They depend on the estimator's structure only, so a clone has the
    keys of its original.
    """
    keys = [
        key for key in estimator.get_params(deep=True) if is_param(key, "accountant")
    ]
    keys.sort(key=lambda key: key.count("__"), reverse=True)
    return scorer_keys(estimator) + keys


def route_accountant(estimator, accountant, keys=None):
    """Set every ``accountant`` parameter of ``estimator``, nested ones too,
    and make its private scorers charge ``accountant`` too.

    ``keys`` are its :func:`accountant_keys` when already known (those of the
    estimator it was cloned from), which saves a ``get_params(deep=True)``.
    """
    keys = accountant_keys(estimator) if keys is None else keys
    bind_scorers(estimator, accountant, [k for k in keys if is_param(k, "scoring")])
    for key in keys:
        if is_param(key, "accountant"):
            estimator.set_params(**{key: accountant})
    return estimator


class _ChargeReached(Exception):
    """Raised by the probe accountant when a fit reaches its charge."""


class _ProbeAccountant(BudgetAccountant):
    """Stops a fit at its first charge: everything before it is validation."""

    def spend(self, epsilon, delta=0.0, *, label, **unit):
        raise _ChargeReached

    def spend_many(self, items, **unit):
        raise _ChargeReached


def check_fit_inputs(estimator, X, y, **fit_params):
    """Run ``estimator.fit`` up to its first charge, so its input errors raise now.

    skdp estimators validate their parameters and input (public
    preconditions) before they charge, and read nothing else before. Probing
    every fit a meta-estimator will make before the meta-estimator charges
    its own cost means that bad parameters or input fail with nothing
    charged. A composite is probed up to its first private step's charge;
    steps before it (stateless or zero-cost) run in full, and nothing they
    compute is kept.
    """
    model = route_accountant(clone(estimator), _ProbeAccountant())
    try:
        model.fit(X, y, **fit_params)
    except _ChargeReached:
        pass


def _is_public_encoder(step):
    """An encoder whose fitted state is fixed by its public parameters."""
    if not isinstance(step, OneHotEncoder | OrdinalEncoder):
        return False
    learned = step.categories == "auto" or getattr(step, "drop", None) not in (
        None,
        "first",
    )
    rare = getattr(step, "min_frequency", None) or getattr(step, "max_categories", None)
    return not learned and not rare


def check_private_model(estimator):
    """Raise unless every part of ``estimator`` fitted on data is private.

    Private skdp estimators whose predictions are free (post-processing of the
    fit) qualify; so do steps with no data-dependent state (``'passthrough'``,
    ``'drop'``, ``FunctionTransformer``, encoders with public categories) and
    the composites ``Pipeline``, ``ColumnTransformer`` and ``FeatureUnion``
    built from them. Anything else would be trained on private rows without
    noise.
    """
    if estimator in (None, "passthrough", "drop"):
        return
    if isinstance(estimator, PrivateEstimatorMixin):
        if getattr(estimator, "_charges_at_predict", lambda: False)():
            raise ValueError(
                f"{type(estimator).__name__} charges the budget for every "
                "predicted row (aggregate='vote' or 'mean'); its predictions on "
                "selection rows cannot be costed in advance. Use a private "
                "estimator whose fitted model is released at fit time (e.g. "
                "aggregate='parameters')."
            )
        return
    if isinstance(estimator, FunctionTransformer) or _is_public_encoder(estimator):
        return
    if isinstance(estimator, Pipeline | FeatureUnion | ColumnTransformer):
        for nested in _nested_estimators(estimator):
            check_private_model(nested)
        if isinstance(estimator, ColumnTransformer):
            check_private_model(estimator.remainder)
        return
    raise ValueError(
        f"{type(estimator).__name__} is not a private estimator: fitting it on "
        "the private rows would release them without noise. Use skdp's private "
        "estimators (or a Pipeline/ColumnTransformer of them, with stateless "
        "steps or encoders given public categories)."
    )
