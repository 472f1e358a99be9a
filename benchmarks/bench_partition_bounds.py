"""Person-level histograms and category discovery: what bounding the
partitions a person touches buys.

Table: UCI Adult made person-level as in ``bench_person_level`` (each
person 1 to 10 rows, mean 5; copies jitter the numeric columns by 2 % of
their public range, categorical columns are the person's). ``k = 10``
(every person's rows kept), epsilon 1, delta 1e-6.

* **PrivateHistogram** (Gaussian, 20 bins of ``age`` and ``hours-per-week``
  over their public ranges): ``noise_std_`` and the total variation
  distance between the released shape (counts clipped at 0, normalised) and
  the shape of all rows, and to the shape of one row per person (each
  person's own row), median over seeds; for ``k`` alone and stated ``(p,
  c)``, on all of Adult and on its first 1,000 persons (where the noise
  matters more than the bias of dropping rows). A person's jittered copies
  fall in one or two bins.
* **PrivateOneHotEncoder** (``occupation``, ``education``,
  ``native-country``): ``threshold_``, ``noise_std_`` and the number of
  categories found, for ``k`` alone (the generic group-privacy route) and
  stated ``(p, c)`` (a person's categorical cells are one value: ``p = 1``
  holds for every person).

Run::

    python benchmarks/bench_partition_bounds.py            # 5 seeds
    python benchmarks/bench_partition_bounds.py --quick    # 1 seed
"""

import argparse

import numpy as np
import pandas as pd
from bench_person_level import person_level_table
from bench_sample_aggregate import ADULT

from skdp import BudgetAccountant, PrivateHistogram, PrivateOneHotEncoder

EPSILON, DELTA, K = 1.0, 1e-6, 10
NUMERIC = {"age": (17, 90), "hours-per-week": (1, 99)}
CATEGORICAL = ["occupation", "education", "native-country"]
HIST_SETTINGS = [(None, None), (2, None), (2, 1), (3, 1), (1, 1)]
ENC_SETTINGS = [(None, None), (1, None), (1, 2), (1, 1)]


def person_table(seed):
    df = pd.read_csv(ADULT, skipinitialspace=True)
    numeric = [
        ((df[c].clip(lo, hi) - lo) / (hi - lo)).to_numpy()
        for c, (lo, hi) in NUMERIC.items()
    ]
    codes, names = [], []
    for c in CATEGORICAL:
        code, uniques = pd.factorize(df[c])
        codes.append(code.astype(float))
        names.append(np.asarray(uniques, dtype=str))
    X = np.column_stack(numeric + codes)
    rows, _, person, _ = person_level_table(X, np.zeros(len(df)), [0, 1], seed)
    cats = np.column_stack(
        [names[j][rows[:, 2 + j].astype(int)] for j in range(len(CATEGORICAL))]
    )
    return rows[:, :2], cats, person


def _params(p, c):
    return {"max_partitions_per_group": p, "max_rows_per_partition": c}


def histogram_row(X, person, p, c, seed):
    model = PrivateHistogram(
        20,
        bounds=(0.0, 1.0),
        mechanism="gaussian",
        epsilon=EPSILON,
        delta=DELTA,
        max_rows_per_group=K,
        accountant=BudgetAccountant(delta=1.0),
        random_state=seed,
        **_params(p, c),
    ).fit(X, groups=person)
    shape = np.maximum(model.counts_, 0)
    own = X[np.unique(person, return_index=True)[1]]
    return model.noise_std_, _tv(shape, X), _tv(shape, own)


def _tv(shape, rows):
    """Mean over the features of the total variation distance of shapes."""
    truth = np.array([np.histogram(rows[:, j], 20, (0, 1))[0] for j in range(2)], float)
    shape = shape / np.maximum(shape.sum(1, keepdims=True), 1e-300)
    return float(
        (0.5 * np.abs(shape - truth / truth.sum(1, keepdims=True)).sum(1)).mean()
    )


def encoder_row(cats, person, p, c, seed):
    model = PrivateOneHotEncoder(
        epsilon=EPSILON,
        delta=DELTA,
        max_rows_per_group=K,
        accountant=BudgetAccountant(delta=1.0),
        random_state=seed,
        **_params(p, c),
    ).fit(cats, groups=person)
    found = sum(len(v) for v in model.categories_)
    return model.threshold_, model.noise_std_, found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    seeds = range(1) if parser.parse_args().quick else range(5)
    X, cats, person = person_table(0)
    total = sum(len(np.unique(cats[:, j])) for j in range(cats.shape[1]))
    print(f"{person.size} rows, {person.max() + 1} persons, {total} categories")
    for n_persons in (None, 1000):
        rows = slice(None) if n_persons is None else person < n_persons
        label = "all persons" if n_persons is None else f"first {n_persons} persons"
        print(f"PrivateHistogram (gaussian), age and hours-per-week, 20 bins, {label}")
        print("  p     c     noise_std   TV to all rows   TV to own rows (medians)")
        for p, c in HIST_SETTINGS:
            runs = [histogram_row(X[rows], person[rows], p, c, s) for s in seeds]
            tv_all = float(np.median([r[1] for r in runs]))
            tv_own = float(np.median([r[2] for r in runs]))
            std = runs[0][0]
            print(f"  {p!s:5} {c!s:5} {std:9.2f}   {tv_all:.4f}{tv_own:17.4f}")
    print("PrivateOneHotEncoder, 3 columns")
    print("  p     c     threshold  noise_std  categories found (median)")
    for p, c in ENC_SETTINGS:
        runs = [encoder_row(cats, person, p, c, s) for s in seeds]
        found = float(np.median([r[2] for r in runs]))
        print(
            f"  {p!s:5} {c!s:5} {runs[0][0]:9d}  {runs[0][1]:9.2f}  {found:.0f}/{total}"
        )


if __name__ == "__main__":
    main()
