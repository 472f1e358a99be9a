"""Empirical audits of the three releases behind the private metrics, each
with a mutation twin that the same audit must catch."""

import numpy as np

from skdp import BudgetAccountant
from skdp.audit import audit_mechanism
from skdp.mechanisms._grid import FixedPoint
from skdp.metrics import (
    _ranking,
    _regression,
    _tables,
    private_confusion_matrix,
    private_mean_squared_error,
    private_score_histograms,
)
from skdp.metrics._release import ReleasePlan

AUDIT = {"n_samples": 1_500, "n_pilot": 400, "random_state": 0}
# the missing clip moves the sum by 9 times its sensitivity: fewer runs do
SMALL_AUDIT = {"n_samples": 500, "n_pilot": 200, "random_state": 0}

# -- contingency table ---------------------------------------------------------
TABLE_D0 = (np.array([0, 0, 1]), np.array([0, 1, 1]))
TABLE_D1 = (np.array([0, 0, 1, 0]), np.array([0, 1, 1, 1]))  # one row (0, 1) more


def released_cell(data, seed):
    """Cell (0, 1) of the released table, where the added row falls."""
    cm = private_confusion_matrix(
        *data, labels=[0, 1], random_state=seed, accountant=BudgetAccountant()
    )
    return float(cm.counts[0, 1])


_HONEST_COUNTS = _tables.contingency_counts


def _counted_twice(rows, labels):
    """The twin's table: every row counted twice (L1 = 2 while the noise is
    calibrated to 1), e.g. a table built from two columns that both hold it."""
    once = np.array(_HONEST_COUNTS(rows, labels).numerators)
    return FixedPoint(tuple(int(c) for c in 2 * once), 0, (once.size,))


def test_contingency_table_audit_and_a_row_counted_twice_is_caught(
    monkeypatch,
):
    honest = audit_mechanism(released_cell, TABLE_D0, TABLE_D1, **AUDIT)
    assert honest.epsilon_lower_bound <= 1.0, str(honest)
    monkeypatch.setattr(_tables, "contingency_counts", _counted_twice)
    mutant = audit_mechanism(released_cell, TABLE_D0, TABLE_D1, **AUDIT)
    assert mutant.epsilon_lower_bound > 1.0, str(mutant)


# -- score histograms ----------------------------------------------------------
HIST_D0 = (np.array([0, 1, 1]), np.array([0.1, 0.6, 0.9]))
HIST_D1 = (np.array([0, 1, 1, 1]), np.array([0.1, 0.6, 0.9, 0.9]))


def released_top_positive_bin(data, seed):
    hist = private_score_histograms(
        *data, bins=2, random_state=seed, accountant=BudgetAccountant()
    )
    return float(hist.positive_counts[1])


class _HalvedPlan(ReleasePlan):
    def __init__(self, size, l1, l2, *args):
        super().__init__(size, l1 / 2, l2 / 2, *args)


def test_score_histogram_audit_and_a_halved_sensitivity_is_caught(monkeypatch):
    honest = audit_mechanism(released_top_positive_bin, HIST_D0, HIST_D1, **AUDIT)
    assert honest.epsilon_lower_bound <= 1.0, str(honest)
    monkeypatch.setattr(_ranking, "ReleasePlan", _HalvedPlan)
    mutant = audit_mechanism(released_top_positive_bin, HIST_D0, HIST_D1, **AUDIT)
    assert mutant.epsilon_lower_bound > 1.0, str(mutant)


# -- clipped sums ----------------------------------------------------------------
# bounds (0, 1): the added row's residual of 3 is clipped to 1 by the honest
# sums, and enters the twin's unclipped
SUM_D0 = (np.zeros(20), np.zeros(20))
SUM_D1 = (np.append(np.zeros(20), 3.0), np.zeros(21))


def released_mse(data, seed):
    estimate = private_mean_squared_error(
        *data,
        target_bounds=(0, 1),
        epsilon=1.0,
        random_state=seed,
        accountant=BudgetAccountant(),
    )
    return estimate.value


def _unclipped_sums(rows, lower, upper, columns):
    """The twin: Bernstein terms of the raw residual, not clipped to [0, U-L]."""
    a = np.abs(rows[:, 0] - rows[:, 1]) / (upper - lower)
    terms = [(1 - a) ** 2, 2 * a * (1 - a), a**2]
    scale = 2**32
    return FixedPoint(tuple(round(t.sum() * scale) for t in terms), -32, (1, 3, 1))


def test_clipped_sum_audit_and_a_missing_clip_is_caught(monkeypatch):
    honest = audit_mechanism(released_mse, SUM_D0, SUM_D1, **SMALL_AUDIT)
    assert honest.epsilon_lower_bound <= 1.0, str(honest)
    monkeypatch.setattr(_regression, "regression_sums", _unclipped_sums)
    mutant = audit_mechanism(released_mse, SUM_D0, SUM_D1, **SMALL_AUDIT)
    assert mutant.epsilon_lower_bound > 1.0, str(mutant)
