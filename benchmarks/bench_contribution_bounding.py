"""Speed of contribution bounding (at most k rows per group) against pandas.

skdp keeps, in every group, a uniform keyed draw of k of its rows
(:func:`skdp.utils._groups.kept_rows`): the same rows for any row order,
each group's choice independent of the others. pandas'
``groupby(...).head(k)`` keeps the first k rows of each group in the input
order (order-dependent, so not usable for privacy; the speed reference of
the issue). Both on the same data: integer group labels (person ids),
2 float columns, 1 to 10 rows per group (mean 5.5), k = 3.

A grouped fit reads its labels before the charge (checks and numbers them,
hashes each group's value: :class:`skdp.utils._group_labels.GroupLabels`)
and bounds after it from what the check computed. The "fit path" lines
time that whole path for integer and string labels, as fits run it
(labels read once) and as they ran it before (a check that numbered the
labels, then ``kept_rows`` on the raw labels numbering and hashing them
again).

Run (pandas needed, benchmark only)::

    python benchmarks/bench_contribution_bounding.py            # 10**7 rows
    python benchmarks/bench_contribution_bounding.py --quick    # 10**6 rows

Each timing is the best of ``--repeat`` runs (default 3).
"""

import argparse
import time

import numpy as np
import pandas as pd

from skdp.utils._group_labels import GroupLabels
from skdp.utils._groups import group_codes, kept_rows


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
    print(f"pandas groupby().head(k):     {pandas_s:.3f} s")
    print(f"skdp kept_rows:               {skdp_s:.3f} s  ({skdp_s / pandas_s:.2f}x)")
    for kind, table in [("int", labels), ("str", labels.astype(str))]:
        once, twice = fit_path_times(table, X, k, args.repeat)
        print(
            f"fit path ({kind} labels): read once {once:.3f} s "
            f"({once / pandas_s:.2f}x), read twice {twice:.3f} s "
            f"({twice / pandas_s:.2f}x)"
        )


def fit_path_times(labels, X, k, repeat):
    """A grouped fit's label work, reading the labels once (as fits do) and
    twice (as they did: a check that numbered them, then kept_rows)."""

    def read_once():
        return kept_rows(GroupLabels.of(labels), k, 12345, [X])

    def read_twice():
        group_codes(labels)
        return kept_rows(labels, k, 12345, [X])

    assert np.array_equal(read_once(), read_twice())
    return best_time(read_once, repeat), best_time(read_twice, repeat)


if __name__ == "__main__":
    main()
