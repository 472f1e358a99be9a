"""One privacy budget for a whole pipeline, split across its private steps."""

from collections.abc import Mapping
from numbers import Real

from sklearn.base import BaseEstimator
from sklearn.pipeline import make_pipeline

from skdp.accounting._composition import exact, split_budget
from skdp.base import PrivateEstimatorMixin
from skdp.model_selection._cost import _FIT_ONCE, fit_cost

__all__ = ["DEFAULT_DELTA", "make_private_pipeline", "private_steps", "set_budget"]

#: The δ of a whole pipeline when none is given: the default ``delta`` of the
#: skdp estimators that use one (the linear models, PCA, the encoder, the
#: robust statistics). Choose it well below ``1 / n_samples``.
DEFAULT_DELTA = 1e-6


def _children(estimator):
    """``(name, estimator)`` of the estimators held in ``estimator``'s
    parameters, named as ``set_params`` addresses them."""
    found = []
    for key, value in estimator.get_params(deep=False).items():
        if isinstance(value, BaseEstimator):
            found.append((key, value))
        elif isinstance(value, list | tuple):
            found.extend(
                (item[0], item[1])
                for item in value
                if isinstance(item, tuple)
                and len(item) >= 2
                and isinstance(item[0], str)
                and isinstance(item[1], BaseEstimator)
            )
    return found


def _costs_something(estimator):
    try:
        cost = fit_cost(estimator)
    except ValueError:
        return True
    return cost.epsilon > 0 or cost.delta > 0


def private_steps(estimator, prefix=""):
    """``{path: estimator}`` of the private estimators a composite fits once.

    ``path`` is the name ``set_params`` uses (``"privatestandardscaler"``,
    ``"columntransformer__num__privatestandardscaler"``; ``""`` for a private
    ``estimator`` itself). A private skdp estimator is a leaf, even a
    meta-estimator: its own ``epsilon`` is its whole budget.

    Parameters
    ----------
    estimator : estimator instance
        A private estimator, or a ``Pipeline``, ``ColumnTransformer``,
        ``FeatureUnion`` or ``TransformedTargetRegressor``, nested at will.
    prefix : str, default=""
        Path of ``estimator`` itself inside an outer composite.

    Returns
    -------
    steps : dict
        The private steps in the order the composite holds them.

    Raises
    ------
    ValueError
        When a non-private composite inside may fit the private estimators
        it holds many times (a search, bagging, one-vs-rest).
    """
    if isinstance(estimator, PrivateEstimatorMixin):
        return {prefix: estimator}
    found = {}
    for name, child in _children(estimator):
        path = f"{prefix}__{name}" if prefix else name
        if isinstance(child, PrivateEstimatorMixin):
            found[path] = child
        elif isinstance(child, _FIT_ONCE):
            found.update(private_steps(child, path))
        elif _costs_something(child):
            raise ValueError(
                f"Cannot split a budget inside {path!r} ({type(child).__name__}): "
                "it may fit the private estimators it holds many times (per "
                "fold, class or bag). Give it a budget of its own, or search "
                "with skdp.model_selection.NoisyMaxSearchCV."
            )
    return found


def _check_total(epsilon, delta):
    if not (isinstance(epsilon, Real) and 0 < epsilon < float("inf")):
        raise ValueError(f"epsilon must be a finite number > 0; got {epsilon!r}.")
    if not (isinstance(delta, Real) and 0 <= delta < 1):
        raise ValueError(f"delta must be a number in [0, 1); got {delta!r}.")


def _weights_of(paths, weights):
    """One positive weight per path: equal, from a mapping or a sequence."""
    if weights is None:
        return [1.0] * len(paths)
    if isinstance(weights, Mapping):
        missing = [p for p in paths if p not in weights]
        unknown = [k for k in weights if k not in paths]
        if missing or unknown:
            raise ValueError(
                f"weights must name every private step and no other: missing "
                f"{missing}, unknown {unknown}; the private steps are {paths}."
            )
        values = [weights[p] for p in paths]
    else:
        values = list(weights)
        if len(values) != len(paths):
            raise ValueError(
                f"weights has {len(values)} entries for the {len(paths)} private "
                f"steps {paths}: give one per step, in this order, or a dict."
            )
    if not all(isinstance(w, Real) and 0 < w < float("inf") for w in values):
        raise ValueError(f"weights must be finite numbers > 0; got {values}.")
    largest = max(float(w) for w in values)  # relative weights: no overflow
    return _positive([float(w) / largest for w in values], "the weights")


def _uses_delta(step):
    return float(step.get_params(deep=False).get("delta") or 0.0) > 0


def _budget_params(steps, epsilon, delta, weights):
    """``{path: {"epsilon": ..., ["delta": ...]}}`` that split the total."""
    paths = list(steps)
    shares = _positive(split_budget(epsilon, weights), "epsilon")
    params = {p: {"epsilon": e} for p, e in zip(paths, shares, strict=True)}
    users = [i for i, p in enumerate(paths) if _uses_delta(steps[p])]
    if users and delta == 0:
        names = [f"{paths[i]} ({type(steps[paths[i]]).__name__})" for i in users]
        raise ValueError(
            f"The private steps {names} use a delta > 0 and the total delta is "
            "0. Pass delta > 0 (e.g. 1e-6, well below 1 / n_samples), or set "
            "those steps' budgets by hand. Nothing was changed."
        )
    if users:
        shares = _positive(split_budget(delta, [weights[i] for i in users]), "delta")
        for i, share in zip(users, shares, strict=True):
            params[paths[i]]["delta"] = share
    return params


def _positive(shares, name):
    if min(shares) <= 0:
        raise ValueError(
            f"A share of {name} rounds to 0: the weights are too uneven "
            f"({shares}). Nothing was changed."
        )
    return shares


def _own_values(steps, params):
    """What the parameters ``params`` names are now, per step."""
    before = {}
    for path, values in params.items():
        own = steps[path].get_params(deep=False)
        before[path] = {name: own[name] for name in values}
    return before


def _set_each(steps, params):
    """Set every step's own parameters."""
    for path, values in params.items():
        steps[path].set_params(**values)


def _check_distinct(steps):
    """Refuse one estimator object held at several paths, before any change.

    Each place fits it (a clone of it) with its one ``epsilon``, so it cannot
    take a share per path: the split would give it the share of its last
    path, paid once per path.
    """
    paths_of = {}
    for path, step in steps.items():
        paths_of.setdefault(id(step), []).append(path)
    shared = [paths for paths in paths_of.values() if len(paths) > 1]
    if shared:
        raise ValueError(
            f"One estimator object is held at several paths {shared[0]}: each "
            "place fits it with the same epsilon, so it cannot take a share "
            "per path. Put a separate instance at each place "
            "(sklearn.base.clone). Nothing was changed."
        )


def _check_one_unit(steps):
    """Refuse to split one total over steps stated for different privacy
    units (a row for some, a group for others): their costs do not add up
    to a total in either unit without a conversion the accountant makes."""
    units = {path: fit_cost(step).unit for path, step in steps.items()}
    if len(set(units.values())) > 1:
        listed = ", ".join(
            f"{path or 'the estimator'}: {u}" for path, u in units.items()
        )
        raise ValueError(
            f"The private steps state their costs for different privacy units "
            f"({listed}): a total split between them would add a row's epsilon "
            "to a group's. Set max_rows_per_group on every private step (and "
            "fit with groups=...), or on none. Nothing was changed."
        )


def set_budget(estimator, epsilon, delta=DEFAULT_DELTA, *, weights=None):
    """Give a pipeline one total ``(epsilon, delta)``, split across its steps.

    Sets ``epsilon`` (and ``delta``, for the steps that use one) of every
    private step of ``estimator`` -- a private estimator, or a ``Pipeline``,
    ``ColumnTransformer``, ``FeatureUnion`` or ``TransformedTargetRegressor``
    holding private estimators at any depth -- so that one ``fit`` costs at
    most the total: :func:`~skdp.model_selection.fit_cost` of the result is
    ``(epsilon, delta)`` up to a few units in the last place, never above.
    Steps that cost nothing (public bounds, non-private steps) are left as
    they are. Nothing is read and nothing is charged.

    Parameters
    ----------
    estimator : estimator instance
        Modified in place and returned (as ``set_params`` does).
    epsilon : float
        Total ε of one ``fit``, ``> 0``.
    delta : float, default=DEFAULT_DELTA (1e-6)
        Total δ of one ``fit``, in ``[0, 1)``, split between the steps whose
        ``delta`` is above 0 (the others are pure ε-DP and keep theirs).
    weights : dict or sequence of float, default=None
        Relative shares of the private steps: ``None`` splits equally; a
        dict maps every step's path (as :func:`private_steps` names it) to a
        weight; a sequence gives one weight per step in that order.

    Returns
    -------
    estimator : estimator instance
        The same object, its private steps' budgets set.

    Raises
    ------
    ValueError
        When a composite inside may fit its private estimators many times,
        when no step costs anything, when one estimator object sits at
        several paths, when weights do not match the steps, or
        when steps use δ and ``delta`` is 0. Nothing is changed then.

    Notes
    -----
    The total is stated in the steps' privacy unit: one row, or one group when
    every private step has ``max_rows_per_group`` (steps of different units
    are refused; an accountant in another unit converts the charges, see
    :class:`~skdp.BudgetAccountant`). Under add/remove-one-row neighbours the
    steps of a pipeline all read the same rows (the parts of a
    ``ColumnTransformer`` read other columns of the same rows, which is not
    parallel composition), so their costs add up: basic composition. Each
    share is rounded so that the parts sum to at most the total in the
    accountant's exact arithmetic (``split_budget``), and the result is
    checked with :func:`~skdp.model_selection.fit_cost`; an accountant with
    ``composition="zcdp"`` or ``"pld"`` may charge less.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from skdp import PrivateLogisticRegression, PrivateStandardScaler
    >>> from skdp.model_selection import fit_cost
    >>> from skdp.pipeline import set_budget
    >>> pipe = set_budget(
    ...     make_pipeline(PrivateStandardScaler(), PrivateLogisticRegression()),
    ...     epsilon=1.0, delta=1e-6, weights=[1, 3])
    >>> pipe[0].epsilon, pipe[1].epsilon, pipe[1].delta
    (0.25, 0.75, 1e-06)
    >>> cost = fit_cost(pipe)
    >>> bool(cost.epsilon <= 1.0 and cost.delta <= 1e-6)
    True
    """
    _check_total(epsilon, delta)
    steps = {
        path: step
        for path, step in private_steps(estimator).items()
        if _costs_something(step)
    }
    if not steps:
        raise ValueError(
            f"{type(estimator).__name__} holds no private step that costs "
            "anything: there is no budget to split."
        )
    _check_distinct(steps)
    _check_one_unit(steps)
    params = _budget_params(steps, epsilon, delta, _weights_of(list(steps), weights))
    before = _own_values(steps, params)
    try:
        _set_each(steps, params)
        cost = fit_cost(estimator)
    except (ValueError, OverflowError) as exc:
        _set_each(steps, before)
        raise ValueError(
            f"A step refuses its share of the budget: {exc} Nothing was changed."
        ) from exc
    except BaseException:
        _set_each(steps, before)  # whatever went wrong, nothing is changed
        raise
    if exact(cost.epsilon) > exact(epsilon) or exact(cost.delta) > exact(delta):
        _set_each(steps, before)
        raise ValueError(
            f"After the split one fit would cost epsilon={cost.epsilon!r}, "
            f"delta={cost.delta!r}, above the total ({epsilon!r}, {delta!r}): "
            "some step's cost is not its epsilon and delta parameters. Set its "
            "budget by hand. Nothing was changed."
        )
    return estimator


def make_private_pipeline(
    *steps, epsilon, delta=DEFAULT_DELTA, weights=None, memory=None, verbose=False
):
    """:func:`sklearn.pipeline.make_pipeline` with one budget for all steps.

    The steps are named as ``make_pipeline`` names them, then
    :func:`set_budget` splits ``(epsilon, delta)`` across the private ones.

    Parameters
    ----------
    *steps : list of estimators
        The steps, as for ``make_pipeline``.
    epsilon : float
        Total ε of one ``fit`` of the pipeline, ``> 0``.
    delta : float, default=DEFAULT_DELTA (1e-6)
        Total δ of one ``fit``, split between the steps that use one.
    weights : dict or sequence of float, default=None
        Relative shares of the private steps (see :func:`set_budget`).
    memory : str or object with the joblib.Memory interface, default=None
        As for ``make_pipeline``.
    verbose : bool, default=False
        As for ``make_pipeline``.

    Returns
    -------
    pipeline : Pipeline

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant, PrivateLogisticRegression, PrivatePCA
    >>> from skdp import PrivateStandardScaler
    >>> from skdp.pipeline import make_private_pipeline
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(5000, 4))
    >>> y = (X[:, 0] + rng.logistic(size=5000) > 0).astype(int)
    >>> budget = BudgetAccountant(epsilon=1.0, delta=1e-6)
    >>> pipe = make_private_pipeline(
    ...     PrivateStandardScaler(accountant=budget, random_state=0),
    ...     PrivatePCA(n_components=2, accountant=budget, random_state=0),
    ...     PrivateLogisticRegression(classes=[0, 1], accountant=budget,
    ...                               random_state=0),
    ...     epsilon=1.0, delta=1e-6)
    >>> _ = pipe.fit(X, y)
    >>> bool(budget.total()[0] <= 1.0)
    True
    """
    pipeline = make_pipeline(*steps, memory=memory, verbose=verbose)
    return set_budget(pipeline, epsilon, delta, weights=weights)
