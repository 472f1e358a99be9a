"""Speed of skdp's secure noise against numpy and OpenDP (issue 3).

Run from the repository root::

    python benchmarks/bench_noise.py            # n = 10**6
    python benchmarks/bench_noise.py --n 100000 --repeats 3

Each contender draws ``n`` Laplace(1) noise values for a vector of zeros; the
table reports the best wall time over the repeats (OpenDP, which uses
arbitrary-precision arithmetic, gets fewer repeats because one call takes
tens of seconds). OpenDP is optional (``pip install opendp``); it is never a
dependency of skdp.
"""

import argparse
import platform
import time

import numpy as np
from _summary import record, verdict, write

from skdp.mechanisms import gaussian_mechanism, laplace_mechanism


def best_time(func, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def opendp_laplace(n):
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    meas = dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)),
        dp.l1_distance(T=float),
        scale=1.0,
    )
    zeros = [0.0] * n
    return lambda: meas(zeros)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**6)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--opendp-repeats", type=int, default=2)
    parser.add_argument("--summary-json", help="write the key figures as JSON")
    args = parser.parse_args()
    n = args.n
    zeros = np.zeros(n)
    rng = np.random.default_rng()

    rows = [
        (
            "numpy `default_rng().laplace` (float, not DP-safe)",
            best_time(lambda: rng.laplace(size=n), args.repeats),
        ),
        (
            "skdp `laplace_mechanism`, OS CSPRNG (default)",
            best_time(lambda: laplace_mechanism(zeros, 1.0, 1.0), args.repeats),
        ),
        (
            "skdp `laplace_mechanism`, seeded PCG64",
            best_time(
                lambda: laplace_mechanism(zeros, 1.0, 1.0, random_state=0),
                args.repeats,
            ),
        ),
        (
            "skdp `gaussian_mechanism` (ε=1, δ=1e-6), OS CSPRNG",
            best_time(lambda: gaussian_mechanism(zeros, 1.0, 1.0, 1e-6), 2),
        ),
    ]
    opendp = opendp_laplace(n) if args.opendp_repeats > 0 else None
    if opendp is not None:
        rows.append(
            (
                "OpenDP `make_laplace` (float vector)",
                best_time(opendp, args.opendp_repeats),
            )
        )
    numpy_time = rows[0][1]
    print(
        f"n = {n:,}; {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, numpy {np.__version__}\n"
    )
    print("| noise | best time (s) | vs numpy |")
    print("|---|---:|---:|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.3f} | {seconds / numpy_time:.1f}x |")
    write(args.summary_json, summary(rows, n, args))


def summary(rows, n, args):
    times = dict(rows)
    numpy_time = rows[0][1]
    secure = times["skdp `laplace_mechanism`, OS CSPRNG (default)"]
    seeded = times["skdp `laplace_mechanism`, seeded PCG64"]
    size = f"n = {n:,}"
    out = [
        record(
            3,
            f"secure Laplace, {size} draws, within 10x numpy `laplace`",
            secure / numpy_time,
            "x numpy",
            verdict(secure / numpy_time <= 10),
            f"{secure:.3f} s vs {numpy_time:.3f} s, OS CSPRNG; {size}",
            f"best of {args.repeats}",
        ),
        record(
            3,
            f"seeded (PCG64) Laplace, {size} draws, vs numpy (no target)",
            seeded / numpy_time,
            "x numpy",
            "info",
            f"{seeded:.3f} s",
            f"best of {args.repeats}",
        ),
    ]
    opendp = times.get("OpenDP `make_laplace` (float vector)")
    if opendp is None:
        out.append(
            record(
                3,
                "secure Laplace faster than OpenDP's float Laplace",
                "not run (OpenDP not installed or --opendp-repeats 0)",
                "",
                "info",
            )
        )
    else:
        out.append(
            record(
                3,
                "secure Laplace faster than OpenDP's float Laplace",
                opendp / secure,
                "x faster than OpenDP",
                verdict(secure < opendp),
                f"OpenDP `make_laplace` {opendp:.2f} s vs skdp {secure:.3f} s",
                f"best of {args.opendp_repeats} (OpenDP), {args.repeats} (skdp)",
            )
        )
    return out


if __name__ == "__main__":
    main()
