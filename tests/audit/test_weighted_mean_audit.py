"""Issue 28: an audit of the weighted mean, and its twin that accepts weights
up to 2 (sensitivity doubled, noise unchanged), which the audit must catch."""

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.audit import assert_dp, audit_mechanism
from skdp.preprocessing import PrivateMean
from skdp.stats import _mean as mean_module

# four rows in [0, 1] at epsilon 1: every release is noise, by design
pytestmark = pytest.mark.filterwarnings("ignore::skdp.exceptions.NoiseDominatedWarning")

# The audit: the weighted mean's split sums on neighbours that differ by one
# row at the upper bound with weight 1 (the worst case). The output is the
# noisy first split sum u (post-processing of the release), which moves by
# the added row's weight. The twin accepts weights up to 2.
EPS = 1.0
AUDIT = {"n_samples": 1_200, "n_pilot": 300, "random_state": 0}
D0 = (np.zeros((4, 1)), np.full(4, 0.5))


def _grown(weight):
    return (np.vstack([D0[0], [[1.0]]]), np.append(D0[1], weight))


def _released_u(data, seed):
    X, w = data
    est = PrivateMean(EPS, bounds=(0.0, 1.0), random_state=seed)
    est.set_params(accountant=BudgetAccountant()).fit(X, sample_weight=w)
    return float((est.count_ + est._noisy_sums[0]) / 2)


def _weights_up_to_two(estimator, sample_weight, X):
    weights = np.asarray(sample_weight, dtype=float)
    assert np.all((weights >= 0) & (weights <= 2))
    return weights


def test_audit_of_the_weighted_mean_passes():
    assert_dp(_released_u, D0, _grown(1.0), EPS, **AUDIT)


def test_audit_catches_weights_up_to_two(monkeypatch):
    monkeypatch.setattr(mean_module, "check_row_weights", _weights_up_to_two)
    mutant = audit_mechanism(_released_u, D0, _grown(2.0), **AUDIT)
    assert mutant.epsilon_lower_bound > EPS
