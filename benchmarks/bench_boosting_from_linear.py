"""Private boosting started from a private logistic model's scores (an experiment).

**Hypothesis.** Adult is nearly linear in its one-hot features, so boosting
from a constant spends most of its budget relearning the linear part. Like
scikit-learn's ``GradientBoostingClassifier(init=...)``, start the raw
scores at a private logistic model's ``decision_function`` and let the
trees boost only the residual: at the same total ε, does the pair beat
``PrivateLogisticRegression`` alone?

**What runs (no package change).** For each table and total ε:

* ``PrivateLogisticRegression`` alone at ε (skdp's defaults, the public
  ``classes`` stated, δ = 1e-6);
* for each ``(share, setting)`` of :data:`SETTINGS`: the logistic model at
  ``share * ε`` and δ/2, then ``PrivateHistGradientBoostingClassifier``
  with ``setting`` at ``(1 - share) * ε`` and δ/2, whose raw scores start at
  the logistic model's decision values on the same rows, clipped to
  ``[-CLIP, CLIP]`` (a public rule on a post-processed release). Both are
  (ε, δ)-DP fits of the same rows, so the pair is ``(ε, δ)``-DP by
  sequential composition. The logistic part alone is scored too.

The boosting prototype is :class:`StartedBoosting`, a subclass that wraps
the fit's loss (:class:`StartedLoss`: gradients taken at the start plus the
trees' scores; a zero baseline, whose release is still drawn, so the
prototype wastes the baseline's 2 % of the boosting's share) and adds the
start when it predicts. It reads a private attribute of the estimator
(``_boost``'s loss argument) and is a measuring device, not an API.

Data, split and scores as ``bench_tree_models.py`` (Adult one-hot, 5
numerics unscaled; ``train_test_split(test_size=0.25, random_state=0,
stratify=y)``; held-out accuracy / ROC AUC, median over seeds; the seed
range, max - min, beside). A seed ``s`` draws the logistic model's and the
boosting's seeds from ``SeedSequence(s).spawn(2)``.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_boosting_from_linear.py [--quick] \\
        [--seeds 5] [--epsilons 0.3,1,3] [--tables Adult,TV16,Default] \\
        [--out FILE.md]

``--quick``: 2 seeds, ε = 1, Adult, two settings. The markdown report is
printed and written to ``benchmarks/results/boosting_from_linear_scores.md``
(``..._quick.md`` with ``--quick``) unless ``--out`` says where.
"""

import argparse
import datetime
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _real_report import _skdp_origin
from bench_tree_models import load, scores, split

from skdp import BudgetAccountant
from skdp.ensemble import PrivateHistGradientBoostingClassifier
from skdp.linear_model import PrivateLogisticRegression

HERE = Path(__file__).resolve().parent
DELTA = 1e-6
NEGLIGIBLE = 1e6
#: The public clip of the start scores (log-odds).
CLIP = 8.0
#: ``(share of ε for the logistic model, boosting setting)``.
SETTINGS = (
    (0.5, {"boosting": "trees", "max_iter": 10, "max_depth": 2, "learning_rate": 0.5}),
    (0.7, {"boosting": "trees", "max_iter": 5, "max_depth": 2, "learning_rate": 0.5}),
    (0.7, {"boosting": "trees", "max_iter": 3, "max_depth": 3, "learning_rate": 0.5}),
    (
        0.3,
        {
            "boosting": "trees",
            "max_iter": 5,
            "max_depth": 2,
            "learning_rate": 0.5,
            "max_bins": 32,
        },
    ),
    (0.5, {"boosting": "cyclic", "max_iter": 1, "max_bins": 32}),
    (0.3, {"boosting": "cyclic", "max_iter": 2, "max_bins": 32}),
)
#: With noise made negligible: the headroom the trees have over the
#: logistic model on these bins.
CEILING = (
    0.5,
    {
        "boosting": "trees",  # else "auto" at ε = 1e6: learning rate 0.1
        "max_iter": 30,
        "max_depth": 3,
        "max_bins": 32,
        "max_features": 1.0,
    },
)


class StartedLoss:
    """A boosting loss whose gradients are taken at ``start + raw``.

    ``raw`` holds the trees' scores only; the baseline is 0 (the trees
    start where ``start`` is). ``start`` is public to the boosting fit: a
    clipped function of an earlier private release.
    """

    def __init__(self, loss, start):
        self.loss, self.start = loss, start
        self.g_max, self.h_max = loss.g_max, loss.h_max
        self.n_trees_per_iteration = loss.n_trees_per_iteration
        self.baseline_sensitivity = loss.baseline_sensitivity

    def gradients(self, raw, target):
        return self.loss.gradients(raw + self.start, target)

    def baseline_sums(self, target, n_outputs):
        return self.loss.baseline_sums(target, n_outputs)

    def baseline(self, sums):
        return np.zeros(self.n_trees_per_iteration)


class StartedBoosting(PrivateHistGradientBoostingClassifier):
    """The boosting classifier, its raw scores started at a fitted model's
    clipped ``decision_function`` (``start_model``, set before ``fit``)."""

    start_model = None

    def _start(self, X):
        scores = self.start_model.decision_function(np.asarray(X, dtype=float))
        return np.clip(scores, -CLIP, CLIP)[:, None]

    def fit(self, X, y):
        self._fit_start = self._start(X)
        try:
            return super().fit(X, y)
        finally:
            del self._fit_start

    def _boost(self, binned, target, loss, multipliers, source):
        start = self._fit_start
        if start.shape[0] != binned.shape[0]:  # stated classes keep every row
            raise RuntimeError("the boosting dropped rows: no start for them")
        loss = StartedLoss(loss, start)
        return super()._boost(binned, target, loss, multipliers, source)

    def _raw_stages(self, X, copy=True):
        start = self._start(X)
        for raw in super()._raw_stages(X, copy=True):
            yield raw + start


def _accountant():
    return BudgetAccountant(epsilon=np.inf, delta=1.0)


def logistic(epsilon, delta, classes, seed):
    return PrivateLogisticRegression(
        epsilon=epsilon,
        delta=delta,
        classes=classes,
        random_state=seed,
        accountant=_accountant(),
    )


def pair(epsilon, share, setting, classes, seed, data):
    """The logistic model at ``share * epsilon`` and the boosting started
    from it at the rest; returns (pair, logistic part), fitted."""
    X_tr, _, y_tr, _ = data
    lr_seed, boost_seed = (
        int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(2)
    )
    start = logistic(share * epsilon, DELTA / 2, classes, lr_seed).fit(X_tr, y_tr)
    boosting = StartedBoosting(
        epsilon=(1 - share) * epsilon,
        delta=DELTA / 2,
        classes=classes,
        random_state=boost_seed,
        accountant=_accountant(),
        **setting,
    )
    boosting.start_model = start
    return boosting.fit(X_tr, y_tr), start


def summary(values):
    a = np.asarray(values)
    return {
        "median": np.median(a, axis=0).tolist(),
        "range": (a.max(axis=0) - a.min(axis=0)).tolist(),
    }


def measure(data, classes, epsilon, settings, seeds):
    """Per row label: the medians and ranges of accuracy and AUC."""
    X_tr, X_te, y_tr, y_te = data

    def acc_auc(model):
        s = scores(model, X_te, y_te)
        return s["accuracy"], s["auc"]

    rows = {}
    alone = [logistic(epsilon, DELTA, classes, s).fit(X_tr, y_tr) for s in seeds]
    rows["PrivateLogisticRegression alone"] = summary([acc_auc(m) for m in alone])
    for share, setting in settings:
        both, part = [], []
        for seed in seeds:
            model, start = pair(epsilon, share, setting, classes, seed, data)
            both.append(acc_auc(model))
            part.append(acc_auc(start))
        label = f"logistic {share:g} + boosting {json.dumps(setting)}"
        rows[label] = {**summary(both), "part": summary(part)}
    return rows


def _cell(row):
    (acc, auc), (r_acc, r_auc) = row["median"], row["range"]
    return f"{acc:.4f} / {auc:.4f} (±{r_acc:.4f} / {r_auc:.4f})"


def report(results, args, elapsed):
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    origin = _skdp_origin()
    lines = [
        "# Private boosting started from a private logistic model's scores",
        "",
        f"Command: `PYTHONPATH=... python {' '.join(sys.argv)}`; {now}; "
        f"wall time {elapsed:.0f} s; seeds {list(args.seeds)}; δ = {DELTA:g} "
        "(halved between the two fits of a pair); skdp at "
        f"{origin}.",
        "",
        "Held-out accuracy / ROC AUC, median over seeds (in brackets the "
        "seed range, max - min). A pair's share is the logistic model's "
        "share of the total ε; its logistic part alone is the last column.",
    ]
    for table, by_eps in results.items():
        lines += ["", f"## {table}", ""]
        for eps, rows in by_eps.items():
            lines += [f"### total ε = {eps:g}", ""]
            lines += ["| model | pair | its logistic part alone |", "|---|---|---|"]
            for label, row in rows.items():
                part = _cell(row["part"]) if "part" in row else ""
                lines.append(f"| {label} | {_cell(row)} | {part} |")
            lines.append("")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epsilons", default="0.3,1,3")
    parser.add_argument("--tables", default="Adult,TV16,Default")
    parser.add_argument("--no-ceiling", action="store_true")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    epsilons = [float(e) for e in args.epsilons.split(",")]
    names, settings = args.tables.split(","), SETTINGS
    if args.quick:
        args.seeds, epsilons, names, settings = 2, [1.0], ["Adult"], SETTINGS[:2]
    args.seeds = range(args.seeds)
    start = time.perf_counter()
    tables, skipped = load(names)
    for note in skipped:
        print(note)
    results = {}
    with warnings.catch_warnings():
        # the logistic model's NoiseDominatedWarning for rare one-hot columns
        warnings.simplefilter("ignore")
        for table in tables:
            data = split(table)
            results[table.name] = {}
            for eps in epsilons:
                rows = measure(data, table.classes, eps, settings, args.seeds)
                results[table.name][eps] = rows
                print(table.name, eps, json.dumps(rows), flush=True)
            if table.name == "Adult" and not args.no_ceiling and not args.quick:
                rows = measure(data, table.classes, NEGLIGIBLE, [CEILING], args.seeds)
                results[table.name][NEGLIGIBLE] = rows
    text = report(results, args, time.perf_counter() - start)
    print(text)
    name = "boosting_from_linear_scores" + ("_quick" if args.quick else "")
    out = Path(args.out) if args.out else HERE / "results" / f"{name}.md"
    out.write_text(text + "\n")


if __name__ == "__main__":
    main()
