"""``skdp describe`` at scale against ``pandas.read_csv``.

Writes a 5,000,000-row CSV of 4 numeric columns (age and hours as integers,
income with cents, a capital gain that is 0 for 92% of the rows; seed 0,
about 86 MB) into /tmp once, then times, in alternated rounds, these
commands, each a fresh process:

* ``pandas.read_csv(path)`` (the reference: reading alone),
* ``skdp describe path --quiet`` (reading and the private statistics),
* ``skdp describe path --quiet --columns age,income``,
* ``skdp describe path --quiet --n-jobs 2`` (2 threads reading, then
  describing 2 columns at a time),

and, for the fixed cost in each, starting Python and importing pandas, or
importing skdp's command line (numpy, SciPy's special functions and sparse
matrices, joblib; not scikit-learn since describe calls the estimators'
release functions directly).

Wall time is the best of ``--repeats`` rounds and peak memory the largest
maximum resident set size (``os.wait4``) over them; both include starting
Python and importing the libraries. CPU time (user + system, best round) is
shown too: on a shared machine it moves less with the load than wall time.
Targets: time within 3x and peak memory within 2x of pandas.

A breakdown follows, each phase timed inside one fresh process (best of the
rounds, phase by phase): importing (``skdp.__main__``, or pandas), reading
the file (``scan_numeric_csv``, or ``read_csv``), and for skdp the private
statistics (``describe`` with the command's defaults).

Reproduce (about a minute after the file is written, which takes 10 s)::

    PYTHONPATH=. python benchmarks/bench_describe.py

``--before PATH`` also times ``describe`` from another checkout (for
example the commit before the streaming reader).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _summary import record, verdict, write

ROOT = Path(__file__).resolve().parents[1]
TIME_TARGET, MEMORY_TARGET = 3.0, 2.0


def write_table(path, n_rows, seed=0, chunk=500_000):
    """The benchmark's CSV: realistic numeric columns, fixed seed."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as handle:
        handle.write("age,hours_per_week,income,capital_gain\n")
        for start in range(0, n_rows, chunk):
            m = min(chunk, n_rows - start)
            age = np.clip(rng.normal(40, 13, m), 17, 90).round()
            hours = np.clip(rng.normal(40, 12, m), 1, 99).round()
            income = rng.lognormal(10.5, 0.8, m).round(2)
            gain = np.minimum(rng.lognormal(8.5, 1.2, m), 99_999).round()
            gain[rng.random(m) < 0.92] = 0
            np.savetxt(
                handle,
                np.column_stack([age, hours, income, gain]),
                fmt=["%d", "%d", "%.2f", "%d"],
                delimiter=",",
            )


def run(command, pythonpath=None):
    """``(seconds, peak resident MB, CPU seconds)`` of one child process."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    start = time.perf_counter()
    # not in the checkout: ``python -m`` puts the current directory first
    child = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, cwd=tempfile.gettempdir()
    )
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{command} failed with status {status}")
    cpu = usage.ru_utime + usage.ru_stime  # less sensitive to the load
    return seconds, usage.ru_maxrss / 1024, cpu  # KiB on Linux


def commands(path, before):
    python = sys.executable
    describe = [python, "-m", "skdp", "describe", str(path), "--quiet"]
    runs = {
        "pandas.read_csv": (
            [python, "-c", f"import pandas; pandas.read_csv({str(path)!r})"],
            None,
        ),
        "skdp describe": (describe, ROOT),
        "skdp describe --columns age,income": (
            [*describe, "--columns", "age,income"],
            ROOT,
        ),
        "skdp describe --n-jobs 2": ([*describe, "--n-jobs", "2"], ROOT),
        "(fixed cost) python -c 'import pandas'": (
            [python, "-c", "import pandas"],
            None,
        ),
        "(fixed cost) python -c 'import skdp.__main__'": (
            [python, "-c", "import skdp.__main__"],
            ROOT,
        ),
    }
    if before is not None:  # the old CLI has no --quiet
        runs["skdp describe (--before)"] = (describe[:-1], Path(before))
    return runs


#: Phases timed inside one process; each script prints a JSON dict of seconds.
PHASES = {
    "skdp": """
import json, time
start = time.perf_counter()
import skdp.__main__
from skdp._csv import scan_numeric_csv
from skdp._describe import describe
from skdp.accounting import BudgetAccountant
imported = time.perf_counter()
data = scan_numeric_csv({path!r})
read = time.perf_counter()
describe(data, epsilon=1.0, accountant=BudgetAccountant(epsilon=1.0))
done = time.perf_counter()
print(json.dumps({{"import": imported - start, "read": read - imported,
                  "statistics": done - read}}))
""",
    "pandas": """
import json, time
start = time.perf_counter()
import pandas
imported = time.perf_counter()
pandas.read_csv({path!r})
read = time.perf_counter()
print(json.dumps({{"import": imported - start, "read": read - imported}}))
""",
}


def measure_phases(path, repeats):
    """Best time of each phase over the rounds, per library."""
    best = {}
    for _ in range(repeats):
        for name, script in PHASES.items():
            env = dict(os.environ, PYTHONPATH=str(ROOT))
            out = subprocess.run(
                [sys.executable, "-c", script.format(path=str(path))],
                env=env,
                cwd=tempfile.gettempdir(),
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            for phase, seconds in json.loads(out).items():
                key = (name, phase)
                best[key] = min(best.get(key, np.inf), seconds)
    return best


def measure(runs, repeats):
    best = {name: (np.inf, 0.0, np.inf) for name in runs}
    for _ in range(repeats):
        for name, (command, pythonpath) in runs.items():
            seconds, megabytes, cpu = run(command, pythonpath)
            old = best[name]
            best[name] = (
                min(old[0], seconds),
                max(old[1], megabytes),
                min(old[2], cpu),
            )
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--path", help="CSV file (default: in /tmp, by rows)")
    parser.add_argument("--before", help="another checkout to time describe from")
    parser.add_argument("--summary-json", help="write the key figures here")
    args = parser.parse_args()
    path = Path(args.path or f"/tmp/skdp_bench_describe_{args.rows}.csv")
    if not path.exists():
        write_table(path, args.rows)
    runs = commands(path, args.before)
    best = measure(runs, args.repeats)
    pandas_s, pandas_mb, pandas_cpu = best["pandas.read_csv"]
    size = path.stat().st_size / 1e6
    print(f"{args.rows:,} rows x 4 columns, {size:.1f} MB, best of {args.repeats}")
    print(
        "| command | wall time (s) | x pandas | peak memory (MB) | x pandas "
        "| CPU time (s) | x pandas |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, (seconds, megabytes, cpu) in best.items():
        print(
            f"| {name} | {seconds:.2f} | {seconds / pandas_s:.2f} | "
            f"{megabytes:.0f} | {megabytes / pandas_mb:.2f} | "
            f"{cpu:.2f} | {cpu / pandas_cpu:.2f} |"
        )
    phases = measure_phases(path, args.repeats)
    print("\nphases in one process (s, best of each):")
    for library in PHASES:
        shown = ", ".join(
            f"{phase} {seconds:.2f}"
            for (name, phase), seconds in phases.items()
            if name == library
        )
        print(f"  {library}: {shown}")
    seconds, megabytes, _ = best["skdp describe"]
    detail = f"{args.rows:,} x 4 CSV, {size:.0f} MB; pandas {pandas_s:.2f} s"
    repeats = f"best of {args.repeats}, alternated"
    write(
        args.summary_json,
        [
            record(
                "skdp describe",
                f"skdp describe time within {TIME_TARGET:g}x of pandas.read_csv",
                seconds / pandas_s,
                "ratio",
                verdict(seconds / pandas_s <= TIME_TARGET),
                detail,
                repeats,
            ),
            record(
                "skdp describe",
                f"skdp describe peak memory within {MEMORY_TARGET:g}x of pandas",
                megabytes / pandas_mb,
                "ratio",
                verdict(megabytes / pandas_mb <= MEMORY_TARGET),
                f"{detail}, {pandas_mb:.0f} MB",
                repeats,
            ),
        ],
    )


if __name__ == "__main__":
    main()
