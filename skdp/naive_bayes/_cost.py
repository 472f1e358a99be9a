"""The public plan of PrivateGaussianNB's fit: its noise and its cost."""

from skdp.accounting import PrivacyCost
from skdp.accounting._composition import budget_left, entry_profile
from skdp.base import PrivateEstimatorMixin
from skdp.exceptions import BudgetExceededError
from skdp.linear_model._release import check_laplace_recordable
from skdp.mechanisms._additive import additive_cost, quieter_additive_mechanism
from skdp.mechanisms._labels import LabelPlan
from skdp.sensitivity._mean import per_feature_sensitivities
from skdp.stats._mean import BoundsPlan

__all__ = ["check_recordable", "moment_sums_mechanism", "naive_bayes_fit_cost"]


def moment_sums_mechanism(estimator, n_features):
    """The noise of the moment sums: ``"laplace"`` or ``"gaussian"``.

    The stated ``mechanism``, or for ``"auto"`` the one whose noise on each
    released moment sum has the smaller standard deviation
    (:func:`~skdp.mechanisms._additive.quieter_additive_mechanism`) at the
    sums' own budget: ``epsilon`` less the label selection's and the
    bounds' shares, and the δ a Gaussian would get after the selection's.
    Public: ε, δ, the shares and ``n_features`` (L1 ``d``, L2 ``sqrt(d)``)
    only; a group's ``k`` scales both noises alike. None for ``"auto"``
    with ``n_features=None`` and ``delta > 0``, where it depends on ``d``.
    """
    if estimator.mechanism != "auto":
        return estimator.mechanism
    _, (eps_model, delta_model) = LabelPlan.split(
        estimator.classes, estimator.epsilon, estimator.delta, True
    )
    if n_features is None:
        return None if delta_model > 0 else "laplace"
    eps_sums = eps_model
    if BoundsPlan.chooses_privately(estimator.bounds)[0]:
        eps_sums = budget_left(eps_model, eps_model * estimator.bounds_share)
    l1, l2 = per_feature_sensitivities(n_features)
    return quieter_additive_mechanism(l1, l2, eps_sums, delta_model)


def check_recordable(estimator, mechanism, accountant):
    """Refuse, before the charge, the noise ``"auto"`` chose where the
    accountant cannot record it, naming the estimator's own fix.

    Only with stated ``classes`` (a private label selection needs δ and
    is refused by PLD whatever the noise): a Laplace plan under
    ``composition="pld"`` (with stated bounds, the sums being the only
    release) names ``mechanism="gaussian"``; a Gaussian plan under an
    accountant of δ = 0 (the default ``BudgetAccountant(epsilon)``, which
    the Laplace default of old fitted) names ``delta=0`` or
    ``mechanism="laplace"``.
    """
    if estimator.classes is None:
        return
    name = type(estimator).__name__
    if not BoundsPlan.chooses_privately(estimator.bounds)[0]:
        check_laplace_recordable(name, mechanism, accountant)
    pure = getattr(accountant, "delta", None) == 0
    if estimator.mechanism == "auto" and mechanism == "gaussian" and pure:
        raise BudgetExceededError(
            f"{name}(mechanism='auto') takes the Gaussian for the moment sums "
            "on this many features (less noise than Laplace), which spends "
            f"delta={estimator.delta!r}, and the accountant was created with "
            "delta=0 (pure epsilon-DP). Pass delta=0 (or "
            "mechanism='laplace') for a pure epsilon-DP fit, or create the "
            "accountant with a delta budget. Nothing was charged and no data "
            "was read."
        )


def naive_bayes_fit_cost(estimator, n_features=None):
    """The items ``fit`` charges, each with its mechanism: the label
    selection (``classes=None``), the bound search (``bounds=None``) and
    the moment sums, so that a tight accountant plans what it records.
    Private bounds with ``n_features=None`` (their search splits ε per
    feature), and ``mechanism="auto"`` with ``n_features=None`` (the choice
    depends on it), give an upper bound instead, with the δ of Gaussian sums
    (all of ``delta``) where they may be chosen, that covers the fit in
    every composition (:func:`_bound_for_any_feature_count`)."""
    mechanism = moment_sums_mechanism(estimator, n_features)
    selection, (eps_model, delta_model) = LabelPlan.split(
        estimator.classes,
        estimator.epsilon,
        estimator.delta,
        mechanism != "laplace",
    )
    labels = [] if selection is None else LabelPlan(None, *selection, "").cost_items()
    private_bounds, _ = BoundsPlan.chooses_privately(estimator.bounds)
    if mechanism is None or (private_bounds and n_features is None):
        share = estimator.bounds_share if private_bounds else 0.0
        cost = _bound_for_any_feature_count(mechanism, eps_model, delta_model, share)
        return cost if selection is None else PrivacyCost(*selection) + cost
    bounds_items, eps_bounds = [], 0.0
    if private_bounds:
        plan = BoundsPlan.build(
            estimator.bounds,
            n_features,
            eps_model * estimator.bounds_share,
            estimator.upper_limit,
        )
        bounds_items, eps_bounds = plan.cost_items(), plan.epsilon
    sums = additive_cost(budget_left(eps_model, eps_bounds), delta_model)
    items = [*labels, *bounds_items, ("moment sums", sums)]
    return PrivateEstimatorMixin._cost_of_items(items)


def _bound_for_any_feature_count(mechanism, eps_model, delta_model, bounds_share):
    """The model's cost (bounds and sums) for every number of features.

    The bound search's items are pure ε-DP and sum to ``eps_model *
    bounds_share`` whatever ``d``: one ``(ε_b, 0)`` covers them in every
    composition (``Σ ε_j²/2 <= ε_b²/2`` under zCDP). The sums' ε does not
    depend on ``d`` either, nor does a Gaussian's noise multiplier ``r``: a
    stated mechanism is its exact cost. ``"auto"`` may take either noise,
    and a generic ``(ε, δ)`` (zCDP: ``ρ = ε²/2`` with a reveal ``δ``) does
    not cover a Gaussian whose ``ρ = 1/(2 r²)`` is larger (large ``δ``
    for its ``ε``, e.g. ε = 0.05, δ = 0.01): the Gaussian's cost then
    covers both, as its ``ρ`` is at least the Laplace's ``ε²/2``. It is
    then the exact cost for every ``d``: ``ρ = 1/(2 r²) >= ε²/2`` is
    ``ε r <= 1``, and "auto" takes Laplace only for ``d <= (ε r)² / 2 <=
    1/2`` (so a private label selection keeps its share of δ, as planned).
    """
    eps_bounds = eps_model * bounds_share
    eps_sums = budget_left(eps_model, eps_bounds)
    if mechanism == "laplace" or not delta_model > 0:
        sums = additive_cost(eps_sums, 0.0)
    elif mechanism == "gaussian":
        sums = additive_cost(eps_sums, delta_model)
    else:
        sums = _covering_either_noise(eps_sums, delta_model)
    items = [("moment sums", sums)]
    if eps_bounds > 0:
        items.insert(0, ("bounds", PrivacyCost(eps_bounds)))
    return PrivateEstimatorMixin._cost_of_items(items)


def _covering_either_noise(epsilon, delta):
    """A cost at least that of Laplace sums at ``epsilon`` and of Gaussian
    sums at ``(epsilon, delta)`` in every composition the accountant has."""
    generic = PrivacyCost(epsilon, delta)
    try:
        gaussian = additive_cost(epsilon, delta)
    except (ValueError, OverflowError, ZeroDivisionError):
        return generic  # no Gaussian: "auto" takes Laplace
    rho_gaussian = entry_profile(
        epsilon, delta, noise_multiplier=gaussian.noise_multiplier
    )[0]
    return gaussian if rho_gaussian >= entry_profile(epsilon, 0.0)[0] else generic
