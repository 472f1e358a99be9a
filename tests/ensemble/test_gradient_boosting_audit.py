"""Audits of the boosting releases, each against mutation twins.

Rounds of depth-1 trees on public bins: the baseline release, the root's
histograms and the two leaves' sums, with the estimator's own noise
multipliers (its shares for ``max_iter=1, max_depth=1``), sensitivities and
exact sums. The raw scores are held at a public 1 (a valid, non-adaptive
instance of the composition the estimator claims). The audited output is the
log-likelihood-ratio statistic of the releases (post-processing). Worst-case
neighbours: ``d1`` adds a row at the bounds of ``g`` and ``h`` and, for the
regressor, a target a thousand times outside its bounds.

Twins the audit must catch: the leaf sums of a regressor whose target is not
clipped to its bounds (a leaf without clipping); every release calibrated to
the whole budget (a round's levels and leaves not composed).
"""

import numpy as np

from skdp.audit import assert_dp, audit_mechanism
from skdp.ensemble import PrivateHistGradientBoostingRegressor
from skdp.ensemble._hist_gradient_boosting.grower import (
    exact_leaf_sums,
    leaf_sensitivity,
)
from skdp.ensemble._hist_gradient_boosting.histogram import (
    exact_level_histograms,
    level_sensitivity,
)
from skdp.ensemble._hist_gradient_boosting.loss import SquaredError, on_grid
from skdp.mechanisms import (
    check_random_source,
    gaussian_noise_multipliers,
    gaussian_release,
)

EPS, DELTA = 1.0, 1e-6
MARGIN = 0.25
FAST = {"n_samples": 40_000, "n_pilot": 8_000, "random_state": 0}
OFFSETS = np.array([0, 2])  # one feature of two public bins
HIGH = 4.0  # target bounds (-HIGH, HIGH)


def neighbours():
    d0 = (np.array([[0], [1]], dtype=np.uint8), np.array([1.0, -1.0]))
    d1 = (np.vstack([d0[0], [[1]]]).astype(np.uint8), np.append(d0[1], -1e3 * HIGH))
    return d0, d1


def release_sums(data, variant):
    """The exact sums of one round's releases and their sensitivities."""
    binned, y = data
    loss = SquaredError()
    z = (
        y / HIGH
        if variant == "no clip"
        else on_grid(np.clip(y, -HIGH, HIGH) / HIGH, 1.0)
    )
    raw = np.ones((y.size, 1))  # public: the added row's residual is 2
    if variant == "no clip":
        g, h = raw[:, 0] - z, np.ones(y.size)
    else:
        g, h = (a[:, 0] for a in loss.gradients(raw, z))
    base = loss.baseline_sums(np.clip(z, -1, 1), 1)
    node = np.zeros(y.size, dtype=int)
    hist = exact_level_histograms(binned, OFFSETS, node, 1, g, h).ravel()
    leaf = exact_leaf_sums((binned[:, 0] > 0).astype(int), 2, g, h).ravel()
    sens = [
        loss.baseline_sensitivity,
        level_sensitivity(1, loss.g_max, loss.h_max),
        leaf_sensitivity(loss.g_max, loss.h_max),
    ]
    return [base, hist, leaf], sens


def round_releases(variant="correct", n_rounds=1):
    est = PrivateHistGradientBoostingRegressor(max_iter=n_rounds, max_depth=1)
    shares = est._shares([])
    ratios = gaussian_noise_multipliers(EPS, DELTA, shares)
    if variant == "not composed":
        ratios = np.full(len(shares), gaussian_noise_multipliers(EPS, DELTA, [1])[0])
    d0, d1 = neighbours()
    sums = {id(d): release_sums(d, variant) for d in (d0, d1)}
    sens = sums[id(d0)][1]

    def mech(data, random_state, n_runs):
        source = check_random_source(random_state)
        stat = np.zeros(n_runs)
        for k, ratio in enumerate(ratios):
            i = 0 if k == 0 else 2 - k % 2  # baseline, then (histogram, leaf)s
            a, b = sums[id(d0)][0][i], sums[id(d1)][0][i]
            value = sums[id(data)][0][i]
            noisy = gaussian_release(
                np.tile(value, (n_runs, 1)), sens[i], ratio, random_state=source
            )
            sigma = ratio * sens[i]
            stat += (noisy - (a + b) / 2) @ (b - a) / sigma**2
        return stat

    return mech, d0, d1


def test_boosting_round_passes_and_leaf_without_clipping_twin_is_caught():
    mech, d0, d1 = round_releases()
    assert_dp(mech, d0, d1, EPS, DELTA, **FAST)
    twin, d0, d1 = round_releases("no clip")
    bad = audit_mechanism(twin, d0, d1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + MARGIN, str(bad)


def test_releases_not_composed_twin_is_caught():
    twin, d0, d1 = round_releases("not composed", n_rounds=12)
    bad = audit_mechanism(twin, d0, d1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + MARGIN, str(bad)
