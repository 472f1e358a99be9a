"""An audit of the mean with groups as the privacy unit, and its twin that
skips the contribution bounding (every row of the added group kept, the
noise still calibrated to k rows), which the audit must catch."""

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.audit import assert_dp, audit_mechanism
from skdp.mechanisms import check_random_source
from skdp.preprocessing import PrivateMean
from skdp.stats._mean_release import (
    mean_statistic,
    plan_mean_release,
    release_count_and_sums,
)
from skdp.utils._privacy_unit import PrivacyUnit

# a few rows in [0, 1] at epsilon 1: every release is noise, by design
pytestmark = pytest.mark.filterwarnings("ignore::skdp.exceptions.NoiseDominatedWarning")

# Neighbours: D0, three groups of rows at 0; D1, D0 plus a group of 3k rows
# at the upper bound (the worst case: every kept row moves the split sum u
# by 1). The output is the noisy u (post-processing of the release); the
# bounded group moves it by k, at Laplace scale k / epsilon. Without the
# bounding it moves by 3k at the same noise: epsilon 3.
EPS, K = 1.0, 2
AUDIT = {"n_samples": 1_200, "n_pilot": 300, "random_state": 0}
D0 = (np.zeros((5, 1)), np.array([0, 0, 1, 2, 2]))
D1 = (np.vstack([D0[0], np.ones((3 * K, 1))]), np.append(D0[1], [9] * (3 * K)))


PLAN = plan_mean_release(EPS, 0.0, 1, "laplace", unit_rows=K)
LOWER, UPPER = np.array([0.0]), np.array([1.0])


def _released_u(data, seed):
    # PrivateMean.fit's steps after the charge (its validation costs 20 ms a
    # fit; tests/test_groups_estimators.py checks that fit takes these steps)
    X, groups = data
    source = check_random_source(seed)
    (X,) = PrivacyUnit(groups, K).bound(source, X)
    statistic = mean_statistic(X, LOWER, UPPER, PLAN.paired)
    count, sums = release_count_and_sums(statistic, PLAN, source)
    return float((count + sums[0]) / 2)


def test_the_plan_is_the_estimators():
    est = PrivateMean(EPS, bounds=(0.0, 1.0), max_rows_per_group=K, random_state=0)
    est.set_params(accountant=BudgetAccountant()).fit(D1[0], groups=D1[1])
    assert est._plan == PLAN
    assert _released_u(D1, 0) == float((est.count_ + est._noisy_sums[0]) / 2)


def test_audit_of_the_mean_with_groups_passes():
    assert_dp(_released_u, D0, D1, EPS, **AUDIT)


def test_audit_catches_a_fit_that_skips_the_bounding(monkeypatch):
    monkeypatch.setattr(PrivacyUnit, "bound", lambda self, source, *columns: columns)
    mutant = audit_mechanism(_released_u, D0, D1, **AUDIT)
    assert mutant.epsilon_lower_bound > EPS
