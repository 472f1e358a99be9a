"""The fit cost of PrivateGaussianNB, from its public parameters."""

from skdp.accounting import PrivacyCost
from skdp.accounting._composition import budget_left
from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms._additive import additive_cost
from skdp.mechanisms._labels import LabelPlan
from skdp.stats._mean import BoundsPlan

__all__ = ["naive_bayes_fit_cost"]


def naive_bayes_fit_cost(estimator, n_features=None):
    """The items ``fit`` charges, each with its mechanism: the label
    selection (``classes=None``), the bound search (``bounds=None``) and
    the moment sums, so that a tight accountant plans what it records.
    Private bounds with ``n_features=None`` (their search splits ε per
    feature) give the ``(epsilon, delta)`` upper bound instead."""
    selection, (eps_model, delta_model) = LabelPlan.split(
        estimator.classes,
        estimator.epsilon,
        estimator.delta,
        estimator.mechanism == "gaussian",
    )
    labels = [] if selection is None else LabelPlan(None, *selection, "").cost_items()
    private_bounds, _ = BoundsPlan.chooses_privately(estimator.bounds)
    if private_bounds and n_features is None:
        cost = PrivacyCost(eps_model, delta_model)
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
