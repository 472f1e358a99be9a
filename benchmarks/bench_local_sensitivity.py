"""Accuracy and speed of the local-sensitivity estimators.

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
from _summary import record, verdict, write

from skdp.stats._iqr import IQRScale
from skdp.stats._ptr import PTRMedian, PTRRefusedWarning
from skdp.stats._quantile import PrivateQuantile
from skdp.stats._smooth import SmoothSensitivityMedian

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
    results = {}
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
                results[name, eps, label] = (rmse, mae, refused)
                rmse_txt = "—" if "cauchy" in label else f"{rmse:.4g}"
                print(
                    f"| {name} | {eps} | {label} | {rmse_txt} | {mae:.4g} | "
                    f"{refused:.0%} |"
                )
    return results


def bench_scales(reps, n):
    results = {}
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
                IQRScale(eps, DELTA, method="dwork_lei", bounds=bounds, random_state=s)
                .fit(X)
                .scale_[0]
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
                results[name, eps, label] = (rms, med, refused)
                row = f"| {name} | {eps} | {label} | {rms:.3g} | {med:.3g} |"
                print(f"{row} {refused:.0%} |")
    return results


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
        (
            "IQRScale.fit",
            lambda: IQRScale(1.0, DELTA, method="dwork_lei", bounds=(-10, 10)).fit(X),
        ),
    ]
    results = {label: timed(fn, repeat) for label, fn in rows}
    print("| computation | seconds | × np.median | × np.percentile |")
    print("|---|---:|---:|---:|")
    for label, t in results.items():
        print(
            f"| {label} | {t:.3f} | {t / results['np.median(x)']:.2f} | "
            f"{t / results['np.percentile(x, [25, 75])']:.2f} |"
        )
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--speed-n", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--summary-json", help="write the key figures as JSON")
    args = parser.parse_args()
    warnings.simplefilter("ignore", PTRRefusedWarning)
    medians = bench_medians(args.reps, args.n)
    scales = bench_scales(args.reps, args.n)
    speed = bench_speed(args.speed_n, args.repeat)
    records = median_records(medians, args) + scale_records(scales, args)
    records += speed_records(speed, args)
    write(args.summary_json, records)


def median_records(results, args):
    em_label = "exponential mechanism (PrivateQuantile)"
    out = []
    for (name, eps, label), (_, em_mae, _) in results.items():
        if label != em_label:
            continue
        ptr = {
            m: results[name, eps, m]
            for (d, e, m) in results
            if d == name and e == eps and m.startswith("PTRMedian")
        }
        usable = {m: v for m, v in ptr.items() if not np.isnan(v[1])}
        smooth = results[name, eps, "SmoothSensitivityMedian laplace"][1]
        refusals = ", ".join(f"{m[10:]} {v[2]:.0%}" for m, v in ptr.items())
        if not usable:
            out.append(
                record(
                    "local sensitivity",
                    "PTRMedian beats the exponential-mechanism median (MAE)",
                    "every fit refused",
                    "",
                    "missed",
                    f"{name}, ε = {eps:g}; refused: {refusals}",
                    f"{args.reps} fits",
                )
            )
            continue
        best = min(usable, key=lambda m: usable[m][1])
        ratio = usable[best][1] / em_mae if em_mae > 0 else float("inf")
        out.append(
            record(
                "local sensitivity",
                "PTRMedian beats the exponential-mechanism median (MAE)",
                ratio,
                "PTR MAE / EM MAE",
                verdict(usable[best][1] < em_mae),
                f"{name}, ε = {eps:g}: PTR ({best[10:]}) MAE {usable[best][1]:.3g} "
                f"vs EM {em_mae:.3g}; smooth (Laplace) {smooth:.3g}; PTR refused "
                f"{refusals}",
                f"{args.reps} fits",
            )
        )
    return out


def scale_records(results, args):
    out = []
    names = dict.fromkeys(name for name, _, _ in results)
    for name in names:
        cells = []
        for eps in (0.1, 1.0):
            iqr = results[name, eps, "IQRScale (Dwork-Lei, w=1/8)"]
            pq = results[name, eps, "PrivateQuantile q75 - q25"]
            cells.append(
                f"ε = {eps:g}: IQRScale {iqr[1]:.3g} (refused {iqr[2]:.0%}) vs "
                f"two quantiles {pq[1]:.3g}"
            )
        iqr_1 = results[name, 1.0, "IQRScale (Dwork-Lei, w=1/8)"][1]
        out.append(
            record(
                "local sensitivity",
                "IQRScale median relative error vs q75 - q25 of PrivateQuantile "
                "(no target)",
                iqr_1,
                "median rel. err at ε = 1",
                "info",
                f"{name}; " + "; ".join(cells),
                f"{args.reps} fits",
            )
        )
    return out


def speed_records(results, args):
    median = results["np.median(x)"]
    percentile = results["np.percentile(x, [25, 75])"]
    rows = [
        ("PTRMedian.fit (b = 0.001 (U-L))", "np.median", median, 3.0),
        ("SmoothSensitivityMedian.fit", "np.median", median, None),
        ("IQRScale.fit", "np.percentile(x, [25, 75])", percentile, 3.0),
    ]
    out = []
    for label, ref, base, target in rows:
        ratio = results[label] / base
        goal = f"within {target:g}x of `{ref}`" if target else f"vs `{ref}` (no target)"
        out.append(
            record(
                "local sensitivity",
                f"`{label.split()[0]}` {goal}",
                ratio,
                f"x {ref}",
                verdict(ratio <= target) if target else "info",
                f"{results[label]:.3f} s vs {base:.3f} s; standard normal",
                f"median of {args.repeat}, n = {args.speed_n:,}",
            )
        )
    return out


if __name__ == "__main__":
    main()
