"""Empirical audit of a composition against the accountant's claim.

``K`` Gaussian releases of a row count (add/remove sensitivity 1), each
calibrated to ``(0.5, 1e-6)``, reduced to their log-likelihood-ratio
statistic (post-processing, so a lower bound on its ε is one on the
composition's). The PLD accountant's ε for the ``K`` entries must survive
the audit; a twin that forgets to compose (it claims the ε of one release)
must be caught.
"""

import numpy as np

from skdp import BudgetAccountant
from skdp.audit import assert_dp, audit_mechanism
from skdp.mechanisms import check_random_source, gaussian_cost, gaussian_release

K, EPS_EACH, DELTA_EACH, DELTA = 20, 0.5, 1e-6, 1e-5
FAST = {"n_samples": 50_000, "n_pilot": 10_000, "random_state": 0}
D0, D1 = np.zeros((100, 1)), np.zeros((101, 1))


def composed_releases(data, random_state, n_runs):
    source = check_random_source(random_state)
    multiplier = gaussian_cost(EPS_EACH, DELTA_EACH).noise_multiplier
    count = np.full(n_runs, float(len(data)))
    statistic = np.zeros(n_runs)
    for _ in range(K):
        noisy = gaussian_release(count, 1.0, multiplier, random_state=source)
        statistic += (noisy - 100.5) / multiplier**2
    return statistic


def claimed_epsilon(composition):
    acc = BudgetAccountant(epsilon=100.0, delta=DELTA, composition=composition)
    acc.spend_many([("release", gaussian_cost(EPS_EACH, DELTA_EACH))] * K)
    return acc.total()[0]


def test_pld_claim_survives_the_audit_and_a_forgotten_composition_is_caught():
    claim = claimed_epsilon("pld")
    assert claim < K * EPS_EACH / 3  # far below the basic sum
    assert_dp(composed_releases, D0, D1, claim, DELTA, **FAST)
    bad = audit_mechanism(composed_releases, D0, D1, delta=DELTA, **FAST)
    # the twin claims one release's epsilon for all K of them
    assert bad.epsilon_lower_bound > EPS_EACH + 0.25, str(bad)
