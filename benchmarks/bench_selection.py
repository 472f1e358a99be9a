"""Speed of private selection over many candidates vs a plain ``np.argmax``.

Run from the repository root::

    python benchmarks/bench_selection.py [--n 1000000] [--repeat 7]

Prints the median wall time of one selection over ``n`` candidates for each
mechanism, with the seeded (PCG64) source and the default secure source (OS
CSPRNG), next to ``np.argmax`` of the same ``n`` floats.
"""

import argparse
import statistics
import time

import numpy as np
from _summary import record, write

from skdp.mechanisms._selection import (
    exponential_mechanism,
    permute_and_flip,
    report_noisy_max,
)


def median_time(func, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--summary-json", help="write the key figures as JSON")
    args = parser.parse_args()

    scores = np.random.default_rng(0).normal(size=args.n)
    base = median_time(lambda: np.argmax(scores), args.repeat)
    cases = {
        "permute_and_flip": lambda rs: permute_and_flip(
            scores, 1.0, 1.0, random_state=rs
        ),
        "report_noisy_max (laplace)": lambda rs: report_noisy_max(
            scores, 1.0, 1.0, noise="laplace", random_state=rs
        ),
        "report_noisy_max (gumbel)": lambda rs: report_noisy_max(
            scores, 1.0, 1.0, noise="gumbel", random_state=rs
        ),
        "exponential_mechanism": lambda rs: exponential_mechanism(
            scores, 1.0, 1.0, random_state=rs
        ),
    }
    print(f"n = {args.n:,} candidates, median of {args.repeat} runs\n")
    header = (
        f"{'method':28s} {'seeded (ms)':>12s} {'secure (ms)':>12s} {'x argmax':>9s}"
    )
    print(header)
    print("-" * len(header))
    print(f"{'np.argmax (not private)':28s} {1e3 * base:12.2f} {'':>12s} {1.0:9.1f}")
    rng = np.random.default_rng(0)
    numpy_noise = median_time(
        lambda: np.argmax(scores + rng.exponential(2.0, args.n)), args.repeat
    )
    print(
        f"{'argmax + numpy Expo noise':28s} {1e3 * numpy_noise:12.2f} {'':>12s} "
        f"{numpy_noise / base:9.1f}"
    )
    records = []
    for name, func in cases.items():
        seeded = median_time(lambda func=func: func(0), args.repeat)
        secure = median_time(lambda func=func: func(None), args.repeat)
        print(
            f"{name:28s} {1e3 * seeded:12.2f} {1e3 * secure:12.2f} {seeded / base:9.1f}"
        )
        if name in ("permute_and_flip", "report_noisy_max (laplace)"):
            records.append(
                record(
                    "noise and selection",
                    f"`{name}` over {args.n:,} candidates in one vectorised pass",
                    round(1e3 * secure, 1),
                    "ms (secure source)",
                    "info",
                    f"one noise array + argmax (by construction); seeded "
                    f"{1e3 * seeded:.1f} ms = {seeded / base:.0f}x `np.argmax` "
                    f"({1e3 * base:.2f} ms)",
                    f"median of {args.repeat}",
                )
            )
    write(args.summary_json, records)


if __name__ == "__main__":
    main()
