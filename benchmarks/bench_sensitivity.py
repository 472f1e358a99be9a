"""Speed of the sensitivity computations on 10^7 rows vs numpy's median/quartiles.

Times the windowed (capped) computations that PTRMedian, SmoothSensitivityMedian
and IQRScale use on large data -- median D_K, smooth sensitivity S_K and the
IQR instability distance A_K -- next to ``np.median`` and
``np.percentile(x, [25, 75])``, and the exact full-sort versions for context.
Prints a markdown table (median wall time over ``--repeat`` runs).

Usage (from the repository root)::

    python benchmarks/bench_sensitivity.py --n 10000000 --repeat 5
"""

import argparse
import math
import time

import numpy as np
from _summary import record, write

from skdp.sensitivity import (
    interquartile_range,
    iqr_instability_distance,
    log_grid_bin,
    median_distance_to_instability,
    median_smooth_sensitivity,
)

# PTR / Dwork-Lei parameters of ALGORITHMS_ADDREMOVE.md §5: eps_t = 0.5,
# delta = 1e-9, threshold T = ln(1/delta)/eps_t = 41.4, cap K = 82.
EPSILON, DELTA, CAP = 0.5, 1e-9, 82
# Smoothing for the Laplace smooth-sensitivity release: beta = eps/(2 ln(2/delta)),
# truncated where e^{-beta K} falls below 1e-12 (S_K >= S* always).
BETA = EPSILON / (2 * math.log(2 / DELTA))
SMOOTH_CAP = math.ceil(math.log(1e12) / BETA)


def timed(function, repeat):
    """Median wall time in seconds and the last result."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), result


def cases(x, bounds, repeat):
    iqr = interquartile_range(x, bounds)
    _, lo, hi = log_grid_bin(iqr)
    b = 0.01 * (bounds[1] - bounds[0]) / 20
    yield "`np.median(x)` (not private)", lambda: np.median(x), repeat
    yield (
        "`np.percentile(x, [25, 75])` (not private)",
        lambda: np.percentile(x, [25, 75]),
        repeat,
    )
    yield (
        f"median `D_K`, K = {CAP} (windowed)",
        lambda: median_distance_to_instability(x, b, bounds, cap=CAP),
        repeat,
    )
    yield (
        f"median `S_K`, β = {BETA:.4f}, K = {SMOOTH_CAP} (windowed)",
        lambda: median_smooth_sensitivity(x, BETA, bounds, cap=SMOOTH_CAP),
        repeat,
    )
    yield (
        f"IQR `A_K`, K = {CAP} (windowed)",
        lambda: iqr_instability_distance(x, bounds, lo, hi, cap=CAP),
        repeat,
    )
    yield (
        "median `D` exact (full sort)",
        lambda: median_distance_to_instability(x, b, bounds),
        1,
    )
    yield (
        "median `S*` exact (full sort + O(n) pass)",
        lambda: median_smooth_sensitivity(x, BETA, bounds),
        1,
    )
    yield (
        "IQR `A_j` exact (full sort + searchsorted)",
        lambda: iqr_instability_distance(x, bounds, lo, hi),
        1,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--summary-json", help="write the key figures as JSON")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    datasets = {
        "normal": (rng.normal(size=args.n), (-10.0, 10.0)),
        "lognormal": (rng.lognormal(size=args.n), (0.0, 100.0)),
    }
    rows = {}
    for name, (x, bounds) in datasets.items():
        baseline = None
        for label, function, repeat in cases(x, bounds, args.repeat):
            seconds, result = timed(function, repeat)
            baseline = baseline or seconds
            rows.setdefault(label, {})[name] = (seconds, result, seconds / baseline)

    print(f"n = {args.n:,}; median of {args.repeat} runs (exact versions: 1 run)\n")
    print(
        "| computation | normal (s) | × `np.median` | lognormal (s) | × `np.median` |"
    )
    print("|---|---:|---:|---:|---:|")
    for label, by_data in rows.items():
        cells = []
        for name in datasets:
            seconds, _, ratio = by_data[name]
            cells += [f"{seconds:.3f}", f"{ratio:.1f}"]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("\nvalues:")
    for label, by_data in rows.items():
        values = {name: by_data[name][1] for name in datasets}
        print(f"  {label}: {values}")
    records = []
    for label, by_data in rows.items():
        if "windowed" not in label:
            continue
        ref = "`np.percentile" if label.startswith("IQR") else "`np.median"
        base = next(k for k in rows if k.startswith(ref))
        ratios = [
            by_data[name][0] / rows[base][name][0] for name in ("normal", "lognormal")
        ]
        records.append(
            record(
                "local sensitivity",
                f"{label} vs {base.split(' (')[0]} (no target; part of the fits)",
                max(ratios),
                "x numpy (worst of normal, lognormal)",
                "info",
                f"n = {args.n:,}; normal {ratios[0]:.2f}x, lognormal {ratios[1]:.2f}x",
                f"median of {args.repeat}, n = {args.n:,}",
            )
        )
    write(args.summary_json, records)


if __name__ == "__main__":
    main()
