"""An audit of one noisy Lloyd step of PrivateKMeans with groups as the
privacy unit, and its twin that skips the contribution bounding (every row
of the added group kept, the noise still calibrated to k rows)."""

import numpy as np

from skdp.audit import audit_mechanism
from skdp.cluster import _kmeans
from skdp.cluster._kmeans import cluster_split_sums
from skdp.linear_model._release import unit_multipliers
from skdp.mechanisms import check_random_source, gaussian_release
from skdp.mechanisms._grid import FixedPoint
from skdp.utils._privacy_unit import PrivacyUnit

# One step with one cluster, vectorised, as tests/cluster/test_kmeans.py's
# audit. Neighbours: D0, two rows at the centre (groups 0 and 1); D1, D0
# plus a group of 5k rows at the upper corner: the k kept rows move the
# split sums by k sqrt(d), at noise k times the row's; without the
# bounding they move 5 times more at the same noise.
D, K = 4, 2
LOWER, UPPER = np.zeros(D), np.ones(D)
D0 = (np.full((2, D), 0.5), np.array([0, 1]))
D1 = (np.vstack([D0[0], np.ones((5 * K, D))]), np.append(D0[1], [7] * 5 * K))
AUDIT = {"n_samples": 20_000, "n_pilot": 5_000, "delta": 1e-6, "random_state": 0}


def released_u_total(data, seed, n_runs):
    X, groups = data
    sensitivity, multipliers = _kmeans.lloyd_release_plan(D, 1, 1.0, 1e-6)
    (multiplier,) = unit_multipliers(multipliers, K)
    (X,) = PrivacyUnit(groups, K).bound(check_random_source(0), X)
    statistic = cluster_split_sums(X, np.full((1, D), 0.5), LOWER, UPPER)
    batch = FixedPoint(
        statistic.numerators * n_runs, statistic.exponent, (n_runs, 2, D)
    )
    noisy = gaussian_release(batch, sensitivity, multiplier, random_state=seed)
    return np.asarray(noisy)[:, 0, :].sum(axis=1)  # post-processing


def test_audit_of_a_grouped_step_passes_and_a_twin_without_bounding_is_caught(
    monkeypatch,
):
    honest = audit_mechanism(released_u_total, D0, D1, **AUDIT)
    assert honest.epsilon_lower_bound <= 1.0, str(honest)
    monkeypatch.setattr(PrivacyUnit, "bound", lambda self, source, *columns: columns)
    mutant = audit_mechanism(released_u_total, D0, D1, **AUDIT)
    assert mutant.epsilon_lower_bound > 1.0, str(mutant)
