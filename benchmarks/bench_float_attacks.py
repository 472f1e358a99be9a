"""Before/after figures of the float and failure attacks on the statistics, in one run.

Run it against any checkout (``PYTHONPATH=<checkout> python
benchmarks/bench_float_attacks.py``) to compare the old and the new behaviour:
reachable quantile outputs, the capital-gain median atom, float sums moved by
more than one row, and data-dependent raises or warnings after the charge.
These are measurements, not tests; the regression tests live in ``tests/``.
"""

import warnings
from fractions import Fraction

import numpy as np
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.neighbors import KNeighborsClassifier

from skdp import BudgetAccountant, PrivateQuantile, SampleAggregateEstimator
from skdp.sensitivity import normalised_centred_sums

FITS = 20


def quantile_on_public_grid(n_fits=2000):
    step = 2.0**-34  # a fine public power-of-two grid of [0, 1]
    for name, data in (("{0.3}", [0.3]), ("{0.3, 0.6}", [0.3, 0.6])):
        out = np.array(
            [
                PrivateQuantile(0.5, bounds=(0, 1)).fit(np.c_[data]).quantiles_[0, 0]
                for _ in range(n_fits)
            ]
        )
        on_grid = int(np.sum(out / step == np.floor(out / step)))
        print(f"quantile of {name}: {on_grid}/{n_fits} outputs on the 2**-34 grid")


def capital_gain_median(n_fits=100):
    rng = np.random.default_rng(0)
    n = 30_000
    positive = np.exp(rng.uniform(0, np.log(99_999), n)).round()
    X = np.where(rng.random(n) < 0.95, 0.0, positive).reshape(-1, 1)
    zeros = sum(
        PrivateQuantile(bounds=(0, 100_000)).fit(X).quantiles_[0, 0] == 0
        for _ in range(n_fits)
    )
    print(f"95% zeros: median released as exactly 0 in {zeros}/{n_fits} fits")


def float_sum_excess(n_sets=200):
    lower, upper = np.array([-1.0]), np.array([1.0])
    rng = np.random.default_rng(0)
    moved = 0
    for _ in range(n_sets):
        x = rng.uniform(-1, 1, 2000) * rng.choice([1.0, 1e-6, 1e-12], 2000)
        grown = np.append(x, 1.0)
        after = normalised_centred_sums(grown[:, None], lower, upper)[0]
        before = normalised_centred_sums(x[:, None], lower, upper)[0]
        moved += Fraction(float(after)) - Fraction(float(before)) > 1
    print(f"sum moved by more than the added term 1.0: {moved}/{n_sets} datasets")


def failures_after_the_charge():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X @ np.array([1.0, -2, 0.5]) + rng.normal(size=200)

    def count(make, Xd, yd, predict=False):
        raised = warned = 0
        for seed in range(FITS):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    est = make(seed).fit(Xd, yd)
                    if predict:
                        est.predict(Xd[:5])
                except Exception:
                    raised += 1
            warned += any("Convergence" in str(w.category) for w in caught)
        return raised, warned

    def ridge(seed):
        return SampleAggregateEstimator(
            Ridge(),
            n_blocks=10,
            output_bounds=(-10, 10),
            accountant=BudgetAccountant(),
            random_state=seed,
        )

    outlier_X, outlier_y = np.vstack([X, [[1e200, 0, 0]]]), np.append(y, 0.0)
    print(
        f"Ridge blocks: raised {count(ridge, X, y)[0]}/{FITS} on D, "
        f"{count(ridge, outlier_X, outlier_y)[0]}/{FITS} with a 1e200 row"
    )
    labels = (X[:, 0] > 0).astype(int)

    def knn(seed):
        return SampleAggregateEstimator(
            KNeighborsClassifier(5),
            n_blocks=60,
            aggregate="vote",
            classes=[0, 1],
            accountant=BudgetAccountant(),
            random_state=seed,
        )

    print(f"kNN vote, blocks < n_neighbors: raised {count(knn, X, labels, True)[0]}")

    def short_logreg(seed):
        return SampleAggregateEstimator(
            LogisticRegression(max_iter=3),
            n_blocks=10,
            output_bounds=("l2", 5.0),
            classes=[0, 1],
            accountant=BudgetAccountant(),
            random_state=seed,
        )

    print(
        "ConvergenceWarning shown in "
        f"{count(short_logreg, 100 * X, labels)[1]}/{FITS} fits"
    )


if __name__ == "__main__":
    quantile_on_public_grid()
    capital_gain_median()
    float_sum_excess()
    failures_after_the_charge()
