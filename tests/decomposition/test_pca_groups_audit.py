"""An audit of PrivatePCA's second-moment release with groups as the
privacy unit, and its twin that skips the contribution bounding (every row
of the added group kept, the noise still calibrated to k rows)."""

import numpy as np
from _gaussian_audit import likelihood_ratio

from skdp.audit import assert_dp, audit_mechanism
from skdp.linear_model._release import unit_multipliers
from skdp.mechanisms import check_random_source, gaussian_noise_multipliers
from skdp.sensitivity import exact_clipped_gram
from skdp.utils._privacy_unit import PrivacyUnit

# Neighbours: D0, one row at the clipping norm (group 0); D1, D0 plus a
# group of 5k equal rows there (the worst case: the k kept rows move the
# Gram by k times the row's bound). Without the bounding it moves 5k times
# at the same noise.
EPS, DELTA, K = 1.0, 1e-6, 2
FAST = {"n_samples": 20_000, "n_pilot": 5_000, "random_state": 0}
D0 = (np.array([[1.0, 0.0]]), np.array([0]))
D1 = (
    np.vstack([D0[0], np.tile([1.0, 0.0], (5 * K, 1))]),
    np.append(D0[1], [1] * 5 * K),
)


def grouped_release(bound):
    (ratio,) = unit_multipliers(gaussian_noise_multipliers(EPS, DELTA, [1.0]), K)
    sums = {}
    for data in (D0, D1):
        X, groups = data
        if bound:  # PrivatePCA.fit's bounding, then its exact Gram
            (X,) = PrivacyUnit(groups, K).bound(check_random_source(0), X)
        sums[id(data)] = [exact_clipped_gram(X, 1.0, intercept=True)[0]]
    return likelihood_ratio(sums, [(0, ratio)], D0, D1)


def test_audit_of_the_grouped_second_moments_passes():
    assert_dp(grouped_release(True), D0, D1, EPS, DELTA, **FAST)


def test_audit_catches_a_fit_that_skips_the_bounding():
    mutant = audit_mechanism(grouped_release(False), D0, D1, delta=DELTA, **FAST)
    assert mutant.epsilon_lower_bound > EPS + 0.25, str(mutant)
