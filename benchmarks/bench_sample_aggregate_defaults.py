"""SampleAggregateEstimator(LogisticRegression(), classes=[0, 1]) on Adult, defaults.

Run from the repository root (reads ``../shared/data/adult.csv.gz``):

    python benchmarks/bench_sample_aggregate_defaults.py

Accuracy at epsilon = 1 over 5 seeds (mean ± std), features of
``bench_sample_aggregate.adult_features`` (numerics scaled by public ranges,
one-hot categoricals; D = 66 parameters), against the settings that were the
defaults before ``n_blocks="auto"`` (100 blocks, with the bounds a user had
to pick: ``('l2', 5)``, the unit sphere or the box ``(-4, 4)``), and the
choices the "auto" rule weighed (issue 17; docs/sample_aggregate.rst).
"""

import time
import warnings

import numpy as np
from bench_sample_aggregate import adult_features
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from skdp.ensemble import SampleAggregateEstimator

SEEDS = range(5)
SETTINGS = [
    ("defaults (auto, sphere)", {}),
    ("auto, expected_n_samples=32561", {"expected_n_samples": 32561}),
    ("old: n_blocks=100, ('l2', 5)", {"n_blocks": 100, "output_bounds": ("l2", 5.0)}),
    ("n_blocks=100, sphere", {"n_blocks": 100}),
    ("n_blocks=100, box (-4, 4)", {"n_blocks": 100, "output_bounds": (-4, 4)}),
    ("balance rule k=236, sphere", {"n_blocks": 236}),
    ("n_blocks=400, sphere", {"n_blocks": 400}),
    ("n_blocks=1200, sphere", {"n_blocks": 1200}),
]


def main():
    X, y = adult_features()
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
    print("| setting | k | accuracy (mean ± std, 5 seeds) | time |")
    print("|---|---|---|---|")
    for name, kwargs in SETTINGS:
        start = time.perf_counter()
        scores, k = [], None
        for seed in SEEDS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # NoiseDominatedWarning, on purpose
                est = SampleAggregateEstimator(
                    LogisticRegression(), classes=[0, 1], random_state=seed, **kwargs
                ).fit(X_tr, y_tr)
            scores.append(est.score(X_te, y_te))
            k = est.n_blocks_
        elapsed = time.perf_counter() - start
        print(
            f"| {name} | {k} | {np.mean(scores):.3f} ± {np.std(scores):.3f} "
            f"| {elapsed:.0f} s |",
            flush=True,
        )


if __name__ == "__main__":
    main()
