"""The private plan of a privacy–utility curve: its steps, checks and fits."""

import math
import time
from fractions import Fraction
from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import _num_features

from skdp.accounting import PrivacyCost
from skdp.accounting._composition import exact
from skdp.accounting._default import charged_default, check_accountant
from skdp.exceptions import BudgetExceededError
from skdp.model_selection._cost import (
    fit_cost,
    is_param,
    prepaid_accountant,
    route_accountant,
    sum_costs,
)
from skdp.utils._progress import plural
from skdp.utils._validation import epsilon_requirement
from skdp.utils._warnings import warn_at_caller


def _check_epsilons(epsilons):
    try:
        values = np.asarray(epsilons, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"epsilons must be an array of numbers; got {epsilons!r}."
        ) from exc
    if values.ndim != 1 or values.size == 0:
        raise ValueError(
            f"epsilons must be a non-empty 1-D array; got shape {values.shape}."
        )
    if not np.all(np.isfinite(values)) or np.any(values <= 0):
        requirement, _ = epsilon_requirement()
        raise ValueError(
            f"epsilons must each be {requirement}; got {values}. Pass positive, "
            "finite privacy losses, e.g. epsilons=[0.1, 1.0]."
        )
    values = np.sort(values)
    if np.any(values[1:] == values[:-1]):
        raise ValueError(
            f"epsilons must be distinct (a repeated value only spends budget "
            f"twice); got {values}."
        )
    return values


class _PrivatePlan:
    """The private steps of an estimator: accountants, cost bounds and seeds.

    A private step is the estimator itself or a nested one that has an
    ``accountant`` parameter; ``prefix`` is ``""`` or e.g. ``"step__"``.
    """

    def __init__(self, estimator, param_name):
        if not hasattr(estimator, "get_params"):
            raise TypeError(
                f"estimator must be a scikit-learn estimator; got {estimator!r}."
            )
        params = estimator.get_params(deep=True)
        self.param_name = param_name
        self.accountant_params = [k for k in params if is_param(k, "accountant")]
        self.prefixes = [k[: -len("accountant")] for k in self.accountant_params]
        self.random_state_params = [k for k in params if is_param(k, "random_state")]
        self._params = params
        if not isinstance(param_name, str) or param_name not in params:
            candidates = sorted(k for k in params if k.endswith("epsilon"))
            raise ValueError(
                f"param_name={param_name!r} is not a parameter of "
                f"{type(estimator).__name__}. Parameters named like epsilon: "
                f"{candidates or 'none'}."
            )
        owner_prefix = param_name.rpartition("__")[0]
        owner_prefix = owner_prefix + "__" if owner_prefix else ""
        if owner_prefix not in self.prefixes or not is_param(param_name, "epsilon"):
            raise ValueError(
                f"param_name={param_name!r} is not the epsilon parameter of a "
                "private estimator (one with an accountant parameter), so the cost "
                "of a fit is unknown."
            )
        self.owner_prefix = owner_prefix
        self.owner_name = type(self._step(estimator, owner_prefix)).__name__

    @staticmethod
    def _step(estimator, prefix):
        return estimator if not prefix else estimator.get_params()[prefix[:-2]]

    def cost(self, estimator, eps, n_features=None):
        """The cost of one fit at ``eps`` on ``n_features`` columns
        (:func:`fit_cost`: an upper bound, exact where it is known)."""
        fitted = clone(estimator).set_params(**{self.param_name: float(eps)})
        return fit_cost(fitted, n_features)

    def resolve_accountant(self, accountant):
        if accountant is not None:
            return check_accountant(accountant)
        named = {id(self._params[k]): self._params[k] for k in self.accountant_params}
        named.pop(id(None), None)
        if len(named) > 1:
            raise ValueError(
                "The private steps of the estimator name different accountants; "
                "pass accountant= to charge the whole sweep to one."
            )
        if named:
            return next(iter(named.values()))
        return charged_default("privacy_utility_curve")

    def seed_params(self, seed):
        if seed is None:
            return {}
        return dict.fromkeys(self.random_state_params, seed)

    def warn_if_fixed_random_state(self, n_repeats):
        fixed = [
            k
            for k in self.random_state_params
            if self._params[k] is not None
            and any(k.startswith(p) for p in self.prefixes)
        ]
        if fixed and n_repeats > 1:
            warn_at_caller(
                f"random_state=None leaves the estimator's own {fixed}, so every "
                "repeat draws the same noise and the spread over repeats is zero. "
                "Pass random_state= to vary it.",
                UserWarning,
            )

    def reported_spend(self, fitted):
        """Sum of ``epsilon_spent_``/``delta_spent_`` over the fitted private steps.

        ``None`` when a private step does not expose them.
        """
        eps, delta, seen = Fraction(0), Fraction(0), set()
        for prefix in self.prefixes:
            step = self._step(fitted, prefix)
            if id(step) in seen:
                continue
            seen.add(id(step))
            if not (hasattr(step, "epsilon_spent_") and hasattr(step, "delta_spent_")):
                return None
            eps += exact(step.epsilon_spent_)
            delta += exact(step.delta_spent_)
        return eps, delta


def _check_non_private(estimator, n_features):
    """Refuse a reference estimator whose fit would spend budget.

    Steps of skdp that are free (e.g. a scaler with public bounds, whose
    :func:`fit_cost` is zero) are accepted; the reference is then fitted under
    an accountant holding nothing, so a step that spends anyway fails instead
    of spending unrecorded budget.
    """
    if not hasattr(estimator, "get_params"):
        raise TypeError(f"reference_estimator must be an estimator; got {estimator!r}.")
    if not any(is_param(k, "accountant") for k in estimator.get_params(deep=True)):
        return estimator
    try:
        cost = fit_cost(estimator, n_features)
    except ValueError as exc:
        raise ValueError(
            "reference_estimator must be non-private or free: the cost of its "
            f"private steps cannot be bounded ({exc})."
        ) from exc
    if cost.epsilon > 0 or cost.delta > 0:
        raise ValueError(
            "reference_estimator must be non-private or free: its private steps "
            f"cost epsilon={cost.epsilon}, delta={cost.delta} per fit, which would "
            "not be part of the sweep's budget check. Use public bounds (free "
            "steps) or a non-private estimator."
        )
    return route_accountant(clone(estimator), prepaid_accountant(PrivacyCost(0.0)))


def _n_features(X):
    """Number of columns of a 2-D ``X`` or list of rows (public: what the
    fit's ``n_features_in_`` will be), or None (also where the
    count is not known, as a Dask frame's may not be, or the shape cannot
    be read: the fit is then planned for every count). Every fit of a sweep
    or search sees them: a fit whose cost follows them (naive Bayes's
    ``mechanism="auto"``) is then planned exactly, not bounded."""
    try:  # a container that computes its shape lazily may raise anything
        shape = getattr(X, "shape", None)
        if shape is None and isinstance(X, list | tuple):
            # scikit-learn's n_features_in_ of a list of rows: a row's length
            shape = (None, _num_features(X))
        shape = None if shape is None else tuple(shape)
    except Exception:
        return None
    if shape is None or len(shape) != 2 or not isinstance(shape[1], Integral):
        return None
    return int(shape[1]) if shape[1] > 0 else None  # no column: fit refuses


def sweep_cost(costs, n_fits, n_scores):
    """``(cost, what)``: the sweep's whole cost, its fits and its private
    scores each a part (so the accountant composes them its way), and the
    plan in words; ``cost`` is None when its δ sums to 1 or more."""
    what = plural(n_fits, "fit") + (f" + {n_scores} private scores" if n_scores else "")
    if sum((exact(c.delta) for c in costs), Fraction(0)) >= 1:
        return None, what
    return sum_costs(costs), what


def _check_budget(acc, costs, n_fits, n_scores):
    """Refuse, before anything is fitted, a sweep whose fits and private
    scores do not fit the budget."""
    cost, what = sweep_cost(costs, n_fits, n_scores)
    if cost is None:
        if acc.delta < 1.0:
            raise BudgetExceededError(
                f"The sweep's {what} need delta >= 1 in total, more than the "
                f"budget delta={acc.delta}. Nothing was fitted or charged."
            )
        return
    try:
        acc.check(cost)
    except BudgetExceededError as exc:
        raise BudgetExceededError(
            f"The sweep's {what} cost up to epsilon={cost.epsilon}, "
            f"delta={cost.delta} in total, which does not fit in the remaining "
            f"budget: {exc} Nothing was fitted."
        ) from exc


def _check_ledger(reported, ledger_eps, ledger_delta):
    fits_eps = sum((eps for eps, _ in reported), Fraction(0))
    fits_delta = sum((delta for _, delta in reported), Fraction(0))
    if not (
        math.isclose(fits_eps, ledger_eps, rel_tol=1e-9, abs_tol=1e-12)
        and math.isclose(fits_delta, ledger_delta, rel_tol=1e-9, abs_tol=1e-15)
    ):
        raise RuntimeError(
            f"The fits reported spending epsilon={float(fits_eps)}, "
            f"delta={float(fits_delta)} but the accountant recorded "
            f"epsilon={float(ledger_eps)}, delta={float(ledger_delta)} during the "
            "sweep: a step charged another accountant, or something else spent "
            "from this one at the same time."
        )


def _fit_and_score(estimator, X_train, y_train, X_test, y_test, scorer):
    if y_train is None:
        estimator.fit(X_train)
    else:
        estimator.fit(X_train, y_train)
    return float(scorer(estimator, X_test, y_test))


def _private_fit_and_score(
    base, plan, params, bound, X_train, y_train, X_test, y_test, scorer
):
    """One fit of the sweep: the score, the spend the fit reported, the time."""
    start = time.perf_counter()
    estimator = clone(base).set_params(**params)
    score = _fit_and_score(estimator, X_train, y_train, X_test, y_test, scorer)
    spent = plan.reported_spend(estimator)
    if spent is not None and not _within(spent, bound):
        raise RuntimeError(
            f"A fit with {plan.param_name}={params[plan.param_name]} spent "
            f"epsilon={float(spent[0])}, delta={float(spent[1])} (fit and "
            f"scoring), more than the epsilon={bound[0]}, delta={bound[1]} its "
            "parameters allow, so the budget check before the sweep did not "
            "cover it; the sweep was stopped. privacy_utility_curve needs "
            "estimators whose cost is their epsilon (e.g. SampleAggregateEstimator "
            "with aggregate='parameters', not a per-query 'vote' or 'mean')."
        )
    return score, spent, time.perf_counter() - start


def _within(spent, bound):
    """Whether an exact ``(epsilon, delta)`` spend is at most the float bound."""
    slack = 1 + Fraction(1, 10**9)  # epsilon_spent_ is a float sum of entries
    return all(s <= exact(b) * slack for s, b in zip(spent, bound, strict=True))


def _scoring_name(scoring):
    if scoring is None:
        return "score"
    if isinstance(scoring, str):
        return scoring
    name = getattr(scoring, "__name__", None)
    if name is None:
        name = getattr(getattr(scoring, "_score_func", None), "__name__", None)
    return name or type(scoring).__name__
