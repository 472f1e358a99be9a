"""The markdown report of ``bench_real_tables.py``: tables, versions, flags."""

import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np

DPL_NOTE = (
    "diffprivlib defaults = only ε stated: it reads `data_norm`/`bounds` from "
    "the data (not private) and warns `PrivacyLeakWarning`; its tools take "
    "the min and max of the whole matrix as every column's bounds"
)


def _version(dist):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _skdp_origin():
    import skdp

    where = Path(skdp.__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(where), "status", "--porcelain", "--", "skdp"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        commit += " (skdp/ modified)" if dirty else ""
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown commit"
    return f"{getattr(skdp, '__version__', '?')} at {where} ({commit})"


def header(results, seeds, epsilons, seconds, argv):
    dpl = next((r["dpl_versions"] for r in results if r["dpl_versions"]), None)
    dpl_text = (
        "skipped"
        if dpl is None
        else f"{dpl['diffprivlib']} (its venv: scikit-learn {dpl['scikit-learn']}, "
        f"numpy {dpl['numpy']})"
    )
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    command = "python benchmarks/bench_real_tables.py " + shlex.join(
        sys.argv[1:] if argv is None else argv
    )
    now = datetime.datetime.now(datetime.UTC)
    lines = [
        f"Command: `{command.strip()}`; {now:%Y-%m-%d %H:%M} UTC; "
        f"wall time {seconds:.0f} s; {len(seeds)} seeds; ε in "
        f"{', '.join(f'{e:g}' for e in epsilons)}.",
        "",
        f"skdp {_skdp_origin()}; Python {platform.python_version()}; numpy "
        f"{_version('numpy')}; scikit-learn {_version('scikit-learn')}; "
        f"statsmodels {_version('statsmodels')}; ISLP {_version('islp')}; "
        f"diffprivlib {dpl_text}. {os.cpu_count()} CPUs, load average at the "
        f"end {load}.",
    ]
    return lines


def tables_section(results, skipped):
    lines = [
        "| table | task | rows x features | majority (test split) | source "
        "| licence | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for result in results:
        t = result["table"]
        majority = "-"
        if result["majority"] is not None:
            majority = f"{result['majority']:.3f}"
        lines.append(
            f"| {t.name} | {t.task} | {t.shape[0]:,} x {t.shape[1]} | {majority} "
            f"| {t.source} | {t.licence} | {t.note} |"
        )
    lines += [f"\nSkipped: {s}" for s in skipped]
    return lines


def _failed(row):
    """What a fit that raised is called: skdp refuses, diffprivlib raises."""
    return "refused" if row["lib"] == "skdp" else "raised"


def _number(value):
    return f"{value:.3f}" if abs(value) < 10 else f"{value:.3g}"


def _score_cell(row):
    if row is None:
        return "-"
    scores = np.asarray(row["scores"], dtype=float)
    if np.all(np.isnan(scores)):
        return _failed(row) if row["errors"] else "-"
    text = _number(np.nanmedian(scores))
    if row["errors"]:
        text += f" ({len(row['errors'])} {_failed(row)})"
    return text


def _find(rows, **match):
    for row in rows:
        if all(row.get(k) == v for k, v in match.items()):
            return row
    return None


MODEL_COLUMNS = (
    ("skdp", "default"),
    ("skdp", "stated"),
    ("diffprivlib", "default"),
    ("diffprivlib", "stated"),
)


def models_section(results, epsilons):
    lines = [
        "| table | model | ε | scikit-learn | **skdp defaults** | skdp stated "
        "ranges | diffprivlib defaults (reads data) | diffprivlib stated ranges |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for result in results:
        t, rows = result["table"], result["models"]
        for model in dict.fromkeys(r["model"] for r in rows):
            base = _score_cell(_find(rows, lib="sklearn", model=model))
            for epsilon in epsilons:
                cells = [
                    _score_cell(
                        _find(rows, lib=lib, model=model, mode=mode, epsilon=epsilon)
                    )
                    for lib, mode in MODEL_COLUMNS
                ]
                lines.append(
                    f"| {t.name} | {model} | {epsilon:g} | {base} | "
                    + " | ".join(cells)
                    + " |"
                )
    return lines


def _stat_value(row, name):
    if row is None:
        return "-"
    if not row["errors_by_stat"]:
        return _failed(row) if row["errors"] else "-"
    value = float(np.median(row["errors_by_stat"][name]))
    text = (
        f"{100 * value:.1f}"
        if name in ("median", "quartiles")
        else f"{100 * value:.3g}%"
    )
    if row["errors"]:
        text += f" ({len(row['errors'])} {_failed(row)})"
    return text


STAT_ROWS = (
    ("mean", "mean"),
    ("scale", "scale"),
    ("quantiles", "median"),
    ("quantiles", "quartiles"),
)


def stats_section(results, epsilons):
    lines = [
        "Cells: skdp defaults / skdp stated ranges / diffprivlib defaults "
        "(reads data) / diffprivlib stated ranges. Mean and scale: median over "
        "columns of |released / numpy - 1|; median and quartiles: median over "
        "columns of the rank error in percentage points.",
        "",
        "| table (columns) | statistic | "
        + " | ".join(f"ε = {e:g}" for e in epsilons)
        + " |",
        "|---|---|" + "---|" * len(epsilons),
    ]
    for result in results:
        t, rows = result["table"], result["stats"]
        for stat, name in STAT_ROWS:
            cells = []
            for epsilon in epsilons:
                parts = [
                    _stat_value(
                        _find(rows, lib=lib, stat=stat, mode=mode, epsilon=epsilon),
                        name,
                    )
                    for lib, mode in MODEL_COLUMNS
                ]
                cells.append(" / ".join(parts))
            lines.append(
                f"| {t.name} ({result['n_stat_columns']}) | {name} | "
                + " | ".join(cells)
                + " |"
            )
    return lines


def _ms(rows):
    """Median time of the fits in ``rows`` in ms, NaN if none answered."""
    answered = [row for row in rows if len(row["errors"]) < len(row["times"])]
    times = [x for row in answered for x in row["times"]]
    return float(np.median(times)) * 1e3 if times else np.nan


def _ms_cell(rows):
    value = _ms(rows)
    if value == value:
        return f"{value:.3g}"
    return "refused" if rows and rows[0]["lib"] == "skdp" else "-"


def _ratio(numerator, denominator):
    ratio = numerator / denominator if denominator > 0 else np.nan
    return f"{ratio:.3g}" if ratio == ratio else "-"


def _warned(rows):
    counts = {}
    for row in rows:
        for name, count in row["warnings"].items():
            counts[name] = counts.get(name, 0) + count
    return ", ".join(f"{k} x{v}" for k, v in sorted(counts.items()) if v) or "none"


def times_section(results):
    lines = [
        "Median fit time per fit over all ε and seeds (ms; the non-private "
        "fit: median of 3; statistics: `np.mean`, `np.std`, `np.quantile`); "
        "warnings counted over all fits of the row.",
        "",
        "| table | estimator | scikit-learn / numpy | skdp defaults | skdp stated | "
        "skdp defaults / scikit-learn | diffprivlib defaults | diffprivlib stated | "
        "skdp warnings | diffprivlib warnings |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for result in results:
        t = result["table"]
        for key, rows in (("model", result["models"]), ("stat", result["stats"])):
            for name in dict.fromkeys(r[key] for r in rows):
                mine = [r for r in rows if r[key] == name]

                def pick(lib, mode=None, mine=mine):
                    return [
                        r
                        for r in mine
                        if r["lib"] == lib and (mode is None or r["mode"] == mode)
                    ]

                lines.append(
                    f"| {t.name} | {name} | {_ms_cell(pick('sklearn'))} | "
                    f"{_ms_cell(pick('skdp', 'default'))} | "
                    f"{_ms_cell(pick('skdp', 'stated'))} | "
                    f"{_ratio(_ms(pick('skdp', 'default')), _ms(pick('sklearn')))} | "
                    f"{_ms_cell(pick('diffprivlib', 'default'))} | "
                    f"{_ms_cell(pick('diffprivlib', 'stated'))} | "
                    f"{_warned(pick('skdp'))} | {_warned(pick('diffprivlib'))} |"
                )
    return lines


def _median(row):
    scores = np.asarray(row["scores"], dtype=float)
    return np.nan if np.all(np.isnan(scores)) else float(np.nanmedian(scores))


def _model_flags(result, epsilons):
    t, rows = result["table"], result["models"]
    flags = []
    majority = result["majority"]
    for row in rows:
        if row["lib"] != "skdp":
            continue
        where = f"{t.name} {row['model']} skdp {row['mode']} ε={row['epsilon']:g}"
        if row["errors"]:
            continue  # listed by _refusal_flags
        score = _median(row)
        if majority is not None and score < majority - 1e-9:
            flags.append(f"{where}: {score:.3f} below the majority rate {majority:.3f}")
        base = _find(rows, lib="sklearn", model=row["model"])
        if row["epsilon"] == max(epsilons) and base is not None:
            gap = score - base["scores"][0]
            limit = 0.005 if majority is not None else 0.01
            if abs(gap) > limit:
                flags.append(
                    f"{where}: {score:.3f} against scikit-learn's "
                    f"{base['scores'][0]:.3f} (difference {gap:+.3f}, "
                    f"more than {limit})"
                )
    for model, mode in dict.fromkeys(
        (r["model"], r["mode"]) for r in rows if r["lib"] == "skdp"
    ):
        medians = [
            _median(_find(rows, lib="skdp", model=model, mode=mode, epsilon=e))
            for e in sorted(epsilons)
        ]
        ordered = sorted(epsilons)
        for low, high, a, b in zip(
            ordered, ordered[1:], medians, medians[1:], strict=False
        ):
            if b < a - 0.01:
                flags.append(
                    f"{t.name} {model} skdp {mode}: worse at ε={high:g} ({b:.3f}) "
                    f"than at ε={low:g} ({a:.3f})"
                )
    return flags


def _refusal_flags(result):
    """One line per skdp estimator and mode that refused, with its ε values."""
    refused = {}
    for row in result["models"] + result["stats"]:
        if row["lib"] == "skdp" and row["errors"]:
            name = row.get("model") or row.get("stat")
            key = (name, row["mode"], row["errors"][0])
            refused.setdefault(key, []).append(f"{row['epsilon']:g}")
    return [
        f"{result['table'].name} {name} skdp {mode} refused at ε = "
        f"{', '.join(eps)}: {message}"
        for (name, mode, message), eps in refused.items()
    ]


def _collapse_flags(result, epsilons):
    """skdp means and scales whose median column error is 50 % or more."""
    flags = []
    for row in result["stats"]:
        if row["lib"] != "skdp" or row["stat"] == "quantiles":
            continue
        for name, errors in row["errors_by_stat"].items():
            if np.median(errors) >= 0.5:
                flags.append(
                    f"{result['table'].name} {name} skdp {row['mode']} "
                    f"ε={row['epsilon']:g}: median column error "
                    f"{100 * np.median(errors):.3g} %"
                )
    return flags


def _stat_flags(result, epsilons):
    t, flags = result["table"], []
    for row in result["stats"]:
        if row["lib"] != "skdp" or row["epsilon"] != max(epsilons):
            continue
        for name, errors in row["errors_by_stat"].items():
            rank = name in ("median", "quartiles")
            limit = 1.0 / row["n_rows"] if rank else 1e-3
            off = errors > limit + 1e-12
            if rank:  # the target: within 0.1 % or one rank
                off &= row["value_errors"][name] > 1e-3
            bad = np.flatnonzero(off)
            if bad.size:
                worst = bad[np.argmax(errors[bad])]
                detail = f"relative error {errors[worst]:.3g}"
                if rank:
                    detail = (
                        f"{100 * errors[worst]:.2f} rank points, relative "
                        f"error {row['value_errors'][name][worst]:.3g}"
                    )
                flags.append(
                    f"{t.name} {name} skdp {row['mode']} ε={row['epsilon']:g}: "
                    f"{bad.size} of {errors.size} columns off by more than "
                    f"{'one rank and 0.1 %' if rank else '0.1 %'} (worst: column "
                    f"{worst}, {detail})"
                )
    return flags


def flags_section(results, epsilons):
    flags = []
    for result in results:
        flags += _refusal_flags(result) + _model_flags(result, epsilons)
        flags += _collapse_flags(result, epsilons) + _stat_flags(result, epsilons)
    return [f"- {flag}" for flag in flags] or ["- none"]


def report(results, skipped, seeds, epsilons, seconds, argv):
    lines = header(results, seeds, epsilons, seconds, argv)
    lines += ["", "### Tables", "", *tables_section(results, skipped)]
    lines += ["", "### Models: held-out accuracy (R² for regression)", ""]
    lines += [
        f"Median over {len(seeds)} seeds. skdp defaults: ε and `classes` only; "
        "stated ranges: the true column ranges (bounds, data_norm, target "
        f"bounds). {DPL_NOTE}.",
        "",
    ]
    lines += models_section(results, epsilons)
    lines += ["", "### Statistics", "", *stats_section(results, epsilons)]
    lines += ["", "### Fit times and warnings", "", *times_section(results)]
    lines += [
        "",
        "### Flags (skdp: refusals, below the majority rate, worse at a higher "
        "ε, off the non-private value at the largest ε)",
        "",
    ]
    lines += flags_section(results, epsilons)
    return "\n".join(lines) + "\n"


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def dump_json(path, results):
    out = []
    for result in results:
        t = result["table"]
        item = {k: v for k, v in result.items() if k != "table"}
        item["table"] = {"name": t.name, "task": t.task, "shape": list(t.shape)}
        out.append(_jsonable(item))
    Path(path).write_text(json.dumps(out))


def summary_records(results, epsilons, repeats):
    """``run_all.py`` records (``_summary.record``): per table and skdp model,
    at its defaults (with stated ranges where the defaults refuse), the
    consistency at the largest ε and whether the score ever drops as ε grows."""
    from _summary import record, verdict

    records = []
    for result in results:
        t, rows = result["table"], result["models"]
        for model in dict.fromkeys(r["model"] for r in rows if r["lib"] == "skdp"):
            mode = "default"
            top = _find(rows, lib="skdp", model=model, mode=mode, epsilon=max(epsilons))
            if top["errors"]:
                mode = "stated"
                top = _find(
                    rows, lib="skdp", model=model, mode=mode, epsilon=max(epsilons)
                )
            base = _find(rows, lib="sklearn", model=model)["scores"][0]
            limit = 0.005 if t.task == "classification" else 0.01
            gap = _median(top) - base
            detail = f"{t.name} {t.shape[0]} x {t.shape[1]}, skdp {mode}"
            records.append(
                record(
                    "real tables",
                    f"{model} at ε = {max(epsilons):g} within {limit} of scikit-learn",
                    gap,
                    "score difference",
                    verdict(abs(gap) <= limit),
                    detail,
                    repeats,
                )
            )
            scores = [
                _median(_find(rows, lib="skdp", model=model, mode=mode, epsilon=e))
                for e in sorted(epsilons)
            ]
            drops = -np.diff(scores)
            finite = drops[np.isfinite(drops)]
            drop = float(finite.max()) if finite.size else float("nan")
            records.append(
                record(
                    "real tables",
                    f"{model}: no worse as ε grows (largest drop ≤ 0.01)",
                    drop,
                    "score drop",
                    verdict(bool(drop <= 0.01)),
                    detail,
                    repeats,
                )
            )
    return records
