"""The Notes section the two boosting estimators share (their algorithm,
privacy argument and measured choices)."""

__all__ = ["NOTES"]

NOTES = r"""
    **Algorithm.** Features are binned once (public equal-width bins on
    ``feature_bounds``, or private quantile bins, below). Then ``max_iter``
    rounds of Newton boosting on the loss, one tree per raw score and round
    (one for two classes or regression, ``K`` for ``K`` classes). A tree is
    complete, of depth ``max_depth``, grown level by level: each node of
    level ``l`` (``2**l``) samples ``m = max(1, int(max_features * d))`` of
    the ``d`` features (public randomness), the gradient and hessian sums of
    every node, sampled feature and bin are released with Gaussian noise
    (one release per level); each node's split is the sampled feature and
    bin with the largest gain
    ``G_L²/(H_L+λ) + G_R²/(H_R+λ) - G²/(H+λ)`` computed from the noisy
    sums (no split, all rows left, when no gain is positive); then each
    leaf's sums ``G``, ``H`` are released with Gaussian noise and its value
    is ``-learning_rate G̃ / (max(H̃, 0) + λ)``. ``λ`` is
    ``l2_regularization`` plus a public allowance of two noise deviations
    of a released hessian sum (splits and leaves), plus ``1e-3``. The
    regressor's leaves (and cyclic steps) use ``G̃ · G̃² / (G̃² + 4 σ²)``
    for ``G̃``, ``σ`` its public noise deviation: under the squared loss a
    row's score collects every round's leaf noise, and on diabetes (442
    rows) held-out R² fell from -0.12 at ε = 1 to -1.0 at ε = 3; with the
    shrinkage -0.10 and -0.05 (Bikeshare 0.30 → 0.36 at ε = 1, 0.55 →
    0.52 at ε = 3). Splits and leaves are post-processing of the releases; as ε → ∞ the
    noise and the allowance vanish and the fit is scikit-learn's greedy
    histogram boosting on the same bins (``min_samples_leaf=1``, no early
    stopping, a raw score starting at {baseline}).

    **Sensitivities (add/remove one row).** Gradients and hessians are
    bounded: {bounds} Each is rounded to a multiple of ``2**-20`` (a
    function of the row alone, so the bounds hold after rounding), which
    makes every sum exact in float64 below ``2**32`` rows in any order: the
    released sums move by exactly a row's terms (Casacuberta et al. 2022).
    The nodes of a level partition the rows, so a row is in one node, and
    in one bin of each of that node's ``m`` sampled features there (the
    samples do not depend on the data): one level's release moves by at
    most ``sqrt(m (g_max² + h_max²))`` in L2 norm
    (:func:`~skdp.ensemble._hist_gradient_boosting.histogram.level_sensitivity`);
    the leaves partition the rows: ``sqrt(g_max² + h_max²)``
    (:func:`~skdp.ensemble._hist_gradient_boosting.grower.leaf_sensitivity`).
    Private bins: a row is in one cell of each feature's grid, L2
    sensitivity ``sqrt(d)``. All brute-forced on small domains in
    ``tests/ensemble/test_histogram.py``, ``test_grower.py`` and
    ``test_binning.py``; the sampled level is audited against a twin that
    releases every feature at the sampled sensitivity
    (``test_gradient_boosting_audit.py``).

    **Privacy.** Every release is a Gaussian mechanism with noise
    multiplier ``r_i = R / sqrt(s_i)``, ``R = analytic_gaussian_sigma(1, ε,
    δ)`` and public shares ``s_i``: ``bin_share`` (10 %) for private bins{extra}
    first; of the rest ``HISTOGRAM_SHARE`` = 70 % for the levels'
    histograms and 30 % for the leaves, evenly over the rounds (and over a
    round's levels); the ``K`` trees of a round split its shares evenly
    (multipliers times ``sqrt(K)``). Gaussian releases compose adaptively
    and exactly to one Gaussian mechanism with ``1/R² = Σ 1/r_i²``
    (Gaussian DP, Dong, Roth and Su 2022), so the fit is ``(epsilon,
    delta)``-DP and ``1/(2R²)``-zCDP under add/remove-one-row neighbours;
    the whole cost is charged once before the data is read, and
    :meth:`_fit_cost` is exactly what ``fit`` charges. After the charge no
    branch, warning or exception depends on the data.

    **Groups (user-level privacy).** With ``groups`` and
    ``max_rows_per_group = k``, neighbours add or remove one whole group,
    which first keeps at most ``k`` rows by a rule on its own rows only
    (:func:`~skdp.utils._groups.kept_rows`). Its kept rows may lie in
    different nodes, leaves, bins and cells, each moving a release by at
    most a row's L2 sensitivity above, so the group moves each by at most
    ``k`` times it (triangle inequality; attained by ``k`` equal rows at
    the bounds): every noise multiplier is ``k`` times a row's, the route
    of scaled sensitivities (every release is a Gaussian sum of bounded
    per-row terms; the splits and leaf values stay post-processing, with
    the noise allowances of ``λ`` scaled alike). The label set must be
    public with groups (``classes=[...]``); private bins and the
    regressor's private target range are released for the group (their
    counts move by at most ``k`` per feature). Brute-forced with several
    rows per group in ``tests/ensemble/test_histogram.py`` and audited
    against a twin that skips the bounding.

    **Sample weights** (``fit(X, y, sample_weight=w)``, ``w`` in [0, 1];
    neighbours add or remove one ``(x, y, w)`` row). A row's gradient and
    hessian, and its terms of the baseline sums (its class's count, or
    ``(z, 1)``), are multiplied by its weight ``ŵ`` (``w`` on the grid
    ``2**-32``, ``0 <= ŵ <= w``) and truncated to the grid ``2**-20``
    (:func:`~skdp.ensemble._hist_gradient_boosting.loss.weighted_on_grid`):
    each weighted term is on the grid and at most the unweighted one in
    magnitude, so every sum stays exact and every sensitivity above (the
    unweighted one, times ``w_max = 1``) holds; the noise is that of the
    unweighted fit (brute-forced in ``tests/ensemble/test_boosting_inputs.py``,
    audited against a twin that accepts weights up to 2). Weights above 1
    would break the bounds and are refused before the charge. The split
    gains and leaf values read the weighted sums: as ε → ∞ the fit is
    scikit-learn's with the same ``sample_weight`` on the same bins;
    weights 1 give the unweighted fit bit for bit without groups (with
    groups a row's weight is part of the content the kept-rows choice
    hashes, so all-ones weights keep other rows than no weights). The
    private bins, the private target range and the label selection do not
    read the weights: a row of weight 0 still counts in them (and takes one
    of its group's places).

    **Dask input** (a Dask array ``X`` and a 1-D Dask array ``y`` with its
    known row chunks; a classifier needs the public ``classes``, since the
    label selection has no Dask path). Everything before the charge is
    decided from public parameters, as in memory; ``sample_weight`` and
    ``groups`` are refused on Dask input before the charge. The private
    bins' cell counts are exact integers summed block by block, so with the
    same seed the bins, and every later release, are those of the
    in-memory fit. The rounds read every row at every level of every tree
    with the gradients of the rounds before, so they run in memory, on the
    bin codes only: each block is mapped to its codes (one byte per value
    up to 256 bins) and targets where it lives, and those are gathered into
    the calling process, ``n * (d + 8)`` bytes, an eighth of a float64
    ``X`` plus ``y`` (the fit then holds its usual per-row gradients and
    scores, as in memory). Each block goes through skdp's Dask rule (a row
    with a NaN, or with a label not in ``classes``, is dropped; ``±inf``
    becomes ``±`` the largest double), a per-row map that keeps
    neighbours neighbours.

    **Private bins** (``feature_bounds=None``). Every double lies in one
    cell of a public grid: its sign, binary exponent (clamped to
    ``[-32, 32)``) and three leading significand bits, 8 cells per binade.
    The per-feature cell counts are released once (Gaussian, share
    ``bin_share``); a feature's bins are runs of consecutive cells with
    about equal released mass (at most ``max_bins`` bins; a feature's top
    cell of mass holding more than a bin's share is a bin of its own, so a
    0/1 feature is two bins whichever value is rare). A cell counts
    as mass when its released count stands out of its noise (four
    deviations); the cells left over count together, in aligned blocks of
    2 to 64 cells of one sign, when their sum stands out of the sum's noise
    (four deviations times the square root of their number), the sum
    placed on the block's last cell; a cell or block needs half a row as
    well, so that the bins become the exact counts' as the noise vanishes
    (:func:`~skdp.ensemble._hist_gradient_boosting.binning.released_mass`,
    post-processing). So a thin tail whose every cell drowns in noise
    still gets bins: on Adult at ε = 1, ``capital-gain`` above 0 (8 % of
    the rows over some 40 cells) had one bin before, and its split near
    7,000 is the table's strongest. A value's bin is a function of its own
    cell, exact for every double. No bounds needed, and no value is
    clipped.

    **Why this design.** Measured on Adult (14 columns, categoricals as
    their sorted codes, 75/25 split) at ε = 1, δ = 1e-6, prototype of the
    same releases with 50 trees of depth 4 on 32 exact quantile bins:
    splits from noisy level histograms 0.832 accuracy / 0.884 ROC AUC,
    against 0.794 / 0.847 for random splits with the whole budget on the
    Newton leaves (the strong small-ε choice of Maddock et al. 2022), 0.794
    / 0.853 with one-hot categoricals (the histograms' sensitivity grows
    with ``sqrt(d)``), 0.831 / 0.884 with a random third of the features
    per level, and 0.822 / 0.865 with categorical splits ordered by the
    noisy ``G/H`` (the order fits the noise). Then, with this estimator
    (private bins, 5 seeds): 32 bins and depth 4 gave 0.825 / 0.868, 16
    bins and depth 3 0.828 / 0.882, 8 bins and depth 3 0.836 / 0.891 (the
    noise of a gain sums over the bins left of the threshold; fewer,
    coarser bins and shallower trees keep more signal per released sum).
    The defaults (30 rounds of depth 3, learning rate 0.3, 8 bins) were
    the best or tied on Adult, ``fair`` and ``Default``
    (``benchmarks/bench_boosting_defaults.py``); 70 % of the trees' budget
    for the histograms beat 60 % and 80 %, an allowance of one deviation
    for the leaves beat one half (two since, see **Finer bins**), and
    ``bin_share`` = 10 % beat 5 % (0.829
    / 0.879) and 20 % (0.834 / 0.887). Greedy splits on noisy histograms keep
    the ε → ∞ limit scikit-learn's model; gains selected by the
    exponential mechanism (Li et al. 2020) need a bound on a gain's
    sensitivity, which needs a lower bound on the hessian sums.

    **Finer bins** (measured on Adult one-hot, 5 seeds, ε = 1; accuracy /
    ROC AUC). Noise-free trees on the private bins of ε = 1 reached 0.833 /
    0.888 against 0.841 / 0.897 on noise-free bins: the bins, not only the
    splits and leaves, cost a point. Blocks of cells
    (:func:`~skdp.ensemble._hist_gradient_boosting.binning.released_mass`)
    moved the defaults from 0.824 / 0.877 to 0.828 / 0.881 (0.818 / 0.862 to
    0.818 / 0.865 at ε = 0.3, unchanged at ε = 3; ROC AUC up on Caravan and
    ``fair``; ``Default``'s ROC AUC at ε = 3 down 0.936 to 0.929 over 20
    seeds); the regressor's held-out R² at ε = 0.3, 1, 3 went from -0.02,
    0.16, 0.47 to 0.21, 0.29, 0.54 on ISLP's Bikeshare and from -0.12,
    -0.13, -0.06 to -0.02, 0.00, 0.00 on randhie. With 32 bins, depth 2 and
    learning rate 0.5 the bins need more budget: ``bin_share`` 0.1, 0.2,
    0.3, 0.4 gave 0.830, 0.835, 0.839, 0.831 (a first version of the blocks,
    which spread a block's sum over its cells; the final rule: 0.834 / 0.889
    at 0.3, and 0.842 / 0.899 at ε = 3, Adult codes 0.840 / 0.895 at ε = 1);
    30 rounds of depth 2 beat 20 rounds and depth 3 (0.835, 0.833), 64 bins
    did not help (0.835). That setting is opt-in, not the default: on TV16
    its ROC AUC is 0.954 against 0.955 (seed deviation 0.0007), on
    ``Default`` at ε = 0.3 0.86 against 0.91. With a leaf allowance of one
    deviation (the old rule) it fell below Caravan's majority rate, hence
    two. Still short of 0.840 accuracy on Adult one-hot at ε = 1.

    **Sampled features** (``max_features``, default 0.3). A level's noise
    grows with the square root of the features a node releases; sampling
    ``m`` of them per node (as scikit-learn's ``max_features`` and random
    forests do) divides the noise of every released sum by ``sqrt(d/m)``,
    at the price of splits on fewer candidates. Measured at ε = 1, 5 seeds
    (``benchmarks/bench_boosting_defaults.py`` and
    ``bench_tree_models.py``): Adult codes 0.840 / 0.894 against 0.836 /
    0.891 with every feature (0.5 and 0.15 no better), Adult one-hot 0.824
    / 0.877 against 0.821 / 0.873, ``fair`` 0.721 against 0.705 accuracy;
    ROC AUC lower on Caravan (0.568 against 0.583, both at the majority
    rate) and on ``Default`` at ε = 0.3 (0.899 against 0.913). Regressor,
    3 seeds: R² 0.70 against 0.61 on ``make_friedman1`` (10 features),
    0.01 lower on two synthetic sets of 3 and 20 features. As ε → ∞ the fit
    is scikit-learn's ``max_features`` model on the same bins (up to which
    features are drawn); ``max_features=1.0`` is exactly its default's
    limit.

    **Cyclic boosting** (``boosting="cyclic"``). Each round steps through
    the features in order: for feature ``j`` and each raw score, the
    gradient and hessian sums ``G_b``, ``H_b`` of each of ``j``'s bins are
    released with Gaussian noise, every bin's raw score moves by
    ``-learning_rate G̃_b / (max(H̃_b, 0) + λ)`` (``λ`` the leaves'), and the
    gradients are recomputed before the next feature: a private additive
    model (a GAM), the cyclic boosting of InterpretML's DP-EBM (Nori et al.
    2021) on this estimator's bins and Newton steps. ``max_depth`` and
    ``max_features`` are not used. A feature's bins partition the rows, so
    a step's release moves by at most ``sqrt(g_max² + h_max²)`` (the
    leaves' argument;
    :func:`~skdp.ensemble._hist_gradient_boosting.cyclic.bin_sensitivity`,
    brute-forced in ``tests/ensemble/test_cyclic_boosting.py`` and audited
    against a twin whose rounds are not composed); the ``max_iter * d``
    steps get equal shares of what the bins and the baseline leave, and a
    step's ``K`` raw scores split its share (multipliers times
    ``sqrt(K)``). No split is selected, so no budget goes to histograms
    that only choose. Its settings by ε (public; chosen on Adult codes,
    ``benchmarks/bench_cyclic_boosting.py``): below ε = 1 ``max_iter=3,
    max_bins=16, learning_rate=0.5, bin_share=0.4`` (at ε = 0.3 the private
    bins need the larger share), from ε = 1 ``max_iter=5, max_bins=32,
    learning_rate=0.5, bin_share=0.2``. The classifier multiplies a step's
    released gradient sums by ``max(0, 1 - B σ² / Σ_b G̃_b²)`` (``B`` bins,
    ``σ`` their public noise deviation): the estimated share of signal in
    the release (positive-part James–Stein), post-processing
    (:func:`~skdp.ensemble._hist_gradient_boosting.cyclic.shrunk_feature_step`).
    Without it Caravan's accuracy fell below its majority rate (0.920
    against 0.940 at ε = 1: a row collects hundreds of noisy steps); with
    it 0.940, at 0.1–0.4 points on Adult.

    **The classifier's default** (``boosting="auto"``, public: read from
    ε) is cyclic boosting below ε = 1000 and trees with ``max_iter=100,
    max_bins=255, learning_rate=0.1`` from it, so that as ε → ∞ the fit
    becomes scikit-learn's boosting on the same bins. Measured
    (``bench_tree_models.py``, 5 seeds, accuracy / ROC AUC at ε = 0.3, 1,
    3), cyclic against trees at their defaults: Adult codes (14 columns)
    0.833 / 0.886, 0.847 / 0.904, 0.852 / 0.909 against 0.817 / 0.868,
    0.830 / 0.887, 0.837 / 0.892; Adult one-hot (65 columns) 0.816 /
    0.860, 0.837 / 0.891, 0.850 / 0.905 against 0.818 / 0.867, 0.829 /
    0.881, 0.836 / 0.890; ``fair`` 0.704, 0.729, 0.725 against 0.695,
    0.709, 0.722; level on TV16, Caravan and ``Default``'s accuracy; ROC AUC
    behind on ``Default`` and Caravan at ε = 0.3 (0.880 against 0.910,
    0.555 against 0.625), level on ``Default`` at ε = 1 (0.925 against
    0.928), and ahead on Caravan from ε = 1 and on both at ε = 3. At
    ε = 1000 (3 seeds, ``bench_boosting_modes.py``) the trees are level
    with the cyclic model on Adult codes and ahead on four other tables;
    on ``fair`` 0.724 against 0.731
    (scikit-learn's own boosting is below the additive model there too).
    Stated ``boosting="cyclic"`` becomes, as ε → ∞, the additive model of
    maximum likelihood on the bins (unpenalised logistic regression on the
    one-hot bins); each column costs a step (one-hot columns too). Being
    additive, it cannot fit interactions: on ``make_classification(4000,
    10, n_informative=5)`` (3 seeds, held-out accuracy) the default
    reached 0.861 at ε = 10 and 0.873 at ε = 999 against 0.907 and 0.922
    for stated trees at their defaults, and on ``breast_cancer`` 0.942
    against 0.965 at ε = 999; state ``boosting="trees"`` where features act
    together.

    **One-hot columns.** The histograms' noise grows with ``sqrt(m)``: on
    Adult one-hot (65 columns) the private logistic model is ahead
    (0.848 / 0.902 against 0.824 / 0.877 at ε = 1); with the categoricals
    as codes (14 columns) the trees are (0.840 / 0.894 against 0.822 /
    0.851). Prefer ordinal codes of a public category list.

    **Small data.** On a few hundred rows the private bins do not stand
    out of their noise: every feature gets one bin, the model predicts its
    baseline, and a :class:`~skdp.NoiseDominatedWarning` (computed from
    the released bins) says so.

    **Non-finite input** (NaN, ±inf) is refused before the charge; any
    finite double (±max, subnormals) is binned exactly. **Large plans**
    are refused before the charge, from public parameters: a release of
    more than ``2**24`` values (the deepest level's ``2**max_depth *
    max_bins * n_features`` sums, or the private bins' 1,025 counts per
    feature), a multiclass fit of more than ``2**26`` rows times classes,
    a fit of more than ``2**27`` noise values in all (about 20 seconds to
    3 minutes of exact noise) or ``2**16`` trees (``max_iter`` times the
    trees per round; a cyclic step per feature counts as one), or noise
    beyond the exact sampler.{labels}

    References
    ----------
    .. [1] J. Dong, A. Roth and W. J. Su, "Gaussian Differential Privacy",
       JRSS B 84, 2022.
    .. [2] S. Maddock, G. Cormode, T. Wang, C. Maple and S. Jha, "Federated
       Boosted Decision Trees with Differential Privacy", CCS 2022.
    .. [3] Q. Li, Z. Wu, Z. Wen and B. He, "Privacy-Preserving Gradient
       Boosting Decision Trees", AAAI 2020.
    .. [4] H. Nori, R. Caruana, Z. Bu, J. H. Shen and J. Kulkarni,
       "Accuracy, Interpretability, and Differential Privacy via
       Explainable Boosting", ICML 2021.
"""
