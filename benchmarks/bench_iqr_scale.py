"""IQRScale's two methods on real columns.

For each column and ε in {0.3, 1, 3}, 30 fits (seeds 0-29) of
``IQRScale(ε)`` as a user writes it, with no bounds: the default
``method="joint"`` (private bounds with 30% of ε, then the joint private
quartiles) and ``method="dwork_lei"`` (δ = 1e-6, unbounded). Reported: the
number of refusals and the median ``|log(scale / IQR)|`` over the answers,
where IQR is ``x_(ceil(3n/4)) - x_(ceil(n/4))`` (the statistic of the
Notes). For Adult's age also the joint method with the public bounds
``(0, 100)``. Target (issue 27): Adult age at ε = 1, default: no refusal and
median ``|log(scale/IQR)|`` <= 0.1.

Columns: UCI Adult (``../shared/data/adult.csv.gz``, 32,561 rows) age,
hours-per-week, fnlwgt, education-num; scikit-learn's bundled (offline) sets,
unscaled: diabetes (``scaled=False``, 442 rows) bmi and s1, breast cancer
(569 rows) mean area and worst radius, wine (178 rows) proline and
magnesium, and digits (1,797 rows) pixel 2_5 (integers 0-16).

Reproduce::

    PYTHONPATH=. python benchmarks/bench_iqr_scale.py [--quick]
"""

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_wine

from skdp import BudgetAccountant, IQRScale, PTRRefusedWarning

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _summary import record, verdict, write

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult.csv.gz"
EPSILONS = (0.3, 1.0, 3.0)
DELTA = 1e-6
TARGET = 0.1


def columns():
    """``(name, 1-d float array)`` of every measured column."""
    adult = pd.read_csv(ADULT, skipinitialspace=True)
    for name in ("age", "hours-per-week", "fnlwgt", "education-num"):
        yield f"adult {name}", adult[name].to_numpy(float)
    diabetes = load_diabetes(scaled=False, as_frame=True).frame
    for name in ("bmi", "s1"):
        yield f"diabetes {name}", diabetes[name].to_numpy(float)
    cancer = load_breast_cancer(as_frame=True).frame
    for name in ("mean area", "worst radius"):
        yield f"breast cancer {name}", cancer[name].to_numpy(float)
    wine = load_wine(as_frame=True).frame
    for name in ("proline", "magnesium"):
        yield f"wine {name}", wine[name].to_numpy(float)
    digits = load_digits(as_frame=True).frame
    yield "digits pixel_2_5", digits["pixel_2_5"].to_numpy(float)


def true_iqr(x):
    """``x_(ceil(3n/4)) - x_(ceil(n/4))``, IQRScale's statistic."""
    q25, q75 = np.percentile(x, [25, 75], method="inverted_cdf")
    return q75 - q25


def fits(x, epsilon, n_fits, **params):
    """Refusal count and median ``|log(scale/IQR)|`` of ``n_fits`` fits."""
    X, iqr = x[:, None], true_iqr(x)
    scales, refused = [], 0
    for seed in range(n_fits):
        accountant = BudgetAccountant(delta=1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PTRRefusedWarning)
            est = IQRScale(
                epsilon, DELTA, accountant=accountant, random_state=seed, **params
            ).fit(X)
        refused += int(est.refused_[0])
        if not est.refused_[0]:
            scales.append(est.scale_[0])
    if not scales:
        return refused, math.nan
    return refused, float(np.median(np.abs(np.log(np.array(scales) / iqr))))


METHODS = {
    "joint (default, private bounds)": {},
    "dwork_lei": {"method": "dwork_lei"},
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 fits, not 30")
    parser.add_argument("--summary-json", default=None)
    args = parser.parse_args()
    n_fits = 5 if args.quick else 30
    records = []
    start = time.perf_counter()
    print(f"{n_fits} fits per cell; refused / median |log(scale/IQR)|\n")
    print("| column | rows | IQR | method | ε = 0.3 | ε = 1 | ε = 3 |")
    print("|---|---:|---:|---|---|---|---|")
    for name, x in columns():
        methods = dict(METHODS)
        if name == "adult age":
            methods["joint, bounds (0, 100)"] = {"bounds": (0, 100)}
        for label, params in methods.items():
            cells = []
            for epsilon in EPSILONS:
                refused, error = fits(x, epsilon, n_fits, **params)
                cells.append(f"{refused}/{n_fits} · {error:.3g}")
                if name == "adult age" and epsilon == 1.0 and not params:
                    ok = refused == 0 and error <= TARGET
                    records.append(
                        record(
                            "statistics",
                            "IQRScale default on Adult age at ε = 1: no refusal, "
                            "median |log(scale/IQR)| <= 0.1",
                            error,
                            "median |log(scale/IQR)|",
                            verdict(ok),
                            f"{refused} of {n_fits} refused; IQR 20, no bounds",
                            f"{n_fits} fits",
                        )
                    )
            print(
                f"| {name} | {x.size:,} | {true_iqr(x):.4g} | {label} | "
                + " | ".join(cells)
                + " |"
            )
    print(f"\nwall time {time.perf_counter() - start:.0f} s")
    write(args.summary_json, records)


if __name__ == "__main__":
    main()
