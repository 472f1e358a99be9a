"""
Three private medians: PTR, exponential mechanism, smooth sensitivity
=====================================================================

skdp has three ways to release a median, and none is best everywhere:

* :class:`skdp.PTRMedian` (propose-test-release) tests privately that the
  median is stable under the public proposal ``b`` for its sensitivity, then
  adds Laplace noise of scale ``b / (ε/2)``; if the test fails the median is
  refused (NaN).
* :class:`skdp.PrivateQuantile` at level 0.5 samples a value by the
  exponential mechanism over the gaps between sorted values (Smith 2011).
* :class:`skdp.SmoothSensitivityMedian` adds noise scaled to the smooth
  sensitivity of the data: no proposal, no refusal.

We compare them on the same survey-like scores between 1 and 7, once recorded
as continuous values and once rounded to whole numbers (heavily tied).
"""

# %%
# Data and repeated releases
# --------------------------
# The bounds [1, 7] are public (the scale of the answers), and so are the PTR
# proposals: 0.01 and 0.1 are guesses made without looking at the data.
#
# Fixed seeds make this page reproducible, and therefore not private: real
# analyses leave ``random_state=None``.
import warnings

import matplotlib.pyplot as plt
import numpy as np

from skdp import PrivateQuantile, PTRMedian, PTRRefusedWarning, SmoothSensitivityMedian

rng = np.random.default_rng(0)
continuous = np.clip(rng.normal(4.3, 1.4, size=(5_000, 1)), 1, 7)
datasets = {
    "tied: whole numbers 1 to 7": np.round(continuous),
    "continuous": continuous,
}
bounds = (1, 7)
delta = 1e-6
epsilons = np.geomspace(0.05, 2, 5)
n_runs = 25
proposals = [0.01, 0.1]

methods = {
    "exponential mechanism": lambda eps, seed: PrivateQuantile(
        0.5, epsilon=eps, bounds=bounds, random_state=seed
    ),
    "smooth sensitivity": lambda eps, seed: SmoothSensitivityMedian(
        eps, delta, bounds=bounds, random_state=seed
    ),
}
for b in proposals:
    methods[f"PTR, b = {b}"] = lambda eps, seed, b=b: PTRMedian(
        eps, delta, bounds=bounds, proposed_sensitivity=b, random_state=seed
    )


def release(estimator, X):
    estimator.fit(X)
    if isinstance(estimator, PrivateQuantile):
        return estimator.quantiles_[0, 0]
    return estimator.median_[0]


# errors[data][method] is an (n_epsilons, n_runs) array, NaN where PTR refused
errors = {}
with warnings.catch_warnings():
    warnings.simplefilter("ignore", PTRRefusedWarning)  # refusals are counted
    for name, X in datasets.items():
        lower_median = np.sort(X[:, 0])[int(np.ceil(len(X) / 2)) - 1]
        errors[name] = {
            method: np.array(
                [
                    [
                        abs(release(make(eps, seed), X) - lower_median)
                        for seed in range(n_runs)
                    ]
                    for eps in epsilons
                ]
            )
            for method, make in methods.items()
        }

# %%
# Error and refusals
# ------------------
# Top: the median absolute error over the runs that released a value. Bottom:
# how often PTR refused (the two other methods never refuse).
fig, axes = plt.subplots(
    2, 2, sharex=True, sharey="row", figsize=(9, 5.5), height_ratios=[3, 1]
)
styles = {
    "exponential mechanism": dict(marker="o", color="tab:blue"),
    "smooth sensitivity": dict(marker="s", color="tab:green"),
    f"PTR, b = {proposals[0]}": dict(marker="^", color="tab:red"),
    f"PTR, b = {proposals[1]}": dict(marker="v", color="tab:orange", linestyle="--"),
}
for col, name in enumerate(datasets):
    ax_err, ax_ref = axes[:, col]
    for method, err in errors[name].items():
        released = ~np.isnan(err)
        median_error = [
            np.median(row[ok]) if ok.any() else np.nan
            for row, ok in zip(err, released, strict=True)
        ]
        ax_err.plot(epsilons, median_error, label=method, **styles[method])
        if method.startswith("PTR"):
            ax_ref.plot(epsilons, 1 - released.mean(axis=1), **styles[method])
    ax_err.set_xscale("log")
    ax_err.set_yscale("log")
    ax_err.set_title(name)
    ax_ref.set_xlabel("epsilon (total)")
    ax_ref.set_ylim(-0.05, 1.05)
axes[0, 0].set_ylabel("median absolute error")
axes[1, 0].set_ylabel("PTR refused")
axes[0, 0].legend(fontsize="small")
fig.suptitle(f"Private medians of 5000 scores in [1, 7] ({n_runs} runs per point)")
fig.tight_layout()
plt.show()

# %%
# Reading the figure
# ------------------
# **Tied data.** Most rows sit exactly on the median, so its local sensitivity
# is 0 and stays 0 after many rows are added or removed. Smooth sensitivity
# exploits that fully: from ε ≈ 0.2 its error is essentially zero. PTR passes
# its test and adds noise of scale ``b / (ε/2)``, so a small proposal wins at
# small ε. The exponential mechanism cannot output the tied value itself (it
# has no gap of positive length) and lands inside a neighbouring gap, off by
# about half a unit at every ε. (``method="permute_and_flip"`` over a grid that
# contains the whole numbers would not have this problem.)
#
# **Continuous data.** The exponential mechanism is the most accurate by far,
# at every ε. PTR must prove stability at a distance of
# about ``ln(1/δ) / (ε/2)`` rows, so a small proposal is refused at small ε and
# a proposal large enough to pass brings noise of the same size. Smooth
# sensitivity lies in between; its Laplace variant uses at most ε = 1 per
# feature (see its Notes), so it gains little beyond ε = 1.
