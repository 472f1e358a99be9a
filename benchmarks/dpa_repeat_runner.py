"""dp_accounting's repeat-and-select figures for bench_random_stopping.py.

Run in its own venv (dp_accounting is a benchmark-only dependency):
``python dpa_repeat_runner.py DELTA MEAN SIGMA [SIGMA ...]``; prints one JSON
line ``{"SIGMA": {"SHAPE": epsilon}}`` for the shapes 0, 0.5, 1 (truncated
negative binomial) and inf (Poisson), each with a Gaussian base of noise
multiplier SIGMA, from ``RdpAccountant`` with its default orders.
"""

import json
import sys

from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as rdp

SHAPES = (0.0, 0.5, 1.0, float("inf"))


def epsilon(sigma, mean, shape, delta):
    accountant = rdp.RdpAccountant()
    base = dp_event.GaussianDpEvent(sigma)
    accountant.compose(dp_event.RepeatAndSelectDpEvent(base, mean, shape))
    return accountant.get_epsilon(delta)


def main():
    delta, mean = float(sys.argv[1]), float(sys.argv[2])
    out = {
        s: {str(shape): epsilon(float(s), mean, shape, delta) for shape in SHAPES}
        for s in sys.argv[3:]
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
