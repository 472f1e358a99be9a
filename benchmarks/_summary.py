"""Key figures of a benchmark as JSON, for ``run_all.py`` (``--summary-json``).

Every bench script that takes ``--summary-json PATH`` collects records with
:func:`record` and writes them with :func:`write`. A record is one figure a
target is about, under the topic it belongs to::

    {"topic": "private bounds", "target": "PrivateMean within 5x of np.clip().mean()",
     "measured": 1.75, "unit": "ratio", "verdict": "met",
     "detail": "normal(0, 1), 10^7 rows", "repeats": "best of 5"}

``verdict`` is "met", "missed" or "info" (a figure without a target, or one
given for comparison). ``repeats`` says how many repeats (and rows) the
figure rests on.
"""

import json


def record(topic, target, measured, unit, verdict, detail="", repeats=""):
    if verdict not in ("met", "missed", "info"):
        raise ValueError(f"verdict must be met, missed or info, not {verdict!r}")
    if isinstance(measured, float):
        measured = float(f"{measured:.4g}")
    return {
        "topic": topic,
        "target": target,
        "measured": measured,
        "unit": unit,
        "verdict": verdict,
        "detail": detail,
        "repeats": repeats,
    }


def verdict(ok):
    return "met" if ok else "missed"


def write(path, records):
    if path:
        with open(path, "w") as handle:
            json.dump(records, handle, indent=1)
