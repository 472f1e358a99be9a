"""Private statistics and preprocessing: accuracy and speed targets.

Measured side by side in one run:

1. UCI Adult (``../shared/data/adult.csv.gz``), ε = 1 per column, 50 runs:
   ``PrivateStandardScaler`` mean and std relative errors for age,
   hours-per-week, education-num (public bounds ``[0, 100]``); the robust
   scaler's refusals and ``|log(scale / IQR)|`` on age for both scale methods.
2. Quantiles, 9 deciles at ε = 1: mean rank error of ``method="joint"``
   against ``"exponential"`` (ε split over the levels) and a reference
   JointExp (``_jointexp.py``, continuous outputs) on N(0, 5) with
   n = 1000 (200 fresh data sets), and of the first two on Adult
   hours-per-week and age (25 runs; JointExp's O(n²) tables do not fit
   n = 32,561); capital-gain's median (exactly 0?) over 50 runs.
3. ``PrivateGaussianNB`` on Adult's numeric columns, one split, seeds 0-4,
   against scikit-learn's ``GaussianNB``; ``PrivatePCA`` captured variance on
   a 10^5 x 20 rank-3 synthetic set against scikit-learn's ``PCA``.
4. Speed on 10^7 rows, best of 3, each statistic beside its numpy
   counterpart in the same run.

Reproduce::

    PYTHONPATH=. python benchmarks/bench_statistics.py [--quick]
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

from skdp import (
    BudgetAccountant,
    PrivateGaussianNB,
    PrivateKBinsDiscretizer,
    PrivateOneHotEncoder,
    PrivatePCA,
    PrivateQuantile,
    PrivateRobustScaler,
    PrivateStandardScaler,
    PTRRefusedWarning,
)
from skdp.mechanisms import check_random_source, laplace_mechanism
from skdp.sensitivity import exact_histogram_counts

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _jointexp import jointexp_reference

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult.csv.gz"
LAB = BudgetAccountant(epsilon=np.inf, delta=1.0)  # experiments: all charged
DECILES = np.arange(1, 10) / 10


def adult():
    frame = pd.read_csv(ADULT, skipinitialspace=True)
    frame.columns = [c.strip() for c in frame.columns]
    return frame


def mean_rank_error(column, values, levels):
    ordered = np.sort(column)
    below = np.searchsorted(ordered, values)
    at_most = np.searchsorted(ordered, values, side="right")
    target = levels * ordered.size
    return float(np.mean(np.maximum(np.maximum(below - target, target - at_most), 0)))


def scaler_table(frame, runs):
    print("\n## PrivateStandardScaler on Adult, ε = 1 per column, bounds [0, 100]")
    print(f"median relative error over {runs} runs (target ≤ 2 %)\n")
    print("| column | true mean | mean error | true std | std error |")
    print("|---|---|---|---|---|")
    for name in ("age", "hours-per-week", "education-num"):
        x = frame[[name]].to_numpy(dtype=float)
        mean_err, std_err = [], []
        for seed in range(runs):
            est = PrivateStandardScaler(
                1.0, bounds=(0, 100), accountant=LAB, random_state=seed
            ).fit(x)
            mean_err.append(abs(est.mean_[0] / x.mean() - 1))
            std_err.append(abs(est.scale_[0] / x.std() - 1))
        print(
            f"| {name} | {x.mean():.3f} | {100 * np.median(mean_err):.3f} % "
            f"| {x.std():.3f} | {100 * np.median(std_err):.3f} % |"
        )


def robust_table(frame, runs):
    print("\n## PrivateRobustScaler on Adult age, ε = 1, bounds [0, 100]\n")
    age = frame[["age"]].to_numpy(dtype=float)
    iqr = np.percentile(age, 75) - np.percentile(age, 25)
    print("| scale_method | refused | median abs(log(scale / IQR)) |")
    print("|---|---|---|")
    for method in ("quantile", "dwork_lei"):
        refused, errors = 0, []
        for seed in range(runs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PTRRefusedWarning)
                est = PrivateRobustScaler(
                    1.0,
                    1e-6,
                    bounds=(0, 100),
                    scale_method=method,
                    accountant=LAB,
                    random_state=seed,
                ).fit(age)
            refused += int(est.scale_refused_[0])
            if not est.scale_refused_[0]:
                errors.append(abs(np.log(est.scale_[0] / iqr)))
        shown = f"{np.median(errors):.4f}" if errors else "-"
        print(f"| {method} | {refused}/{runs} | {shown} |")


def quantile_table(frame, runs, smooth_runs):
    print("\n## Quantiles: mean rank error of 9 deciles at ε = 1 (rows)\n")
    print("| data | joint | JointExp (reference) | exponential (ε/9 each) |")
    print("|---|---|---|---|")
    rng = np.random.default_rng(0)
    reference_rng = np.random.default_rng(1)
    errors = {"joint": [], "jointexp": [], "exponential": []}
    for seed in range(smooth_runs):
        x = rng.normal(0, 5, size=1000)
        for method in ("joint", "exponential"):
            est = PrivateQuantile(
                DECILES,
                bounds=(-50, 50),
                method=method,
                accountant=LAB,
                random_state=seed,
            ).fit(x[:, None])
            errors[method].append(mean_rank_error(x, est.quantiles_[:, 0], DECILES))
        reference = jointexp_reference(x, -50.0, 50.0, DECILES, 1.0, reference_rng)
        errors["jointexp"].append(mean_rank_error(x, reference, DECILES))
    shown = {
        k: f"{np.mean(v):.2f} ± {np.std(v) / np.sqrt(len(v)):.2f}"
        for k, v in errors.items()
    }
    print(
        f"| N(0, 5), n = 1000, {smooth_runs} data sets (± s.e.) | {shown['joint']} "
        f"| {shown['jointexp']} | {shown['exponential']} |"
    )
    for name in ("hours-per-week", "age"):
        x = frame[name].to_numpy(dtype=float)
        errors = {"joint": [], "exponential": []}
        for seed in range(max(runs // 2, 2)):
            for method in errors:
                est = PrivateQuantile(
                    DECILES,
                    bounds=(0, 100),
                    method=method,
                    accountant=LAB,
                    random_state=seed,
                ).fit(x[:, None])
                errors[method].append(mean_rank_error(x, est.quantiles_[:, 0], DECILES))
        print(
            f"| Adult {name} | {np.mean(errors['joint']):.2f} | - | "
            f"{np.mean(errors['exponential']):.2f} |"
        )
    gain = frame[["capital-gain"]].to_numpy(dtype=float)
    zero = {m: 0 for m in ("joint", "exponential")}
    for seed in range(runs):
        for method in zero:
            est = PrivateQuantile(
                0.5,
                bounds=(0, 100_000),
                method=method,
                accountant=LAB,
                random_state=seed,
            ).fit(gain)
            zero[method] += int(est.quantiles_[0, 0] == 0.0)
    print(
        f"\ncapital-gain median exactly 0: joint {zero['joint']}/{runs}, "
        f"exponential {zero['exponential']}/{runs} (target ≥ 90 %)"
    )


def models_table(frame, quick):
    print("\n## PrivateGaussianNB on Adult numeric columns, ε = 1, seeds 0-4\n")
    numeric = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
    low = np.array([17, 1, 0, 0, 1], dtype=float)
    high = np.array([90, 16, 100_000, 5_000, 99], dtype=float)
    X = frame[numeric].to_numpy(dtype=float)
    y = frame["Salary"].str.strip().str.startswith(">50K").astype(int).to_numpy()
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
    reference = GaussianNB().fit(X_tr, y_tr).score(X_te, y_te)
    scores = [
        PrivateGaussianNB(
            1.0, bounds=(low, high), classes=[0, 1], accountant=LAB, random_state=seed
        )
        .fit(X_tr, y_tr)
        .score(X_te, y_te)
        for seed in range(5)
    ]
    print("| model | accuracy (median, min) |")
    print("|---|---|")
    print(f"| PrivateGaussianNB | {np.median(scores):.4f} ({min(scores):.4f}) |")
    print(f"| GaussianNB | {reference:.4f} |")
    print(f"\ngap: {100 * (reference - np.median(scores)):.2f} points (target ≤ 1)")

    print("\n## PrivatePCA, 10^5 x 20 rank-3 synthetic, 3 components, seeds 0-4\n")
    rng = np.random.default_rng(0)
    n = 20_000 if quick else 100_000
    Z = rng.normal(size=(n, 3)) @ rng.normal(size=(3, 20))
    Z = (Z + 0.1 * rng.normal(size=Z.shape)) / (2 * np.sqrt(20))
    centred = Z - Z.mean(axis=0)

    def captured(components):
        return np.sum((centred @ components.T) ** 2)

    reference = captured(PCA(3).fit(Z).components_)
    print("| ε | captured / non-private (median, min) |")
    print("|---|---|")
    for eps in (1.0, 0.1):
        ratios = [
            captured(
                PrivatePCA(3, epsilon=eps, accountant=LAB, random_state=s)
                .fit(Z)
                .components_
            )
            / reference
            for s in range(5)
        ]
        print(f"| {eps} | {np.median(ratios):.4f} ({min(ratios):.4f}) |")


def best_of(fn, repeat=3):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def speed_table(quick):
    n = 10**6 if quick else 10**7
    print(f"\n## Speed on {n:,} rows, one column, best of 3 (target ≤ 3x)\n")
    rng = np.random.default_rng(0)
    x = rng.normal(50, 10, size=(n, 1))
    codes = rng.integers(0, 20, size=(n, 1)).astype(float)
    source = check_random_source(0)
    edges = [np.linspace(0, 100, 101)]
    pairs = [
        (
            "mean + std: PrivateStandardScaler.fit vs x.mean(), x.std()",
            lambda: PrivateStandardScaler(
                bounds=(0, 100), accountant=LAB, random_state=0
            ).fit(x),
            lambda: (np.clip(x, 0, 100).mean(), np.clip(x, 0, 100).std()),
        ),
        (
            "histogram, 100 public bins: counts + Laplace vs np.histogram",
            lambda: laplace_mechanism(
                exact_histogram_counts(x, edges), 1.0, 1.0, random_state=source
            ),
            lambda: np.histogram(x[:, 0], edges[0]),
        ),
        (
            "9 deciles: PrivateQuantile (joint) vs np.quantile",
            lambda: PrivateQuantile(
                DECILES, bounds=(0, 100), accountant=LAB, random_state=0
            ).fit(x),
            lambda: np.quantile(x[:, 0], DECILES),
        ),
        (
            "quantile bins: PrivateKBinsDiscretizer.fit vs np.quantile",
            lambda: PrivateKBinsDiscretizer(
                10, bounds=(0, 100), accountant=LAB, random_state=0
            ).fit(x),
            lambda: np.quantile(x[:, 0], np.arange(1, 10) / 10),
        ),
        (
            "categories: PrivateOneHotEncoder.fit vs np.unique",
            lambda: PrivateOneHotEncoder(accountant=LAB, random_state=0).fit(codes),
            lambda: np.unique(codes[:, 0], return_counts=True),
        ),
    ]
    print("| statistic | numpy (s) | skdp (s) | ratio |")
    print("|---|---|---|---|")
    for label, private, reference in pairs:
        t_ref, t_dp = best_of(reference), best_of(private)
        print(f"| {label} | {t_ref:.3f} | {t_dp:.3f} | {t_dp / t_ref:.2f} |")
    X20 = rng.normal(size=(n // 10, 20)) / 10
    t_ref = best_of(lambda: np.cov(X20, rowvar=False))
    t_dp = best_of(lambda: PrivatePCA(accountant=LAB, random_state=0).fit(X20))
    print(
        f"| covariance, {n // 10:,} x 20: PrivatePCA.fit vs np.cov | {t_ref:.3f} "
        f"| {t_dp:.3f} | {t_dp / t_ref:.2f} |"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    runs = 10 if args.quick else 50
    frame = adult()
    scaler_table(frame, runs)
    robust_table(frame, runs)
    quantile_table(frame, runs, 20 if args.quick else 200)
    models_table(frame, args.quick)
    speed_table(args.quick)


if __name__ == "__main__":
    main()
