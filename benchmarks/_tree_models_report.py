"""The markdown report of ``bench_tree_models.py``: tables, targets, facts."""

import numpy as np

BOOST = "skdp PrivateHistGradientBoostingClassifier"
FOREST = "skdp PrivateRandomForestClassifier"
DPL_FOREST = "diffprivlib RandomForestClassifier"
HGB = "HistGradientBoostingClassifier()"
NEGLIGIBLE = 1e6


def ebm_rows(answer, prefix):
    """Rows of a runner's answer (``{"answers": [...]}`` of ``{"rows"}``)."""
    rows = []
    for one in answer["answers"]:
        for row in one["rows"]:
            rows.append(
                {
                    "model": f"{prefix} ({row['mode']})",
                    "epsilon": row["epsilon"],
                    "accuracy": row["scores"].get("accuracy", []),
                    "auc": row["scores"].get("auc", []),
                    "predicted_positive": row["scores"].get("predicted_positive", []),
                    "times": row["times"],
                    "errors": row["errors"],
                    "warnings": row.get("warnings", {}),
                    "leaks": row.get("leaks"),
                }
            )
    return rows


def median(values):
    return float(np.median(values)) if len(values) else float("nan")


def cell(row):
    if row is None:
        return ""
    if not row["accuracy"]:
        return f"error: {row['errors'][0][:70]}" if row["errors"] else "-"
    text = f"{median(row['accuracy']):.4f} / {median(row['auc']):.4f}"
    if row["errors"]:
        text += f" ({len(row['errors'])} failed)"
    return text


def find(rows, model, epsilon):
    for row in rows:
        if row["model"] == model and row["epsilon"] == epsilon:
            return row
    return None


def table_section(result, epsilons):
    table, rows = result["table"], result["rows"]
    n, d = result["shape"]
    lines = [
        f"### {table.name} ({n:,} x {d}, {100 * result['positive']:.0f} % positive)",
        "",
        f"{table.source}; {table.note}".strip("; "),
        "",
        "Held-out accuracy / ROC AUC, median over seeds."
        + "".join(
            f" {name} figures from the cache (computed {result[key]})."
            for key, name in (("ebm_cached", "DP-EBM"), ("dpl_cached", "diffprivlib"))
            if result.get(key)
        ),
        "",
        "| model | "
        + " | ".join(f"ε = {e:g}" for e in epsilons)
        + " | noise negligible (ε = 10^6) | non-private | fit s (median) "
        f"| predicted positive at ε = 1 (true {100 * result['positive']:.1f} %) |",
        "|---|" + "---|" * (len(epsilons) + 4),
    ]
    models = list(dict.fromkeys(row["model"] for row in rows))
    for model in models:
        fixed = find(rows, model, None)
        cells = [cell(find(rows, model, e)) if fixed is None else "" for e in epsilons]
        negligible = cell(find(rows, model, NEGLIGIBLE))
        times = [t for row in rows if row["model"] == model for t in row["times"]]
        at_one = fixed or find(rows, model, 1.0)
        positive = median(at_one.get("predicted_positive", [])) if at_one else np.nan
        lines.append(
            f"| {model} | "
            + " | ".join(cells)
            + f" | {negligible} | {cell(fixed)} | {median(times):.2f} "
            f"| {100 * positive:.1f} % |"
        )
    same = result.get("same_bins")
    if same is not None:
        blank = " | ".join("" for _ in epsilons)
        lines.append(
            f"| HistGradientBoostingClassifier on skdp's bins, same trees | {blank} "
            f"| {cell(same)} | | | |"
        )
        if "params" in same:
            lines += ["", f"Same-bins HGB parameters: `{same['params']}`."]
    return lines


def warnings_section(results):
    lines = ["", "### What DP-EBM and diffprivlib read from the data", ""]
    seen = {}
    for result in results:
        for row in result["rows"]:
            for message in row.get("warnings") or {}:
                seen.setdefault(row["model"], set()).add(message)
            if row.get("leaks"):
                key = f"{row['model']}: PrivacyLeakWarning per fit"
                seen.setdefault(key, set()).add(
                    str(row["leaks"] // max(len(row["times"]), 1))
                )
    for model, messages in seen.items():
        for message in sorted(messages):
            lines.append(f"- {model}: {message}")
    return lines


def boosting_target_rows(results):
    """``(table result, model name, label)`` of the boosting rows the issue's
    Adult targets are read from: the defaults (cyclic boosting below
    ε = 1000) and the trees option, on Adult one-hot and on Adult codes
    (the encoding trees take)."""
    out = []
    for result in results:
        if result["table"].name not in ("Adult", "Adult codes"):
            continue
        names = {row["model"] for row in result["rows"]}
        out.append((result, BOOST, "boosting (defaults)"))
        trees = sorted(n for n in names if n.startswith(f"{BOOST} (trees"))
        out += [(result, name, "boosting (trees option)") for name in trees]
    return out


def targets_section(results):
    adult = next((r for r in results if r["table"].name == "Adult"), None)
    if adult is None:
        return []
    rows = adult["rows"]
    lines = [
        "",
        "### Targets on Adult",
        "",
        "| target | measured | verdict |",
        "|---|---|---|",
    ]

    def add(target, measured, ok):
        verdict = "-" if ok is None else ("met" if ok else "MISSED")
        lines.append(f"| {target} | {measured} | {verdict} |")

    for table, model, label in boosting_target_rows(results):
        for epsilon, acc, auc in ((1.0, 0.840, 0.890), (0.3, 0.830, None)):
            what = f"{label} on {table['table'].name}"
            row = find(table["rows"], model, epsilon)
            if row is None or not row["accuracy"]:
                add(f"{what}: accuracy ≥ {acc} at ε = {epsilon:g}", "not run", None)
                continue
            a = median(row["accuracy"])
            add(f"{what}: accuracy ≥ {acc} at ε = {epsilon:g}", f"{a:.4f}", a >= acc)
            if auc is not None:
                u = median(row["auc"])
                add(f"{what}: ROC AUC ≥ {auc} at ε = {epsilon:g}", f"{u:.4f}", u >= auc)
    row, same = find(rows, BOOST, NEGLIGIBLE), adult.get("same_bins")
    if row and row["accuracy"] and same and same["accuracy"]:
        gap = 100 * (median(same["accuracy"]) - median(row["accuracy"]))
        add(
            "noise negligible: within 0.5 points of HGB on the same bins",
            f"{gap:+.2f} points",
            gap <= 0.5,
        )
    for mode, ours_name in (("default", FOREST), ("stated", f"{FOREST} (stated)")):
        for epsilon in (0.3, 1.0, 3.0):
            ours = find(rows, ours_name, epsilon)
            theirs = find(rows, f"{DPL_FOREST} ({mode})", epsilon)
            if not (ours and ours["accuracy"] and theirs and theirs["accuracy"]):
                continue
            a, b = median(ours["accuracy"]), median(theirs["accuracy"])
            add(
                f"forest ≥ diffprivlib's at ε = {epsilon:g}, {mode} ranges",
                f"{a:.4f} vs {b:.4f}",
                a >= b,
            )
    return lines


def speed_section(timing):
    lines = ["", "### Fit time and peak extra memory", ""]
    # rows: (model, threads) as in bench_tree_models.speed
    if timing is None:
        return [*lines, "Not run (`--no-speed` or `--models anchors`)."]
    if "note" in timing:
        return [*lines, f"Skipped: {timing['note']}."]
    n = timing["n"]
    lines += [
        f"`make_classification({n:,}, 20, random_state=0)`; each fit in a fresh "
        "child process; time: best of the alternated fits; memory: the "
        "resident set's high-water mark during the fit (reset before it, "
        "`/proc/self/clear_refs`) minus the resident set before it, in copies "
        "of X (X.nbytes), the largest over the fits.",
        "",
        "| model | threads | parameters | fit s | ratio to HGB "
        "| peak extra memory (copies of X) |",
        "|---|---|---|---|---|---|",
    ]
    base = {}
    for spec, res in zip(timing["specs"], timing["results"], strict=True):
        threads = spec.get("threads") or "default"
        name = "HistGradientBoostingClassifier" if spec["model"] == "hgb" else BOOST
        params = {k: v for k, v in spec["params"].items() if k != "accountant"}
        if "error" in res:
            lines.append(
                f"| {name} | {threads} | `{params}` | error: {res['error']} | | |"
            )
            continue
        if spec["model"] == "hgb":
            base[threads] = res["seconds"]
        ratio = res["seconds"] / base[threads] if threads in base else float("nan")
        lines.append(
            f"| {name} | {threads} | `{params}` | {res['seconds']:.2f} "
            f"| {ratio:.2f} | {res['copies']:.2f} |"
        )
    return lines


def report(results, timing, notes, facts):
    load = " / ".join(f"{x:.2f}" for x in facts["load"])
    lines = [
        f"Command: `PYTHONPATH=... {facts['command']}`; {facts['when']}; wall time "
        f"{facts['seconds']:.0f} s; seeds {facts['seeds']}; δ = 1e-6.",
        "",
        f"skdp {facts['skdp']}; Python {facts['python']}; {facts['cpus']} CPUs, "
        f"load average at the end {load}.",
    ]
    for key, name in (("ebm_versions", "InterpretML"), ("dpl_versions", "diffprivlib")):
        versions = next((r[key] for r in results if key in r), None)
        if versions:
            lines.append(f"{name} venv: {versions}.")
    lines += [f"- {note}" for note in notes]
    for result in results:
        lines += ["", *table_section(result, facts["epsilons"])]
    lines += targets_section(results)
    lines += warnings_section(results)
    lines += speed_section(timing)
    return "\n".join(lines) + "\n"
