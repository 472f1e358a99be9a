"""Person-level against row-level privacy: what protecting a person costs.

A person-level table is built from a table of one row per person by giving
each person 1 to 10 rows (``1 + Binomial(9, 4/9)``: mean 5) in a public,
documented way (:func:`person_level_table`): the person's own row, then
copies whose numeric columns get independent Gaussian jitter of 2 % of
their public range (clipped to it; categorical columns and the label are
the person's). Persons are split 80/20 into train and test (by person: no
person is in both).

Compared, at the same epsilon (1) and delta (1e-6), accuracy on the test
persons' own rows, median over seeds:

* **person-level**: ``PrivateLogisticRegression(max_rows_per_group=k)``
  fit on every row of the train persons with ``groups=`` the person: the
  guarantee covers all of a person's rows;
* **row-level, de-duplicated**: the same model on one row per train person
  (their own row), no ``groups``: the guarantee of the issue's target, for
  a table that has one row per person;
* **non-private**: scikit-learn's ``LogisticRegression`` on the
  de-duplicated rows (the practical limit).

Tables: UCI Adult (``../shared/data/adult.csv.gz``, label ``Salary``; the
features of ``bench_sample_aggregate.adult_features``, numerics scaled to
[0, 1] by public ranges) and ISLP ``Default`` (``_real_tables.default``;
``balance`` and ``income`` scaled by the public ranges [0, 3000] and
[0, 80000] dollars). Stated feature bounds (0, 1) for every model.

Run::

    python benchmarks/bench_person_level.py              # 5 seeds, k 1,2,3,5,10
    python benchmarks/bench_person_level.py --quick      # 2 seeds, k 1,3
"""

import argparse
import time

import numpy as np
from bench_sample_aggregate import NUMERIC_RANGES, adult_features
from sklearn.linear_model import LogisticRegression

from skdp import BudgetAccountant, PrivateLogisticRegression

EPSILON, DELTA = 1.0, 1e-6
JITTER = 0.02  # of the public range, per numeric column of a copy
DEFAULT_RANGES = {"balance": (0.0, 3000.0), "income": (0.0, 80000.0)}


def person_level_table(X, y, numeric, seed):
    """Rows of every person, their person id, and the generator's counts.

    Person ``i`` (row ``i`` of ``X``, features in [0, 1]) gets ``1 +
    Binomial(9, 4/9)`` rows: row ``i`` itself, then copies whose columns
    ``numeric`` get ``N(0, JITTER)`` added, clipped to [0, 1]. Public: the
    rule and its seed, not any value of the data.
    """
    rng = np.random.default_rng(seed)
    counts = 1 + rng.binomial(9, 4 / 9, size=X.shape[0])
    person = np.repeat(np.arange(X.shape[0]), counts)
    rows = X[person].copy()
    copies = np.ones(person.size, dtype=bool)
    copies[np.r_[0, np.cumsum(counts)[:-1]]] = False  # each person's first row
    jitter = rng.normal(scale=JITTER, size=(int(copies.sum()), len(numeric)))
    block = rows[np.ix_(copies, numeric)] + jitter
    rows[np.ix_(copies, numeric)] = np.clip(block, 0.0, 1.0)
    return rows, y[person], person, counts


def split_persons(n_persons, seed, test_share=0.2):
    rng = np.random.default_rng(seed + 1000)
    test = rng.random(n_persons) < test_share
    return ~test, test


def private_model(seed, **params):
    return PrivateLogisticRegression(
        EPSILON,
        DELTA,
        classes=[0, 1],
        feature_bounds=(0.0, 1.0),
        accountant=BudgetAccountant(delta=1.0),
        random_state=seed,
        **params,
    )


def run_table(name, X, y, numeric, seeds, ks):
    results = {"row-level (de-duplicated)": [], "non-private (de-duplicated)": []}
    results.update({f"person-level k={k}": [] for k in ks})
    for seed in seeds:
        rows, labels, person, _ = person_level_table(X, y, numeric, seed)
        train, test = split_persons(X.shape[0], seed)
        in_train = train[person]
        Xr, yr, gr = rows[in_train], labels[in_train], person[in_train]
        Xt, yt = X[test], y[test]
        base = private_model(seed).fit(X[train], y[train])
        results["row-level (de-duplicated)"].append(base.score(Xt, yt))
        ref = LogisticRegression(max_iter=1000).fit(X[train], y[train])
        results["non-private (de-duplicated)"].append(ref.score(Xt, yt))
        for k in ks:
            model = private_model(seed, max_rows_per_group=k)
            model.fit(Xr, yr, groups=gr)
            results[f"person-level k={k}"].append(model.score(Xt, yt))
    n_rows = person_level_table(X, y, numeric, seeds[0])[0].shape[0]  # seed 0
    print(
        f"\n{name}: {X.shape[0]:,} persons, {n_rows:,} rows at seed {seeds[0]} "
        f"(1-10 per person, mean {n_rows / X.shape[0]:.2f}), {X.shape[1]} features; "
        f"epsilon={EPSILON}, delta={DELTA}, {len(seeds)} seeds"
    )
    row_level = float(np.median(results["row-level (de-duplicated)"]))
    print(f"{'model':32s} {'median acc':>10s} {'min':>7s} {'max':>7s} {'vs row':>7s}")
    for label, scores in results.items():
        med = float(np.median(scores))
        print(
            f"{label:32s} {med:10.4f} {min(scores):7.4f} {max(scores):7.4f} "
            f"{100 * (med - row_level):+6.2f}"
        )


def adult():
    X, y = adult_features()
    return "UCI Adult", X, y, list(range(len(NUMERIC_RANGES)))


def default_table():
    from _real_tables import default

    table = default()
    X = table.X.copy()
    numeric = []
    for j, name in enumerate(table.feature_names):
        if name in DEFAULT_RANGES:
            lo, hi = DEFAULT_RANGES[name]
            X[:, j] = (np.clip(X[:, j], lo, hi) - lo) / (hi - lo)
            numeric.append(j)
    return "ISLP Default", X, table.y, numeric


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds, k 1,3")
    args = parser.parse_args()
    seeds = list(range(2 if args.quick else 5))
    ks = [1, 3] if args.quick else [1, 2, 3, 5, 10]
    start = time.perf_counter()
    for name, X, y, numeric in (adult(), default_table()):
        run_table(name, X, y, numeric, seeds, ks)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
