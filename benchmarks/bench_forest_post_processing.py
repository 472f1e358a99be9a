"""How a private forest's released leaf counts become predictions.

``PrivateRandomForestClassifier`` releases its trees' leaf class counts once;
everything after (leaf probabilities, how the trees are combined) is
post-processing and free. This benchmark fits each forest once per table,
ε and seed, keeps the released counts and the test rows' leaves, and scores
several public rules on the same release (held-out accuracy / ROC AUC,
median over seeds; the split and tables of ``bench_tree_models.py``, both
with private bounds, "default", and with the stated ranges; breast cancer
with its stated ranges as in ``bench_random_forest.py``, with more seeds):

* the trees' leaf probabilities averaged alike, each node shrunk towards its
  parent with ``noise_std`` rows (skdp's rule before 2026-11-27), with
  ``noise_std / n_estimators`` rows, or with none;
* a vote of the trees' noisy majority labels (each tree's argmax of its
  reached leaf's released counts; diffprivlib's forest votes);
* the trees weighted by the Gini impurity decrease of their released counts
  (the default since 2026-11-27), with ``noise_std / n_estimators`` or
  ``noise_std`` rows of shrinkage, or by the gain in training accuracy of
  their released counts over the majority class.

Usage::

    python benchmarks/bench_forest_post_processing.py [--seeds 5] \\
        [--bc-seeds 150] [--tables Adult TV16 ...] [--out FILE.md]
"""

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _real_tables import LOADERS, stated_ranges
from bench_tree_models import TABLES, load

from skdp import BudgetAccountant
from skdp.ensemble import PrivateRandomForestClassifier
from skdp.tree._leaf_counts import leaf_probabilities, tree_weights
from skdp.tree._random_tree import leaf_indices

EPSILONS = (0.3, 1.0, 3.0)


def _reached(per_leaf, leaves):
    """``(n_trees, n_leaves, k)`` values at each test row's leaf:
    ``(n_trees, n_test, k)``."""
    return per_leaf[np.arange(per_leaf.shape[0])[:, None], leaves]


def _mean(shrink, weights=None):
    """Trees' shrunk leaf probabilities, averaged with ``weights(counts)``
    (None: alike); ``shrink(noise_std, n_trees)`` is the shrinkage weight."""

    def rule(fit):
        counts, std, leaves = fit["counts"], fit["std"], fit["leaves"]
        n_trees = counts.shape[0]
        proba = _reached(leaf_probabilities(counts, shrink(std, n_trees)), leaves)
        w = np.full(n_trees, 1 / n_trees) if weights is None else weights(counts)
        return np.tensordot(w, proba, axes=1)

    return rule


def _vote(fit):
    labels = _reached(fit["counts"], fit["leaves"]).argmax(axis=-1)
    return np.eye(fit["counts"].shape[-1])[labels].mean(axis=0)


def _accuracy_gain_weights(counts):
    """Each tree's training accuracy read from its clipped counts, minus
    the majority class's share; alike when none gains."""
    clipped = np.maximum(counts, 0.0)
    mass = np.maximum(clipped.sum(axis=(1, 2)), 1e-300)
    accuracy = clipped.max(axis=-1).sum(axis=-1) / mass
    gain = np.maximum(accuracy - clipped.sum(axis=1).max(axis=-1) / mass, 0.0)
    n_trees = counts.shape[0]
    return gain / gain.sum() if gain.sum() > 0 else np.full(n_trees, 1 / n_trees)


RULES = {
    "alike, shrinkage noise_std (before)": _mean(lambda s, t: s),
    "alike, shrinkage noise_std / n_estimators": _mean(lambda s, t: s / t),
    "alike, no shrinkage": _mean(lambda s, t: 0.0),
    "vote of noisy majority labels": _vote,
    "Gini-decrease weights, noise_std / n_estimators (default)": _mean(
        lambda s, t: s / t, tree_weights
    ),
    "Gini-decrease weights, noise_std": _mean(lambda s, t: s, tree_weights),
    "accuracy-gain weights, noise_std / n_estimators": _mean(
        lambda s, t: s / t, _accuracy_gain_weights
    ),
}


def releases(X, y, params, seeds):
    """One fit per ε and seed: its released counts, noise std and the test
    rows' leaves."""
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=0.25, random_state=0, stratify=y
    )
    classes = np.unique(y).tolist()
    codes = np.searchsorted(classes, y_te)
    fits = {}
    for eps in EPSILONS:
        for seed in seeds:
            forest = PrivateRandomForestClassifier(
                epsilon=eps,
                classes=classes,
                random_state=seed,
                accountant=BudgetAccountant(delta=1.0),
                **params,
            ).fit(X_tr, y_tr)
            leaves = leaf_indices(
                np.asarray(X_te, float), forest._features, forest._thresholds
            )
            fits[eps, seed] = {
                "counts": forest.leaf_counts_,
                "std": forest.noise_std_,
                "leaves": leaves,
                "y": codes,
            }
    return fits


def score_rules(fits, seeds):
    rows = {}
    for name, rule in RULES.items():
        cells = []
        for eps in EPSILONS:
            acc, auc = [], []
            for seed in seeds:
                fit = fits[eps, seed]
                proba = rule(fit)
                acc.append(np.mean(proba.argmax(axis=1) == fit["y"]))
                auc.append(roc_auc_score(fit["y"], proba[:, 1]))
            cells.append(f"{statistics.median(acc):.4f} / {statistics.median(auc):.4f}")
        rows[name] = cells
    return rows


def tables(names, bc):
    if bc:
        table = LOADERS["breast_cancer"]()
        yield (
            "breast_cancer, stated ranges",
            table.X,
            table.y,
            {"bounds": stated_ranges(table)},
            True,
        )
    found, _ = load(names)
    for table in found:
        yield f"{table.name}, default", table.X, table.y, {}, False
        stated = {"bounds": stated_ranges(table)}
        yield f"{table.name}, stated ranges", table.X, table.y, stated, False


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--bc-seeds", type=int, default=150)
    parser.add_argument("--tables", nargs="*", default=list(TABLES))
    parser.add_argument("--no-breast-cancer", action="store_true")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    lines = ["Held-out accuracy / ROC AUC, median over seeds; 10 trees of depth 5."]
    header = "| rule | " + " | ".join(f"ε = {e:g}" for e in EPSILONS) + " |"
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # private bounds' noise warnings
        for name, X, y, params, many in tables(args.tables, not args.no_breast_cancer):
            seeds = range(args.bc_seeds if many else args.seeds)
            rows = score_rules(releases(X, y, params, seeds), seeds)
            block = [f"\n### {name} ({len(seeds)} seeds)\n", header]
            block.append("|---" * (len(EPSILONS) + 1) + "|")
            block += [f"| {r} | " + " | ".join(c) + " |" for r, c in rows.items()]
            lines += block
            print("\n".join(block), flush=True)
    lines.append(f"\n({time.perf_counter() - start:.0f} s)")
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
