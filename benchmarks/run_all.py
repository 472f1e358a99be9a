"""Run every benchmark once, one after the other, and print one table.

Run from the repository root::

    python benchmarks/run_all.py                  # print the table
    python benchmarks/run_all.py --write-readme   # also put it in the README

Each ``bench_*.py`` runs as a subprocess of this interpreter
(``sys.executable``), one at a time, with ``--summary-json`` so that it writes
its key figures (the ones the issues' targets are about) as JSON records; this
script collects them into one markdown table with the machine facts (CPU
count, load average at start and end, versions, date, wall time) and the
command. Every figure in the table comes from this one run; speed figures are
ratios measured side by side inside one benchmark process.

The settings of ``STEPS`` were chosen so that the whole run takes about half
an hour on the 2-core development machine. Where a benchmark runs fewer
repeats than its section of ``benchmarks/README.md`` documents, the
repeats column says so ("fewer than the section's ...").
``bench_sample_aggregate.py`` runs with ``--targets-only``: the rows with the
a-priori number of blocks (the targets) and the timing, not the ablations.

``--write-readme`` replaces the block between ``<!-- run_all:begin -->`` and
``<!-- run_all:end -->`` in ``benchmarks/README.md``. ``--only NAME ...``
runs some of the benchmarks (for trying the script; a table from a partial
run is not written to the README). ``--no-dpl`` skips diffprivlib.
``--log-dir`` keeps each benchmark's printed output (default: a temporary
directory, removed at the end).
"""

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent
README = ROOT / "README.md"
BEGIN, END = "<!-- run_all:begin -->", "<!-- run_all:end -->"


@dataclass
class Step:
    script: str
    args: list
    # how this run's repeats differ from the benchmark's README section
    reduced: str = ""
    # the arguments that turn diffprivlib off, for --no-dpl
    no_dpl: list = field(default_factory=list)
    timeout: int = 900


STEPS = [
    Step("bench_noise.py", ["--repeats", "7", "--opendp-repeats", "2"]),
    Step("bench_selection.py", ["--n", "1000000", "--repeat", "7"]),
    Step("bench_quantile.py", ["--n", "10000000", "--repeat", "5"]),
    Step(
        "bench_means_speed.py",
        ["--n", "10000000", "--repeat", "5"],
        no_dpl=["--no-dpl"],
    ),
    Step("bench_bounds_pass.py", ["--n", "10000000", "--repeat", "5"]),
    Step("bench_sensitivity.py", ["--n", "10000000", "--repeat", "5"]),
    Step(
        "bench_local_sensitivity.py",
        ["--reps", "100", "--speed-n", "10000000", "--repeat", "5"],
    ),
    Step(
        "bench_private_bounds.py",
        ["--repeat", "300"],
        no_dpl=["--no-dpl"],
        timeout=1200,
    ),
    Step(
        "bench_sample_aggregate.py",
        ["--targets-only"],
        no_dpl=["--no-dpl"],
    ),
    Step("bench_fixed_cost.py", []),
    Step("bench_dask.py", ["--repeat", "5"]),
    Step("bench_describe.py", ["--repeats", "5"]),
    Step("bench_search_speed.py", ["--repeats", "5"]),
    Step(
        "bench_model_selection.py",
        ["--repeats", "15", "--holdout-repeats", "8"],
        timeout=1200,
    ),
    Step("bench_private_metrics.py", ["--runs", "200"]),
]


def versions():
    import numpy
    import scipy
    import sklearn

    return (
        f"Python {platform.python_version()}, numpy {numpy.__version__}, "
        f"scipy {scipy.__version__}, scikit-learn {sklearn.__version__}"
    )


def git_head():
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return done.stdout.strip()


def load():
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def run_step(step, no_dpl, log_dir):
    """Run one benchmark; its records, wall time and a note on failure."""
    summary = Path(log_dir) / f"{step.script}.json"
    log = Path(log_dir) / f"{step.script}.log"
    args = step.args + (step.no_dpl if no_dpl else [])
    command = [sys.executable, str(ROOT / step.script), *args]
    command += ["--summary-json", str(summary)]
    start = time.perf_counter()
    note = ""
    with open(log, "w") as out:
        try:
            done = subprocess.run(
                command,
                cwd=ROOT.parent,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=step.timeout,
            )
            if done.returncode != 0:
                note = f"failed (exit {done.returncode}; see {log.name})"
        except subprocess.TimeoutExpired:
            note = f"not run (time: stopped after {step.timeout} s)"
    seconds = time.perf_counter() - start
    records = []
    if not note and summary.exists():
        records = json.loads(summary.read_text())
    elif not note:
        note = "failed (no summary written)"
    for rec in records:
        rec["bench"] = step.script
        if step.reduced:
            rec["repeats"] += f" ({step.reduced})"
    if note:
        records = [
            {
                "topic": "—",
                "target": f"all figures of `{step.script}`",
                "measured": note,
                "unit": "",
                "verdict": "info",
                "detail": "",
                "repeats": "",
                "bench": step.script,
            }
        ]
    shown = "python benchmarks/" + shlex.join([step.script, *args])
    return records, seconds, shown, note


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def measured_cell(rec):
    value = rec["measured"]
    if isinstance(value, float):
        value = f"{value:.3g}"
    unit = rec.get("unit", "")
    return f"{value} {unit}".strip() if unit else str(value)


def verdict_cell(verdict):
    return {"met": "met", "missed": "**missed**", "info": "—"}.get(verdict, verdict)


def topic_key(rec):
    topic = rec["topic"]
    return (topic == "—", topic)


def render(records, facts, steps_done):
    lines = [
        "| topic | what is measured, and the target | measured | verdict "
        "| repeats / n | setting and detail | benchmark |",
        "|---|---|---|---|---|---|---|",
    ]
    for rec in sorted(records, key=topic_key):
        lines.append(
            "| "
            + " | ".join(
                cell(x)
                for x in (
                    rec["topic"],
                    rec["target"],
                    measured_cell(rec),
                    verdict_cell(rec["verdict"]),
                    rec.get("repeats", ""),
                    rec.get("detail", ""),
                    f"`{rec['bench']}`",
                )
            )
            + " |"
        )
    counts = {v: sum(r["verdict"] == v for r in records) for v in ("met", "missed")}
    head = [
        f"Measured in one run of `{facts['command']}` on {facts['date']}, "
        f"commit {facts['commit']}: {facts['cpus']} CPUs ({facts['machine']}), "
        f"{facts['versions']}. Load average (1, 5, 15 min) {facts['load_start']} "
        f"at the start and {facts['load_end']} at the end; total wall time "
        f"{facts['wall']}. Targets: {counts['met']} met, {counts['missed']} "
        "missed; rows marked — have no target of their own (context or "
        "comparison).",
        "",
        "Benchmarks in this run (in this order, each in its own process):",
        "",
        "| command | wall time | note |",
        "|---|---:|---|",
    ]
    for shown, seconds, note in steps_done:
        head.append(f"| `{shown}` | {seconds:.0f} s | {cell(note) or 'ok'} |")
    return "\n".join([*head, "", *lines]) + "\n"


def write_readme(table):
    text = README.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{README} has no {BEGIN} ... {END} block")
    before, rest = text.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    README.write_text(f"{before}{BEGIN}\n{table}{END}{after}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-readme", action="store_true")
    parser.add_argument("--no-dpl", action="store_true", help="skip diffprivlib")
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", help="run only these benchmarks"
    )
    parser.add_argument("--log-dir", help="keep each benchmark's output here")
    args = parser.parse_args()
    steps = STEPS
    if args.only:
        steps = [s for s in STEPS if any(name in s.script for name in args.only)]
    facts = {
        "command": "python benchmarks/run_all.py"
        + "".join(f" {shlex.quote(a)}" for a in sys.argv[1:]),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git_head(),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "versions": versions(),
        "load_start": load(),
    }
    start = time.perf_counter()
    records, steps_done = [], []
    with tempfile.TemporaryDirectory() as tmp:
        log_dir = args.log_dir or tmp
        os.makedirs(log_dir, exist_ok=True)
        for i, step in enumerate(steps, 1):
            print(
                f"[{i}/{len(steps)}] {step.script} (load {load()})",
                file=sys.stderr,
                flush=True,
            )
            recs, seconds, shown, note = run_step(step, args.no_dpl, log_dir)
            print(f"    {seconds:.0f} s {note}", file=sys.stderr, flush=True)
            records += recs
            steps_done.append((shown, seconds, note))
    wall = time.perf_counter() - start
    facts["load_end"] = load()
    facts["wall"] = f"{wall / 60:.1f} min ({wall:.0f} s)"
    table = render(records, facts, steps_done)
    print(table)
    if args.write_readme:
        if args.only:
            raise SystemExit("--only: a partial run is not written to the README")
        write_readme(table)
        print(f"(written to {README.relative_to(ROOT.parent)})", file=sys.stderr)


if __name__ == "__main__":
    main()
