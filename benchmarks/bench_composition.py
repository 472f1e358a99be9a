"""Tight composition: skdp's accountant against Google's dp_accounting.

Reproduce (dp_accounting lives in its own environment; it is never a
dependency of skdp)::

    python3 -m venv /work/dpacc && /work/dpacc/bin/pip install dp_accounting
    PYTHONPATH=. python benchmarks/bench_composition.py \
        --dpa-python /work/dpacc/bin/python

Two workloads, budget δ = 1e-5, each release calibrated to ε = 0.1:

1. 100 Gaussian releases at (0.1, 1e-7) each;
2. mixed: 50 Laplace (ε = 0.1), 50 Gaussian (0.1, 1e-7), 10 PTR (0.1, 1e-7).

For each, the total ε of skdp's ``BudgetAccountant`` under ``"basic"``,
``"advanced"`` (slack 1e-6 on top of the releases' δ, so its δ is 1.1e-5
for the first workload; the filter's slope is set by the ε budget, here the
basic sum), ``"zcdp"`` (slack = what the (ε, δ)-only releases
leave of δ) and ``"pld"`` (the accountant for the Gaussian workload; for the
mixed one, which that adaptive accountant refuses, ``plan_epsilon`` of the
plan fixed in advance), beside dp_accounting's PLD accountant
(pessimistic estimate, connect-the-dots, discretisation 1e-4; for Gaussians
also the optimistic estimate) and its RDP accountant. skdp treats a Laplace
release as any ε-DP release (the canonical randomised-response pair, sound
for the discrete Laplace it samples), so the second workload is also
compared with dp_accounting given that same pair.
"""

import argparse
import json
import subprocess
import time
from pathlib import Path

from skdp import BudgetAccountant
from skdp.accounting import PrivacyCost, plan_epsilon
from skdp.mechanisms import gaussian_cost, laplace_cost

DELTA = 1e-5

RUNNER = Path(__file__).resolve().parent / "dpa_runner.py"


def workloads():
    gauss = gaussian_cost(0.1, 1e-7)
    ptr = PrivacyCost(0.1, 1e-7, mechanism="ptr")
    return {
        "100 Gaussian": [gauss] * 100,
        "mixed 50 Laplace + 50 Gaussian + 10 PTR": [laplace_cost(0.1)] * 50
        + [gauss] * 50
        + [ptr] * 10,
    }


def skdp_totals(costs, advanced_delta):
    """Each composition's total ε: the accountant's where it takes the
    ledger, :func:`plan_epsilon` (a plan fixed in advance) for the PLD of a
    mixed ledger, which the adaptive ``"pld"`` accountant refuses."""
    reveal = sum(c.delta for c in costs if c.noise_multiplier is None)
    # the ε budget is the basic sum, where the advanced filter's slope is set
    budget = float(round(sum(c.epsilon for c in costs), 9))
    settings = {
        "basic": {"delta": DELTA},
        "advanced": {"delta": advanced_delta, "slack": 1e-6},
        "zcdp": {"delta": DELTA, "slack": DELTA - reveal},
        "pld": {"delta": DELTA},
    }
    totals, seconds = {}, {}
    gaussian_only = all(c.noise_multiplier is not None for c in costs)
    for name, kwargs in settings.items():
        start = time.perf_counter()
        if name == "pld" and not gaussian_only:
            name = "pld (plan_epsilon, fixed plan)"
            totals[name] = (plan_epsilon(costs, DELTA), DELTA)
        else:
            acc = BudgetAccountant(budget, composition=name, **kwargs)
            acc.spend_many([("release", c) for c in costs])
            totals[name] = acc.total()
        seconds[name] = time.perf_counter() - start
    return totals, seconds


def dp_accounting_figures(python, multiplier):
    try:
        done = subprocess.run(
            [python, str(RUNNER), repr(multiplier), repr(DELTA)],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"(dp_accounting skipped: {getattr(exc, 'stderr', exc)})")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dpa-python", default="/work/dpacc/bin/python")
    args = parser.parse_args()
    multiplier = gaussian_cost(0.1, 1e-7).noise_multiplier
    dpa = dp_accounting_figures(args.dpa_python, multiplier) or {}
    references = {
        "100 Gaussian": ("gauss_pld", "gauss_rdp"),
        "mixed 50 Laplace + 50 Gaussian + 10 PTR": ("mixed_pld", "mixed_pld_rr"),
    }
    print("| workload | composition | epsilon | delta | / dp_accounting PLD |")
    print("|---|---|---|---|---|")
    advanced_delta = {"100 Gaussian": 1.1e-5}  # the releases' 1e-5 + slack
    for workload, costs in workloads().items():
        totals, seconds = skdp_totals(costs, advanced_delta.get(workload, DELTA))
        pld_key, rdp_key = references[workload]
        reference = dpa.get(pld_key)
        for name, (eps, delta) in totals.items():
            ratio = f"{eps / reference:.4f}" if reference else "-"
            print(f"| {workload} | skdp {name} | {eps:.6f} | {delta:.3g} | {ratio} |")
        for key in sorted(k for k in dpa if k.startswith(pld_key) or k == rdp_key):
            ratio = dpa[key] / reference
            print(
                f"| {workload} | dp_accounting {key} | {dpa[key]:.6f} | "
                f"{DELTA:g} | {ratio:.4f} |"
            )
        timing = ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in seconds.items())
        print(f"|  | time to charge and compose ({timing}) | | | |")


if __name__ == "__main__":
    main()
