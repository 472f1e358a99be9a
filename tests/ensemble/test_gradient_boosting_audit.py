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
the whole budget (a round's levels and leaves not composed); a level of
``max_features < 1`` that releases every feature at the sensitivity of the
sampled ones; a fit with groups whose bounding to ``max_rows_per_group``
rows is skipped; ``boosting="cyclic"`` steps (one release of one feature's
bin sums each) calibrated to the whole budget (steps not composed).
"""

import numpy as np

from skdp.audit import assert_dp, audit_mechanism
from skdp.ensemble import PrivateHistGradientBoostingRegressor
from skdp.ensemble._hist_gradient_boosting.cyclic import (
    bin_sensitivity,
    exact_bin_sums,
)
from skdp.ensemble._hist_gradient_boosting.grower import (
    exact_leaf_sums,
    leaf_sensitivity,
)
from skdp.ensemble._hist_gradient_boosting.histogram import (
    exact_level_histograms,
    level_sensitivity,
    release_level_histograms,
    sampled_features,
)
from skdp.ensemble._hist_gradient_boosting.loss import SquaredError, on_grid
from skdp.mechanisms import (
    check_random_source,
    gaussian_noise_multipliers,
    gaussian_release,
)
from skdp.utils._privacy_unit import PrivacyUnit

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


N_FEATURES = 12  # one public bin per feature; one feature sampled per node


def sampled_level(variant="correct"):
    """One level of ``max_features=1/12``: the root releases the sums of its
    one sampled feature at the sensitivity of one feature, with the whole
    budget. Twin: every feature released at that sensitivity (the sampling
    claimed but not done)."""
    offsets = np.arange(N_FEATURES + 1)
    ratio = gaussian_noise_multipliers(EPS, DELTA, [1.0])[0]
    sens = level_sensitivity(1, 1.0, 0.25)
    d0 = (np.zeros((2, N_FEATURES), dtype=np.uint8), np.array([0.5, -0.5]))
    d1 = (np.zeros((3, N_FEATURES), dtype=np.uint8), np.array([0.5, -0.5, -1.0]))

    def sums(data):
        binned, g = data
        h = np.full(g.size, 0.25)
        node = np.zeros(g.size, dtype=int)
        return exact_level_histograms(binned, offsets, node, 1, g, h)

    a, b = sums(d0), sums(d1)

    def mech(data, random_state, n_runs):
        source = check_random_source(random_state)
        value = np.repeat(sums(data), n_runs, axis=1)  # one node per run
        mask = sampled_features(n_runs, N_FEATURES, 1, source)
        columns = mask
        released = None if variant == "all features" else columns
        noisy = release_level_histograms(value, sens, ratio, source, released)
        shown = columns if released is not None else np.ones_like(columns)
        weight = ((b - a) / (ratio * sens) ** 2) * shown
        return np.sum((noisy - (a + b) / 2) * weight, axis=(0, 2))

    return mech, d0, d1


def test_sampled_features_pass_and_all_features_twin_is_caught():
    mech, d0, d1 = sampled_level()
    assert_dp(mech, d0, d1, EPS, DELTA, **FAST)
    twin, d0, d1 = sampled_level("all features")
    bad = audit_mechanism(twin, d0, d1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + MARGIN, str(bad)


K = 2  # rows kept per group


def grouped_round(skip_bounding=False):
    """One round of the regressor with groups of at most K rows: D1 adds a
    group of 5K rows at the worst case (the target far outside its bounds);
    the fit keeps K of them (PrivacyUnit.bound) and its multipliers are K
    times a row's. Twin: the bounding skipped (all 5K rows kept, the noise
    still for K)."""
    est = PrivateHistGradientBoostingRegressor(max_iter=1, max_depth=1)
    ratios = K * gaussian_noise_multipliers(EPS, DELTA, est._shares([]))
    binned, y = neighbours()[0]
    d0 = (binned, y, np.arange(y.size))
    extra = np.ones((5 * K, 1), dtype=np.uint8)
    d1 = (
        np.vstack([binned, extra]),
        np.append(y, [-1e3 * HIGH] * (5 * K)),
        np.append(d0[2], [99] * (5 * K)),
    )
    kept = {}
    for data in (d0, d1):
        unit = PrivacyUnit(data[2], K)
        columns = (
            data[:2] if skip_bounding else unit.bound(check_random_source(0), *data[:2])
        )
        kept[id(data)] = release_sums(columns, "correct")
    sens = kept[id(d0)][1]

    def mech(data, random_state, n_runs):
        source = check_random_source(random_state)
        stat = np.zeros(n_runs)
        for k, ratio in enumerate(ratios):
            i = 0 if k == 0 else 2 - k % 2
            a, b = kept[id(d0)][0][i], kept[id(d1)][0][i]
            noisy = gaussian_release(
                np.tile(kept[id(data)][0][i], (n_runs, 1)), sens[i], ratio,
                random_state=source,
            )  # fmt: skip
            stat += (noisy - (a + b) / 2) @ (b - a) / (ratio * sens[i]) ** 2
        return stat

    return mech, d0, d1


def test_grouped_round_passes_and_skipped_bounding_twin_is_caught():
    mech, d0, d1 = grouped_round()
    assert_dp(mech, d0, d1, EPS, DELTA, **FAST)
    twin, d0, d1 = grouped_round(skip_bounding=True)
    bad = audit_mechanism(twin, d0, d1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + MARGIN, str(bad)


def cyclic_steps(variant="correct", n_rounds=1):
    """Rounds of ``boosting="cyclic"`` on two features of two public bins:
    the baseline, then per round each feature's bin sums, with the
    estimator's shares; the raw score held at a public 1 and D1 adding a
    row at the worst case (residual 2, hessian 1) in bin 1 of both
    features. Twin: every release with the whole budget."""
    est = PrivateHistGradientBoostingRegressor(boosting="cyclic", max_iter=n_rounds)
    shares = est._shares([], 2)
    ratios = gaussian_noise_multipliers(EPS, DELTA, shares)
    if variant == "not composed":
        ratios = np.full(len(shares), gaussian_noise_multipliers(EPS, DELTA, [1])[0])
    loss = SquaredError()
    d0 = (np.array([[0, 1], [1, 0]], dtype=np.uint8), np.array([1.0, -1.0]))
    d1 = (np.vstack([d0[0], [[1, 1]]]).astype(np.uint8), np.append(d0[1], -1e3))

    def sums(data):
        binned, y = data
        z = on_grid(np.clip(y / HIGH, -1, 1), 1.0)
        g, h = (a[:, 0] for a in loss.gradients(np.ones((y.size, 1)), z))
        steps = [exact_bin_sums(binned[:, j], 2, g, h).ravel() for j in (0, 1)]
        return [loss.baseline_sums(z, 1), *steps]

    released = {id(d): sums(d) for d in (d0, d1)}
    sens = [loss.baseline_sensitivity, bin_sensitivity(loss.g_max, loss.h_max)]

    def mech(data, random_state, n_runs):
        source = check_random_source(random_state)
        stat = np.zeros(n_runs)
        for k, ratio in enumerate(ratios):
            i = 0 if k == 0 else 1 + (k - 1) % 2  # baseline, then features
            a, b = released[id(d0)][i], released[id(d1)][i]
            s = sens[min(i, 1)]
            noisy = gaussian_release(
                np.tile(released[id(data)][i], (n_runs, 1)), s, ratio,
                random_state=source,
            )  # fmt: skip
            stat += (noisy - (a + b) / 2) @ (b - a) / (ratio * s) ** 2
        return stat

    return mech, d0, d1


def test_cyclic_steps_pass_and_steps_not_composed_twin_is_caught():
    mech, d0, d1 = cyclic_steps(n_rounds=2)
    assert_dp(mech, d0, d1, EPS, DELTA, **FAST)
    twin, d0, d1 = cyclic_steps("not composed", n_rounds=4)
    bad = audit_mechanism(twin, d0, d1, delta=DELTA, **FAST)
    assert bad.epsilon_lower_bound > EPS + MARGIN, str(bad)
