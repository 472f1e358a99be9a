"""Speed of contribution bounding (at most k rows per group) against pandas.

skdp keeps, in every group, a uniform keyed draw of k of its rows
(:func:`skdp.utils._groups.kept_rows`): the same rows for any row order,
each group's choice independent of the others. pandas'
``groupby(...).head(k)`` keeps the first k rows of each group in the input
order (order-dependent, so not usable for privacy; the speed reference of
the issue). Both on the same data: integer group labels (person ids),
2 float columns, 1 to 10 rows per group (mean 5.5), k = 3.

Run (pandas needed, benchmark only)::

    python benchmarks/bench_contribution_bounding.py            # 10**7 rows
    python benchmarks/bench_contribution_bounding.py --quick    # 10**6 rows

Each timing is the best of ``--repeat`` runs (default 3).
"""

import argparse
import time

import numpy as np
import pandas as pd

from skdp.utils._groups import kept_rows


def person_table(n_rows, seed=0):
    """Group labels with 1-10 rows each (shuffled) and two float columns."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 11, size=n_rows // 5)
    labels = np.repeat(np.arange(sizes.size), sizes)[:n_rows]
    labels = labels[rng.permutation(labels.size)]
    X = rng.normal(size=(labels.size, 2))
    return labels, X


def best_time(function, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10**6 rows")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--k", type=int, default=3)
    args = parser.parse_args()
    n_rows = 10**6 if args.quick else 10**7
    labels, X = person_table(n_rows)
    frame = pd.DataFrame({"g": labels, "a": X[:, 0], "b": X[:, 1]})
    k = args.k

    pandas_s = best_time(lambda: frame.groupby("g", sort=False).head(k), args.repeat)
    skdp_s = best_time(lambda: kept_rows(labels, k, 12345, [X]), args.repeat)
    kept = kept_rows(labels, k, 12345, [X])
    head = frame.groupby("g", sort=False).head(k)
    assert kept.size == len(head), "both keep min(k, size) rows per group"
    print(f"rows: {labels.size:,}, groups: {np.unique(labels).size:,}, k = {k}")
    print(f"pandas groupby().head(k): {pandas_s:.3f} s")
    print(f"skdp kept_rows:           {skdp_s:.3f} s  ({skdp_s / pandas_s:.2f}x)")


if __name__ == "__main__":
    main()
