"""SampleAggregateEstimator: accuracy at epsilon = 1 and fit time.

Run from the repository root:

    python benchmarks/bench_sample_aggregate.py [--timing-only]

Accuracy: LogisticRegression on 10^5 x 20 synthetic data and on UCI Adult
(one-hot categoricals, numerics scaled by public known ranges), private
(parameter averaging, epsilon = 1) vs non-private. Time: 100 blocks on
10^6 x 20 with n_jobs=1 and n_jobs=2 vs one non-private fit on all rows
(best of 3 wall times each, in one run).
"""

import sys
import time
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import parallel_config
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from skdp.ensemble import SampleAggregateEstimator

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult.csv.gz"
# public schema: numeric columns and a priori ranges (not read from the data)
NUMERIC_RANGES = {
    "age": (17, 90),
    "education-num": (1, 16),
    "capital-gain": (0, 100_000),
    "capital-loss": (0, 5_000),
    "hours-per-week": (1, 99),
}
CATEGORICAL = [
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
]
N_RUNS = 3
REPEAT = 3


def adult_features():
    df = pd.read_csv(ADULT, skipinitialspace=True)
    cols = []
    for name, (lo, hi) in NUMERIC_RANGES.items():
        cols.append(((df[name].clip(lo, hi) - lo) / (hi - lo)).to_numpy()[:, None])
    # categories are the public schema of Adult; an unseen value is all-zero
    for name in CATEGORICAL:
        cols.append(pd.get_dummies(df[name]).to_numpy(dtype=float))
    X = np.hstack(cols)
    y = (df["Salary"].str.strip().str.startswith(">50K")).to_numpy(dtype=int)
    return X, y


def accuracy(name, X, y, n_blocks, radius, delta=0.0):
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
    base = LogisticRegression(max_iter=1000).fit(X_tr, y_tr).score(X_te, y_te)
    private = [
        SampleAggregateEstimator(
            LogisticRegression(max_iter=1000),
            n_blocks=n_blocks,
            epsilon=1.0,
            delta=delta,
            output_bounds=("l2", radius),
            random_state=seed,
        )
        .fit(X_tr, y_tr)
        .score(X_te, y_te)
        for seed in range(N_RUNS)
    ]
    print(
        f"| {name} | {len(y_tr)} | {n_blocks} | {radius} | {delta:g} | {base:.4f} | "
        f"{np.mean(private):.4f} ({np.min(private):.4f}-{np.max(private):.4f}) | "
        f"{100 * (base - np.mean(private)):.2f} |"
    )


def best_of(func, repeat=REPEAT):
    """Smallest wall time of ``repeat`` calls (the machine is shared)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return min(times)


def timing():
    X, y = make_classification(n_samples=1_000_000, n_features=20, random_state=0)
    base = best_of(lambda: LogisticRegression().fit(X, y))
    with threadpool_limits(limits=1, user_api="blas"):
        base_1 = best_of(lambda: LogisticRegression().fit(X, y))
    print(f"non-private fit 10^6 x 20: {base:.2f} s (one BLAS thread: {base_1:.2f} s)")
    runs = [("n_jobs=1", 1, None), ("n_jobs=2", 2, None), ("n_jobs=2 loky", 2, "loky")]
    for label, n_jobs, backend in runs:
        est = SampleAggregateEstimator(
            LogisticRegression(),
            n_blocks=100,
            output_bounds=("l2", 5.0),
            n_jobs=n_jobs,
            random_state=0,
        )
        with parallel_config(backend=backend) if backend else nullcontext():
            took = best_of(lambda est=est: est.fit(X, y))
        print(
            f"fit 10^6 x 20, 100 blocks, {label}: {took:.2f} s vs non-private "
            f"{base:.2f} s: ratio {took / base:.2f} (vs one BLAS thread "
            f"{took / base_1:.2f})"
        )


def main():
    if "--timing-only" in sys.argv:
        timing()
        return
    print(
        "| data | n_train | k | l2 radius | delta | non-private | private (min-max) "
        "| gap (points) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    X, y = make_classification(n_samples=100_000, n_features=20, random_state=0)
    for k in (100, 300, 1000):
        accuracy("synthetic 10^5 x 20", X, y, k, 5.0)
    Xa, ya = adult_features()
    accuracy("adult", Xa, ya, 300, 5.0)
    accuracy("adult", Xa, ya, 300, 5.0, delta=1e-6)
    timing()


if __name__ == "__main__":
    main()
