"""Cyclic boosting: one table of one feature's bins per step.

``boosting="cyclic"`` steps, per round, through the features in turn: for
feature ``j`` and each raw score, the gradient and hessian sums of each of
``j``'s bins, with Gaussian noise (:func:`release_bin_sums`, the only
private step of this stage), give each bin a Newton step (post-processing),
and the gradients are recomputed before the next feature. The model is
additive in the features (a private GAM, as InterpretML's DP-EBM).
"""

import numpy as np

from skdp.ensemble._hist_gradient_boosting.grower import (
    leaf_sensitivity,
    shrunk_gradient_sums,
)
from skdp.ensemble._hist_gradient_boosting.predictor import BinTables
from skdp.mechanisms import gaussian_release

__all__ = [
    "bin_sensitivity",
    "cyclic_round",
    "exact_bin_sums",
    "release_bin_sums",
    "shrunk_feature_step",
]


def bin_sensitivity(g_max, h_max):
    """L2 sensitivity of one feature's bin sums: ``sqrt(g_max² + h_max²)``.

    **Add/remove one row.** A feature's bins partition the rows: a row is
    in one bin and moves that bin's gradient sum by at most ``g_max`` and
    its hessian sum by at most ``h_max``; no other sum moves (the leaves'
    argument, :func:`~.grower.leaf_sensitivity`). Brute-forced in
    ``tests/ensemble/test_cyclic_boosting.py``.
    """
    return leaf_sensitivity(g_max, h_max)


def exact_bin_sums(column, n_bins, g, h):
    """Exact gradient and hessian sums per bin of one binned column, shape
    ``(2, n_bins)`` (on-grid values: exact in any order)."""
    column = np.asarray(column, dtype=np.intp)  # no copy of an intp column
    return np.stack([np.bincount(column, weights=w, minlength=n_bins) for w in (g, h)])


def release_bin_sums(sums, plan, source):
    """The private step: one feature's bin sums with Gaussian noise, at the
    step's multiplier (``plan.leaf_multiplier``; None: no noise)."""
    if plan.leaf_multiplier is None:
        return sums
    sens = bin_sensitivity(plan.g_max, plan.h_max)
    noisy = gaussian_release(sums, sens, plan.leaf_multiplier, random_state=source)
    return np.asarray(noisy, dtype=float).reshape(sums.shape)


def shrunk_feature_step(sums, plan):
    """The classifier's step shrinkage: one feature's released gradient sums
    ``G̃`` (all its bins) times ``max(0, 1 - B σ² / Σ_b G̃_b²)``, ``B`` its
    number of bins and ``σ`` their noise deviation (public).

    ``Σ_b G̃_b² - B σ²`` estimates the step's signal energy without bias, so
    the factor is the estimated share of signal in what was released (the
    positive-part James–Stein estimator of the bins' mean vector): a
    feature whose step is all noise moves no score, one far above its noise
    is barely touched. Post-processing of released values and public
    parameters. Without noise, or for the regressor (its per-bin shrinkage,
    :func:`~.grower.shrunk_gradient_sums`), the sums are returned as they
    are. Computed on ``G̃ / σ`` under ``np.errstate(all="ignore")``: no
    overflow to a wrong factor, and nothing raises at any double (a sum of
    squares that overflows gives the factor 1, all zeros the factor 0).
    Measured in the estimators' Notes (Caravan's 85 sparse columns).
    """
    if plan.leaf_multiplier is None or not plan.shrink_feature_steps:
        return sums
    sd, g = plan.leaf_noise_sd(), sums[0]
    with np.errstate(all="ignore"):  # under any caller's errstate, no raise
        energy = float(np.sum(np.square(g / sd)))  # in units of σ²
        factor = max(0.0, 1.0 - g.size / energy) if energy > 0.0 else 0.0
        return np.stack([g * factor, sums[1]])


def cyclic_round(binned, n_bins, raw, target, loss, plan, source):
    """One round: a step per feature, in order; ``raw`` is updated in place.

    Each step is one release per raw score whatever the data (a feature of
    one bin releases its one bin's sums); every bin gets
    ``-learning_rate * G / (max(H, 0) + λ)``, ``λ`` the leaves'
    (:meth:`~.grower.TreePlan.leaf_lambda`), after the public shrinkage of
    the released sums (:func:`shrunk_feature_step`). Returns one
    :class:`~.predictor.BinTables` per raw score.
    """
    tables = [[] for _ in range(raw.shape[1])]
    for j, width in enumerate(n_bins):
        column = binned[:, j].astype(np.intp)
        g, h = loss.gradients(raw, target)
        for c, values in enumerate(tables):
            exact = exact_bin_sums(column, int(width), g[:, c], h[:, c])
            sums = release_bin_sums(exact, plan, source)
            sums = shrunk_feature_step(shrunk_gradient_sums(sums, plan), plan)
            with np.errstate(all="ignore"):
                step = (
                    -plan.learning_rate
                    * sums[0]
                    / (np.maximum(sums[1], 0.0) + plan.leaf_lambda())
                )
            values.append(step)
            raw[:, c] += step[column]
    return [BinTables(values) for values in tables]
