"""The release of a private mean, without the estimator.

The public plan (:func:`plan_mean_release`), the exact statistic
(:func:`mean_statistic`), its noisy release (:func:`release_count_and_sums`)
and the means as post-processing (:func:`mean_from_release`). The estimator
is :class:`~skdp.preprocessing.PrivateMean`, whose Notes give the
derivations; this module imports no scikit-learn, so ``skdp describe`` can
use it without the estimator.
"""

from typing import NamedTuple

import numpy as np

from skdp.accounting._composition import budget_left
from skdp.mechanisms._additive import (
    additive_cost,
    additive_noise_bound,
    additive_noise_variance,
    additive_release,
    additive_release_problem,
)
from skdp.sensitivity import (
    centre_and_radius,
    exact_centred_sums,
    exact_count,
    exact_split_sums,
)
from skdp.sensitivity._mean import exact_weighted_count, per_feature_sensitivities

__all__ = [
    "MeanRelease",
    "check_mechanism_delta",
    "mean_budget_split",
    "mean_from_release",
    "mean_statistic",
    "plan_mean_release",
    "ratio_interval",
    "release_count_and_sums",
]


def mean_budget_split(epsilon, delta, n_features, mechanism):
    """Public split of (epsilon, delta) between the row count and the sums.

    Returns ``((eps_count, delta_count), (eps_sums, delta_sums))``.
    """
    # Error of each mean ~ sqrt(sum_noise**2 + count_noise**2) with the sums'
    # sensitivity growing like d (Laplace, L1) or sqrt(d) (Gaussian, L2) and the
    # count's fixed at 1; minimising it gives eps_sums/eps_count = d**(2/3)
    # (Laplace) or d**(1/3) (Gaussian). For one feature: half and half.
    power = 2.0 / 3.0 if mechanism == "laplace" else 1.0 / 3.0
    weight = n_features**power
    eps_count = epsilon / (1.0 + weight)
    delta_count = delta / 2.0  # the rest rounded down: both fit in δ exactly
    return (eps_count, delta_count), (
        budget_left(epsilon, eps_count),
        budget_left(delta, delta_count),
    )


class MeanRelease(NamedTuple):
    """The public plan of one mean release (fixed before any data is read).

    ``paired``: one vector of the normalised split sums (count and sums
    together) with the whole budget; otherwise the count and the centred sums
    separately with the budgets of :func:`mean_budget_split`.
    """

    paired: bool
    epsilon: float
    delta: float
    n_features: int
    mechanism: str
    unit_rows: int = 1

    def sensitivities(self):
        """``(L1, L2)`` of the sum vectors for the plan's unit (rows per unit)."""
        return per_feature_sensitivities(self.n_features, self.unit_rows)

    def cost_items(self):
        """Ledger items ``(label, PrivacyCost)``; they sum to the budget."""
        if self.paired:
            cost = additive_cost(self.epsilon, self.delta)
            return [("row count and clipped sums", cost)]
        (eps_n, delta_n), (eps_s, delta_s) = self.split()
        return [
            ("row count", additive_cost(eps_n, delta_n)),
            ("clipped sums", additive_cost(eps_s, delta_s)),
        ]

    def releases(self):
        """``(l1, l2, epsilon, delta, size)`` of each additive release."""
        d = self.n_features
        if self.paired:
            return [(*self.sensitivities(), self.epsilon, self.delta, 2 * d)]
        (eps_n, delta_n), (eps_s, delta_s) = self.split()
        return [
            (float(self.unit_rows), float(self.unit_rows), eps_n, delta_n, 1),
            (*self.sensitivities(), eps_s, delta_s, d),
        ]

    def split(self):
        """``((eps_count, delta_count), (eps_sums, delta_sums))`` when separate."""
        return mean_budget_split(
            self.epsilon, self.delta, self.n_features, self.mechanism
        )

    def worst_case_variance(self):
        """Noise variance of one feature's count and centred sum, added.

        In data units a mean's error is about ``r (e_S - ρ e_n) / n`` with
        ``ρ = (μ - c)/r`` in [-1, 1]; this is its variance at ``|ρ| = 1``,
        over ``(r/n)²``.
        """
        d = self.n_features
        if self.paired:
            # S_j = u_j - v_j and the count averaged over the d pairs
            pair = additive_noise_variance(
                *self.sensitivities(), self.epsilon, self.delta
            )
            return 2 * pair + 2 * pair / d
        (eps_n, delta_n), (eps_s, delta_s) = self.split()
        return additive_noise_variance(
            *self.sensitivities(), eps_s, delta_s
        ) + additive_noise_variance(
            float(self.unit_rows), float(self.unit_rows), eps_n, delta_n
        )

    def noise_margins(self, alpha):
        """Margins on the count and on each centred sum, all holding w.p. 1 - α.

        A union bound over the released coordinates: paired, ``2d`` split
        sums each within ``t`` give ``2t`` on every ``S_j = u_j - v_j`` and on
        the count (a mean of ``u_j + v_j``); separate, the count and the
        ``d`` sums with ``α / (d + 1)`` each.
        """
        d = self.n_features
        if self.paired:
            t = additive_noise_bound(
                alpha / (2 * d), *self.sensitivities(), self.epsilon, self.delta
            )
            return 2 * t, 2 * t
        (eps_n, delta_n), (eps_s, delta_s) = self.split()
        share = alpha / (d + 1)
        return (
            additive_noise_bound(
                share, float(self.unit_rows), float(self.unit_rows), eps_n, delta_n
            ),
            additive_noise_bound(share, *self.sensitivities(), eps_s, delta_s),
        )


def ratio_interval(sums, count, sum_margin, count_margin):
    """Range of ``S / n`` over ``|S - sums| <= sum_margin``, ``|n - count| <=
    count_margin``, clipped to [-1, 1]; the whole of it if ``n`` may be 0."""
    low_count, high_count = count - count_margin, count + count_margin
    if low_count <= 0:
        return np.full(sums.shape, -1.0), np.full(sums.shape, 1.0)
    low, high = sums - sum_margin, sums + sum_margin
    low = np.where(low >= 0, low / high_count, low / low_count)
    high = np.where(high >= 0, high / low_count, high / high_count)
    return np.clip(low, -1, 1), np.clip(high, -1, 1)


def plan_mean_release(epsilon, delta, n_features, mechanism, unit_rows=1):
    """Choose, from public quantities only, how the count and sums are released.

    ``unit_rows`` is the number of rows of a privacy unit (``k`` with
    ``groups``): every sensitivity is multiplied by it.

    Returns the :class:`MeanRelease` with the smaller worst-case variance:
    the paired release for few features, the separate one for many (see
    :class:`PrivateMean`, Notes).
    """
    plans = [
        MeanRelease(paired, epsilon, delta, n_features, mechanism, unit_rows)
        for paired in (True, False)
    ]
    try:
        plan = min(plans, key=MeanRelease.worst_case_variance)
    except (OverflowError, ZeroDivisionError):  # a noise scale beyond the
        # floats, or a share of a subnormal epsilon rounded to 0: checked next
        plan = plans[0]
    for release in plan.releases():
        problem = additive_release_problem(*release)
        if problem is not None:
            raise ValueError(
                f"The mean of {n_features} feature(s) cannot be released with "
                f"epsilon={epsilon!r} and delta={delta!r}: {problem} Nothing was "
                "charged. Use a larger epsilon."
            )
    return plan


def count_and_centred_sums(X, lower, upper, sample_weight=None):
    """The exact (weighted) row count and centred sums, as one additive
    statistic."""
    count = (
        exact_count(X) if sample_weight is None else exact_weighted_count(sample_weight)
    )
    return count, exact_centred_sums(X, lower, upper, sample_weight)


def mean_statistic(X, lower, upper, paired, sample_weight=None):
    """The exact statistic of a mean release, additive over blocks of rows.

    Paired (``plan.paired``): the normalised split sums, shape
    (2, n_features); otherwise the row count and the centred sums. With
    ``sample_weight`` (in [0, 1]) the count and the sums are weighted, at
    the same sensitivities.
    """
    if paired:
        return exact_split_sums(X, lower, upper, sample_weight)
    return count_and_centred_sums(X, lower, upper, sample_weight)


def release_count_and_sums(statistic, plan, source):
    """Noisy row count (a float) and noisy centred sums, shape (n_features,).

    ``statistic`` is :func:`mean_statistic` of the data (or the sum of its
    values on blocks of rows). The mechanism follows ``plan.delta``: Laplace
    when it is 0, Gaussian otherwise (``PrivateMean`` checks that this
    matches ``mechanism``). The caller has charged ``plan.cost_items()``.
    """
    # the sensitivities come from the public plan, never from the statistic
    l1, l2 = plan.sensitivities()
    if plan.paired:
        noisy = additive_release(statistic, l1, l2, plan.epsilon, plan.delta, source)
        return float(noisy.sum(axis=0).mean()), noisy[0] - noisy[1]
    (eps_n, delta_n), (eps_s, delta_s) = plan.split()
    exact_n, sums = statistic
    k = float(plan.unit_rows)
    count = additive_release(exact_n, k, k, eps_n, delta_n, source)
    noisy_sums = additive_release(sums, l1, l2, eps_s, delta_s, source)
    return float(count), noisy_sums


def mean_from_release(noisy_count, noisy_sums, lower, upper):
    """The means, post-processing of a noisy count and noisy centred sums.

    A data-independent rule keeps them finite and inside the bounds: the
    denominator is ``max(noisy_count, 1)`` and the result is clipped.
    """
    centre, radius = centre_and_radius(lower, upper)
    ratio = np.clip(noisy_sums / max(noisy_count, 1.0), -1, 1)
    return np.clip(centre + radius * ratio, lower, upper)


def check_mechanism_delta(mechanism, delta):
    """Refuse a mechanism that does not match ``delta`` (before any charge)."""
    if mechanism == "gaussian" and delta == 0:
        raise ValueError(
            "mechanism='gaussian' needs delta > 0; use mechanism='laplace' "
            "for pure epsilon-DP."
        )
    if mechanism == "laplace" and delta != 0:
        raise ValueError(
            f"mechanism='laplace' is pure epsilon-DP and spends no delta; got "
            f"delta={delta}. Set delta=0 or use mechanism='gaussian'."
        )
