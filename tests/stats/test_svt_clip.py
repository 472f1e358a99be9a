"""SVTClipSelector: private bounds by AboveThreshold over a public grid."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import skdp
from skdp import BudgetAccountant, DPClipper, SVTClipSelector
from skdp.audit import assert_dp, audit_mechanism
from skdp.exceptions import NoiseDominatedWarning
from skdp.mechanisms._laplace import laplace_mechanism
from skdp.mechanisms._svt import _svt_many
from skdp.sensitivity import soft_counts_above
from skdp.stats import _svt_clip as svt_module
from skdp.stats import _svt_search as search_module
from skdp.stats._svt_clip import plan_svt_bounds, svt_bound_widths


def test_charges_epsilon_split_over_sides_and_features():
    acc = BudgetAccountant(epsilon=1.0)
    X = np.random.default_rng(0).normal(size=(2_000, 3))
    sel = SVTClipSelector(0.8, accountant=acc, random_state=0).fit(X)
    # lower=None: a sign test (15%), then the searches (85%) of the sides
    # that the test finds occupied (both, for normal data)
    assert [(e.label, e.epsilon) for e in acc.entries] == [
        ("SVTClipSelector: bounds sign test (Laplace counts)", pytest.approx(0.12)),
        ("SVTClipSelector: bounds (SVT)", pytest.approx(0.68)),
    ]
    assert sel.epsilon_spent_ == pytest.approx(0.8)
    # three scales of the threshold noise Lap(1 / (0.8 * epsilon_run))
    assert sel.n_above_ == pytest.approx(3 / (0.8 * 0.68 / 3))
    assert np.all(sel.lower_ < 0) and np.all(sel.upper_ > 0)
    one_sided = SVTClipSelector(0.2, lower=-5.0, accountant=acc).fit(X)
    assert acc.entries[-1].label == "SVTClipSelector: upper bounds (SVT)"
    assert one_sided.epsilon_spent_ == pytest.approx(0.2)
    np.testing.assert_array_equal(one_sided.lower_, [-5.0] * 3)


def test_bounds_are_tight_on_heavy_tails():
    x = np.random.default_rng(1).lognormal(3, 1, size=(20_000, 1))
    for seed in range(20):
        sel = SVTClipSelector(1.0, lower=0.0, upper_limit=1e6, random_state=seed)
        upper = sel.fit(x).upper_[0]
        clipped = int((x > upper).sum())
        # about n_above = 6 rows above the bound, never a bound far off
        assert clipped <= 40
        assert upper < 2 * x.max()


def test_two_sided_bounds_contain_the_bulk():
    X = np.random.default_rng(2).normal(-50, 5, size=(5_000, 1))
    sel = SVTClipSelector(1.0, upper_limit=1e4, random_state=0).fit(X)
    assert sel.lower_[0] < np.quantile(X, 0.01)
    # the sign test finds no positive values: the upper bound is 0 and the
    # whole search budget goes to the lower side
    assert sel.upper_[0] == 0.0
    assert (sel.transform(X) == np.clip(X, sel.lower_, sel.upper_)).all()


def test_no_hit_falls_back_to_the_grid_top_not_the_first_candidate():
    # every value lies beyond the public grid: no query can fire except by
    # noise; the fallback is the top of the grid (data-independent), never a
    # wrapped-around index such as -1 or 0
    X = np.full((50, 1), 1e9)
    tops = {
        SVTClipSelector(1.0, lower=0.0, upper_limit=10.0, n_above=0, random_state=s)
        .fit(X)
        .upper_[0]
        for s in range(10)
    }
    assert tops == {10.0}


def test_grid_widths():
    widths = svt_bound_widths("geometric", 1e6)
    assert widths[-1] == 1e6 and widths[0] == pytest.approx(1e6 * 2**-40)
    assert np.allclose(widths[1:] / widths[:-1], 2**0.25)
    for bad in ([1.0], [2.0, 1.0], [0.0, 1.0], [1.0, np.inf]):
        with pytest.raises(ValueError, match="strictly increasing"):
            svt_bound_widths(bad, 1.0)


@pytest.mark.parametrize(
    "kwargs, X, match",
    [
        ({"grid": [3.0, 1.0]}, np.ones((5, 1)), "strictly increasing"),
        ({"lower": [0.0, 1.0]}, np.ones((5, 1)), r"shape \(1,\)"),
        ({"lower": np.nan}, np.ones((5, 1)), "finite"),
        ({}, np.array([[np.inf]]), "NaN or inf"),
        ({}, np.empty((0, 2)), "0 sample"),
        ({"epsilon": -1.0}, np.ones((5, 1)), "epsilon"),
        ({"epsilon": 2.0}, np.ones((5, 1)), "exceed"),
    ],
)
def test_bad_input_charges_nothing(kwargs, X, match):
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(Exception, match=match):
        SVTClipSelector(accountant=acc, **kwargs).fit(X)
    assert acc.entries == ()


def test_refuses_a_grid_whose_halved_candidates_merge_before_charging():
    # 4 and 5 units of 2**-1074 halve to the same double, and a grid reaching
    # the float limit is halved before the ramps are computed
    acc = BudgetAccountant(epsilon=1.0)
    sel = SVTClipSelector(grid=[2e-323, 2.5e-323, 1.7e308], accountant=acc)
    with pytest.raises(ValueError, match="Nothing was charged"):
        sel.fit(np.ones((5, 1)))
    assert acc.total() == (0.0, 0.0)


def test_odd_inputs():
    for X in (np.zeros((1, 1)), np.full((10, 2), 1e308), np.array([[True], [False]])):
        sel = SVTClipSelector(1.0, random_state=0).fit(X)
        assert np.all(sel.lower_ < sel.upper_)
    out = SVTClipSelector(random_state=0).set_output(transform="pandas")
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    assert list(out.fit_transform(df).columns) == ["a", "b"]


# -- audit on worst-case neighbours, with a mutation twin --------------------
# One added row far above the rest moves every soft count by 1 (sensitivity
# 1, all in the same direction): the worst case for the normalised queries.
# The release is audited vectorised (the selector's own query function and
# the same AboveThreshold, many runs at once), and end to end through fit.

GRID = 2.0 ** np.arange(-2, 12)  # 0.25 ... 2048
D0 = np.full((6, 1), 0.1)
D1 = np.vstack([D0, [[5000.0]]])
EPS = 1.0
N_ABOVE = 0.5


def select_upper(data, seed):
    sel = SVTClipSelector(EPS, lower=0.0, grid=GRID, n_above=N_ABOVE, random_state=seed)
    return float(sel.fit(data).upper_[0])


def select_upper_many(data, seed, n_runs):
    """The selector's release for n_runs independent runs at once."""
    queries = -QUERIES["soft counts"](data[:, 0], GRID)
    fired = _svt_many(
        queries,
        -N_ABOVE,
        EPS,
        monotonic=True,
        threshold_share=svt_module._THRESHOLD_SHARE,
        random_state=seed,
        n_runs=n_runs,
    )
    index = np.where(fired.any(axis=1), fired.argmax(axis=1) + 1, GRID.size - 1)
    return GRID[index]


# the query function of the vectorised release (the fit's, unless mutated)
QUERIES = {"soft counts": soft_counts_above}


def unnormalised_counts(x, candidates):
    """Mutant: S(b_{j+1}) - S(b_j) without dividing by the spacing."""
    upper = np.clip(x[:, None], None, candidates[None, 1:])
    lower = np.clip(x[:, None], None, candidates[None, :-1])
    return (upper - lower).sum(axis=0)


def test_vectorised_release_matches_fit():
    fitted = {select_upper(D1, seed) for seed in range(200)}
    batch = set(select_upper_many(D1, 0, 2000).tolist())
    assert fitted <= batch


def test_audit_svt_clip_selector():
    assert_dp(select_upper_many, D0, D1, EPS, n_samples=200_000, random_state=0)
    assert_dp(select_upper, D0, D1, EPS, n_samples=1_000, n_pilot=300, random_state=1)


def test_audit_catches_unnormalised_queries(monkeypatch):
    monkeypatch.setitem(QUERIES, "soft counts", unnormalised_counts)
    result = audit_mechanism(
        select_upper_many, D0, D1, n_samples=50_000, random_state=0
    )
    assert result.epsilon_lower_bound > 2 * EPS


# -- sign test (lower=None): sensitivity by brute force, audit with a twin ----


def sign_counts(X):
    """The sign counts as the fit computes them: from the two-sided tally."""
    plan = plan_svt_bounds(
        X.shape[1], 1.0, lower=None, upper_limit=10.0, grid="geometric", n_above=None
    )
    return search_module._sign_counts(search_module.svt_bounds_statistic(X, plan))


def test_sign_counts_l1_sensitivity_by_brute_force():
    # every dataset of at most 3 rows over a small domain, d = 1 and d = 2,
    # and every add/remove neighbour: the L1 change of the 2d sign counts is
    # at most d, and d is attained
    domain = [-2.0, 0.0, 3.0]
    for d in (1, 2):
        rows = list(itertools.product(domain, repeat=d))
        worst = 0.0
        for size in range(4):
            for data in itertools.combinations_with_replacement(rows, size):
                X = np.array(data, dtype=float).reshape(size, d)
                counts = sign_counts(X)
                for row in rows:  # add a row (removal is the reverse pair)
                    bigger = np.vstack([X, np.array(row)[None, :]])
                    change = np.abs(sign_counts(bigger) - counts).sum()
                    worst = max(worst, change)
        assert worst == d


SIGN_EPS = 1.0
SIGN_D0 = np.array([[-1.0]] * 3 + [[1.0]] * 3)  # 3 negatives: at the cutoff 3
SIGN_D1 = np.vstack([SIGN_D0, [[-1.0]]])


def sign_test_many(noise_factor):
    def mech(data, seed, n_runs):
        counts = np.tile(sign_counts(data), n_runs)
        noisy = laplace_mechanism(
            counts, noise_factor * data.shape[1], SIGN_EPS, random_state=seed
        )
        lower, upper = search_module._searched_sides(
            noisy.reshape(n_runs, -1), data.shape[1], SIGN_EPS
        )
        return 2 * lower[:, 0].astype(int) + upper[:, 0].astype(int)

    return mech


def test_audit_sign_test_and_halved_noise_twin():
    assert_dp(sign_test_many(1.0), SIGN_D0, SIGN_D1, SIGN_EPS, n_samples=200_000)
    mutant = audit_mechanism(
        sign_test_many(0.5), SIGN_D0, SIGN_D1, n_samples=200_000, random_state=0
    )
    assert mutant.epsilon_lower_bound > 1.25 * SIGN_EPS


def test_audit_two_sided_fit_end_to_end():
    # lower=None through fit: sign test then searches, on neighbours that
    # differ by a negative row far out
    def select(data, seed):
        sel = SVTClipSelector(EPS, grid=GRID, n_above=N_ABOVE, random_state=seed)
        sel.fit(data)
        return (float(sel.lower_[0]), float(sel.upper_[0]))

    d0 = np.vstack([D0, [[-0.1]] * 2])
    d1 = np.vstack([d0, [[-5000.0]]])
    assert_dp(select, d0, d1, EPS, n_samples=400, n_pilot=200, random_state=2)


def test_sign_test_bounds_non_negative_data_at_zero():
    x = np.random.default_rng(4).lognormal(3, 1, size=(5_000, 1))
    sel = SVTClipSelector(1.0, upper_limit=1e6, random_state=0).fit(x)
    assert sel.lower_[0] == 0.0 and x.max() / 2 < sel.upper_[0] < 2 * x.max()


# -- infeasible public parameters: an error before the charge (issue 13) ------
@pytest.mark.parametrize(
    "make",
    [
        lambda acc: SVTClipSelector(epsilon=1e-300, accountant=acc),
        lambda acc: SVTClipSelector(epsilon=1e-300, lower=0.0, accountant=acc),
        lambda acc: DPClipper(method="svt", epsilon=1e-300, accountant=acc),
        lambda acc: SVTClipSelector(lower=-1.7e308, accountant=acc),
        lambda acc: SVTClipSelector(lower=1.7e308, accountant=acc),
    ],
)
def test_infeasible_parameters_raise_before_charging(make):
    # main: eps=1e-300 charged two entries, then raised inside the sign test;
    # lower=±1.7e308 charged and returned lower_ == upper_ without a word
    acc = BudgetAccountant()
    X = np.random.default_rng(0).uniform(0, 100, (50, 1))
    with pytest.raises(ValueError, match="Nothing was charged"):
        make(acc).fit(X)
    assert acc.entries == ()


_MAX = np.finfo(float).max


@pytest.mark.parametrize(
    "make",
    [
        lambda acc: SVTClipSelector(lower=-1e308, upper_limit=_MAX, accountant=acc),
        lambda acc: SVTClipSelector(upper_limit=1.0, accountant=acc),
        lambda acc: skdp.PrivateQuantile(
            bounds=(-1e308, None), upper_limit=_MAX, accountant=acc
        ),
        lambda acc: skdp.PrivateQuantile(accountant=acc),
        lambda acc: skdp.PrivateMinMaxScaler(accountant=acc),
        lambda acc: skdp.IQRScale(accountant=acc),
    ],
)
def test_the_bound_search_raises_nothing_under_the_callers_errstate(make):
    # the caller chooses numpy's error state: with np.errstate(all="raise")
    # the search's layout (nextafter(-0.0, -1) underflows) raised after the
    # charge on any data, and the soft counts' ramp of one added subnormal
    # row (underflow in a multiply) on one neighbour but not the other: an
    # exception that tells the neighbours apart after the budget is spent
    base = np.random.default_rng(0).normal(0, 1, 300)
    for X in (base, np.r_[base, 5e-324]):
        acc = BudgetAccountant(np.inf)
        est = make(acc).set_params(random_state=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoiseDominatedWarning)
            with np.errstate(all="raise"):
                est.fit(X[:, None])
        assert acc.total()[0] == est.epsilon
