"""Private bounds on zero-inflated columns and many features.

Run from the repository root::

    python benchmarks/bench_bounds_atoms.py [--seeds 10]

To compare with an older skdp, put its package first on the path, e.g.
``git archive 36d73b4 skdp | tar -x -C /tmp/before`` then
``PYTHONPATH=/tmp/before python benchmarks/bench_bounds_atoms.py``.

Measures, per case, the median released upper bound over seeds and the median
share of the side's non-zero rows above it (clipped), and the share of fits
that clip more than half of them (collapsed):

* one column of 30,000 rows, 90% zeros and lognormal(7, 1) otherwise, alone
  and beside 100 one-hot columns, ``SVTClipSelector`` at ε = 0.1 and 1;
* Adult's capital-gain and capital-loss in ``PrivateStandardScaler`` (ε = 1,
  30% of it on the private bounds) and in ``SVTClipSelector`` (ε = 1) over
  Adult's six numeric columns and all its one-hot encoded categorical columns
  (110 columns);
* breast cancer's 30 features, ``SVTClipSelector`` at ε = 1 and the bounds of
  ``PrivateGaussianNB`` at ε = 1 (30% of ε): median over the features;
* ``PrivateGaussianNB`` (private bounds, stated classes) accuracy on breast
  cancer (ε = 1, 3, 1e6), digits (ε = 3, 1e6) and Adult (ε = 1), against
  scikit-learn's ``GaussianNB`` and the majority rate, on the training data.
"""

import argparse
import pathlib
import warnings
from functools import partial

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.naive_bayes import GaussianNB

import skdp
from skdp import BudgetAccountant, SVTClipSelector
from skdp.naive_bayes import PrivateGaussianNB
from skdp.preprocessing import PrivateStandardScaler

ADULT = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "adult.csv.gz"


def zero_inflated(n_one_hot, seed=0, n_rows=30_000):
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(n_rows) < 0.9, 0.0, rng.lognormal(7, 1, n_rows))
    if not n_one_hot:
        return x[:, None]
    category = rng.integers(0, n_one_hot, n_rows)
    one_hot = (category[:, None] == np.arange(n_one_hot)).astype(float)
    return np.column_stack([x, one_hot])


def load_adult():
    df = pd.read_csv(ADULT)
    df.columns = [c.strip() for c in df.columns]
    target = df.columns[-1]
    y = (df[target].astype(str).str.strip().str.rstrip(".") == ">50K").to_numpy()
    features = df.drop(columns=[target])
    numeric = features.select_dtypes("number")
    categorical = pd.get_dummies(features.select_dtypes(exclude="number"))
    X = np.hstack([numeric.to_numpy(float), categorical.to_numpy(float)])
    return X, y.astype(int), list(numeric.columns)


def clipped(x, upper):
    positive = x[x > 0]
    return np.mean(positive > upper) if positive.size else 0.0


def summary(uppers, shares):
    shares = np.asarray(shares)
    return (
        f"median upper {np.median(uppers):>11.4g}  clipped {np.median(shares):6.1%}"
        f"  fits clipping >50%: {np.mean(shares > 0.5):5.0%}"
    )


def quiet(fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit()


def bench_zero_inflated(seeds):
    for n_one_hot in (0, 100):
        X = zero_inflated(n_one_hot)
        for eps in (0.1, 1.0):
            ups = [
                quiet(partial(SVTClipSelector(eps, random_state=s).fit, X)).upper_[0]
                for s in seeds
            ]
            shares = [clipped(X[:, 0], u) for u in ups]
            print(f"90%-zero lognormal + {n_one_hot:3d} one-hot, eps={eps:<4}", end=" ")
            print(summary(ups, shares))


def bench_adult_scaler(seeds, adult):
    X, _, numeric = adult
    makers = {
        "PrivateStandardScaler": PrivateStandardScaler,
        "SVTClipSelector": SVTClipSelector,
    }
    for label, make in makers.items():
        fits = [
            quiet(
                partial(make(1.0, accountant=BudgetAccountant(), random_state=s).fit, X)
            )
            for s in seeds
        ]
        for name in ("capital-gain", "capital-loss"):
            j = numeric.index(name)
            ups = [fit.upper_[j] for fit in fits]
            shares = [clipped(X[:, j], u) for u in ups]
            print(f"Adult {name:<12} in {label} (110 cols) eps=1", end=" ")
            print(summary(ups, shares), f" (max {X[:, j].max():g})")


def bench_breast_cancer_bounds(seeds):
    X = load_breast_cancer().data
    y = load_breast_cancer().target
    for label, fit in (
        (
            "SVTClipSelector eps=1",
            lambda s: SVTClipSelector(1.0, random_state=s).fit(X),
        ),
        (
            "PrivateGaussianNB eps=1 bounds",
            lambda s: PrivateGaussianNB(1.0, classes=[0, 1], random_state=s).fit(X, y),
        ),
    ):
        per_fit = []
        for s in seeds:
            model = quiet(partial(fit, s))
            per_fit.append([clipped(X[:, f], model.upper_[f]) for f in range(30)])
        per_fit = np.array(per_fit)
        print(
            f"breast cancer {label:<31} clipped (median over features and fits) "
            f"{np.median(per_fit):6.1%}; features clipping >50%: "
            f"{np.mean(per_fit > 0.5):5.0%}"
        )


def bench_gaussian_nb(seeds, adult):
    data = {
        "breast cancer": (load_breast_cancer().data, load_breast_cancer().target),
        "digits": (load_digits().data, load_digits().target),
        "Adult": adult[:2],
    }
    grid = {"breast cancer": (1.0, 3.0, 1e6), "digits": (3.0, 1e6), "Adult": (1.0,)}
    for name, (X, y) in data.items():
        classes = np.unique(y)
        majority = np.max(np.bincount(y)) / y.size
        reference = GaussianNB().fit(X, y).score(X, y)
        for eps in grid[name]:
            models = [
                PrivateGaussianNB(eps, classes=classes, random_state=s) for s in seeds
            ]
            scores = [quiet(partial(m.fit, X, y)).score(X, y) for m in models]
            print(
                f"PrivateGaussianNB {name:<13} eps={eps:<9g} mean {np.mean(scores):.3f}"
                f"  min {np.min(scores):.3f}  (sklearn {reference:.3f}, "
                f"majority {majority:.3f})"
            )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--only-adult", action="store_true")
    args = parser.parse_args()
    seeds = range(args.seeds)
    print(f"skdp from {pathlib.Path(skdp.__file__).parent}")
    adult = load_adult()
    if args.only_adult:
        return bench_adult_scaler(seeds, adult)
    bench_zero_inflated(seeds)
    bench_adult_scaler(seeds, adult)
    bench_breast_cancer_bounds(seeds)
    bench_gaussian_nb(seeds, adult)


if __name__ == "__main__":
    main()
