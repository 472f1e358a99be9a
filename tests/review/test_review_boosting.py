"""Adversarial review of the private histogram gradient boosting: each test
is a reproducer of a finding (it failed before its fix; an ``xfail`` is a
finding left open) or an attack that held."""

import math
import warnings

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.ensemble import (
    PrivateHistGradientBoostingClassifier,
    PrivateHistGradientBoostingRegressor,
)
from skdp.ensemble._hist_gradient_boosting import gradient_boosting as gb_module
from skdp.ensemble._hist_gradient_boosting.binning import (
    N_CELLS,
    cell_counts,
    grid_cells,
)
from skdp.ensemble._hist_gradient_boosting.grower import (
    exact_leaf_sums,
    leaf_sensitivity,
)
from skdp.ensemble._hist_gradient_boosting.histogram import (
    exact_level_histograms,
    level_sensitivity,
)
from skdp.ensemble._hist_gradient_boosting.loss import (
    BinaryLogistic,
    MultinomialLogistic,
    SquaredError,
    on_grid,
)
from skdp.mechanisms import _labels
from skdp.model_selection import fit_cost

# noise warnings of small private fits are not what is tested
pytestmark = pytest.mark.filterwarnings("ignore")

MAX = np.finfo(float).max
TINY = np.nextafter(0.0, 1.0)


def _acc():
    return BudgetAccountant(delta=0.5)


def _data(n=300, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    return X, (X[:, 0] > 0).astype(int)


# -- findings ------------------------------------------------------------------
@pytest.mark.parametrize("bounds", [None, (-1.0, 1.0)])
def test_binary_fit_without_a_row_of_the_second_class_does_not_raise(bounds):
    # HIGH. classes=[0, 1] stated, every row of class 0: the baseline counts
    # were np.bincount(codes, minlength=1), ONE count, so the baseline was
    # empty and the first round raised IndexError after the charge, while
    # the neighbour with one row of class 1 fitted: the exception told the
    # two apart with certainty. The counts now have a public length (2).
    X, _ = _data(60)
    fits = []
    for y in (np.zeros(60, int), np.r_[np.zeros(59, int), 1]):
        acc = _acc()
        clf = PrivateHistGradientBoostingClassifier(
            epsilon=1.0, max_iter=2, classes=[0, 1], feature_bounds=bounds,
            accountant=acc, random_state=0,
        ).fit(X, y)  # fmt: skip
        fits.append(clf)
        assert acc.total() == (1.0, 1e-6)
    assert [np.shape(f._baseline) for f in fits] == [(1,), (1,)]
    assert [f.predict_proba(X).shape for f in fits] == [(60, 2), (60, 2)]


def test_baseline_counts_have_a_public_length():
    codes = np.zeros(5, dtype=int)
    assert BinaryLogistic().baseline_sums(codes, 1).tolist() == [5.0, 0.0]
    assert MultinomialLogistic(3).baseline_sums(codes, 3).tolist() == [5, 0, 0]


def test_many_stated_classes_baseline_beyond_the_sampler_is_refused_before_the_charge():
    # LOW. The plan checked the baseline as 2 values, but a multiclass fit
    # releases one count per class: with 100 classes at epsilon=1e-6,
    # delta=1e-8 the plan passed, the fit was charged, and the baseline
    # release raised "Cannot represent a Gaussian release" after it.
    X = np.linspace(-1, 1, 200)[:, None]
    y = np.arange(200) % 100
    acc = _acc()
    clf = PrivateHistGradientBoostingClassifier(
        epsilon=1e-6, delta=1e-8, max_iter=1, max_depth=1, max_bins=2,
        feature_bounds=(-1, 1), classes=list(range(100)), accountant=acc,
        random_state=0,
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"baseline.*Nothing was charged"):
        clf.fit(X, y)
    assert not acc.entries


class _Grew(Exception):
    pass


def _no_tree(*args, **kwargs):
    raise _Grew("a tree was grown: the plan let the fit through")


@pytest.mark.parametrize(
    "cls,extra",
    [
        (
            PrivateHistGradientBoostingClassifier,
            {"classes": [0, 1], "boosting": "trees"},
        ),
        (PrivateHistGradientBoostingRegressor, {"target_bounds": (0, 1)}),
    ],
)
def test_histograms_too_large_for_memory_are_refused_before_the_charge(
    monkeypatch, cls, extra
):
    # MEDIUM. max_depth=12, max_bins=255, d=1000: the deepest level releases
    # 2 * 2**11 * 255 * 1000 ~ 1.04e9 sums (8.4 GB per array) and the plan
    # let it through at epsilon=1: the fit was charged, then ran out of
    # memory (or for hours). Now refused above 2**24 values per release.
    # (grow_tree is replaced so that the old code cannot allocate them.)
    monkeypatch.setattr(gb_module, "grow_tree", _no_tree)
    X = np.zeros((4, 1000))
    y = np.array([0, 1, 0, 1])
    acc = _acc()
    est = cls(
        epsilon=1.0, max_iter=1, max_depth=12, max_bins=255,
        feature_bounds=(-1.0, 1.0), accountant=acc, random_state=0, **extra,
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"2\*\*24.*Nothing was charged"):
        est.fit(X, y)
    assert not acc.entries


@pytest.mark.parametrize(
    "params,refused",
    [
        # 2 + 4 trees x (2 * 4080 * 4095 + 8192) noise values <= 2**27
        ({"max_iter": 4, "max_depth": 12, "max_bins": 255}, False),
        ({"max_iter": 5, "max_depth": 12, "max_bins": 255}, True),
        ({"max_iter": 10**4, "max_depth": 12, "max_bins": 255}, True),
        ({"max_iter": 1 << 16, "max_depth": 1, "max_bins": 2}, False),
        ({"max_iter": (1 << 16) + 1, "max_depth": 1, "max_bins": 2}, True),
    ],
)
def test_fits_longer_than_minutes_are_refused_before_the_charge(
    monkeypatch, params, refused
):
    # MEDIUM. max_iter had no upper limit: at the exact sampler's ~0.7
    # million noise values per second, max_iter=10**4 rounds of 2**24-value
    # histograms were charged, then ran for days. Now a fit draws at most
    # 2**27 noise values (about 3 minutes) and grows at most 2**16 trees.
    monkeypatch.setattr(gb_module, "grow_tree", _no_tree)
    d = 16 if params["max_depth"] == 12 else 1
    acc = _acc()
    clf = PrivateHistGradientBoostingClassifier(
        boosting="trees",
        feature_bounds=(-1.0, 1.0),
        classes=[0, 1],
        accountant=acc,
        **params,
    )
    X, y = np.zeros((4, d)), np.array([0, 1, 0, 1])
    if refused:
        with pytest.raises(ValueError, match=r"max_iter.*2\*\*27.*Nothing was"):
            clf.fit(X, y)
        assert not acc.entries
    else:
        with pytest.raises(_Grew):  # past the plan and the charge
            clf.fit(X, y)
        assert acc.total() == (1.0, 1e-6)


def test_label_set_of_max_classes_is_in_the_run_time_plan(monkeypatch):
    # with classes=None a round grows up to max_classes trees: the cap
    # counts them before the charge (2**16 trees: 2048 rounds of 32 trees)
    monkeypatch.setattr(gb_module, "grow_tree", _no_tree)
    acc = _acc()
    clf = PrivateHistGradientBoostingClassifier(
        max_iter=2049, max_depth=1, max_bins=2, feature_bounds=(-1.0, 1.0),
        accountant=acc,
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"32 tree\(s\).*Nothing was charged"):
        clf.fit(np.zeros((4, 1)), np.array([0, 1, 0, 1]))
    assert not acc.entries


def test_private_bins_of_too_many_features_are_refused_before_the_charge(
    monkeypatch,
):
    monkeypatch.setattr(gb_module, "release_private_bins", _no_tree)
    d = (1 << 24) // N_CELLS + 1
    X = np.zeros((2, d))
    acc = _acc()
    clf = PrivateHistGradientBoostingClassifier(
        max_iter=1, max_depth=1, classes=[0, 1], accountant=acc
    )
    with pytest.raises(ValueError, match=r"private bins.*Nothing was charged"):
        clf.fit(X, np.array([0, 1]))
    assert not acc.entries


def test_largest_histograms_under_the_cap_still_fit(monkeypatch):
    # the cap is on the largest release: 2 * 2**11 * 255 * 16 < 2**24
    monkeypatch.setattr(gb_module, "grow_tree", _no_tree)
    X = np.zeros((4, 16))
    acc = _acc()
    clf = PrivateHistGradientBoostingClassifier(boosting="trees",
        max_iter=1, max_depth=12, max_bins=255, feature_bounds=(-1.0, 1.0),
        classes=[0, 1], accountant=acc,
    )  # fmt: skip
    with pytest.raises(_Grew):  # past the plan and the charge
        clf.fit(X, np.array([0, 1, 0, 1]))
    assert acc.total() == (1.0, 1e-6)


# LOW, fixed: with classes=None the plan checked the sampler for K = 1 tree
# per round, and K (the number of released labels, >= 3) multiplied the
# trees' noise multipliers by sqrt(K) after the charge: charged, then
# refused. The plan now assumes the public max_classes (default 32) labels.
def test_private_label_set_larger_than_planned_is_not_charged_then_refused(
    monkeypatch,
):
    # simulate a selection that releases 3 labels (a possible outcome; a
    # real one needs ~1e9 rows per label at this epsilon; with
    # 32 features the trees' histograms at sqrt(3) times the planned noise
    # are beyond the exact sampler)
    def three_labels(values, epsilon, delta, *, random_state=None):
        return np.array([0, 1, 2]), np.asarray(values).astype(int)

    monkeypatch.setattr(_labels, "select_labels", three_labels)
    X = np.linspace(-1, 1, 30)[:, None] * np.ones(32)
    y = np.arange(30) % 3
    acc = _acc()
    clf = PrivateHistGradientBoostingClassifier(
        epsilon=1e-7, delta=1e-7, max_iter=1, max_depth=1, max_bins=2,
        feature_bounds=(-1, 1), accountant=acc, random_state=0,
    )  # fmt: skip
    try:
        clf.fit(X, y)
    except ValueError:
        assert not acc.entries  # a refusal must come before the charge


def test_sampler_refusal_of_a_private_label_set_names_max_classes(monkeypatch):
    # the refusal of the setting above says what the plan assumed and how
    # to fit: with max_classes=2 (one tree per round) the same fit passes
    monkeypatch.setattr(gb_module.LabelPlan, "run", lambda self, X, y, s: _no_tree())
    X = np.linspace(-1, 1, 40)[:, None] * np.ones(32)
    acc = _acc()
    clf = PrivateHistGradientBoostingClassifier(
        epsilon=1e-7, delta=1e-7, max_iter=1, max_depth=1, max_bins=2,
        feature_bounds=(-1, 1), accountant=acc, random_state=0,
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"max_classes=32.*Nothing was charged"):
        clf.fit(X, np.arange(40) % 2)
    assert not acc.entries
    with pytest.raises(_Grew):  # past the plan and the charge
        clf.set_params(max_classes=2).fit(X, np.arange(40) % 2)
    assert acc.entries


# -- attacks that held ---------------------------------------------------------
def test_gradients_and_hessians_stay_in_their_bounds_at_the_extremes():
    raw = np.r_[np.linspace(-40, 40, 20001), np.inf, -np.inf, np.nan, MAX, -MAX]
    raw = raw[:, None]
    for codes in (np.zeros(raw.shape[0], int), np.ones(raw.shape[0], int)):
        g, h = BinaryLogistic().gradients(raw, codes)
        assert np.abs(g).max() <= 1.0 and 0.0 <= h.min() and h.max() <= 0.25
    raw3 = np.c_[raw, -raw, np.zeros_like(raw)]
    g, h = MultinomialLogistic(3).gradients(raw3, np.zeros(raw.shape[0], int))
    assert np.abs(g).max() <= 1.0 and 0.0 <= h.min() and h.max() <= 0.25
    z = on_grid(np.r_[MAX, -MAX, np.nan, 1.0, -1.0], 1.0)
    g, h = SquaredError().gradients(raw, np.resize(z, raw.shape[0]))
    assert np.abs(g).max() <= 2.0 and np.all(h == 1.0)
    # p(1 - p) rounded to the grid near p = 1/2 never exceeds 1/4
    p = 0.5 + np.arange(-2000, 2001) * 2.0**-40
    assert on_grid(p * (1.0 - p), 0.25).max() == 0.25
    grid = np.ldexp(1.0, -20)
    assert np.all(np.mod(g, grid) == 0)


def test_grid_cells_are_one_per_value_and_ordered_at_the_extremes():
    values = np.array(
        [-MAX, -(2.0**32), -1.0, -TINY, -0.0, 0.0, TINY, 2.0**-33, 2.0**-32,
         1.0, np.nextafter(1.125, 0), 1.125, np.nextafter(2.0**32, 0), MAX]
    )  # fmt: skip
    cells = grid_cells(values)
    assert cells.min() == 0 and cells.max() == N_CELLS - 1
    assert np.all(np.diff(cells) >= 0)
    assert cells[4] == cells[5] == N_CELLS // 2  # -0.0 and 0.0: one cell
    assert cells[9] + 1 == cells[11] and cells[10] == cells[9]  # 3 bits
    rng = np.random.default_rng(0)
    x = np.sort(rng.standard_normal(5000) * 10.0 ** rng.integers(-20, 20, 5000))
    assert np.all(np.diff(grid_cells(x)) >= 0)
    counts = cell_counts(np.c_[values, values[::-1]])
    assert counts.sum(axis=1).tolist() == [values.size] * 2  # one cell each


def _levels_exact(binned, offsets, g, h, splits):
    """Every level's exact histograms and the leaf sums along fixed splits
    (the released splits are the same for two neighbours)."""
    node = np.zeros(binned.shape[0], dtype=np.intp)
    rows = np.arange(binned.shape[0])
    out = []
    for level, (feature, threshold) in enumerate(splits):
        out.append(exact_level_histograms(binned, offsets, node, 1 << level, g, h))
        value = binned[rows, feature[node]].astype(np.intp)
        node = 2 * node + (value > threshold[node])
    out.append(exact_leaf_sums(node, 1 << len(splits), g, h))
    return out


def test_levels_and_leaves_move_by_their_sensitivity_when_a_row_is_removed():
    rng = np.random.default_rng(1)
    n, d, bins, depth = 12, 3, 4, 3
    binned = rng.integers(0, bins, size=(n, d)).astype(np.uint8)
    offsets = np.arange(d + 1) * bins
    g = on_grid(rng.choice([-1.0, 1.0, 0.5], n), 1.0)
    h = np.full(n, 0.25)
    splits = [
        (rng.integers(0, d, 1 << lv), rng.integers(0, bins, 1 << lv))
        for lv in range(depth)
    ]
    splits[1][1][0] = 1 << 16  # a node that keeps its rows left (NO_SPLIT)
    full = _levels_exact(binned, offsets, g, h, splits)
    level_bound = level_sensitivity(d, 1.0, 0.25)
    leaf_bound = leaf_sensitivity(1.0, 0.25)
    for i in range(n):
        keep = np.arange(n) != i
        less = _levels_exact(binned[keep], offsets, g[keep], h[keep], splits)
        moves = [np.linalg.norm(a - b) for a, b in zip(full, less, strict=True)]
        assert max(moves[:-1]) <= level_bound + 1e-12
        assert moves[-1] <= leaf_bound + 1e-12
        worst = math.sqrt(d * (g[i] ** 2 + h[i] ** 2))
        assert moves[0] == pytest.approx(worst)  # one bin per feature


@pytest.mark.parametrize(
    "cls,params",
    [
        (PrivateHistGradientBoostingClassifier, {}),
        (PrivateHistGradientBoostingClassifier, {"classes": [0, 1, 2]}),
        (PrivateHistGradientBoostingClassifier, {"feature_bounds": (-1, 1)}),
        (PrivateHistGradientBoostingRegressor, {}),
        (PrivateHistGradientBoostingRegressor, {"target_bounds": (-3, 3)}),
    ],
)
def test_fit_cost_is_what_is_charged(cls, params):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(900, 2))
    y = np.arange(900) % 3 if cls is PrivateHistGradientBoostingClassifier else X[:, 0]
    acc = _acc()
    est = cls(
        epsilon=2.0, max_iter=1, max_depth=1, accountant=acc, random_state=0,
        **params,
    )  # fmt: skip
    planned = fit_cost(est)
    est.fit(X, y)
    assert acc.total() == (planned.epsilon, planned.delta)


def test_odd_data_fits_without_a_warning_or_an_error_after_the_charge():
    cases = [
        (np.array([[0.5]]), np.array([1])),  # one row
        (np.ones((40, 2)), np.arange(40) % 2),  # constant columns
        (np.array([[MAX, -MAX], [TINY, -0.0]] * 20), np.arange(40) % 2),
    ]
    for X, y in cases:
        for bounds in (None, (-1.0, 1.0)):
            acc = _acc()
            with warnings.catch_warnings():
                warnings.filterwarnings("error", category=RuntimeWarning)
                clf = PrivateHistGradientBoostingClassifier(
                    epsilon=50.0, max_iter=2, learning_rate=1e300,
                    feature_bounds=bounds, classes=[0, 1], accountant=acc,
                    random_state=0,
                ).fit(X, y)  # fmt: skip
            assert acc.total() == (50.0, 1e-6)
            assert clf.predict(X).shape == (X.shape[0],)
    y = np.r_[MAX, -MAX, np.zeros(38)]
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=RuntimeWarning)
        reg = PrivateHistGradientBoostingRegressor(
            epsilon=50.0, max_iter=2, accountant=_acc(), random_state=0
        ).fit(np.ones((40, 1)), y)
    assert np.all(np.isfinite(reg.target_range_))


def test_feature_bounds_as_wide_as_the_doubles_give_equal_width_bins():
    # LOW. feature_bounds=(-max, max) is accepted (finite), but
    # np.linspace(-max, max, 9) has an infinite step: the edges were
    # [nan, inf, ..., inf, max], a RuntimeWarning was raised before the
    # charge, and every row fell in one bin: a silently useless model
    # (accuracy 0.54 on a sign rule at epsilon=100).
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 1)) * 1e308
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = PrivateHistGradientBoostingClassifier(boosting="trees",
            epsilon=100.0, max_iter=3, feature_bounds=(-MAX, MAX),
            classes=[0, 1], accountant=_acc(), random_state=0,
        ).fit(X, y)  # fmt: skip
    edges = clf._bin_mapper.edges[0]
    assert np.all(np.isfinite(edges)) and edges[0] == -MAX and edges[-1] == MAX
    assert np.allclose(np.diff(edges), MAX / 4, rtol=1e-12)
    assert clf.bin_thresholds_[0][3] == 0.0
    assert clf.score(X, y) > 0.95


def test_private_target_range_beyond_the_sampler_is_refused_before_the_charge():
    # LOW. The regressor's private target range (a histogram of 257 counts)
    # was left out of the plan: at epsilon=1e-6, delta=1e-8 with public
    # feature bounds the plan passed, the fit was charged, and the target
    # range's release raised "Cannot represent a Gaussian release" after it.
    X = np.linspace(-1, 1, 40)[:, None]
    acc = _acc()
    reg = PrivateHistGradientBoostingRegressor(
        epsilon=1e-6, delta=1e-8, max_iter=1, max_depth=1, max_bins=2,
        feature_bounds=(-1, 1), accountant=acc, random_state=0,
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"target range.*Nothing was charged"):
        reg.fit(X, X[:, 0])
    assert not acc.entries
    reg.set_params(target_bounds=(-1, 1)).fit(X, X[:, 0])  # no target range
    assert acc.total() == (1e-6, 1e-8)


def test_stated_classes_times_rows_beyond_memory_are_refused_before_the_charge(
    monkeypatch,
):
    # MEDIUM. A multiclass fit keeps n x K raw scores, probabilities,
    # gradients and hessians; 1e6 rows and 5,000 stated classes passed the
    # plan (40 GB per array) and were charged. Refused now above 2**26. The
    # rows are a broadcast view (no memory) and the labelling is replaced,
    # so the old code cannot allocate them either.
    monkeypatch.setattr(gb_module, "grow_tree", _no_tree)
    monkeypatch.setattr(gb_module.LabelPlan, "run", lambda self, X, y, s: _no_tree())
    n, k = 1 << 14, (1 << 12) + 1
    X = np.broadcast_to(np.zeros(1), (n, 1))
    y = np.arange(n) % k
    acc = _acc()
    clf = PrivateHistGradientBoostingClassifier(
        max_iter=1, max_depth=1, max_bins=2, feature_bounds=(-1, 1),
        classes=np.arange(k), accountant=acc,
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"2\*\*26.*Nothing was charged"):
        clf.fit(X, y)
    assert not acc.entries
    clf.set_params(classes=np.arange(k - 1))
    with pytest.raises(_Grew):  # 2**14 x 2**12 = 2**26: past the plan
        clf.fit(X, y % (k - 1))


def test_drawn_releases_compose_below_the_certified_gaussian_exactly(monkeypatch):
    # held: sum 1/r_i² over the releases actually drawn (r_i as the floats
    # the sampler got), in exact rationals, is at most 1/R*², R* the
    # certified ratio before the sampler's 1e-10 margin: the float rounding
    # of the shares (a relative 4e-16 at most, measured) stays inside it.
    from fractions import Fraction

    from skdp.ensemble._hist_gradient_boosting import binning, grower, histogram
    from skdp.ensemble._hist_gradient_boosting import loss as loss_module
    from skdp.linear_model._release import gaussian_fit_cost
    from skdp.mechanisms import _gaussian

    calls = []
    for module in (binning, histogram, grower, loss_module):
        real = module.gaussian_release

        def spy(value, sens, multiplier, *, random_state=None, real=real):
            calls.append(float(multiplier))
            return real(value, sens, multiplier, random_state=random_state)

        monkeypatch.setattr(module, "gaussian_release", spy)
    X, _ = _data(400)
    y = np.arange(400) % 3
    PrivateHistGradientBoostingClassifier(boosting="trees",
        epsilon=0.7, max_iter=3, max_depth=2, classes=[0, 1, 2],
        accountant=_acc(), random_state=0,
    ).fit(X, y)  # fmt: skip
    assert len(calls) == 1 + 1 + 3 * 3 * (2 + 1)  # bins, baseline, trees
    total = sum(Fraction(1) / Fraction(r) ** 2 for r in calls)
    charged = gaussian_fit_cost(0.7, 1e-6).noise_multiplier
    assert charged == _gaussian._sigma_ratio(0.7, 1e-6)
    certified = Fraction(_gaussian._certified_ratio(0.7, 1e-6))
    assert total * certified**2 <= 1
    assert abs(float(total * Fraction(charged) ** 2) - 1) < 1e-14


# MEDIUM, fixed: with classes=None the number K of released labels was
# known only after the charge, and nothing capped rows x K: a target with
# thousands of frequent labels (IDs, zip codes) was charged, then allocated
# n x K arrays (40 GB at 1e6 rows x 5,000 labels). Now the plan assumes the
# public max_classes labels (refused before the charge when rows x
# max_classes do not fit), and a fit keeps at most max_classes labels.
def test_private_label_set_too_large_for_memory_is_not_charged(monkeypatch):
    n, k = 1 << 14, (1 << 12) + 1

    def many_labels(values, epsilon, delta, *, random_state=None):
        return np.arange(k), np.asarray(values).astype(int)

    monkeypatch.setattr(_labels, "select_labels", many_labels)
    monkeypatch.setattr(gb_module, "release_baseline", _no_tree)  # no n x K
    X = np.zeros((n, 1))
    acc = _acc()
    clf = PrivateHistGradientBoostingClassifier(
        max_iter=1, max_depth=1, max_bins=2, feature_bounds=(-1, 1),
        max_classes=k, accountant=acc,
    )  # fmt: skip
    with pytest.raises(ValueError, match="Nothing was charged"):
        clf.fit(X, np.arange(n) % k)
    assert not acc.entries
    with pytest.raises(ValueError, match=r"max_classes.*Nothing was charged"):
        clf.set_params(max_classes=(1 << 12) + 1).fit(X, np.arange(n) % k)
    assert not acc.entries


def test_private_label_set_beyond_max_classes_keeps_its_first_labels(monkeypatch):
    # the rule on a released set larger than planned cannot raise: the
    # first max_classes labels (sorted) and their rows are kept, so the
    # arrays stay n x max_classes (here 5 of 4,097 released labels)
    n, k = 1 << 14, (1 << 12) + 1

    def many_labels(values, epsilon, delta, *, random_state=None):
        return np.arange(k), np.asarray(values).astype(int)

    seen = []

    def spy_baseline(loss, target, n_outputs, multiplier, source):
        seen.append((n_outputs, target.size, int(target.max())))
        raise _Grew

    monkeypatch.setattr(_labels, "select_labels", many_labels)
    monkeypatch.setattr(gb_module, "release_baseline", spy_baseline)
    acc = _acc()
    clf = PrivateHistGradientBoostingClassifier(
        max_iter=1, max_depth=1, max_bins=2, feature_bounds=(-1, 1),
        max_classes=5, accountant=acc,
    )  # fmt: skip
    with pytest.raises(_Grew):  # past the charge, with 5 classes
        clf.fit(np.zeros((n, 1)), np.arange(n) % k)
    planned = fit_cost(clf)
    assert acc.total() == (planned.epsilon, planned.delta)
    rows = int(np.sum(np.arange(n) % k < 5))
    assert seen == [(5, rows, 4)]
