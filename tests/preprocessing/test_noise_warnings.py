"""Issue 27 item 6: useless releases are said, from released values only."""

import inspect
import warnings

import numpy as np
import pytest

from skdp import NoiseDominatedWarning, SVTClipSelector
from skdp.naive_bayes import PrivateGaussianNB
from skdp.preprocessing import (
    PrivateMean,
    PrivateMinMaxScaler,
    PrivateStandardScaler,
)
from skdp.stats._mean import noise_dominated
from skdp.stats._svt_problems import bounds_problems
from skdp.stats._svt_search import SVTBoundsRelease, plan_svt_bounds


def zero_inflated_beside_one_hot(n_one_hot=100, n_rows=30_000, seed=0):
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(n_rows) < 0.9, 0.0, rng.lognormal(7, 1, n_rows))
    category = rng.integers(0, n_one_hot, n_rows)
    return np.column_stack([x, category[:, None] == np.arange(n_one_hot)])


def caught(fit):
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        fit()
    return [str(r.message) for r in records if r.category is NoiseDominatedWarning]


def test_collapsed_bounds_are_said_with_the_feature_and_the_fix():
    # 90%-zero column beside 100 one-hot columns at epsilon = 0.1: its
    # 3,000 non-zero rows are about one query-noise scale, the bound collapses
    X = zero_inflated_beside_one_hot().astype(float)
    messages = caught(lambda: SVTClipSelector(0.1, random_state=0).fit(X))
    assert len(messages) == 1
    assert "collapsed to about a constant: feature(s) #0, #1" in messages[0]
    assert "and 9" in messages[0]  # the list is cut, the number said
    assert "state public bounds" in messages[0]


@pytest.mark.parametrize(
    "make",
    [
        lambda: PrivateMean(0.1),
        lambda: PrivateStandardScaler(0.1),
        lambda: PrivateMinMaxScaler(0.1),
    ],
)
def test_estimators_on_the_search_say_so(make):
    X = zero_inflated_beside_one_hot(n_rows=5_000).astype(float)
    assert caught(lambda: make().set_params(random_state=0).fit(X))


def test_well_budgeted_fits_do_not_warn():
    X = np.random.default_rng(1).lognormal(3, 1, size=(20_000, 3))
    for make in (SVTClipSelector, PrivateMean, PrivateStandardScaler):
        assert caught(lambda m=make: m(1.0, random_state=0).fit(X)) == []


def test_the_decision_reads_released_values_and_public_parameters_only():
    # bounds_problems and noise_dominated take the release and the plan:
    # no data argument, so neighbouring data sets with the same release get
    # the same warning by construction; checked on two data sets that differ
    # by one row and release the same values
    assert list(inspect.signature(bounds_problems).parameters) == ["release", "plan"]
    assert list(inspect.signature(noise_dominated).parameters) == [
        "noise_std",
        "signal",
    ]
    plan = plan_svt_bounds(
        2, 1.0, lower=None, upper_limit=1e9, grid="geometric", n_above=None
    )
    release = SVTBoundsRelease(
        lower=np.array([0.0, -3.0]),
        upper=np.array([1e-3, 4.0]),
        side_counts=np.array([[-5.0, 900.0], [12.0, 950.0]]),
        searched=np.array([[False, True], [True, True]]),
    )
    problems = bounds_problems(release, plan)
    assert sorted(problems) == [0]  # collapsed; feature 1 is fine
    assert problems[0][0] == "collapsed"
    # a side whose released count is within 8 noise scales is said as such
    few = release._replace(
        upper=np.array([3.0, 4.0]), side_counts=np.array([[-5.0, 900.0], [30.0, 950.0]])
    )
    assert bounds_problems(few, plan)[0][0] == "noise"
    # one more row, the same release (same seed, the bound unmoved): the
    # same warning
    X = np.random.default_rng(2).exponential(1, size=(400, 1))
    neighbour = np.vstack([X, [[0.5]]])
    first = SVTClipSelector(0.05, grid=[0.1, 1.0, 10.0, 1e4], random_state=3)
    second = SVTClipSelector(0.05, grid=[0.1, 1.0, 10.0, 1e4], random_state=3)
    messages = caught(lambda: first.fit(X)), caught(lambda: second.fit(neighbour))
    if first.upper_[0] == second.upper_[0] and np.array_equal(
        np.sign(first.side_counts_ - 12), np.sign(second.side_counts_ - 12)
    ):
        assert messages[0] == messages[1]


def test_noise_dominated_is_true_where_noise_reaches_the_signal():
    np.testing.assert_array_equal(
        noise_dominated([1.0, 2.0, np.inf, np.nan], [2.0, 2.0, 1.0, 1.0]),
        [False, True, True, True],
    )


def test_naive_bayes_says_its_bounds_collapsed():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    messages = caught(
        lambda: PrivateGaussianNB(1.0, classes=[0, 1], random_state=0).fit(X, y)
    )
    assert messages and "PrivateGaussianNB" in messages[0]
