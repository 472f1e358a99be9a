"""dp_accounting's figures for bench_composition.py, run in its own venv.

Usage: ``python dpa_runner.py NOISE_MULTIPLIER DELTA``; prints one JSON line.
"""

import json
import sys

from dp_accounting import dp_event
from dp_accounting.pld import privacy_loss_distribution as pld
from dp_accounting.rdp import rdp_privacy_accountant as rdp

STEP = 1e-4


def gaussian(r, **kwargs):
    return pld.from_gaussian_mechanism(r, value_discretization_interval=STEP, **kwargs)


def pair(eps, delta):
    params = pld.common.DifferentialPrivacyParameters(eps, delta)
    return pld.from_privacy_parameters(params, value_discretization_interval=STEP)


def rdp_epsilon(events, delta):
    accountant = rdp.RdpAccountant()
    for event, count in events:
        accountant.compose(event, count)
    return accountant.get_epsilon(delta)


def main():
    r, delta = float(sys.argv[1]), float(sys.argv[2])
    optimistic = gaussian(r, pessimistic_estimate=False, use_connect_dots=False)
    g50 = gaussian(r).self_compose(50)
    lap = pld.from_laplace_mechanism(10.0, value_discretization_interval=STEP)
    ptr = pair(0.1, 1e-7).self_compose(10)
    out = {
        "gauss_pld": gaussian(r).self_compose(100).get_epsilon_for_delta(delta),
        "gauss_pld_optimistic": optimistic.self_compose(100).get_epsilon_for_delta(
            delta
        ),
        "gauss_rdp": rdp_epsilon([(dp_event.GaussianDpEvent(r), 100)], delta),
        "mixed_pld": g50.compose(lap.self_compose(50))
        .compose(ptr)
        .get_epsilon_for_delta(delta),
        "mixed_pld_rr": g50.compose(pair(0.1, 0.0).self_compose(50))
        .compose(ptr)
        .get_epsilon_for_delta(delta),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
