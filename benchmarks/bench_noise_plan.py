"""Gaussian against Laplace plans at large epsilon: PCA and linear regression.

PrivatePCA and PrivateLinearRegression choose, from public values only,
between a Gaussian composition of their releases and a Laplace one
(``skdp.linear_model._noise_plan.plan_noise``). This script measures, at
``--epsilon`` (default 1e6), the distance to scikit-learn with the switch
(``after``, ``mechanism="auto"``) and with the Gaussian plan
(``before``, ``mechanism="gaussian"``: the release before the switch):

* PrivatePCA(2) on unscaled breast cancer: largest principal angle to
  scikit-learn's PCA (rad) and largest explained-variance-share error;
* PrivateLinearRegression on the consistency tests' synthetic table (stated
  ``data_norm`` and target bounds, and the defaults) and on diabetes: R²
  against exact least squares.

Run: ``PYTHONPATH=. python benchmarks/bench_noise_plan.py [--seeds 5]``.
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.decomposition import PCA

import skdp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _consistency_data import (
    SYNTHETIC_NORM,
    diabetes,
    reference_r2,
    synthetic_regression,
)


def angle(a, b):
    cosines = np.clip(np.linalg.svd(a @ b.T)[1], 0.0, 1.0)
    return float(np.max(np.arccos(cosines)))


def budget():
    return skdp.BudgetAccountant(1e12, 0.5)


def pca_errors(epsilon, seeds, mechanism):
    X = load_breast_cancer(return_X_y=True)[0]
    ref = PCA(2).fit(X)
    angles, shares = [], []
    for seed in range(seeds):
        est = skdp.PrivatePCA(
            2,
            epsilon=epsilon,
            mechanism=mechanism,
            accountant=budget(),
            random_state=seed,
        ).fit(X)
        angles.append(angle(est.components_, ref.components_))
        ratio = est.explained_variance_ratio_ - ref.explained_variance_ratio_
        shares.append(float(np.abs(ratio).max()))
    return max(angles), max(shares), est.delta_spent_


def regression_scores(epsilon, seeds, mechanism, data, **params):
    X, y = data
    scores = []
    for seed in range(seeds):
        reg = skdp.PrivateLinearRegression(
            epsilon,
            mechanism=mechanism,
            accountant=budget(),
            random_state=seed,
            **params,
        ).fit(X, y)
        scores.append(reg.score(X, y))
    return min(scores), max(scores), reference_r2(X, y), reg.delta_spent_


def rows(epsilon, seeds, mechanism):
    stated = {"data_norm": SYNTHETIC_NORM, "target_bounds": (-100, 1000)}
    angle_, share, spent = pca_errors(epsilon, seeds, mechanism)
    yield "PCA breast cancer (angle rad / share)", f"{angle_:.4f} / {share:.1e}", spent
    for name, data, params in (
        (
            "LinReg synthetic, stated norm (R² min-max / LSQ)",
            synthetic_regression(),
            stated,
        ),
        ("LinReg synthetic, defaults", synthetic_regression(), {}),
        ("LinReg diabetes, defaults", diabetes(), {}),
    ):
        low, high, ref, spent = regression_scores(
            epsilon, seeds, mechanism, data, **params
        )
        yield name, f"{low:.4f}-{high:.4f} / {ref:.4f}", spent


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, default=1e6)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    after = list(rows(args.epsilon, args.seeds, "auto"))
    before = list(rows(args.epsilon, args.seeds, "gaussian"))
    print(f"epsilon = {args.epsilon:g}, {args.seeds} seeds, delta = 1e-6")
    print("| fit | Gaussian plan (before) | with the switch (after) |")
    print("|---|---|---|")
    for (name, b, _), (_, a, spent) in zip(before, after, strict=True):
        plan = "Laplace" if spent == 0.0 else "Gaussian"
        print(f"| {name} | {b} | {a} ({plan}) |")


if __name__ == "__main__":
    main()
