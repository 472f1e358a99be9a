"""Utility of PrivateMean with private bounds vs the oracle clipped mean.

Run from the repository root::

    python benchmarks/bench_private_bounds.py [--quick] [--repeat 300]
        [--shares 0.3] [--dpl-python /work/dplvenv/bin/python]

For lognormal(3, 1) data (n = 10^3, 10^4, 10^5; ε = 0.5, 1; a fresh data set
per repeat) and Adult's age, hours-per-week and capital-gain (all 32,561 rows;
ε = 0.1, 1; the same column every repeat), compares the error of the released
mean against the sample mean for

* the oracle: ``PrivateMean(ε, bounds=(x.min(), x.max()))``, the true range
  (not private: it reads the range from the data) and the same total ε; the
  targets are judged against it (same release mechanism as the estimator);
* the textbook oracle: the same true range, a noisy count and a noisy
  centred sum with ε/2 each (what PrivateMean did before its paired release
  of count and sums, which halves a one-feature mean's variance); shown as
  the "× textbook" column;
* ``PrivateMean(ε, bounds=None)``: both bounds chosen privately (SVT);
* ``PrivateMean(ε, bounds=(0, None))``: public lower bound 0, upper chosen
  privately.

Prints, per case, the RMSE and the median absolute error (MAE) with their
ratios to the oracle's (targets: RMSE ratio <= 2, MAE ratio <= 3), and the rate
of catastrophic runs (absolute error > 10x the oracle's RMSE).

With diffprivlib installed in a separate venv (``--dpl-python``; skipped with a
note when it does not run), a second table compares ``diffprivlib.tools.mean``
and ``diffprivlib.tools.median`` (true bounds, same data) with the skdp oracle
mean and ``PrivateQuantile`` (both methods, the same true bounds).

``--shares`` takes several values of ``bounds_share`` (e.g. ``0.1 0.2 0.3
0.5``) to compare them; ``--quick`` runs 60 repeats of the smaller cases.
"""

import argparse
import gzip
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _dpl import run_dpl_task
from _summary import record, verdict, write

from skdp import BudgetAccountant
from skdp.mechanisms import check_random_source
from skdp.preprocessing import PrivateMean
from skdp.stats._mean import (
    MeanRelease,
    mean_from_release,
    noisy_count_and_sums,
)
from skdp.stats._quantile import PrivateQuantile

ROOT = Path(__file__).resolve().parent
ADULT = ROOT.parent.parent / "shared" / "data" / "adult.csv.gz"
ADULT_COLUMNS = ("age", "hours-per-week", "capital-gain")
RMSE_TARGET, MAE_TARGET, CATASTROPHE = 2.0, 3.0, 10.0


def load_adult(path=ADULT):
    """The three numeric Adult columns, as float arrays (no pandas needed)."""
    with gzip.open(path, "rt") as handle:
        header = [name.strip() for name in handle.readline().split(",")]
        rows = [line.split(",") for line in handle if line.strip()]
    index = {name: header.index(name) for name in ADULT_COLUMNS}
    return {
        name: np.array([float(row[i]) for row in rows]) for name, i in index.items()
    }


def cases(quick):
    """(label, data spec, epsilon) for every case; data spec as in dpl_runner."""
    sizes = (1_000, 10_000) if quick else (1_000, 10_000, 100_000)
    out = []
    for n in sizes:
        for eps in (0.5, 1.0):
            out.append((f"lognormal(3,1) n={n:,}", {"lognormal": [3.0, 1.0, n]}, eps))
    for name in ADULT_COLUMNS:
        for eps in (0.1, 1.0):
            out.append((f"Adult {name} n=32,561", {"adult": name}, eps))
    return out


class Data:
    """Column for repeat r: regenerated per seed (lognormal) or fixed (Adult)."""

    def __init__(self, spec, adult):
        self.spec = spec
        self.fixed = adult[spec["adult"]] if "adult" in spec else None

    def column(self, seed):
        if self.fixed is not None:
            return self.fixed
        mu, sigma, n = self.spec["lognormal"]
        return np.random.default_rng(seed).lognormal(mu, sigma, int(n))


def fit_mean(x, eps, bounds, share, seed):
    est = PrivateMean(
        eps,
        bounds=bounds,
        bounds_share=share,
        accountant=BudgetAccountant(),
        random_state=seed,
    )
    return float(est.fit(x[:, None]).mean_[0])


def fit_textbook(x, eps, bounds, seed):
    """The textbook clipped mean: noisy count and noisy centred sum, ε/2 each.

    What PrivateMean released before its paired release (and still releases
    for many features); the same code path, forced.
    """
    lower, upper = np.array([bounds[0]]), np.array([bounds[1]])
    plan = MeanRelease(False, eps, 0.0, 1, "laplace")
    source = check_random_source(seed)
    count, sums = noisy_count_and_sums(x[:, None], lower, upper, plan, source)
    return float(mean_from_release(count, sums, lower, upper)[0])


def fit_median(x, eps, method, seed):
    est = PrivateQuantile(
        0.5,
        epsilon=eps,
        bounds=(x.min(), x.max()),
        method=method,
        accountant=BudgetAccountant(),
        random_state=seed,
    )
    return float(est.fit(x[:, None]).quantiles_[0, 0])


def data_seeds(case_id, repeat):
    return [1_000_003 * (case_id + 1) + r for r in range(repeat)]


def run_case(case_id, data, eps, repeat, shares):
    """Errors of the oracle and of the private-bounds variants, per repeat."""
    methods = {"oracle": ("true", 0.3), "textbook oracle": ("textbook", 0.3)}
    for share in shares:
        tag = "" if len(shares) == 1 else f", share {share:g}"
        methods[f"bounds=None{tag}"] = (None, share)
        methods[f"bounds=(0, None){tag}"] = ((0.0, None), share)
    errors = {name: [] for name in methods}
    sample_means = []
    for r, seed in enumerate(data_seeds(case_id, repeat)):
        x = data.column(seed)
        sample_means.append(float(x.mean()))
        for m, (name, (bounds, share)) in enumerate(methods.items()):
            noise_seed = (case_id * 100 + m) * 100_000 + r
            if bounds == "textbook":
                true = (float(x.min()), float(x.max()))
                errors[name].append(fit_textbook(x, eps, true, noise_seed) - x.mean())
                continue
            if bounds == "true":
                bounds = (float(x.min()), float(x.max()))
            errors[name].append(fit_mean(x, eps, bounds, share, noise_seed) - x.mean())
    return {name: np.array(err) for name, err in errors.items()}, sample_means


def run_medians(case_id, data, eps, repeat):
    errors = {"exponential": [], "permute_and_flip": []}
    for r, seed in enumerate(data_seeds(case_id, repeat)):
        x = data.column(seed)
        for m, method in enumerate(errors):
            noise_seed = (case_id * 100 + 50 + m) * 100_000 + r
            errors[method].append(fit_median(x, eps, method, noise_seed) - np.median(x))
    return {name: np.array(err) for name, err in errors.items()}


def rmse(err):
    err = err[np.isfinite(err)]
    return float(np.sqrt(np.mean(np.square(err)))) if err.size else float("nan")


def mae(err):
    err = err[np.isfinite(err)]
    return float(np.median(np.abs(err))) if err.size else float("nan")


def run_dpl(python, spec, eps, seeds, adult, tmpdir):
    """diffprivlib's errors via dpl_runner.py in its own venv, or None."""
    if "adult" in spec:
        path = os.path.join(tmpdir, f"{spec['adult']}.npy")
        np.save(path, adult[spec["adult"]])
        spec = {"npy": path}
    task = {"task": "utility", "data": spec, "epsilon": eps, "seeds": seeds}
    return run_dpl_task(python, task)


def fmt(value):
    return f"{value:.3g}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--shares", type=float, nargs="+", default=[0.3])
    parser.add_argument("--dpl-python", default="/work/dplvenv/bin/python")
    parser.add_argument("--no-dpl", action="store_true")
    parser.add_argument("--summary-json", help="write the key figures as JSON")
    args = parser.parse_args()
    records = []
    repeat = args.repeat or (60 if args.quick else 300)
    adult = load_adult()
    all_cases = cases(args.quick)
    start = time.perf_counter()

    print(f"## PrivateMean with private bounds vs oracle, {repeat} repeats\n")
    print(
        "| data | ε | n·ε | method | RMSE | × oracle | MAE | × oracle "
        "| catastrophic | max abs err | × textbook (RMSE / MAE) | targets |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    dpl_versions = None
    stored = {}
    for case_id, (label, spec, eps) in enumerate(all_cases):
        data = Data(spec, adult)
        errors, sample_means = run_case(case_id, data, eps, repeat, args.shares)
        stored[case_id] = (errors, sample_means)
        n = len(data.column(data_seeds(case_id, 1)[0]))
        o_rmse, o_mae = rmse(errors["oracle"]), mae(errors["oracle"])
        t_rmse, t_mae = rmse(errors["textbook oracle"]), mae(errors["textbook oracle"])
        for name, err in errors.items():
            r_rmse, r_mae = rmse(err) / o_rmse, mae(err) / o_mae
            bad = float(np.mean(np.abs(err) > CATASTROPHE * o_rmse))
            textbook = f"{rmse(err) / t_rmse:.2f} / {mae(err) / t_mae:.2f}"
            if name in ("oracle", "textbook oracle"):
                mark = "—"
            else:
                met = r_rmse <= RMSE_TARGET and r_mae <= MAE_TARGET
                mark = "met" if met else "**missed**"
                records.append(
                    record(
                        "private bounds",
                        f"`PrivateMean({name})`: RMSE ≤ {RMSE_TARGET:g}x and MAE "
                        f"≤ {MAE_TARGET:g}x the oracle's (true [min, max])",
                        f"RMSE {r_rmse:.2f}x, MAE {r_mae:.2f}x the oracle's",
                        "",
                        verdict(met),
                        f"{label}, ε = {eps:g}; catastrophic runs {bad:.1%}; "
                        f"RMSE / MAE vs the textbook oracle (noisy count and "
                        f"sum, ε/2 each, true bounds): {textbook}",
                        f"{repeat} repeats",
                    )
                )
            print(
                f"| {label} | {eps:g} | {n * eps:,.0f} | {name} | {fmt(rmse(err))} "
                f"| {r_rmse:.2f} | {fmt(mae(err))} | {r_mae:.2f} | {bad:.1%} "
                f"| {fmt(np.max(np.abs(err)))} | {textbook} | {mark} |"
            )
        sys.stdout.flush()

    if args.no_dpl:
        print(f"\n(total {time.perf_counter() - start:.0f} s)")
        records.append(dpl_record("all cases", "not run (--no-dpl)"))
        write(args.summary_json, records)
        return
    print(f"\n## skdp vs diffprivlib (true bounds), {repeat} repeats\n")
    print(
        "| data | ε | statistic | method | RMSE | MAE | × skdp (RMSE) "
        "| × skdp (MAE) | failed runs |"
    )
    print("|---|---:|---|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmpdir:
        for case_id, (label, spec, eps) in enumerate(all_cases):
            seeds = data_seeds(case_id, repeat)
            dpl = run_dpl(args.dpl_python, spec, eps, seeds, adult, tmpdir)
            if dpl is None:
                records.append(dpl_record("all cases", "not run (diffprivlib failed)"))
                break
            errors, sample_means = stored[case_id]
            if not np.allclose(dpl["sample_means"], sample_means, rtol=1e-12):
                print(f"(diffprivlib saw different data for {label}; skipped)")
                records.append(dpl_record(label, "not run (different data)"))
                continue
            dpl_versions = dpl["versions"]
            medians = run_medians(case_id, Data(spec, adult), eps, repeat)
            rows = [
                ("mean", "skdp oracle PrivateMean", errors["oracle"]),
                ("mean", "diffprivlib tools.mean", np.array(dpl["mean_err"])),
                ("median", "skdp PrivateQuantile exponential", medians["exponential"]),
                (
                    "median",
                    "skdp PrivateQuantile permute_and_flip",
                    medians["permute_and_flip"],
                ),
                ("median", "diffprivlib tools.median", np.array(dpl["median_err"])),
            ]
            ratios = {}
            for stat, name, err in rows:
                ref = errors["oracle"] if stat == "mean" else medians["exponential"]
                r_rmse = rmse(err) / rmse(ref) if rmse(ref) > 0 else float("nan")
                r_mae = mae(err) / mae(ref) if mae(ref) > 0 else float("nan")
                ratios[name] = (r_rmse, r_mae, int(np.sum(~np.isfinite(err))))
                print(
                    f"| {label} | {eps:g} | {stat} | {name} | {fmt(rmse(err))} "
                    f"| {fmt(mae(err))} | {r_rmse:.2f} | {r_mae:.2f} "
                    f"| {np.sum(~np.isfinite(err))} |"
                )
            sys.stdout.flush()
            mean = ratios["diffprivlib tools.mean"]
            median = ratios["diffprivlib tools.median"]
            records.append(
                dpl_record(
                    f"{label}, ε = {eps:g}",
                    f"mean RMSE {mean[0]:.2f}x skdp's; median "
                    + (
                        "raised in every run"
                        if median[2] == repeat
                        else f"RMSE {median[0]:.2f}x skdp's, raised {median[2]}/"
                        f"{repeat} runs"
                    ),
                    f"{repeat} repeats",
                )
            )
    write(args.summary_json, records)
    if dpl_versions:
        print(f"\ndiffprivlib venv: {dpl_versions}")
    print(f"\n(total {time.perf_counter() - start:.0f} s)")


def dpl_record(case, measured, repeats=""):
    return record(
        "private bounds",
        "diffprivlib `tools.mean` / `tools.median` (true bounds) error vs skdp "
        "(oracle `PrivateMean` / `PrivateQuantile` exponential)",
        measured,
        "",
        "info",
        case,
        repeats,
    )


if __name__ == "__main__":
    main()
