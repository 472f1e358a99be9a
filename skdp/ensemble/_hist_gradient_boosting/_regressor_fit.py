"""What the regressor's in-memory and Dask fits share around the boosting:
the plan and its one charge, the target range, and the fitted attributes."""

from typing import NamedTuple

import numpy as np

from skdp.ensemble._hist_gradient_boosting._plan import check_plan, check_target_bounds
from skdp.ensemble._hist_gradient_boosting.loss import SquaredError
from skdp.linear_model._release import gaussian_fit_cost
from skdp.linear_model._target_range import TARGET_SHARE, release_target_range
from skdp.mechanisms import check_random_source

__all__ = ["RegressorPlan", "charge_regressor_plan", "set_regressor_fitted"]


class RegressorPlan(NamedTuple):
    """The public plan of one regressor fit, charged."""

    #: The stated target bounds; None: released from the rows first.
    stated: tuple | None
    #: The public bin mapper; None: private bins.
    mapper: object
    #: Where the target range's multiplier stands in ``multipliers``.
    target_at: int
    multipliers: np.ndarray
    source: np.random.Generator
    unit: object

    def target_range(self, rows, name):
        """``(low, high)`` and the multipliers left for the bins and rounds:
        the stated bounds, or the range released from ``rows`` (in memory
        ``(X, y)``, on Dask the validated blocks)."""
        if self.stated is not None:
            return self.stated, self.multipliers
        multiplier = self.multipliers[self.target_at]
        low, high = release_target_range(rows, multiplier, self.source, name)
        return (low, high), np.delete(self.multipliers, self.target_at)


def charge_regressor_plan(estimator, shape, groups, rows):
    """Plan the fit of ``shape = (n, d)`` rows, refuse what cannot run and
    charge the whole cost once, before any row is read.

    ``rows`` is what the privacy unit checks ``groups`` against (``X``, or
    the Dask blocks, where groups are refused).
    """
    name = type(estimator).__name__
    stated = check_target_bounds(estimator.target_bounds, name)
    mapper, extra = estimator._bin_plan(shape[1])
    extra += [] if stated is not None else [TARGET_SHARE]
    unit = estimator._privacy_unit(groups, rows)
    epsilon, delta = estimator.epsilon, estimator.delta
    multipliers = estimator._multipliers(
        name, shape[1], 1, epsilon, delta, extra, unit, private_target=not stated
    )
    target_at = len(extra) - 1
    target = None if stated is not None else multipliers[target_at]
    loss = SquaredError()
    check_plan(estimator, name, shape, multipliers, len(extra) + 1, 1, loss, target)
    source = check_random_source(estimator.random_state)
    cost = gaussian_fit_cost(epsilon, delta)
    estimator._charge([(unit.label("boosted trees"), cost)], unit=unit)
    return RegressorPlan(stated, mapper, target_at, multipliers, source, unit)


def set_regressor_fitted(estimator, target_range, offset, scale):
    """The fitted attributes every regressor fit ends with (post-processing
    of released values and public parameters)."""
    estimator.target_range_ = np.array(target_range)
    estimator._finish_fit(1, offset, scale)
