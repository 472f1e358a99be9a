"""Accuracy and speed of the local-sensitivity estimators (issue 5).

Medians: PTRMedian (two public proposals b), SmoothSensitivityMedian (Laplace
and Cauchy) against the exponential-mechanism median (PrivateQuantile,
Smith 2011). Scales: IQRScale against the difference of two private quartiles
(PrivateQuantile at the same total epsilon). Speed: fit on 10^7 rows against
np.median / np.percentile.

Run from the repository root::

    python benchmarks/bench_local_sensitivity.py --reps 100 --speed-n 10000000

The adult data are read from ../shared/data/adult.csv.gz when present.
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from skdp.preprocessing._iqr import IQRScale
from skdp.preprocessing._ptr import PTRMedian, PTRRefusedWarning
from skdp.preprocessing._quantile import PrivateQuantile
from skdp.preprocessing._smooth import SmoothSensitivityMedian

DELTA = 1e-6
ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult.csv.gz"
ADULT_BOUNDS = {
    "age": (0.0, 100.0),
    "hours-per-week": (0.0, 100.0),
    "capital-gain": (0.0, 100_000.0),
    "fnlwgt": (0.0, 1_500_000.0),
}


def datasets(n):
    rng = np.random.default_rng(12345)
    out = [
        (f"normal n={n}", rng.normal(size=n), (-10.0, 10.0)),
        (f"lognormal n={n}", rng.lognormal(size=n), (0.0, 100.0)),
    ]
    if ADULT.exists():
        import pandas as pd

        frame = pd.read_csv(ADULT)
        frame.columns = [c.strip() for c in frame.columns]
        for name, bounds in ADULT_BOUNDS.items():
            col = frame[name].to_numpy(dtype=float)
            out.append((f"adult {name} n={col.size}", col, bounds))
    return out


def lower_median(x, bounds):
    x = np.sort(np.clip(x, *bounds))
    return x[(x.size + 1) // 2 - 1]


def quartile_iqr(x, bounds):
    x = np.sort(np.clip(x, *bounds))
    n = x.size
    return x[(3 * n + 3) // 4 - 1] - x[(n + 3) // 4 - 1]


def summarise(values, truth, relative=False):
    values = np.asarray(values, dtype=float)
    ok = ~np.isnan(values)
    refused = 1.0 - ok.mean()
    if not ok.any():
        return np.nan, np.nan, refused
    err = values[ok] - truth
    if relative:
        err = err / truth
    return np.sqrt(np.mean(err**2)), np.median(np.abs(err)), refused


def median_methods(bounds, eps):
    width = bounds[1] - bounds[0]
    yield (
        "exponential mechanism (PrivateQuantile)",
        lambda s: PrivateQuantile((0.5,), epsilon=eps, bounds=bounds, random_state=s),
        "quantiles_",
    )
    for frac in (1e-3, 1e-2):
        yield (
            f"PTRMedian b={frac:g}(U-L)",
            lambda s, f=frac: PTRMedian(
                eps,
                DELTA,
                bounds=bounds,
                proposed_sensitivity=f * width,
                random_state=s,
            ),
            "median_",
        )
    for noise in ("laplace", "cauchy"):
        yield (
            f"SmoothSensitivityMedian {noise}",
            lambda s, z=noise: SmoothSensitivityMedian(
                eps, DELTA, bounds=bounds, noise=z, random_state=s
            ),
            "median_",
        )


def bench_medians(reps, n):
    print("\n## Median error (true value: lower median of the clipped data)\n")
    print("| data | eps | method | RMSE | median abs err | refused |")
    print("|---|---:|---|---:|---:|---:|")
    for name, x, bounds in datasets(n):
        X = x[:, None]
        truth = lower_median(x, bounds)
        for eps in (0.1, 1.0):
            for label, make, attr in median_methods(bounds, eps):
                vals = [
                    float(np.ravel(getattr(make(s).fit(X), attr))[0])
                    for s in range(reps)
                ]
                rmse, mae, refused = summarise(vals, truth)
                rmse_txt = "—" if "cauchy" in label else f"{rmse:.4g}"
                print(
                    f"| {name} | {eps} | {label} | {rmse_txt} | {mae:.4g} | "
                    f"{refused:.0%} |"
                )


def bench_scales(reps, n):
    print("\n## IQR relative error (|released / true - 1|)\n")
    print("| data | eps | method | RMS rel err | median rel err | refused |")
    print("|---|---:|---|---:|---:|---:|")
    for name, x, bounds in datasets(n):
        X = x[:, None]
        truth = quartile_iqr(x, bounds)
        if truth <= 0:
            print(f"| {name} | — | (IQR = 0: every method is meaningless) | | | |")
            continue
        for eps in (0.1, 1.0):
            iqr = [
                IQRScale(eps, DELTA, bounds=bounds, random_state=s).fit(X).scale_[0]
                for s in range(reps)
            ]
            pq = []
            for s in range(reps):
                q = (
                    PrivateQuantile(
                        (0.25, 0.75), epsilon=eps, bounds=bounds, random_state=s
                    )
                    .fit(X)
                    .quantiles_[:, 0]
                )
                pq.append(q[1] - q[0])
            for label, vals in (
                ("IQRScale (Dwork-Lei, w=1/8)", iqr),
                ("PrivateQuantile q75 - q25", pq),
            ):
                rms, med, refused = summarise(vals, truth, relative=True)
                row = f"| {name} | {eps} | {label} | {rms:.3g} | {med:.3g} |"
                print(f"{row} {refused:.0%} |")


def timed(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def bench_speed(n, repeat):
    print(f"\n## Speed on {n:.0e} rows (median of {repeat})\n")
    x = np.random.default_rng(0).normal(size=n)
    X = x[:, None]
    rows = [
        ("np.median(x)", lambda: np.median(x)),
        (
            "PTRMedian.fit (b = 0.001 (U-L))",
            lambda: PTRMedian(
                1.0, DELTA, bounds=(-10, 10), proposed_sensitivity=0.02
            ).fit(X),
        ),
        (
            "SmoothSensitivityMedian.fit",
            lambda: SmoothSensitivityMedian(1.0, DELTA, bounds=(-10, 10)).fit(X),
        ),
        ("np.percentile(x, [25, 75])", lambda: np.percentile(x, [25, 75])),
        ("IQRScale.fit", lambda: IQRScale(1.0, DELTA, bounds=(-10, 10)).fit(X)),
    ]
    results = {label: timed(fn, repeat) for label, fn in rows}
    print("| computation | seconds | × np.median | × np.percentile |")
    print("|---|---:|---:|---:|")
    for label, t in results.items():
        print(
            f"| {label} | {t:.3f} | {t / results['np.median(x)']:.2f} | "
            f"{t / results['np.percentile(x, [25, 75])']:.2f} |"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--speed-n", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore", PTRRefusedWarning)
    bench_medians(args.reps, args.n)
    bench_scales(args.reps, args.n)
    bench_speed(args.speed_n, args.repeat)


if __name__ == "__main__":
    main()
