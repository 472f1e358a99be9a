"""PrivateQuantile: rank-score sensitivity, sampling law, ties, audits."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

from skdp import BudgetAccountant
from skdp.audit import assert_dp, audit_mechanism
from skdp.exceptions import NoiseDominatedWarning
from skdp.mechanisms import check_random_source
from skdp.mechanisms._quantile_sampling import (
    sample_log_weights,
    uniform_grid_points,
)
from skdp.sensitivity._quantile import (
    candidate_cell_counts,
    candidate_rank_scores,
    quantile_score_sensitivity,
)
from skdp.sensitivity._quantile_grid import (
    RelativeGrid,
    grid_score_classes,
    quantile_grid_exponent,
)
from skdp.stats import _quantile as quantile_module
from skdp.stats import _quantile_release as release_module
from skdp.stats._quantile import (
    PrivateQuantile,
    exponential_release,
    permute_and_flip_release,
    sorted_clipped_column,
)
from skdp.stats._quantile_release import candidate_grid

ALPHA = 1e-6
LEVELS = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)


# -- the rank score and its sensitivity, by brute force ----------------------

BF_LOWER, BF_UPPER = 0.0, 4.0
BF_DOMAIN = (-1.0, 0.0, 1.0, 2.0, 3.0, 5.0)  # -1 and 5 are clipped to the bounds
BF_PROBES = np.arange(-0.5, 4.75, 0.25)  # on and between every clipped value


def oracle_score(data, y, q, lower=BF_LOWER, upper=BF_UPPER):
    """u(y; x) = -|(1 - q) #{x < y} - q #{x > y}| by direct counting."""
    clipped = [min(max(v, lower), upper) for v in data]
    below = sum(v < y for v in clipped)
    above = sum(v > y for v in clipped)
    return -abs((1 - q) * below - q * above)


BF_EXPONENT = -2  # a coarse public grid of [0, 4] for the brute force: 17 points
BF_GRID = np.arange(17) * 0.25


def code_grid_scores(data, q):
    """The score of every point of the coarse grid, from the code's classes."""
    column = sorted_clipped_column(np.array(data, dtype=float), BF_LOWER, BF_UPPER)
    first, counts, scores = grid_score_classes(
        column, BF_LOWER, BF_UPPER, BF_EXPONENT, q
    )
    assert counts.sum() == BF_GRID.size  # the classes partition the grid
    index = np.concatenate(
        [np.arange(f, f + c) for f, c in zip(first, counts, strict=True)]
    )
    np.testing.assert_array_equal(index, np.arange(BF_GRID.size))  # in order
    return np.repeat(scores, counts)


def all_datasets(max_rows):
    for n in range(max_rows + 1):
        yield from itertools.combinations_with_replacement(BF_DOMAIN, n)


def test_scores_match_the_rank_definition():
    # every multiset of <= 4 rows: the code's candidate scores equal the
    # direct count at every probe, and the grid classes give every grid point
    # (atoms on tied values included) its direct score
    for data in all_datasets(4):
        column = sorted_clipped_column(np.array(data, dtype=float), 0.0, 4.0)
        for q in (0.0, 0.3, 0.5, 1.0):
            oracle = np.array([oracle_score(data, y, q) for y in BF_PROBES])
            np.testing.assert_allclose(
                candidate_rank_scores(column, BF_PROBES, q), oracle, atol=1e-12
            )
            on_grid = np.array([oracle_score(data, y, q) for y in BF_GRID])
            np.testing.assert_allclose(code_grid_scores(data, q), on_grid, atol=1e-12)


def test_score_sensitivity_by_brute_force_over_add_remove():
    # every multiset of <= 6 rows (<= 5 for the grid classes) over a 6-value
    # domain, every added row (removal is the same pair reversed), every
    # output, seven levels: the change of the code's scores never exceeds
    # max(q, 1 - q), and that bound is attained
    claimed = np.array([quantile_score_sensitivity(q) for q in LEVELS])
    worst_candidate = np.zeros(len(LEVELS))
    worst_grid = np.zeros(len(LEVELS))
    for data in all_datasets(6):
        base = sorted_clipped_column(np.array(data, dtype=float), 0.0, 4.0)
        for row in BF_DOMAIN:
            grown = sorted_clipped_column(np.append(base, row), 0.0, 4.0)
            for k, q in enumerate(LEVELS):
                change = candidate_rank_scores(grown, BF_PROBES, q)
                change -= candidate_rank_scores(base, BF_PROBES, q)
                worst_candidate[k] = max(worst_candidate[k], np.abs(change).max())
                if len(data) <= 5:
                    change = code_grid_scores((*data, row), q)
                    change -= code_grid_scores(data, q)
                    worst_grid[k] = max(worst_grid[k], np.abs(change).max())
    assert np.all(worst_candidate <= claimed + 1e-12)
    assert np.all(worst_grid <= claimed + 1e-12)
    np.testing.assert_allclose(worst_candidate, claimed)  # tight
    np.testing.assert_allclose(worst_grid, claimed)


def test_scores_are_not_monotone():
    # adding a row at the bottom raises the score below the median and lowers
    # it above: the selection needs the general 2Δ/ε scale
    base = np.array([1.0, 2.0, 3.0])
    grown = np.array([0.0, 1.0, 2.0, 3.0])
    probes = np.array([0.5, 3.5])
    change = candidate_rank_scores(grown, probes, 0.5)
    change -= candidate_rank_scores(base, probes, 0.5)
    assert change[0] > 0 > change[1]


# -- the public grid ------------------------------------------------------------


@pytest.mark.parametrize(
    "lower, upper",
    [(0.0, 120.0), (-3.0, 5.0), (1e9, 1e9 + 1.0), (-1.7e308, 1.7e308), (0, 5e-324 * 8)],
)
def test_grid_points_are_doubles_with_small_indices(lower, upper):
    k = quantile_grid_exponent(lower, upper)
    step = 2.0**k
    assert abs(upper) / step <= 2**53 and abs(lower) / step <= 2**53
    # fine enough: at least 2**32 points, unless doubles are coarser there
    assert (upper - lower) / step >= 2**32 or step == np.spacing(max(-lower, upper))


@pytest.mark.parametrize("q", [0.0, 0.03, 0.5, 0.97, 1.0])
@pytest.mark.parametrize("scale", [0.01, 1.0, 50.0])
@pytest.mark.parametrize("kind", ["continuous", "tied", "tiny gaps"])
def test_window_gives_the_full_selection_distribution(q, scale, kind):
    # the classes near the target rank carry all the probability the float
    # sampler can give: the law equals that of all classes
    rng = np.random.default_rng(3)
    if kind == "continuous":
        x = rng.normal(0, 1, 4000)
    elif kind == "tied":
        x = np.where(rng.random(4000) < 0.9, 0.0, rng.integers(1, 5, 4000))
    else:  # a cluster of near-ties next to long gaps
        x = np.concatenate([1e-12 * rng.random(3000), rng.uniform(-3, 3, 1000)])
    column = sorted_clipped_column(x, -3.0, 5.0)
    k = quantile_grid_exponent(-3.0, 5.0)

    def law(first, counts, log_w):
        weights = np.exp(log_w - log_w.max())
        return dict(
            zip(first.tolist(), (weights / weights.sum()).tolist(), strict=True)
        )

    full_first, full_counts, full_scores = grid_score_classes(column, -3.0, 5.0, k, q)
    full = law(full_first, full_counts, np.log(full_counts) + scale * full_scores)
    window = law(*release_module._windowed_classes(column, -3.0, 5.0, k, q, scale))
    for first, p in full.items():
        assert window.get(first, 0.0) == pytest.approx(p, rel=1e-9, abs=1e-300)


def test_grid_classes_are_exact_for_values_off_and_on_the_grid():
    # 2.5 is on the grid of 0.5, 1/3 is not; the tiny value 5e-324 divided by
    # a step of 4 underflows: the exact floor correction keeps it off the atom 0
    for values, k in [([1 / 3, 2.5, 2.5], -1), ([5e-324, 3.0], 2)]:
        column = np.sort(np.array(values))
        step = 2.0**k
        grid = np.arange(np.ceil(0 / step), np.floor(4.0 / step) + 1) * step
        first, counts, scores = grid_score_classes(column, 0.0, 4.0, k, 0.5)
        expanded = np.repeat(scores, counts)
        np.testing.assert_array_equal(
            expanded, candidate_rank_scores(column, grid, 0.5)
        )
        np.testing.assert_array_equal(first[0] * step, grid[0])


# -- exact sampling distributions --------------------------------------------


def chi_square_pvalue(counts, probabilities):
    expected = probabilities * counts.sum()
    keep = expected > 0
    assert counts[~keep].sum() == 0  # nothing where the probability is zero
    return stats.chisquare(counts[keep], expected[keep]).pvalue


def test_exponential_samples_follow_the_exact_grid_law():
    # data with a tie block on the grid (2.0), a value off it (1/3) and a
    # clipped row; the probability of each class of grid points is
    # count * exp(eps * u / (2 Δ)) with u the rank score (n = 6, q = 0.3,
    # Δ = 0.7), the counts from the step 2**k of [0, 5]
    x = np.array([2.0, 1 / 3, 2.0, 7.0, 2.0, 3.5])
    lower, upper, q, eps = 0.0, 5.0, 0.3, 2.0
    step = 2.0 ** quantile_grid_exponent(lower, upper)
    points = {  # (region, grid points in it, rows below, rows above)
        "[0, 1/3)": (np.floor((1 / 3) / step) + 1, 0, 6),
        "(1/3, 2)": (2.0 / step - np.floor((1 / 3) / step) - 1, 1, 5),
        "2": (1, 1, 2),
        "(2, 3.5)": ((3.5 - 2.0) / step - 1, 4, 2),
        "3.5": (1, 4, 1),
        "(3.5, 5)": ((5.0 - 3.5) / step - 1, 5, 1),
        "5": (1, 5, 0),
    }
    weights = np.array(
        [
            c * np.exp(eps * -abs((1 - q) * a - q * b) / 1.4)
            for c, a, b in points.values()
        ]
    )
    column = sorted_clipped_column(x, lower, upper)
    y = exponential_release(
        column, lower, upper, np.array([q]), eps, check_random_source(11), 400_000
    )[:, 0]
    assert np.all(y / step == np.floor(y / step))  # grid points only
    regions = [
        y < 1 / 3,
        (y > 1 / 3) & (y < 2),
        y == 2,
        (y > 2) & (y < 3.5),
        y == 3.5,
        (y > 3.5) & (y < 5),
        y == 5,
    ]
    counts = np.array([r.sum() for r in regions])
    assert counts.sum() == y.size
    assert chi_square_pvalue(counts, weights / weights.sum()) > ALPHA
    # uniform inside the chosen class
    inside = (y[(y > 2.0) & (y < 3.5)] - 2.0) / 1.5
    assert stats.kstest(inside, "uniform").pvalue > ALPHA


@pytest.mark.parametrize(
    "d0, d1, q, bounds",
    [
        ([0.3], [0.3, 0.6], 0.5, (0.0, 1.0)),  # the review's first example
        (list(range(17, 91)) * 10, [*range(17, 91)] * 10 + [16], 0.01, (0, 120)),
    ],
)
@pytest.mark.parametrize("method", ["joint", "exponential"])
def test_outputs_lie_on_the_public_grid_for_every_dataset(d0, d1, q, bounds, method):
    # main drew left + U*half + U*half between data values: 595/5000 outputs
    # of d1 were unreachable from d0 (eps >= 5 at a claim of 1)
    step = 2.0 ** quantile_grid_exponent(*bounds)
    grid = RelativeGrid(*bounds)
    for data in (d0, d1):
        est = PrivateQuantile(q, bounds=bounds, method=method, random_state=None)
        out = np.array([est.fit(np.c_[data]).quantiles_[0, 0] for _ in range(300)])
        if method == "exponential":
            assert np.all(out / step == np.floor(out / step))
        else:
            np.testing.assert_array_equal(grid.points(grid.floor_index(out)), out)
        assert np.all((out >= bounds[0]) & (out <= bounds[1]))


def test_uniform_grid_points_are_exact_and_uniform():
    first = np.full(300_000, 7.0)
    points = uniform_grid_points(first, np.full(300_000, 5), -3, random_state=0)
    index = points * 8.0 - 7.0
    np.testing.assert_array_equal(index, np.round(index))
    counts = np.bincount(index.astype(int), minlength=5)
    assert counts.size == 5
    assert chi_square_pvalue(counts, np.full(5, 0.2)) > ALPHA


def permute_and_flip_probabilities(scores, epsilon, sensitivity):
    """P(argmax(u_r + Expo(2Δ/ε)) = r) by numerical integration."""
    gaps = (scores - scores.max()) * epsilon / (2 * sensitivity)

    def density(t, r):
        others = np.delete(gaps, r)
        return np.exp(-(t - gaps[r])) * np.prod(1 - np.exp(-(t - others)))

    # the top candidate's noise is >= 0, so the winner's value is >= 0
    return np.array(
        [integrate.quad(density, 0, np.inf, args=(r,))[0] for r in range(gaps.size)]
    )


def test_permute_and_flip_samples_follow_the_exact_law():
    x = np.array([1.0, 2.0, 2.0, 3.5, 7.0])
    candidates = np.array([0.0, 1.0, 2.0, 2.5, 3.0, 5.0])
    q, eps = 0.5, 1.0
    scores = np.array([oracle_score(x, c, q, 0.0, 5.0) for c in candidates])
    probabilities = permute_and_flip_probabilities(scores, eps, 0.5)
    assert probabilities.sum() == pytest.approx(1.0, abs=1e-9)

    counts = candidate_cell_counts(x, candidates, 0.0, 5.0)
    y = permute_and_flip_release(
        counts, candidates, np.array([q]), eps, check_random_source(5), 400_000
    )[:, 0]
    counts = np.array([(y == c).sum() for c in candidates])
    assert counts.sum() == y.size  # outputs are candidates only
    assert chi_square_pvalue(counts, probabilities) > ALPHA


@pytest.mark.parametrize("method", ["exponential", "permute_and_flip"])
def test_fit_draws_exactly_what_the_audited_release_draws(method):
    # the audits below run the vectorised release functions; a fit with the
    # same seed must give the same value, so the audits cover fit's path
    X = np.array([[0.0], [0.9], [0.95]])
    levels = np.array([0.5])
    column = sorted_clipped_column(X[:, 0], 0.0, 1.0)
    grid = np.linspace(0.0, 1.0, 21)
    for seed in range(50):
        est = PrivateQuantile(
            epsilon=1.0, bounds=(0, 1), method=method, candidates=21, random_state=seed
        ).fit(X)
        source = check_random_source(seed)
        if method == "exponential":
            expected = exponential_release(column, 0.0, 1.0, levels, 1.0, source)
        else:
            counts = candidate_cell_counts(X[:, 0], grid, 0.0, 1.0)
            expected = permute_and_flip_release(counts, grid, levels, 1.0, source, 1)
        assert est.quantiles_[0, 0] == expected[0, 0]


# -- heavy ties, accuracy, edge cases -----------------------------------------


@pytest.mark.parametrize("method", ["joint", "exponential", "permute_and_flip"])
@pytest.mark.parametrize("n", [1, 1000, 100_000])
def test_all_zeros_never_crash(method, n):
    # diffprivlib 0.6.6 raised "Can't find a candidate to return" here
    X = np.zeros((n, 1))
    levels = (0.0, 0.25, 0.5, 0.75, 1.0)
    for bounds in [(-10, 10), (0, 10), (-10, 0)]:
        est = PrivateQuantile(levels, bounds=bounds, method=method, random_state=0)
        out = est.fit(X).quantiles_
        assert out.shape == (5, 1)
        assert np.all(np.isfinite(out))
        assert np.all((out >= bounds[0]) & (out <= bounds[1]))


def test_all_zeros_on_the_grid_gives_zero():
    # 0 is a public candidate (the lower bound): u(0) = 0, every other
    # candidate scores -n/2, so 0 wins with probability 1 - O(1000 e^-500)
    X = np.zeros((1000, 1))
    est = PrivateQuantile(bounds=(0, 10), method="permute_and_flip", random_state=0)
    assert est.fit(X).quantiles_[0, 0] == 0.0


def capital_gain_like(n, seed):
    """95% zeros, the rest spread over [1, 99999] (like Adult's capital-gain)."""
    rng = np.random.default_rng(seed)
    positive = np.exp(rng.uniform(0, np.log(99_999), n)).round()
    return np.where(rng.random(n) < 0.95, 0.0, positive).reshape(-1, 1)


def test_mostly_zeros_gives_sane_quantiles():
    X = capital_gain_like(30_000, seed=0)
    for seed in range(5):
        exp = PrivateQuantile((0.5, 0.99), bounds=(0, 100_000), random_state=seed).fit(
            X
        )
        # 0 is an atom of the grid with the median's rank: main released a
        # uniform point of (0, smallest positive value) instead
        assert exp.quantiles_[0, 0] == 0.0
        rank = (X[:, 0] < exp.quantiles_[1, 0]).sum()
        assert abs(rank - 0.99 * X.shape[0]) <= 200
        pf = PrivateQuantile(
            (0.5, 0.99),
            bounds=(0, 100_000),
            method="permute_and_flip",
            random_state=seed,
        ).fit(X)
        assert pf.quantiles_[0, 0] == 0.0  # 0 is on the default grid


def test_tie_block_at_the_median_stays_between_its_neighbours():
    # hours-per-week style: half the rows at 40, the rest spread 1..99; the
    # target rank falls inside the block of 40s, whose neighbouring
    # intervals are [39, 40] and [40, 41]
    rng = np.random.default_rng(1)
    X = np.where(rng.random(20_000) < 0.5, 40.0, rng.integers(1, 100, 20_000))
    X = X.reshape(-1, 1).astype(float)
    for seed in range(5):
        est = PrivateQuantile(bounds=(0, 100), random_state=seed).fit(X)
        assert 39.0 <= est.quantiles_[0, 0] <= 41.0


@pytest.mark.parametrize(
    "method, tolerance",
    [("joint", 0.01), ("exponential", 0.01), ("permute_and_flip", 0.03)],
)
def test_accuracy_on_many_normal_rows(method, tolerance):
    # rank error of a few rows at eps/3 per level; the grid spacing is 0.02
    X = np.random.default_rng(2).normal(0, 1, size=(100_000, 1))
    est = PrivateQuantile(
        (0.25, 0.5, 0.75), bounds=(-10, 10), method=method, random_state=0
    ).fit(X)
    truth = np.quantile(X, [0.25, 0.5, 0.75], axis=0)
    np.testing.assert_allclose(est.quantiles_, truth, atol=tolerance)


def test_extreme_levels_and_huge_bounds():
    X = np.array([[-1e308], [3.0], [1e308]])
    for method in ("joint", "exponential", "permute_and_flip"):
        est = PrivateQuantile(
            (0.0, 1.0), bounds=(-1.7e308, 1.7e308), method=method, random_state=0
        ).fit(X)
        assert np.all(np.isfinite(est.quantiles_))
    one_row = PrivateQuantile((0.0, 1.0), bounds=(0, 1), random_state=0)
    assert np.all(np.isfinite(one_row.fit([[0.5]]).quantiles_))


def test_custom_candidates_are_the_only_outputs():
    X = np.random.default_rng(4).uniform(0, 1, size=(500, 2))
    grid = [0.1, 0.4, 0.5, 0.6, 0.9]
    est = PrivateQuantile(
        (0.1, 0.5, 0.9),
        bounds=(0, 1),
        method="permute_and_flip",
        candidates=grid,
        random_state=0,
    ).fit(X)
    assert np.isin(est.quantiles_, grid).all()
    coarse = PrivateQuantile(
        bounds=(0, 1), method="permute_and_flip", candidates=3, random_state=0
    ).fit(X)
    assert np.isin(coarse.quantiles_, [0.0, 0.5, 1.0]).all()


# -- budget, ledger, validation ------------------------------------------------


@pytest.mark.parametrize(
    "method, released, each",
    # one call per feature: 0.6 / (3 * 2) per level, or 0.6 / 2 for all
    [("exponential", "exponential_release", 0.1), ("joint", "joint_release", 0.3)],
)
def test_epsilon_spent_equals_the_ledger_and_is_split_evenly(
    monkeypatch, method, released, each
):
    seen = []

    def recording_release(column, lower, upper, levels, epsilon, source, n_runs=1):
        seen.append(epsilon)
        out = np.zeros((n_runs, levels.size))
        return out if method == "exponential" else out[0]

    monkeypatch.setattr(quantile_module, released, recording_release)
    acc = BudgetAccountant(epsilon=1.0)
    X = np.random.default_rng(0).uniform(0, 1, size=(50, 2))
    est = PrivateQuantile(
        (0.1, 0.5, 0.9), epsilon=0.6, bounds=(0, 1), method=method, accountant=acc
    )
    est.fit(X)
    assert seen == [pytest.approx(each)] * 2
    assert len(acc.entries) == 1
    entry = acc.entries[0]
    assert entry.label.startswith("PrivateQuantile: quantiles (0.1, 0.5, 0.9) of 2")
    assert (est.epsilon_spent_, est.delta_spent_) == (entry.epsilon, entry.delta)
    assert acc.total() == pytest.approx((0.6, 0.0))
    with pytest.raises(Exception, match="exceed"):
        PrivateQuantile(epsilon=0.5, bounds=(0, 1), accountant=acc).fit(X)
    assert len(acc.entries) == 1


@pytest.mark.parametrize(
    "kwargs, X, match",
    [
        ({"upper_limit": 0}, np.ones((3, 1)), "upper_limit"),
        ({"bounds_share": 1.0}, np.ones((3, 1)), "bounds_share"),
        (
            {"method": "permute_and_flip", "candidates": [0, 1, 1]},
            np.ones((3, 1)),
            "strictly increasing",
        ),
        ({"bounds": (0, 1)}, np.array([[np.nan]]), "NaN or inf"),
        ({"bounds": (0, 1)}, np.empty((0, 1)), "0 sample"),
        ({"bounds": (1, 0)}, np.ones((3, 1)), "lower bound must be < upper"),
        ({"bounds": (0, 1), "quantiles": (0.5, 1.5)}, np.ones((3, 1)), r"\[0, 1\]"),
        ({"bounds": (0, 1), "quantiles": [np.nan]}, np.ones((3, 1)), r"\[0, 1\]"),
        ({"bounds": (0, 1), "quantiles": []}, np.ones((3, 1)), "non-empty"),
        ({"bounds": (0, 1), "quantiles": 2.0}, np.ones((3, 1)), "quantiles"),
        ({"bounds": (0, 1), "epsilon": 0}, np.ones((3, 1)), "epsilon"),
        ({"bounds": (0, 1), "method": "median"}, np.ones((3, 1)), "method"),
        (
            {"bounds": (0, 1), "method": "permute_and_flip", "candidates": [0, 1, 1]},
            np.ones((3, 1)),
            "strictly increasing",
        ),
        (
            {"bounds": (0, 1), "method": "permute_and_flip", "candidates": [[0, 1]]},
            np.ones((3, 1)),
            "1-D",
        ),
        (
            {"bounds": (0, 1), "method": "permute_and_flip", "candidates": 1},
            np.ones((3, 1)),
            "candidates",
        ),
        ({"bounds": (0, 1), "epsilon": 5.0}, np.ones((3, 1)), "exceed"),
    ],
)
def test_bad_input_charges_nothing(kwargs, X, match):
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(Exception, match=match):
        PrivateQuantile(accountant=acc, **kwargs).fit(X)
    assert acc.entries == ()


def test_pandas_input_keeps_feature_names():
    X = pd.DataFrame({"age": [20.0, 40.0, 60.0, 35.0], "hours": [30.0, 40, 50, 40]})
    est = PrivateQuantile((0.25, 0.75), bounds=([0, 0], [100, 80]), random_state=0)
    est.fit(X)
    assert list(est.feature_names_in_) == ["age", "hours"]
    assert est.quantiles_.shape == (2, 2)
    assert np.all(est.quantiles_ <= [[100, 80]])
    np.testing.assert_array_equal(est.upper_, [100, 80])


# -- empirical audits with mutation twins -------------------------------------

EPS = 1.0
AUDIT = {"n_samples": 300_000, "n_pilot": 50_000, "random_state": 0}
AUDIT_GRID = np.linspace(0.0, 1.0, 21)
# Worst cases found by computing the exact output laws of Smith's mechanism
# over all small neighbours on a 7-value domain (q = 1/2, bounds [0, 1]): a
# row added above the median moves the scores below and above it in opposite
# directions, the case where the general 2Δ/ε scale is needed.
SMITH_PAIRS = [([0.0], [0.0, 0.95]), ([0.0, 0.0, 0.8], [0.0, 0.0, 0.8, 0.95])]
PF_PAIRS = [([0.0, 0.9], [0.0, 0.9, 0.95]), ([0.2, 0.8], [0.0, 0.2, 0.8])]


def smith_runs(data, seed, n_runs=1):
    """The median by fit's exponential path, ``n_runs`` independent draws."""
    column = sorted_clipped_column(np.asarray(data, dtype=float), 0.0, 1.0)
    source = check_random_source(seed)
    return exponential_release(column, 0.0, 1.0, np.array([0.5]), EPS, source, n_runs)


def pf_runs(data, seed, n_runs=1):
    """The median by fit's permute-and-flip path, ``n_runs`` draws."""
    counts = candidate_cell_counts(np.asarray(data, dtype=float), AUDIT_GRID, 0, 1)
    source = check_random_source(seed)
    levels = np.array([0.5])
    return permute_and_flip_release(counts, AUDIT_GRID, levels, EPS, source, n_runs)


def half_sensitivity(q):
    """Mutant: the monotone scale Δ/ε on non-monotone scores."""
    return max(q, 1 - q) / 2


def classes_without_counts(sorted_clipped, lower, upper, k, q, rows=None):
    """Mutant: every class weighs as one point (its size is ignored)."""
    first, counts, scores = grid_score_classes(
        sorted_clipped, lower, upper, k, q, rows=rows
    )
    return first, np.ones_like(counts), scores


@pytest.mark.parametrize("d0, d1", SMITH_PAIRS)
def test_audit_exponential_passes(d0, d1):
    assert_dp(smith_runs, d0, d1, EPS, **AUDIT)


@pytest.mark.parametrize("d0, d1", PF_PAIRS)
def test_audit_permute_and_flip_passes(d0, d1):
    assert_dp(pf_runs, d0, d1, EPS, **AUDIT)


@pytest.mark.parametrize("runs", [smith_runs, pf_runs])
def test_audit_catches_the_monotone_scale(monkeypatch, runs):
    # exact loss of the mutant here: about 1.9 (permute-and-flip), 1.75 (EM)
    monkeypatch.setattr(release_module, "quantile_score_sensitivity", half_sensitivity)
    d0, d1 = (SMITH_PAIRS if runs is smith_runs else PF_PAIRS)[0]
    mutant = audit_mechanism(runs, d0, d1, **AUDIT)
    assert mutant.epsilon_lower_bound > 1.25 * EPS


def test_audit_catches_weights_without_class_sizes(monkeypatch):
    # a new row 0.001 creates the class (0, 0.001) of ~2**23 grid points out
    # of ~2**33; weighted as one point per class it takes a large share of
    # the mass instead of 0.04%
    monkeypatch.setattr(release_module, "grid_score_classes", classes_without_counts)
    mutant = audit_mechanism(smith_runs, [1.0], [0.001, 1.0], **AUDIT)
    assert mutant.epsilon_lower_bound > 3 * EPS
    monkeypatch.undo()
    assert_dp(smith_runs, [1.0], [0.001, 1.0], EPS, **AUDIT)


# -- the sampling primitives ---------------------------------------------------


def test_sample_log_weights_law_and_zero_weights():
    log_w = np.array([0.0, -np.inf, np.log(3.0), -np.inf, 1e6 - 1e6])
    draws = sample_log_weights(log_w, random_state=0, n_runs=200_000)
    counts = np.bincount(draws, minlength=5)
    assert counts[1] == counts[3] == 0
    probabilities = np.array([1.0, 0.0, 3.0, 0.0, 1.0]) / 5.0
    assert chi_square_pvalue(counts, probabilities) > ALPHA
    # huge log-weights are shifted by their maximum, never overflow
    assert sample_log_weights([1e308, -1e308, -np.inf], random_state=0) == 0


@pytest.mark.parametrize(
    "log_w, match",
    [([np.nan, 0.0], "NaN"), ([np.inf, 0.0], r"\+inf"), ([-np.inf] * 3, "zero")],
)
def test_sample_log_weights_refuses_bad_weights(log_w, match):
    with pytest.raises(ValueError, match=match):
        sample_log_weights(log_w, random_state=0)


@pytest.mark.parametrize("method", ["joint", "exponential", "permute_and_flip"])
def test_rank_error_bound_holds_and_reads_no_data(method):
    levels = (0.1, 0.5, 0.9)
    bounds = (-50.0, 50.0)
    rng = np.random.default_rng(7)
    X = rng.normal(0, 5, size=(1_000, 1))
    acc = BudgetAccountant(epsilon=1e6)
    fitted = [
        PrivateQuantile(
            levels, bounds=bounds, method=method, random_state=s, accountant=acc
        ).fit(X)
        for s in range(50)
    ]
    bound = fitted[0].rank_error_bound(alpha=0.05)
    assert bound.shape == (3, 1) and np.all(bound > 0)
    other = PrivateQuantile(levels, bounds=bounds, method=method, accountant=acc)
    np.testing.assert_array_equal(other.fit(X[:10] * 3).rank_error_bound(0.05), bound)
    looser = PrivateQuantile(
        levels, epsilon=0.5, bounds=bounds, method=method, accountant=acc
    ).fit(X)
    assert np.all(looser.rank_error_bound(0.05) > bound)
    # the grid realises every rank of continuous data within one row, and
    # the candidates (0.1 apart) within about 10 rows here
    slack = 1.0 if method != "permute_and_flip" else 12.0
    ordered = np.sort(X[:, 0])
    for est in fitted:
        for k, q in enumerate(levels):
            v = est.quantiles_[k, 0]
            below, at_most = (
                np.searchsorted(ordered, v),
                np.searchsorted(ordered, v, side="right"),
            )
            miss = max(below - q * 1_000, q * 1_000 - at_most, 0)
            assert miss <= bound[k, 0] + slack


# -- issue 27: accuracy whatever the width of the bounds ------------------------


@pytest.mark.parametrize("upper", [100.0, 1e5])
def test_joint_median_of_integers_is_exact_with_bounds_far_wider_than_the_data(
    upper,
):
    # hours-per-week style: 200 rows at 40 among 100 integers of 1..99. The
    # joint grid's step was (upper - lower) / 2**11: 32 for (0, 1e5), so 40
    # was no output and main released 32 in every fit; the relative grid
    # holds every integer below 512 whatever the bounds
    rng = np.random.default_rng(0)
    column = np.concatenate([np.full(200, 40.0), rng.integers(1, 100, 100)])
    acc = BudgetAccountant(epsilon=np.inf)
    released = [
        PrivateQuantile(
            (0.25, 0.5), epsilon=5.0, bounds=(0, upper), accountant=acc, random_state=s
        )
        .fit(column[:, None])
        .quantiles_[1, 0]
        for s in range(20)
    ]
    assert sum(v == 40.0 for v in released) >= 18


def test_joint_accuracy_does_not_depend_on_generous_bounds():
    # smooth data, 9 deciles: the mean rank error with bounds 10**4 times
    # wider than the data is that of tight bounds (the relative grid's base
    # measure is the step, as on a uniform grid: no pull towards 0 or the
    # empty space)
    rng = np.random.default_rng(3)
    deciles = np.arange(1, 10) / 10
    acc = BudgetAccountant(epsilon=np.inf)
    errors = {10.0: [], 1e5: []}
    for seed in range(30):
        x = rng.uniform(0, 10, 1000)
        ordered = np.sort(x)
        for upper in errors:
            est = PrivateQuantile(
                deciles, bounds=(0, upper), accountant=acc, random_state=seed
            ).fit(x[:, None])
            ranks = np.searchsorted(ordered, est.quantiles_[:, 0])
            errors[upper].append(np.abs(ranks - deciles * 1000).mean())
    tight, wide = np.mean(errors[10.0]), np.mean(errors[1e5])
    assert tight < 12 and wide < 12


def _rank_interval_error(column, value, level):
    """Distance of ``level`` from the rank interval of ``value`` (0 in a tie)."""
    below, at_most = np.mean(column < value), np.mean(column <= value)
    return (
        0.0
        if below <= level <= at_most
        else min(abs(below - level), abs(at_most - level))
    )


def test_default_bounds_are_chosen_privately_and_the_rest_releases():
    # without public bounds the search of PrivateMean spends bounds_share of
    # epsilon first and the quantiles the rest: two ledger entries summing to
    # epsilon, and at a large epsilon the sample quantiles of a column whose
    # scale (1e-3) no fixed wide default could resolve
    rng = np.random.default_rng(0)
    X = np.c_[rng.lognormal(-7, 1, 4000), -rng.lognormal(5, 2, 4000)]
    acc = BudgetAccountant(1e9)
    est = PrivateQuantile(
        (0.1, 0.5, 0.9), epsilon=1e5, accountant=acc, random_state=0
    ).fit(X)
    assert acc.total()[0] == 1e5
    assert len(acc.entries) >= 2
    assert acc.entries[-1].epsilon == pytest.approx(0.7e5)
    for j in range(2):
        assert est.lower_[j] <= X[:, j].min() or est.upper_[j] >= X[:, j].max()
        for k, level in enumerate((0.1, 0.5, 0.9)):
            error = _rank_interval_error(X[:, j], est.quantiles_[k, j], level)
            assert error * X.shape[0] <= 1.0


def test_fixed_wide_bounds_lose_a_small_column_that_private_bounds_keep():
    # the reason for the default: with bounds (-1e9, 1e9) almost all of the
    # grid's base measure lies outside a 1e-3-scale column, and at epsilon = 1
    # its median lands at 0 (50 rank points off; 0.15 with private bounds,
    # mean of 20 seeds)
    rng = np.random.default_rng(1)
    X = rng.lognormal(-7, 0.5, (3000, 1))
    wide = PrivateQuantile(
        epsilon=1.0,
        bounds=(-1e9, 1e9),
        accountant=BudgetAccountant(1e9),
        random_state=0,
    ).fit(X)
    with pytest.warns(NoiseDominatedWarning, match="upper_limit"):
        # near the grid's bottom for upper_limit=1e9: the warning names it
        private = PrivateQuantile(
            epsilon=1.0, accountant=BudgetAccountant(1e9), random_state=0
        ).fit(X)
    assert _rank_interval_error(X[:, 0], wide.quantiles_[0, 0], 0.5) > 0.4
    assert _rank_interval_error(X[:, 0], private.quantiles_[0, 0], 0.5) < 0.01


@pytest.mark.parametrize("method", ["joint", "exponential", "permute_and_flip"])
def test_an_all_zero_column_has_its_quantiles_at_zero(method):
    # the search bounds the empty negative side at 0 and the upper side at
    # its first candidate: the atom at 0 holds every level
    X = np.c_[np.zeros(500), np.arange(500.0)]
    est = PrivateQuantile(
        (0.25, 0.75),
        epsilon=1e4,
        method=method,
        candidates=[0.0, 0.5, 1.0, 300.0] if method == "permute_and_flip" else None,
        accountant=BudgetAccountant(1e9),
        random_state=0,
    ).fit(X)
    assert est.lower_[0] == 0.0
    assert np.all(est.quantiles_[:, 0] == 0.0)


@pytest.mark.parametrize("method", ["joint", "exponential", "permute_and_flip"])
def test_equal_released_bounds_give_their_value(method):
    # the public rule for released bounds of width 0 (no grid of width 0 is
    # built; the other features release as usual)
    X = np.c_[np.zeros(50), np.arange(50.0)]
    est = PrivateQuantile((0.25, 0.75), epsilon=1e4, method=method)
    lower, upper = np.array([0.0, 0.0]), np.array([0.0, 64.0])
    released = est._release(
        X, lower, upper, np.array([0.25, 0.75]), 1e4, check_random_source(0)
    )
    assert np.all(released[:, 0] == 0.0)
    assert np.all((released[:, 1] > 5) & (released[:, 1] < 45))


def test_public_bounds_release_as_before_the_private_default():
    # public bounds: one entry of the whole epsilon, as before (bit-identical
    # releases under a seed: the bounds plan adds nothing)
    X = np.random.default_rng(2).normal(5, 1, (1000, 2))
    acc = BudgetAccountant(10.0)
    est = PrivateQuantile(epsilon=1.0, bounds=(0, 10), accountant=acc, random_state=3)
    est.fit(X)
    assert len(acc.entries) == 1 and acc.total() == (1.0, 0.0)
    bound = est.rank_error_bound()
    private = PrivateQuantile(
        epsilon=1.0, accountant=BudgetAccountant(10), random_state=3
    )
    private.fit(X)
    # the quantiles get 0.7 of epsilon: a wider guaranteed rank error
    assert np.all(private.rank_error_bound() > bound)


@pytest.mark.parametrize(
    "lower, upper",
    [(5e-324, 1.0), (0.0, 3 * 2.0**-1074), (-3 * 2.0**-1074, 1e-300), (0.0, 1.0)],
)
def test_default_candidates_stay_in_subnormal_bounds(lower, upper):
    # the grid was built on halved bounds and doubled: a subnormal bound
    # rounds when halved (5e-324 / 2 is 0), and permute-and-flip released 0
    # below the bounds (5e-324, 1) or 2e-323 above (0, 1.5e-323)
    grid = candidate_grid(None, np.array([lower]), np.array([upper]))[:, 0]
    assert grid[0] == lower and grid[-1] == upper
    assert np.array_equal(grid, np.linspace(lower, upper, grid.size))
    est = PrivateQuantile(
        (0.01, 0.5, 0.99),
        bounds=(lower, upper),
        method="permute_and_flip",
        accountant=BudgetAccountant(np.inf),
        random_state=0,
    ).fit(np.zeros((50, 1)))
    assert np.all((est.quantiles_ >= lower) & (est.quantiles_ <= upper))


def test_default_candidates_on_bounds_beyond_the_float_range_stay_finite():
    big = np.finfo(float).max
    grid = candidate_grid(None, np.array([-big, 0.0]), np.array([big, 1.0]))
    assert np.all(np.isfinite(grid))
    assert grid[0].tolist() == [-big, 0.0] and grid[-1].tolist() == [big, 1.0]
    assert np.all(np.diff(grid, axis=0) > 0)
