"""Base class for differentially private estimators."""

import itertools
import math
import os
from numbers import Real

from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    make_constraint,
)

from skdp.accounting._channel import carried_here
from skdp.accounting._cost import PrivacyCost
from skdp.accounting._default import (
    _explicit_default,
    carried_default,
    charged_default,
    check_accountant,
)
from skdp.accounting._units import MAX_ROWS
from skdp.exceptions import BudgetExceededError
from skdp.utils._search_hint import check_search_plan, search_refusal_hint
from skdp.utils._validation import epsilon_requirement

__all__ = ["PrivateEstimatorMixin"]

# Where skdp's HTML documentation is served. The "?" of an estimator's HTML
# diagram (in a notebook) links to its page there. skdp's docs are built
# locally, not hosted, so the default is the address of
# ``python -m http.server 8000 -d docs/_build/html``; point SKDP_DOCS_URL
# elsewhere to serve them elsewhere. A file:// URL is not a useful default:
# browsers do not open file links from a notebook served over http.
DOCS_URL_VARIABLE = "SKDP_DOCS_URL"
DEFAULT_DOCS_URL = "http://localhost:8000/"


def _docs_url():
    """The documentation's base URL, ending in "/" (read on every call)."""
    url = os.environ.get(DOCS_URL_VARIABLE, "").strip() or DEFAULT_DOCS_URL
    return url.rstrip("/") + "/"


def _api_page_name(cls):
    """The name of ``cls``'s page in the API reference (``generated/<name>.html``).

    A class that ``skdp`` exports is documented as ``skdp.<name>``, any other
    under its public module (its module path up to the first private part).
    """
    import skdp  # at call time: skdp imports this module

    if getattr(skdp, cls.__name__, None) is cls:
        return f"skdp.{cls.__name__}"
    module = itertools.takewhile(
        lambda part: not part.startswith("_"), cls.__module__.split(".")
    )
    return ".".join([*module, cls.__name__])


def _check_epsilon_param(estimator):
    """Raise scikit-learn's error, in skdp's words, for an invalid ``epsilon``.

    Applies to an ``epsilon`` whose constraints hold a positive interval;
    other alternatives the constraints allow (e.g. None) stay valid.
    """
    constraints = getattr(estimator, "_parameter_constraints", {}).get("epsilon")
    if not isinstance(constraints, list):
        return
    positive = [c for c in constraints if isinstance(c, Interval) and c.left == 0]
    if not positive:
        return
    value = estimator.get_params(deep=False)["epsilon"]
    others = [make_constraint(c) for c in constraints if c not in positive]
    is_real = isinstance(value, Real) and not isinstance(value, bool)
    if is_real and value > 0 and math.isfinite(value):
        return
    if not is_real and any(c.is_satisfied_by(value) for c in others):
        return
    requirement, fix = epsilon_requirement()
    alternatives = "".join(f" or {c}" for c in others if not c.hidden)
    raise InvalidParameterError(
        f"The 'epsilon' parameter of {type(estimator).__name__} must be "
        f"{requirement}{alternatives}. Got {value!r} instead. {fix}"
    )


class PrivateEstimatorMixin:
    """Mixin for estimators that charge a :class:`~skdp.BudgetAccountant`.

    It resolves the ``accountant`` parameter at fit time, charges a fit's whole
    cost atomically before the data is read, and records ``epsilon_spent_`` and
    ``delta_spent_``. Put it left of :class:`~sklearn.base.BaseEstimator`.
    Subclasses call :meth:`_charge` once per ``fit``, after validating their
    input and parameters and before computing anything from the data.

    Notes
    -----
    **Default accountant across processes.** An estimator with
    ``accountant=None`` uses :func:`~skdp.default_accountant` as it is when
    ``fit`` runs. When the estimator is pickled (joblib's process backends pickle
    every estimator they send to a worker) it takes the default accountant in
    effect at that moment along. In another process, unless a ``with
    accountant:`` block or :func:`~skdp.set_default_accountant` is in effect
    there, ``fit`` uses that carried copy: a SQLite ledger is shared, and an
    in-memory one spends through the parent process that owns it. A worker
    therefore never charges a private, throw-away default while the parent's
    ledger shows nothing. Only a process the owner started (a pool's worker,
    or a worker's worker) uses the carried copy: a model saved with pickle
    or joblib and loaded in a later session takes that session's default.

    **Inside scikit-learn's searches.** Before the first charge of a
    ``GridSearchCV``, ``RandomizedSearchCV`` or ``cross_validate`` call,
    :meth:`_charge` checks the cost of the search's whole plan against the
    accountant and refuses that fit (nothing charged) when it does not fit;
    a refused fit inside a search names the plan and the fixes
    (:mod:`skdp.utils._search_hint`).

    **Documentation link.** In the HTML diagram that Jupyter shows for an
    estimator, the "?" links to the estimator's page in skdp's API reference,
    under the base URL in the environment variable ``SKDP_DOCS_URL`` (read when
    the diagram is drawn), by default ``http://localhost:8000/``: where
    ``python -m http.server 8000 -d docs/_build/html`` serves the docs once
    built with ``python -m sphinx -b html docs docs/_build/html``.
    """

    # ``groups`` is requested by every private estimator that states a
    # ``max_rows_per_group`` (see :meth:`_get_metadata_request`); the class
    # default says so, and the instance narrows it.
    __metadata_request__fit = {"groups": True}

    def _get_metadata_request(self):
        """The routing request of this instance: ``groups`` is requested
        when ``max_rows_per_group`` is stated, and **unset** otherwise.

        Unset makes scikit-learn's router refuse a ``groups`` passed to a
        ``Pipeline``, search or ``cross_validate`` holding this step
        (``UnsetMetadataPassedError``) while it routes, before any step is
        fitted: a step with no bound on a group's rows would otherwise run
        at row level, or refuse in its own ``fit`` after the earlier steps
        had charged the budget. A ``set_fit_request(groups=False)`` (this
        step ignores the groups and protects one row, a choice stated by the
        caller) or an alias is kept as given; otherwise the request follows
        the bound as it is now, so a ``set_params(max_rows_per_group=None)``
        after any ``set_*_request`` (which stores the whole request, groups
        requested while the bound was stated) leaves it unset too. An
        explicit ``groups=True`` without a bound is unset as well: the fit
        would refuse it, after the earlier steps had charged.
        """
        requests = super()._get_metadata_request()
        given = requests.fit.requests.get("groups")
        if given is False or isinstance(given, str):
            return requests
        bounded = getattr(self, "max_rows_per_group", None) is not None
        requests.fit.add_request(param="groups", alias=True if bounded else None)
        return requests

    # scikit-learn's HTML repr draws the "?" link from these; a subclass
    # defined outside skdp gets no link.
    _doc_link_module = "skdp"

    @property
    def _doc_link_template(self):
        return _docs_url() + "generated/{page}.html"

    def _doc_link_url_param_generator(self):
        return {"page": _api_page_name(type(self))}

    def _validate_params(self):
        """scikit-learn's parameter validation, with skdp's words for ``epsilon``.

        An invalid ``epsilon`` (0, negative, NaN, infinite or not a number)
        raises scikit-learn's :class:`InvalidParameterError` in its own form
        (``The 'epsilon' parameter of X must be ... Got ... instead.``), but
        with the requirement and the fix that :func:`~skdp.utils.check_epsilon`
        gives functions: ``> 0 and finite``. (scikit-learn's ``Interval``
        would say ``a float in the range (0.0, inf)`` and accept ``inf``.)
        """
        _check_epsilon_param(self)
        super()._validate_params()

    def _resolve_accountant(self):
        accountant = self.accountant
        if accountant is not None:
            return check_accountant(accountant)
        explicit = _explicit_default()
        if explicit is not None:
            return explicit
        carried = getattr(self, "_skdp_carried_accountant", None)
        if carried is not None and carried_here(carried[1]):
            return carried[0]
        return charged_default(f"{type(self).__name__}.fit")

    def _fit_cost(self, n_features=None):
        """An upper bound on what ``fit`` charges, from public parameters only.

        Meta-estimators (e.g. :class:`~skdp.model_selection.NoisyMaxSearchCV`)
        charge this in the parent process before dispatching fits. The default
        is the ``epsilon`` and ``delta`` parameters, which is the whole cost of
        most estimators; subclasses whose cost differs override it. With
        ``n_features=None`` (unknown, e.g. after a one-hot step) the bound
        must hold for every number of features.
        """
        return PrivacyCost(self.epsilon, getattr(self, "delta", 0.0))

    def _planned_cost(self, n_features=None):
        """:meth:`_fit_cost` stated for the fit's privacy unit, known from
        public parameters: a group of at most ``max_rows_per_group`` rows
        when that parameter is set (a fit with it must be given ``groups``,
        and one given ``groups`` must have it), else one row. What
        :func:`~skdp.model_selection.fit_cost` plans is then what ``fit``
        records, and an accountant in another unit converts both alike.

        The parameters are validated first, as ``fit`` validates them: a
        plan of parameters that ``fit`` would refuse is refused too."""
        if hasattr(self, "_parameter_constraints"):  # a subclass may have none
            self._validate_params()
        cost = self._fit_cost(n_features)
        k = getattr(self, "max_rows_per_group", None)
        if k is None:
            return cost
        stated = isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= MAX_ROWS
        return cost.in_unit("group", k if stated else None)

    @staticmethod
    def _cost_of_items(items):
        """The cost of ledger items ``(label, PrivacyCost)`` or ``(label,
        epsilon, delta)``, as a sum that keeps each release (its parts)."""
        costs = [
            cost[0] if isinstance(cost[0], PrivacyCost) else PrivacyCost(*cost)
            for _, *cost in items
        ]
        return sum(costs[1:], costs[0]) if costs else PrivacyCost(0.0)

    @classmethod
    def _stated_for(cls, items, unit):
        """``items`` whose costs carry the fit's unit when it is a group (the
        accountant converts them if it counts another unit); as given for
        one row."""
        if unit is None or unit.groups is None:
            return items
        return [
            (
                label,
                cls._cost_of_items([(label, *cost)]).in_unit("group", unit.max_rows),
            )
            for label, *cost in items
        ]

    def _charge(self, items, unit=None):
        """Charge ``(label, epsilon, delta)`` or ``(label, PrivacyCost)`` items
        atomically; set the spent totals.

        ``unit`` is the fit's :class:`~skdp.utils._privacy_unit.PrivacyUnit`
        (None, or one without groups: one row), the unit the costs are stated
        for; the accountant records it with every entry and converts the
        cost when it counts its budget in another unit. ``epsilon_spent_``
        and ``delta_spent_`` are the costs as stated, in the fit's unit.

        Labels are prefixed with the class name. Returns the accountant.
        """
        accountant = self._resolve_accountant()
        name = type(self).__name__
        items = [(f"{name}: {label}", *cost) for label, *cost in items]
        items = self._stated_for(items, unit)
        if items:  # public: a running search's parameters and the budget
            check_search_plan(accountant)
        try:
            entries = accountant.spend_many(items) if items else ()
        except BudgetExceededError as exc:
            hint = search_refusal_hint(accountant)  # public, as above
            if not hint:
                raise
            raise BudgetExceededError(f"{exc}{hint}") from exc
        self.epsilon_spent_ = math.fsum(e.epsilon for e in entries)
        self.delta_spent_ = math.fsum(e.delta for e in entries)
        return accountant

    def __getstate__(self):
        state = dict(super().__getstate__())  # object's is the live __dict__
        if self.accountant is None:  # the default in effect here and now
            carried = carried_default(state.pop("_skdp_carried_accountant", None))
            if carried is not None:
                state["_skdp_carried_accountant"] = carried
        return state

    def __sklearn_clone__(self):
        clone = super().__sklearn_clone__()
        carried = getattr(self, "_skdp_carried_accountant", None)
        if carried is not None:
            clone._skdp_carried_accountant = carried
        return clone
