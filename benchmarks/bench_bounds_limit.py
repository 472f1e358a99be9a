"""How fast could the one-column bound search be? A compiled loop as the limit.

The target asks ``PrivateMean(bounds=None)`` on one column of 10^7 rows
to run within 3x ``np.clip(X, l, u).mean(axis=0)``. This script measures the
parts of that fit and what a compiled loop (numba, *not* a dependency of
skdp: ``pip install numba`` to run it) makes of the one part that dominates,
the per-bin tally of the SVT bound search. Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_bounds_limit.py [--n 10000000] [--repeat 7]

Timed side by side in one process (best of ``--repeat`` interleaved rounds):

* the reference ``np.clip(X, l, u).mean(axis=0)``;
* the parts of the fit that are not the tally: the finiteness check and the
  exact clipped sums of the mean release (``mean_statistic``);
* skdp's tally (``tally_columns``, numpy, blocks of 2**16 - 1 values);
* a compiled loop computing the same tally, checked equal to skdp's bit for
  bit before it is timed (clip, bucket lookup, one comparison, ramp by one
  division, ``rint``, two integer additions per value);
* the same loop without the ramps (bins and counts only), and a loop that
  only counts the values' top bits: what any tally over public bins costs at
  least, whatever its ramps.

The last lines add the parts up: the fastest fit these kernels allow, in
multiples of the reference. The exact float ramps over a geometric grid
need a division per value, which is what keeps the compiled tally above 3x
on its own.
"""

import argparse
import os
import time

import numpy as np

from skdp.sensitivity._soft_counts import tally_columns
from skdp.stats._mean_release import mean_statistic
from skdp.stats._svt_search import bounds_layouts, plan_svt_bounds
from skdp.utils._validation import check_finite_columns

try:
    import numba
    from numba import types
    from numba.extending import intrinsic
except ImportError:  # the script reports and stops, see main()
    numba = None


def compiled_kernels():
    """``(full, bins_only, top_bits)``: the three loops, compiled."""

    @intrinsic
    def float_bits(typingctx, value):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(types.int64))

        return types.int64(types.float64), codegen

    @numba.njit(nogil=True)
    def full(x, low, high, shift, first, base, edge, origin, width, counts, units):
        last = base.size - 1
        for i in range(x.size):
            value = min(max(x[i], low), high)
            key = min(max((float_bits(value) >> shift) - first, 0), last)
            b = base[key] + (value > edge[key])
            counts[b] += 1
            units[b] += np.int64(np.rint((value - origin[b]) / width[b]))

    @numba.njit(nogil=True)
    def bins_only(x, low, high, shift, first, base, edge, counts):
        last = base.size - 1
        for i in range(x.size):
            value = min(max(x[i], low), high)
            key = min(max((float_bits(value) >> shift) - first, 0), last)
            counts[base[key] + (value > edge[key])] += 1

    @numba.njit(nogil=True)
    def top_bits(x, shift, counts):
        mask = counts.size - 1
        for i in range(x.size):
            counts[(float_bits(x[i]) >> shift) & mask] += 1

    return full, bins_only, top_bits


def two_sided_layout():
    """The layout ``PrivateMean(bounds=None)`` tallies one column against."""
    plan = plan_svt_bounds(
        1, 1.0, lower=None, upper_limit=1e6, grid="geometric", n_above=None
    )
    ((_, layout),) = bounds_layouts(plan, 1)
    if layout.halved or not layout.folded or layout.table is None:
        raise RuntimeError("the compiled loop covers folded, tabled layouts only")
    return layout


def calls_for(X, bounds, layout, kernels):
    """``{label: function}``, the reference first."""
    full, bins_only, top_bits = kernels
    x = np.ascontiguousarray(X[:, 0])
    table, n_bins = layout.table, layout.n_bins
    lower, upper = bounds
    clip_bounds = (np.array([lower]), np.array([upper]))

    def compiled_full():
        counts, units = np.zeros(n_bins, np.int64), np.zeros(n_bins, np.int64)
        full(
            x, layout.low, layout.high, table.shift, table.first, table.base,
            table.edge, layout.ramp_origin, layout.ramp_width, counts, units,
        )  # fmt: skip
        return counts, units

    def compiled_bins():
        counts = np.zeros(n_bins, np.int64)
        bins_only(
            x, layout.low, layout.high, table.shift, table.first, table.base,
            table.edge, counts,
        )  # fmt: skip

    expected = tally_columns(X, layout)
    counts, units = compiled_full()
    if not (
        np.array_equal(counts, expected.counts[0])
        and np.array_equal(units, expected.units[0])
    ):
        raise AssertionError("the compiled tally differs from skdp's")
    return {
        "reference: `np.clip(X, l, u).mean(axis=0)`": lambda: np.clip(
            X, lower, upper
        ).mean(axis=0),
        "fit part: finiteness check": lambda: check_finite_columns(X),
        "fit part: exact clipped sums": lambda: mean_statistic(X, *clip_bounds, False),
        "tally: skdp (numpy)": lambda: tally_columns(X, layout),
        "tally: compiled loop, same values": compiled_full,
        "tally: compiled, bins and counts only": compiled_bins,
        "tally: compiled, count of top bits only": lambda: top_bits(
            x, 50, np.zeros(4096, np.int64)
        ),
    }


def best_times(calls, repeat):
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(repeat):
        for label, call in calls.items():
            start = time.perf_counter()
            call()
            best[label] = min(best[label], time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    if numba is None:
        print("numba is not installed: `pip install numba` to run this benchmark.")
        return
    kernels = compiled_kernels()
    layout = two_sided_layout()
    rng = np.random.default_rng(0)
    data = {
        "normal(0, 1)": (rng.normal(0, 1, (args.n, 1)), (-10.0, 10.0)),
        "lognormal(0, 1)": (rng.lognormal(0, 1, (args.n, 1)), (0.0, 100.0)),
    }
    print(f"load average before: {os.getloadavg()}; numba {numba.__version__}")
    print(
        f"n = {args.n:,} rows, one column; best of {args.repeat} interleaved rounds\n"
    )
    print("| data | computation | ms | × reference |")
    print("|---|---|---:|---:|")
    for name, (X, bounds) in data.items():
        times = best_times(calls_for(X, bounds, layout, kernels), args.repeat)
        reference = next(iter(times.values()))
        for label, seconds in times.items():
            ratio = seconds / reference
            print(f"| {name} | {label} | {1e3 * seconds:.1f} | {ratio:.2f} |")
        rest = (
            times["fit part: finiteness check"] + times["fit part: exact clipped sums"]
        )
        for label in ("tally: skdp (numpy)", "tally: compiled loop, same values"):
            total = (rest + times[label]) / reference
            print(f"| {name} | fit = parts + {label} | | {total:.2f} |")
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
