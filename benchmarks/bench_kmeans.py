"""Private k-means against scikit-learn's KMeans and diffprivlib's KMeans.

Synthetic blobs (10**5 rows, 10 features, 5 clusters, public bounds
(-15, 15): make_blobs' centre box (-10, 10) plus five standard deviations)
and two real tables (digits, pixel range 0-16 from its schema; Bikeshare,
its column ranges as a careful user would state them). For each: the
k-means cost of the private centres over the cost of scikit-learn's KMeans
(n_init=10) on the same data, its excess (ratio - 1), and the adjusted Rand
index of the private clustering against the non-private one. diffprivlib
0.6.6 runs in its own virtual environment (``--dpl-python``; ``_dpl.py``)
with the same bounds and epsilon; its KMeans is pure epsilon-DP, skdp's is
(epsilon, 1e-6)-DP.

Run: ``python benchmarks/bench_kmeans.py`` (5 seeds; ``--quick``: 2 seeds
and blobs only).
"""

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score, pairwise_distances_argmin_min

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _dpl import run_dpl_task
from _real_tables import load_tables, stated_ranges

import skdp

DPL_SCRIPT = r"""
import json, sys, warnings
import numpy as np
from diffprivlib.models import KMeans
task = json.load(sys.stdin)
X = np.load(task["npy"])
out = []
for eps in task["epsilons"]:
    fits = []
    for seed in task["seeds"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            km = KMeans(task["k"], epsilon=eps, bounds=(task["lower"], task["upper"]),
                        random_state=seed).fit(X)
        fits.append(km.cluster_centers_.tolist())
    out.append(fits)
print(json.dumps(out))
"""


def cost(X, centres):
    return float((pairwise_distances_argmin_min(X, centres)[1] ** 2).sum())


def datasets(quick):
    X, _ = make_blobs(100_000, n_features=10, centers=5, random_state=0)
    yield "blobs 1e5 x 10", X, 5, np.full(10, -15.0), np.full(10, 15.0)
    if quick:
        return
    tables, skipped = load_tables(["digits", "Bikeshare"])
    for note in skipped:
        print(note)
    for table, k in zip(tables, (10, 4), strict=True):
        lower, upper = (np.asarray(b, float) for b in stated_ranges(table))
        yield table.name, table.X.astype(float), k, lower, upper


def dpl_centres(python, X, k, lower, upper, epsilons, seeds):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "X.npy"
        np.save(path, X)
        task = {
            "npy": str(path),
            "k": k,
            "lower": lower.tolist(),
            "upper": upper.tolist(),
            "epsilons": list(epsilons),
            "seeds": list(seeds),
        }
        answer = run_dpl_task(python, task, script=DPL_SCRIPT)
    if answer is None:
        return None
    return [[np.array(c) for c in fits] for fits in answer]


def summary(X, fits, reference_cost, reference_labels):
    ratios = [cost(X, c) / reference_cost for c in fits]
    aris = [
        adjusted_rand_score(reference_labels, pairwise_distances_argmin_min(X, c)[0])
        for c in fits
    ]
    return float(np.median(ratios)), float(np.max(ratios)), float(np.median(aris))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds, blobs only")
    parser.add_argument("--no-dpl", action="store_true")
    parser.add_argument("--dpl-python", default="/work/dplvenv/bin/python")
    parser.add_argument("--epsilons", default="1.0")
    args = parser.parse_args()
    seeds = range(2 if args.quick else 5)
    epsilons = [float(e) for e in args.epsilons.split(",")]
    print(f"skdp from {skdp.__file__}")
    print(
        "| data | k | ε | skdp cost ratio (median, max) | skdp ARI "
        "| dpl cost ratio (median, max) | dpl ARI | excess skdp / dpl |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, X, k, lower, upper in datasets(args.quick):
        reference = KMeans(k, n_init=10, random_state=0).fit(X)
        ref_cost, ref_labels = -reference.score(X), reference.labels_
        dpl = None
        if not args.no_dpl:
            dpl = dpl_centres(args.dpl_python, X, k, lower, upper, epsilons, seeds)
        for i, eps in enumerate(epsilons):
            fits = [
                skdp.PrivateKMeans(
                    k, epsilon=eps, bounds=(lower, upper), random_state=seed
                )
                .fit(X)
                .cluster_centers_
                for seed in seeds
            ]
            ours = summary(X, fits, ref_cost, ref_labels)
            row = f"| {name} | {k} | {eps:g} | {ours[0]:.4f}, {ours[1]:.4f} | "
            row += f"{ours[2]:.3f} | "
            if dpl is None:
                row += "– | – | – |"
            else:
                theirs = summary(X, dpl[i], ref_cost, ref_labels)
                share = (ours[0] - 1) / (theirs[0] - 1)
                row += f"{theirs[0]:.4f}, {theirs[1]:.4f} | {theirs[2]:.3f} | "
                row += f"{share:.3f} |"
            print(row, flush=True)


if __name__ == "__main__":
    main()
