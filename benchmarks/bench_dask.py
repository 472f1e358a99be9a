"""PrivateMean on a Dask cluster against a plain Dask clipped mean.

Run from the repository root::

    python benchmarks/bench_dask.py [--n 100000000] [--chunks 10]
        [--workers 2] [--repeat 5]

One column of ``n`` lognormal(3, 1) float64 rows in ``--chunks`` chunks on a
``LocalCluster`` of ``--workers`` worker processes with one thread each.

**Speed.** The array is persisted on the workers first, so that every timed
computation reads the same chunks from worker memory (no data generation or
transfer in the timings). Alternated ``--repeat`` times, best of each:

* ``da.clip(x, 0, 100).mean().compute()`` (the non-private reference);
* ``x.sum().compute()`` (one read of every chunk, nothing allocated: a
  floor; no target);
* ``PrivateMean(bounds=(0, 100)).fit(x)`` (target: within 1.5x);
* ``PrivateMean(bounds=None).fit(x)``: a bound search, then the mean; two
  passes over the data (target: within 3x).

**Memory.** Peak resident memory of each worker over its memory before the
computation, in chunks (``n / chunks`` rows of 8 bytes; target: at most 2).
Read from ``VmHWM`` in ``/proc/self/status`` after resetting it (writing 5 to
``/proc/self/clear_refs``; Linux only). Measured twice: on the persisted
array (the working memory of the computation: the persisted chunks are in
the baseline), and on the same array computed lazily from its random
generator (nothing persisted: chunks are made, reduced and freed by each
worker as it goes).

All skdp fits use secure randomness (``random_state=None``) and a fresh
accountant. The load average is printed before and after.
"""

import argparse
import os
import time

import dask
import dask.array as da
from _summary import record, verdict, write
from distributed import Client, LocalCluster, wait

from skdp import BudgetAccountant
from skdp.preprocessing import PrivateMean


def reset_peak_memory():
    """Reset this process's peak RSS; return its current RSS in bytes."""
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")
    return _status_bytes("VmRSS")


def peak_memory():
    return _status_bytes("VmHWM")


def _status_bytes(field):
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def peak_in_chunks(client, compute, chunk_bytes):
    """Largest rise of a worker's peak RSS during ``compute()``, in chunks."""
    before = client.run(reset_peak_memory)
    compute()
    after = client.run(peak_memory)
    return max((after[w] - before[w]) / chunk_bytes for w in before)


def lognormal_column(n, chunks, seed):
    rng = da.random.default_rng(seed)
    return rng.lognormal(3.0, 1.0, size=(n, 1), chunks=(n // chunks, 1))


def computations(x):
    """(label, function, target ratio or None) for every timed computation."""

    def fit(bounds):
        return lambda: PrivateMean(
            1.0, bounds=bounds, accountant=BudgetAccountant()
        ).fit(x)

    return [
        (
            "`da.clip(x, 0, 100).mean().compute()`",
            lambda: float(da.clip(x, 0, 100).mean().compute()),
            None,
        ),
        ("`x.sum().compute()`", lambda: float(x.sum().compute()), None),
        ("`PrivateMean(bounds=(0, 100)).fit(x)`", fit((0, 100)), 1.5),
        ("`PrivateMean(bounds=None).fit(x)`", fit(None), 3.0),
    ]


def best_times(rows, repeat):
    """Best wall time of each row, the rows alternated ``repeat`` times."""
    best = {label: float("inf") for label, _, _ in rows}
    for _ in range(repeat):
        for label, func, _ in rows:
            start = time.perf_counter()
            func()
            best[label] = min(best[label], time.perf_counter() - start)
    return best


def measure_peaks(client, n, chunks, chunk_bytes):
    """Peak rise per worker of every computation, lazy then persisted data.

    The lazy array has its own seed, so none of its chunks was computed
    before; ``x.sum()`` on it shows what generating the chunks alone costs.
    """
    lazy = lognormal_column(n, chunks, 1)
    peaks = {}
    for label, func, _ in computations(lazy):
        peaks[label, "lazy"] = peak_in_chunks(client, func, chunk_bytes)
    return peaks


def speed_records(times, rows, setting, repeat):
    reference = times[rows[0][0]]
    print("\n| computation | best time (s) | ratio | target |")
    print("|---|---|---|---|")
    records = []
    for label, _, target in rows:
        ratio = times[label] / reference
        shown = "—" if target is None else f"<= {target}"
        print(f"| {label} | {times[label]:.3f} | {ratio:.2f} | {shown} |")
        if target is not None:
            records.append(
                record(
                    "Dask input",
                    f"{label} within {target}x of the Dask clipped mean",
                    ratio,
                    "ratio",
                    verdict(ratio <= target),
                    f"{setting}; persisted; reference {reference:.3f} s",
                    f"best of {repeat}, alternated",
                )
            )
    return records


def memory_records(peaks, fits, setting):
    """The target is on the fits' working memory (persisted data); the lazy
    figures are dominated by generating the chunks and are information."""
    print("\n| computation | data | peak rise per worker (chunks) |")
    print("|---|---|---|")
    records = []
    for (label, data_name), peak in peaks.items():
        print(f"| {label} | {data_name} | {peak:.2f} |")
        if label in fits:
            persisted = data_name == "persisted"
            records.append(
                record(
                    "Dask input",
                    "Peak memory per worker <= 2 chunks",
                    peak,
                    "chunks",
                    verdict(peak <= 2) if persisted else "info",
                    f"{label}, {data_name} data (rise over the worker's memory "
                    f"before the fit); {setting}",
                    "one run",
                )
            )
    return records


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000_000)
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--summary-json", default=None)
    args = parser.parse_args()
    chunk_bytes = 8 * args.n // args.chunks
    setting = (
        f"{args.n:.0e} lognormal(3, 1) rows in {args.chunks} chunks, LocalCluster "
        f"of {args.workers} worker processes x 1 thread"
    )
    print(f"{setting}; load average before: {os.getloadavg()}", flush=True)
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            memory_limit=0,
        ) as cluster,
        Client(cluster) as client,
    ):
        peaks = measure_peaks(client, args.n, args.chunks, chunk_bytes)
        x = lognormal_column(args.n, args.chunks, 0).persist()
        wait(x)
        rows = computations(x)
        for _, func, _ in rows:  # warm up: imports and function shipping
            func()
        times = best_times(rows, args.repeat)
        for label, func, _ in rows:
            peaks[label, "persisted"] = peak_in_chunks(client, func, chunk_bytes)
        records = speed_records(times, rows, setting, args.repeat)
        fits = [label for label, _, target in rows if target is not None]
        records += memory_records(peaks, fits, setting)
    print(f"\nload average after: {os.getloadavg()}", flush=True)
    write(args.summary_json, records)


if __name__ == "__main__":
    with dask.config.set({"distributed.worker.memory.target": False}):
        main()
