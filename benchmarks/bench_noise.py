"""Speed of skdp's secure noise against numpy and OpenDP.

Run from the repository root::

    python benchmarks/bench_noise.py            # n = 10**6
    python benchmarks/bench_noise.py --n 100000 --repeats 3

Each contender draws ``n`` noise values for a vector of zeros: Laplace(1)
(compared with numpy's ``laplace``) and the Gaussian mechanism at ε = 1,
δ = 1e-6 (compared with numpy's ``normal``). The contenders run in
interleaved rounds (one call of each per round, so that a change of load on
a shared machine hits all of them) and the table reports each one's best
wall time over the rounds (OpenDP, which uses arbitrary-precision
arithmetic, gets fewer repeats because one call takes tens of seconds).
OpenDP is optional (``pip install opendp``); it is never a dependency of
skdp.
"""

import argparse
import platform
import time

import numpy as np
from _summary import record, verdict, write

from skdp.mechanisms import check_random_source, gaussian_mechanism, laplace_mechanism
from skdp.mechanisms._discrete import _discrete_gaussian_cks, _discrete_laplace_cks
from skdp.mechanisms._gaussian import _gaussian_grid, _sigma_ratio
from skdp.mechanisms._laplace import _laplace_grid


def best_time(func, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def best_times_interleaved(funcs, repeats):
    """Best wall time of each function over ``repeats`` interleaved rounds."""
    for func in funcs:  # warm-up (imports, caches)
        func()
    times = [[] for _ in funcs]
    for _ in range(repeats):
        for func, record_ in zip(funcs, times, strict=True):
            start = time.perf_counter()
            func()
            record_.append(time.perf_counter() - start)
    return [min(t) for t in times]


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
    parser.add_argument(
        "--no-cks", action="store_true", help="skip the pre-issue-18 samplers"
    )
    args = parser.parse_args()
    n = args.n
    zeros = np.zeros(n)
    rng = np.random.default_rng()

    contenders = [
        (
            "numpy `default_rng().laplace` (float, not DP-safe)",
            lambda: rng.laplace(size=n),
        ),
        (
            "numpy `default_rng().normal` (float, not DP-safe)",
            lambda: rng.normal(size=n),
        ),
        (
            "skdp `laplace_mechanism`, OS CSPRNG (default)",
            lambda: laplace_mechanism(zeros, 1.0, 1.0),
        ),
        (
            "skdp `laplace_mechanism`, seeded PCG64",
            lambda: laplace_mechanism(zeros, 1.0, 1.0, random_state=0),
        ),
        (
            "skdp `gaussian_mechanism` (ε=1, δ=1e-6), OS CSPRNG",
            lambda: gaussian_mechanism(zeros, 1.0, 1.0, 1e-6),
        ),
        (
            "skdp `gaussian_mechanism` (ε=1, δ=1e-6), seeded PCG64",
            lambda: gaussian_mechanism(zeros, 1.0, 1.0, 1e-6, random_state=0),
        ),
    ]
    if not args.no_cks:
        # The samplers used before issue 18 (CKS Algorithms 2 and 3), on the
        # integer scales the two mechanisms above use, for before/after.
        secure = check_random_source(None)
        t_lap = _laplace_grid(1.0, 1.0, n)[1]
        sigma2 = _gaussian_grid(1.0, _sigma_ratio(1.0, 1e-6), n)[1]
        contenders += [
            (
                f"CKS Algorithm 2 (before issue 18), scale {t_lap}, OS CSPRNG",
                lambda: _discrete_laplace_cks(t_lap, 1, n, secure),
            ),
            (
                f"CKS Algorithm 3 (before issue 18), sigma2 {sigma2}, OS CSPRNG",
                lambda: _discrete_gaussian_cks(sigma2, 1, n, secure),
            ),
        ]
    seconds = best_times_interleaved([f for _, f in contenders], args.repeats)
    rows = [(name, sec) for (name, _), sec in zip(contenders, seconds, strict=True)]
    opendp = opendp_laplace(n) if args.opendp_repeats > 0 else None
    if opendp is not None:
        rows.append(
            (
                "OpenDP `make_laplace` (float vector)",
                best_time(opendp, args.opendp_repeats),
            )
        )
    print(
        f"n = {n:,}; {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, numpy {np.__version__}\n"
    )
    print("| noise | best time (s) | vs numpy (same family) |")
    print("|---|---:|---:|")
    for name, sec in rows:
        gaussian = any(k in name for k in ("gaussian", "normal", "Algorithm 3"))
        ref = rows[1][1] if gaussian else rows[0][1]
        print(f"| {name} | {sec:.3f} | {sec / ref:.1f}x |")
    write(args.summary_json, summary(rows, n, args))


def summary(rows, n, args):
    times = dict(rows)
    numpy_time = rows[0][1]
    normal_time = rows[1][1]
    secure = times["skdp `laplace_mechanism`, OS CSPRNG (default)"]
    seeded = times["skdp `laplace_mechanism`, seeded PCG64"]
    gauss = times["skdp `gaussian_mechanism` (ε=1, δ=1e-6), OS CSPRNG"]
    gauss_seeded = times["skdp `gaussian_mechanism` (ε=1, δ=1e-6), seeded PCG64"]
    size = f"n = {n:,}"
    rounds = f"best of {args.repeats} interleaved rounds"
    out = [
        record(
            "noise and selection",
            f"secure Laplace, {size} draws, within 10x numpy `laplace`",
            secure / numpy_time,
            "x numpy",
            verdict(secure / numpy_time <= 10),
            f"{secure:.3f} s vs {numpy_time:.3f} s, OS CSPRNG; {size}",
            rounds,
        ),
        record(
            "noise and selection",
            f"secure Laplace, {size} draws, within 10x numpy `laplace` (same run)",
            secure / numpy_time,
            "x numpy",
            verdict(secure / numpy_time <= 10),
            f"{secure:.3f} s vs {numpy_time:.3f} s, OS CSPRNG; {size}",
            rounds,
        ),
        record(
            "noise and selection",
            f"secure Gaussian (ε=1, δ=1e-6), {size} draws, within 10x numpy `normal`",
            gauss / normal_time,
            "x numpy",
            verdict(gauss / normal_time <= 10),
            f"{gauss:.3f} s vs {normal_time:.3f} s, OS CSPRNG; seeded "
            f"{gauss_seeded:.3f} s = {gauss_seeded / normal_time:.1f}x; {size}",
            rounds,
        ),
        record(
            "noise and selection",
            f"seeded (PCG64) Laplace, {size} draws, vs numpy (no target)",
            seeded / numpy_time,
            "x numpy",
            "info",
            f"{seeded:.3f} s",
            rounds,
        ),
    ]
    opendp = times.get("OpenDP `make_laplace` (float vector)")
    if opendp is None:
        out.append(
            record(
                "noise and selection",
                "secure Laplace faster than OpenDP's float Laplace",
                "not run (OpenDP not installed or --opendp-repeats 0)",
                "",
                "info",
            )
        )
    else:
        out.append(
            record(
                "noise and selection",
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
