"""Speed of PrivateQuantile on many rows vs ``np.sort`` and ``np.median``.

Run from the repository root::

    python benchmarks/bench_quantile.py [--n 10000000] [--repeat 5]

For three columns of ``n`` rows (standard normal, lognormal, and 95% zeros
like Adult's capital-gain) prints, side by side in one run, the median wall
time of ``np.sort``, ``np.median`` and ``PrivateQuantile.fit`` (both methods,
the median alone and three quartiles, secure randomness), and the ratio to
``np.sort``. A last row per column times the alternative way of scoring the
candidate grid without sorting the data (binary search of every row into the
1000 candidates, then counts), which the implementation does not use.
"""

import argparse
import statistics
import time

import numpy as np
from _summary import record, verdict, write

from skdp.stats._quantile import PrivateQuantile


def median_time(func, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def columns(n):
    rng = np.random.default_rng(0)
    positive = np.exp(rng.uniform(0, np.log(99_999), n)).round()
    tied = np.where(rng.random(n) < 0.95, 0.0, positive)
    return {
        "normal(0, 1), bounds [-10, 10]": (rng.normal(0, 1, n), (-10.0, 10.0)),
        "lognormal(0, 1), bounds [0, 100]": (rng.lognormal(0, 1, n), (0.0, 100.0)),
        "95% zeros, bounds [0, 1e5]": (tied, (0.0, 100_000.0)),
    }


def grid_counts_without_sort(x, lower, upper):
    """Candidate counts #{x < c}, #{x <= c} by searching rows into the grid."""
    grid = np.linspace(lower, upper, 1000)
    below = np.bincount(np.searchsorted(grid, x, side="right"), minlength=1001)
    at_most = np.bincount(np.searchsorted(grid, x, side="left"), minlength=1001)
    return np.cumsum(below)[:-1], np.cumsum(at_most)[:-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--summary-json", help="write the key figures as JSON")
    args = parser.parse_args()
    records = []
    print(f"n = {args.n:,} rows, median of {args.repeat} runs\n")
    print(f"| {'computation':44s} | {'time (s)':>8s} | {'x np.sort':>9s} |")
    print(f"|{'-' * 46}|{'-' * 10}:|{'-' * 11}:|")
    for name, (x, bounds) in columns(args.n).items():
        X = x.reshape(-1, 1)
        base = median_time(lambda x=x: np.sort(x), args.repeat)
        cases = {"np.sort(x)": base}
        cases["np.median(x)"] = median_time(lambda x=x: np.median(x), args.repeat)
        for method in ("exponential", "permute_and_flip"):
            for levels in ((0.5,), (0.25, 0.5, 0.75)):
                est = PrivateQuantile(levels, bounds=bounds, method=method)
                label = f"fit {method}, {len(levels)} level{'s' * (len(levels) > 1)}"
                cases[label] = median_time(lambda e=est, X=X: e.fit(X), args.repeat)
        cases["grid counts by searching rows (not used)"] = median_time(
            lambda x=x, b=bounds: grid_counts_without_sort(x, *b), args.repeat
        )
        print(f"| **{name}** | | |")
        for label, seconds in cases.items():
            print(f"| {label:44s} | {seconds:8.3f} | {seconds / base:9.2f} |")
        fits = {k: v / base for k, v in cases.items() if k.startswith("fit ")}
        worst = max(fits, key=fits.get)
        records.append(
            record(
                "quantiles",
                "`PrivateQuantile.fit` within 3x of `np.sort`",
                fits[worst],
                "x np.sort (worst of 4 fits)",
                verdict(fits[worst] <= 3),
                f"{name}, n = {args.n:,}; worst: {worst}; best "
                f"{min(fits.values()):.2f}x",
                f"median of {args.repeat}, n = {args.n:,}",
            )
        )
    write(args.summary_json, records)


if __name__ == "__main__":
    main()
