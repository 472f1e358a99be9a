"""Best splits from histograms: scikit-learn's greedy gain, by brute force."""

import numpy as np

from skdp.ensemble._hist_gradient_boosting.splitting import NO_SPLIT, best_splits

OFFSETS = np.array([0, 3, 7])  # 3 bins, then 4 bins


def brute_force(hist, lam):
    """Every (feature, threshold) of every node, gains by direct sums."""
    out = []
    for node in range(hist.shape[1]):
        best, arg = 0.0, (0, NO_SPLIT)
        for j in range(OFFSETS.size - 1):
            g = hist[0, node, OFFSETS[j] : OFFSETS[j + 1]]
            h = hist[1, node, OFFSETS[j] : OFFSETS[j + 1]]
            for t in range(g.size - 1):
                gl, hl, gr, hr = (
                    g[: t + 1].sum(),
                    h[: t + 1].sum(),
                    g[t + 1 :].sum(),
                    h[t + 1 :].sum(),
                )
                gain = (
                    gl**2 / (hl + lam)
                    + gr**2 / (hr + lam)
                    - (gl + gr) ** 2 / (hl + hr + lam)
                )
                if gain > best + 1e-12:
                    best, arg = gain, (j, t)
        out.append(arg)
    return out


def test_greedy_choice_matches_brute_force_on_exact_histograms():
    rng = np.random.default_rng(0)
    for _ in range(50):
        n_nodes = 4
        hist = np.empty((2, n_nodes, OFFSETS[-1]))
        hist[0] = rng.normal(size=(n_nodes, OFFSETS[-1])) * 5
        hist[1] = rng.uniform(0, 3, size=(n_nodes, OFFSETS[-1]))
        # every feature of a node sums to the same totals, as exact sums do
        for node in range(n_nodes):
            for j in (0, 1):
                part = slice(OFFSETS[j], OFFSETS[j + 1])
                hist[:, node, part] *= np.array([[7.0], [9.0]]) / hist[
                    :, node, part
                ].sum(axis=1, keepdims=True)
        feature, threshold = best_splits(hist, OFFSETS, 1.0)
        pairs = zip(feature.tolist(), threshold.tolist(), strict=True)
        assert list(pairs) == brute_force(hist, 1.0)


def test_a_node_without_a_positive_gain_is_not_split():
    hist = np.zeros((2, 1, OFFSETS[-1]))
    hist[1] = 1.0  # hessians, no gradient: every gain is 0
    _, threshold = best_splits(hist, OFFSETS, 1.0)
    assert threshold.tolist() == [NO_SPLIT]


def test_noisy_negative_hessians_give_finite_gains():
    hist = np.full((2, 1, OFFSETS[-1]), -50.0)
    hist[0, 0, 1] = 40.0
    feature, threshold = best_splits(hist, OFFSETS, 0.5)
    assert threshold[0] != NO_SPLIT or feature[0] == 0


def test_single_bin_features_are_never_split():
    offsets = np.array([0, 1, 2])
    hist = np.array([[[5.0, -5.0]], [[1.0, 1.0]]])
    assert best_splits(hist, offsets, 1.0)[1].tolist() == [NO_SPLIT]
