"""What every private metric shares: the budget, the charge and the error bar.

A private metric is one release (a contingency table, two score histograms,
a vector of clipped sums) followed by post-processing of the released values
only. This module checks the public parameters, charges the accountant once
per release (before the labels are read) and computes the error bar of any
post-processed value from the released values and the public noise scale.
"""

from typing import NamedTuple

import numpy as np

from skdp.accounting._default import charged_default, check_accountant
from skdp.mechanisms import check_random_source
from skdp.mechanisms._additive import (
    additive_cost,
    additive_noise_variance,
    additive_release,
    additive_release_problem,
)
from skdp.utils._dask import is_dask_collection
from skdp.utils._function_unit import function_unit, stated_for_unit
from skdp.utils._privacy_unit import PrivacyUnit
from skdp.utils._validation import check_delta, check_epsilon

__all__ = ["PrivateEstimate", "ReleasePlan", "metric_unit", "noise_std_error"]

_ONE_ROW = PrivacyUnit(None, 1)

# Rows of the finite-difference matrix evaluated at once (bounds the memory
# of a gradient over many released values: 256 x size floats per output).
_GRADIENT_CHUNK = 256


class PrivateEstimate(NamedTuple):
    """A metric computed from a private release, with its error bar.

    Attributes
    ----------
    value : float or ndarray
        The metric, a post-processing of the released values.
    std_error : float or ndarray
        The standard deviation that the privacy noise gives ``value``, by the
        delta method at the released values with the public noise variance
        (see :func:`noise_std_error`). It does **not** include the sampling
        error of the test set (that of the non-private metric too).

    Examples
    --------
    >>> from skdp.metrics import PrivateEstimate
    >>> estimate = PrivateEstimate(0.85, 0.002)
    >>> value, std_error = estimate
    >>> [round(float(v), 4) for v in estimate.interval()]
    [0.8461, 0.8539]
    """

    value: object
    std_error: object

    def interval(self, z=1.96):
        """``value ± z * std_error``: the normal-approximation interval.

        Parameters
        ----------
        z : float, default=1.96
            Half-width in standard errors (1.96: 95 % for the noise alone).

        Returns
        -------
        low, high : float or ndarray
            Post-processing of the release, like the value.
        """
        half = z * np.asarray(self.std_error)
        return np.asarray(self.value) - half, np.asarray(self.value) + half


def resolve_accountant(accountant, caller="A private release"):
    """The accountant a metric charges: the given one, or the default now
    (refused in a worker process where none is in effect:
    :func:`~skdp.accounting._default.charged_default`)."""
    if accountant is None:
        return charged_default(caller)
    return check_accountant(accountant)


class ReleasePlan:
    """One additive-noise release of ``size`` values, checked before the charge.

    Laplace noise (``delta == 0``, calibrated to ``l1``) or the analytic
    Gaussian (``delta > 0``, calibrated to ``l2``), exact discrete noise on
    a power-of-two grid (:func:`~skdp.mechanisms._additive.additive_release`).
    Every check happens in the constructor, so that :meth:`charge` and
    :meth:`release` cannot fail on the data afterwards.

    ``unit`` is the release's privacy unit (:func:`metric_unit`; None: one
    row): ``l1`` and ``l2`` are then stated for it (the caller multiplies
    the row's by ``unit.unit_rows``), the charge carries it and
    :meth:`kept` bounds the rows.
    """

    def __init__(self, size, l1, l2, epsilon, delta, random_state, unit=None):
        self.unit = _ONE_ROW if unit is None else unit
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.size, self.l1, self.l2 = int(size), float(l1), float(l2)
        problem = additive_release_problem(
            self.l1, self.l2, self.epsilon, self.delta, self.size
        )
        if problem is not None:
            raise ValueError(f"{problem} Nothing was charged.")
        self.source = check_random_source(random_state)
        self.cost = additive_cost(self.epsilon, self.delta)
        self.variance = additive_noise_variance(
            self.l1, self.l2, self.epsilon, self.delta
        )

    def charge(self, accountant, label):
        """Charge the release's cost to ``accountant`` (one ledger entry)."""
        caller = f"The private metric {label.split(':', 1)[0]!r}"
        items = stated_for_unit([(label, self.cost)], self.unit)
        resolve_accountant(accountant, caller).spend_many(items)

    def kept(self, *columns):
        """Indices of the rows kept for the unit (at most ``k`` per group,
        a keyed rule on the numeric ``columns`` that stand for each row's
        content); every row for one row. After the charge."""
        return self.unit.kept(self.source, *columns)

    def release(self, exact):
        """The noisy values of ``exact`` (a float array or a FixedPoint)."""
        return additive_release(
            exact, self.l1, self.l2, self.epsilon, self.delta, self.source
        )


def metric_unit(caller, groups, max_rows_per_group, y_true):
    """The privacy unit of a metric's release, checked before the charge
    (:func:`~skdp.utils._function_unit.function_unit`; Dask input is
    refused with groups)."""
    if groups is None and max_rows_per_group is None:
        return _ONE_ROW
    rows = y_true if is_dask_collection(y_true) else np.asarray(y_true)
    return function_unit(caller, groups, max_rows_per_group, rows)


def noise_std_error(statistic, released, variance):
    """Standard deviation that independent noise of ``variance`` per released
    value gives ``statistic(released)``, by the delta method.

    Parameters
    ----------
    statistic : callable
        Maps an array of shape ``(..., m)`` of released values (any leading
        batch shape) to the metric, shape ``(..., p)`` or ``(...)``: the
        post-processing of the release, clamping included.
    released : ndarray of shape (m,)
        The released values.
    variance : float
        The public variance of each value's noise.

    Returns
    -------
    std_error : float or ndarray of shape (p,)
        ``sqrt(variance * Σ_j g_j²)`` with ``g_j`` the central difference of
        the statistic in released value ``j`` over ``± sqrt(variance)`` (one
        noise standard deviation: the slope the noise actually sees, also
        where a clamp makes the statistic flat or kinked).

    Notes
    -----
    A function of released values and of the public noise scale only:
    post-processing, free of charge. It describes the privacy noise, not the
    sampling error of the test set. Where a clamp of ``statistic`` is active
    over ``± sqrt(variance)`` on both sides the slope, and the error bar, is
    0: it then understates the noise (a metric pinned to its range when the
    noise swamps the counts).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.metrics._release import noise_std_error
    >>> float(noise_std_error(lambda v: v.sum(axis=-1), np.ones(4), 2.0))
    2.8284271247461903
    """
    released = np.asarray(released, dtype=float).ravel()
    step = float(np.sqrt(variance))
    m = released.size
    squares = 0.0
    with np.errstate(all="ignore"):  # post-processing: nothing may warn
        for start in range(0, m, _GRADIENT_CHUNK):
            rows = np.arange(start, min(start + _GRADIENT_CHUNK, m))
            shifted = np.repeat(released[None, :], rows.size, axis=0)
            shifted[np.arange(rows.size), rows] += step
            up = np.asarray(statistic(shifted), dtype=float)
            shifted[np.arange(rows.size), rows] -= 2 * step
            down = np.asarray(statistic(shifted), dtype=float)
            slope = (up - down) / (2 * step)
            squares = squares + np.sum(np.nan_to_num(slope) ** 2, axis=0)
        std = np.sqrt(variance * squares)
    return float(std) if np.ndim(std) == 0 else std
