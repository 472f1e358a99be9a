"""The bound search from tallies releases what the sorted search released.

Same seed, same data: ``PrivateMean(bounds=None)`` and ``SVTClipSelector``
must give identical outputs with the tally search and with the sort-based
search of skdp up to ac0d316 (tests/_sorted_soft_counts.py), and a search on
the sum of chunks' statistics must equal the search on the whole data.
"""

import numpy as np
import pytest
from _sorted_soft_counts import sorted_run_svt_bounds

from skdp import BudgetAccountant, SVTClipSelector
from skdp.mechanisms import check_random_source
from skdp.preprocessing import PrivateMean
from skdp.stats import _svt_clip as svt_module
from skdp.stats._svt_clip import plan_svt_bounds
from skdp.stats._svt_search import (
    bounds_layouts,
    release_svt_bounds,
    run_svt_bounds,
    svt_bounds_statistic,
)


def datasets():
    rng = np.random.default_rng(0)
    ties = 1e9 * np.exp2(-np.arange(100, 60, -1) / 4)  # default grid points
    return {
        "normal, 2 features": rng.normal(0, 3, size=(500, 2)),
        "lognormal": rng.lognormal(2, 1, size=(300, 1)),
        "non-negative with zeros": np.r_[np.zeros(200), rng.exponential(5, 100)][
            :, None
        ],
        "negative, signed zeros": -np.abs(rng.normal(0, 1, (200, 1))) * 0.0
        + np.r_[np.full(100, -0.0), -rng.exponential(9, 100)][:, None],
        "grid ties": rng.choice(np.r_[ties, -ties, 0.0], size=(400, 3)),
        "one row": np.array([[3.0, -2.0]]),
        "lookup path, 3 features": rng.standard_t(2, size=(20_000, 3)) * 50,
    }


def fitted(estimator, X):
    fit = estimator.set_params(accountant=BudgetAccountant()).fit(X)
    names = ("mean_", "count_", "lower_", "upper_")
    return {name: getattr(fit, name) for name in names if hasattr(fit, name)}


def assert_same_release(make, X, module, monkeypatch, seeds):
    for seed in seeds:
        ours = fitted(make(seed), X)
        with monkeypatch.context() as patch:
            patch.setattr(module, "run_svt_bounds_record", sorted_run_svt_bounds)
            reference = fitted(make(seed), X)
        assert ours.keys() == reference.keys()
        for name, value in ours.items():
            np.testing.assert_array_equal(value, reference[name], err_msg=name)


@pytest.mark.parametrize("name", list(datasets()))
def test_private_mean_releases_what_the_sorted_search_released(name, monkeypatch):
    X = datasets()[name]
    seeds = range(40) if X.shape[0] < 10_000 else range(4)
    for bounds in (None, (0.0, None), (-3.5, None), (1000.0, None)):
        assert_same_release(
            lambda seed, b=bounds: PrivateMean(1.0, bounds=b, random_state=seed),
            X,
            svt_module,  # PrivateMean searches through _svt_clip
            monkeypatch,
            seeds,
        )


@pytest.mark.parametrize("name", ["normal, 2 features", "lookup path, 3 features"])
def test_selector_releases_what_the_sorted_search_released(name, monkeypatch):
    X = datasets()[name]
    grids = ("geometric", np.geomspace(1e-3, 1e6, 10_000), [0.5, 1.0, 3.0, 40.0])
    for grid in grids:
        for lower in (None, [-1.0, 0.0, 2.0][: X.shape[1]]):
            assert_same_release(
                lambda seed, g=grid, lo=lower: SVTClipSelector(
                    0.5, lower=lo, grid=g, upper_limit=100.0, random_state=seed
                ),
                X,
                svt_module,
                monkeypatch,
                range(3),
            )


@pytest.mark.parametrize("lower", [None, 0.0, [-1.0, 0.0, 2.0]])
def test_release_of_summed_chunk_statistics_equals_the_whole(lower):
    X = datasets()["lookup path, 3 features"]
    plan = plan_svt_bounds(
        3, 1.0, lower=lower, upper_limit=1e9, grid="geometric", n_above=None
    )
    layouts = bounds_layouts(plan, 3)
    chunks = np.array_split(X, [1, 7_000, 7_001, 19_000])
    statistics = [svt_bounds_statistic(chunk, plan, layouts) for chunk in chunks]
    total = sum(statistics[1:], statistics[0])
    for seed in range(5):
        whole = run_svt_bounds(X, plan, check_random_source(seed))
        chunked = release_svt_bounds(total, plan, check_random_source(seed))
        np.testing.assert_array_equal(whole, chunked)


def test_release_takes_the_width_from_the_plan_not_the_statistic():
    # The eps split over features and the sign test's sensitivity come from
    # the public plan; a statistic of another width is refused, never
    # released with a split computed from its own shape.
    X = datasets()["normal, 2 features"]
    plan = plan_svt_bounds(
        2, 1.0, lower=None, upper_limit=1e9, grid="geometric", n_above=None
    )
    wider = svt_bounds_statistic(np.c_[X, X[:, :1]], plan, bounds_layouts(plan, 3))
    with pytest.raises(ValueError, match="3 features for a plan of 2"):
        release_svt_bounds(wider, plan, check_random_source(0))
