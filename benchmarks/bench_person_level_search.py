"""Person-level against row-level holdout searches: what tuning by person costs.

The person-level UCI Adult table of ``bench_person_level`` (1 to 10 rows per
person, mean 5; persons split 80/20 into train and test) is tuned by the two
holdout searches over a public grid of ``C`` for
``PrivateLogisticRegression(epsilon=1, delta=1e-6)``:

* ``NoisyMaxSearchCV(method="holdout", epsilon=1)``, refit on all rows;
* ``RandomStoppingSearchCV(n_iter=4, scoring=private accuracy at
  epsilon=0.5)``, refit on all rows;

each **person-level** (every row of the train persons, ``groups=`` the
person, ``max_rows_per_group=k``: a person lands whole in the training or
the held-out part, the held-out score is per person) and **row-level** on
one row per train person (the de-duplicated table, no ``groups``). Reported:
accuracy of the refit model on the test persons' own rows (median, min and
max over seeds), how often each ``C`` was chosen, and the search's wall
time (median).

Run::

    python benchmarks/bench_person_level_search.py          # 5 seeds, k 3
    python benchmarks/bench_person_level_search.py --quick  # 2 seeds
"""

import argparse
import time
from collections import Counter

import numpy as np
from bench_person_level import (
    DELTA,
    EPSILON,
    adult,
    person_level_table,
    private_model,
    split_persons,
)

from skdp import BudgetAccountant
from skdp.metrics import make_private_scorer
from skdp.model_selection import NoisyMaxSearchCV, RandomStoppingSearchCV

GRID = {"C": [0.01, 0.1, 1.0, 10.0]}
K = 3


def searches(seed, k):
    """The two searches, person-level when ``k`` is set."""
    common = {
        "refit": True,
        "accountant": BudgetAccountant(delta=1.0),
        "random_state": seed,
        "max_rows_per_group": k,
    }
    model = private_model(seed)
    return {
        "NoisyMaxSearchCV(holdout)": NoisyMaxSearchCV(
            model, GRID, method="holdout", epsilon=1.0, **common
        ),
        "RandomStoppingSearchCV": RandomStoppingSearchCV(
            model,
            GRID,
            scoring=make_private_scorer("accuracy", epsilon=0.5),
            n_iter=4.0,
            **common,
        ),
    }


def run(seeds, k):
    name, X, y, numeric = adult()
    results = {}
    for seed in seeds:
        rows, labels, person, _ = person_level_table(X, y, numeric, seed)
        train, test = split_persons(X.shape[0], seed)
        in_train = train[person]
        data = {
            "person-level": (rows[in_train], labels[in_train], person[in_train], k),
            "row-level (de-duplicated)": (X[train], y[train], None, None),
        }
        for unit, (Xr, yr, groups, bound) in data.items():
            for label, search in searches(seed, bound).items():
                start = time.perf_counter()
                search.fit(Xr, yr, groups=groups)
                seconds = time.perf_counter() - start
                entry = results.setdefault((label, unit), ([], Counter(), []))
                entry[0].append(search.score(X[test], y[test]))
                entry[1][search.best_params_["C"]] += 1
                entry[2].append(seconds)
    print(
        f"{name}: {X.shape[0]:,} persons (1-10 rows each, mean 5); model epsilon="
        f"{EPSILON}, delta={DELTA}; grid C {GRID['C']}; k={k}; {len(seeds)} seeds"
    )
    head = f"{'search':26s} {'unit':26s} {'median acc':>10s} {'min':>7s} {'max':>7s}"
    print(f"{head} {'time s':>7s}  chosen C")
    for (label, unit), (scores, chosen, seconds) in results.items():
        counts = dict(sorted(chosen.items()))
        print(
            f"{label:26s} {unit:26s} {np.median(scores):10.4f} {min(scores):7.4f} "
            f"{max(scores):7.4f} {np.median(seconds):7.2f}  {counts}"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds")
    args = parser.parse_args()
    start = time.perf_counter()
    run(list(range(2 if args.quick else 5)), K)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
