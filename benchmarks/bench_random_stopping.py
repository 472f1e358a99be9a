"""RandomStoppingSearchCV: its accounting, and Adult.

(a) **Accounting.** The search's ε for a Gaussian base of noise multiplier
    σ, ``K`` truncated negative binomial (η = 0, 0.5, 1; γ for a mean of 10)
    or Poisson (mean 10), δ = 1e-6, against Google's ``dp_accounting``
    (``RdpAccountant`` with ``RepeatAndSelectDpEvent``), which runs in its own
    venv (``dpa_repeat_runner.py``; a benchmark-only dependency). Target:
    within 1 %.
(b) **Adult.** ``PrivateLogisticRegression`` tuned over a grid of ``C``,
    ``max_norm`` and ``max_iter`` (``GRID``, 45 candidates) at total ε = 1,
    δ = 1e-6 (each fit's ε calibrated so that the search's charge is 1; the
    private accuracy scorer's ε is ``1/r`` for the fits' noise multiplier
    ``r``, so its Rényi curve lies under the fits' and the held-out scoring
    is free: the parts are disjoint). Adult is loaded as in
    ``bench_linear_models.py`` and split once (25 % test,
    ``random_state=0``); the figure is the released model's accuracy on the
    test split. Target: ≥ 0.830. Side by side, ``NoisyMaxSearchCV(method=
    'holdout')`` at the same total ε = 1 (a zCDP accountant composes its
    candidates' Gaussian fits; each candidate's ε calibrated to the total),
    on the same grid and on the 5 values of ``C`` alone.

Reproduce (from the repository root; about 15 minutes on the shared machine)::

    python -m venv /work/dpavenv && /work/dpavenv/bin/pip install dp-accounting
    PYTHONPATH=. python benchmarks/bench_random_stopping.py \
        [--dpa-python /work/dpavenv/bin/python] [--seeds 5] [--quick] \
        [--eta 1] [--n-iter 10] [--no-noisy-max]
"""

import argparse
import json
import math
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import ParameterGrid, train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_sample_aggregate import adult_features

from skdp import BudgetAccountant, NoisyMaxSearchCV, PrivacyCost
from skdp.linear_model import PrivateLogisticRegression
from skdp.mechanisms._gaussian import _gaussian_delta_terms
from skdp.metrics import make_private_scorer
from skdp.model_selection import RandomStoppingSearchCV, fit_cost
from skdp.model_selection._random_stopping_cost import (
    random_stopping_epsilon,
    tnb_gamma,
    tnb_mean,
)

DELTA = 1e-6
MEAN = 10.0
SIGMAS = (2.0, 5.0, 10.0)
SHAPES = (0.0, 0.5, 1.0, math.inf)
RUNNER = Path(__file__).resolve().parent / "dpa_repeat_runner.py"
GRID = {
    "C": [0.1, 0.3, 1.0, 3.0, 10.0],
    "max_norm": [0.5, 1.0, 2.0],
    "max_iter": [5, 10, 20],
}
C_ONLY = {"C": GRID["C"]}
CLASSES = [0, 1]
SELECTION = 0.1  # NoisyMaxSearchCV's selection ε (permute-and-flip)


def gaussian(sigma):
    """A Gaussian release of noise multiplier ``sigma`` (its δ at ε = 1)."""
    value, error = _gaussian_delta_terms(sigma, 1.0)
    return PrivacyCost(1.0, min(value + 2 * error, 0.999), noise_multiplier=sigma)


def skdp_epsilon(sigma, shape):
    free = PrivacyCost(0.0)
    if math.isinf(shape):
        return random_stopping_epsilon(
            [gaussian(sigma)], free, "poisson", MEAN, None, None, DELTA
        )
    gamma = tnb_gamma(MEAN, shape)
    mean = math.nextafter(tnb_mean(gamma, shape), math.inf)
    return random_stopping_epsilon(
        [gaussian(sigma)],
        free,
        "truncated_negative_binomial",
        mean,
        shape,
        gamma,
        DELTA,
    )


def accounting(python):
    command = [python, str(RUNNER), str(DELTA), str(MEAN), *map(str, SIGMAS)]
    reference = json.loads(
        subprocess.run(command, capture_output=True, check=True).stdout
    )
    rows = []
    for sigma in SIGMAS:
        for shape in SHAPES:
            ours = skdp_epsilon(sigma, shape)
            theirs = reference[str(sigma)][str(shape)]
            rows.append((sigma, shape, ours, theirs, ours / theirs - 1.0))
    print("| σ | K | skdp ε | dp_accounting ε | difference | target ≤ 1 % |")
    print("|---|---|---|---|---|---|")
    for sigma, shape, ours, theirs, diff in rows:
        law = "Poisson" if math.isinf(shape) else f"TNB η = {shape:g}"
        met = "met" if abs(diff) <= 0.01 else "**missed**"
        print(
            f"| {sigma:g} | {law} | {ours:.5f} | {theirs:.5f} | {100 * diff:+.3f} % "
            f"| {met} |"
        )


def calibrate(total, make_cost, low=1e-3, high=20.0):
    """The largest per-fit ε (bisection, 30 steps) whose total is <= ``total``."""
    for _ in range(30):
        mid = math.sqrt(low * high)
        low, high = (mid, high) if make_cost(mid) <= total else (low, mid)
    return low


def logistic(epsilon):
    return PrivateLogisticRegression(epsilon, DELTA, classes=CLASSES)


def random_stopping(epsilon, n_iter, eta, seed, accountant=None):
    ratio = fit_cost(logistic(epsilon)).noise_multiplier
    return RandomStoppingSearchCV(
        logistic(epsilon),
        GRID,
        scoring=make_private_scorer("accuracy", epsilon=1.0 / ratio),
        n_iter=n_iter,
        eta=eta,
        delta=DELTA,
        accountant=accountant,
        random_state=seed,
    )


def noisy_max(epsilon, grid, selection, seed, accountant=None):
    return NoisyMaxSearchCV(
        logistic(epsilon),
        grid,
        method="holdout",
        epsilon=selection,
        refit=False,
        accountant=accountant,
        random_state=seed,
    )


def zcdp_planner():
    """The accountant NoisyMaxSearchCV plans its holdout items for."""
    return BudgetAccountant(math.inf, DELTA, composition="zcdp")


def zcdp_total(search):
    """The search's total ε under a zCDP accountant at δ = 1e-6 (bisection)."""
    cost = fit_cost(search)
    low, high = 0.0, 50.0
    for _ in range(40):
        mid = (low + high) / 2
        try:
            BudgetAccountant(mid, DELTA, composition="zcdp").check(cost)
            high = mid
        except Exception:
            low = mid
    return high


def adult(seeds, n_iter, eta, noisy_max_too=True):
    X, y = adult_features()
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
    print(
        f"\nAdult: {len(ParameterGrid(GRID))} candidates, total ε = 1, δ = {DELTA}; "
        f"random stopping: n_iter {n_iter:g}, eta {eta:g}"
    )
    eps_rs = calibrate(
        1.0, lambda e: fit_cost(random_stopping(e, n_iter, eta, 0)).epsilon
    )
    rows = [
        (
            "RandomStoppingSearchCV",
            eps_rs,
            lambda s, a: random_stopping(eps_rs, n_iter, eta, s, a),
            lambda: BudgetAccountant(1.0 + 1e-9, DELTA),
        )
    ]
    compared = (
        ("NoisyMaxSearchCV holdout, same grid", GRID),
        ("NoisyMaxSearchCV holdout, 5 C", C_ONLY),
    )
    for name, grid in compared if noisy_max_too else ():
        eps_nm = calibrate(
            1.0,
            lambda e, g=grid: zcdp_total(noisy_max(e, g, SELECTION, 0, zcdp_planner())),
        )
        rows.append(
            (
                name,
                eps_nm,
                lambda s, a, e=eps_nm, g=grid: noisy_max(e, g, SELECTION, s, a),
                lambda: BudgetAccountant(1.0 + 1e-9, DELTA, composition="zcdp"),
            )
        )
    print("| search | ε per fit | test accuracy, median (min) | s/search |")
    print("|---|---|---|---|")
    for name, eps, make, budget in rows:
        scores, start = [], time.perf_counter()
        for seed in range(seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                search = make(seed, budget()).fit(X_tr, y_tr)
            model = getattr(search, "best_estimator_", None)
            scores.append(model.score(X_te, y_te) if model is not None else np.nan)
        per = (time.perf_counter() - start) / seeds
        print(
            f"| {name} | {eps:.4f} | {np.nanmedian(scores):.4f} (min "
            f"{np.nanmin(scores):.4f}) | {per:.1f} |"
        )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dpa-python", default="/work/dpavenv/bin/python")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n-iter", type=float, default=MEAN)
    parser.add_argument("--eta", type=float, default=1.0)
    parser.add_argument("--quick", action="store_true", help="accounting and 1 seed")
    parser.add_argument(
        "--no-noisy-max", action="store_true", help="random stopping alone on Adult"
    )
    args = parser.parse_args()
    accounting(args.dpa_python)
    seeds = 1 if args.quick else args.seeds
    adult(seeds, args.n_iter, args.eta, noisy_max_too=not args.no_noisy_max)


if __name__ == "__main__":
    main()
