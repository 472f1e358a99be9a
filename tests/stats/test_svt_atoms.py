"""Issue 27: private bounds that survive an atom at 0 and a split budget."""

import numpy as np
import pytest

from skdp import SVTClipSelector
from skdp.audit import assert_dp
from skdp.stats._svt_search import plan_svt_bounds


def zero_inflated(n_rows, n_one_hot, seed):
    """90% zeros and lognormal(7, 1) otherwise, beside one-hot columns."""
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(n_rows) < 0.9, 0.0, rng.lognormal(7, 1, n_rows))
    category = rng.integers(0, max(n_one_hot, 1), n_rows)
    one_hot = category[:, None] == np.arange(n_one_hot)[None, :]
    return np.column_stack([x, one_hot.astype(float)])


def test_zero_inflated_column_beside_100_one_hot_keeps_its_range():
    # Before: the default threshold 3 / (0.8 epsilon_run) (about 350 rows)
    # left a gap of 2,650 rows, 2 scales of the query noise, below the
    # 3,000 non-zero rows: a candidate near the grid's bottom fired in half
    # the fits (median bound 800, 63% of the non-zero rows clipped).
    X = zero_inflated(30_000, 100, seed=0)
    nonzero = X[X[:, 0] > 0, 0]
    for seed in range(4):
        upper = SVTClipSelector(1.0, random_state=seed).fit(X).upper_[0]
        assert np.mean(nonzero > upper) < 0.35, (seed, upper)
        assert upper < 20 * nonzero.max()


def test_small_side_count_caps_the_threshold_and_lowers_the_share():
    plan = plan_svt_bounds(
        100, 1.0, lower=None, upper_limit=1e9, grid="geometric", n_above=None
    )
    epsilon_run, default, share = plan.side_run(100, 1, 1e9)
    assert default == pytest.approx(3 / (0.8 * epsilon_run)) and share == 0.8
    # at most 2% of the side's released rows above the bound, but at least
    # two scales 2 / (0.65 epsilon_run) = 362 of the threshold noise
    floor = 2 / (0.65 * epsilon_run)
    assert plan.side_run(100, 1, 20_000.0)[1:] == (pytest.approx(400.0), 0.65)
    assert plan.side_run(100, 1, 3_000.0)[1:] == (pytest.approx(floor), 0.65)
    assert plan.side_run(100, 1, -40.0)[1:] == (pytest.approx(floor), 0.65)
    # a stated n_above, or a public lower (no count), keeps the old rule
    assert plan._replace(n_above=7.0).side_run(100, 1, 3_000.0)[1:] == (7.0, 0.8)
    assert plan.side_run(100, 1, None)[1:] == (pytest.approx(default), 0.8)


GRID = 2.0 ** np.arange(-2, 12)
D0 = np.full((6, 1), 0.1)  # 6 positive rows: a scarce side at epsilon = 1
D1 = np.vstack([D0, [[5000.0]]])


def test_audit_scarce_rule_end_to_end():
    # the threshold is read from the released sign count: still 1-DP
    def select(data, seed):
        sel = SVTClipSelector(1.0, grid=GRID, random_state=seed).fit(data)
        return (float(sel.lower_[0]), float(sel.upper_[0]))

    plan = plan_svt_bounds(1, 1.0, lower=None, upper_limit=1, grid=GRID, n_above=None)
    assert plan.side_run(1, 1, 6.0)[1] < plan.run_parameters(1, 1)[1]
    assert_dp(select, D0, D1, 1.0, n_samples=600, n_pilot=300, random_state=3)
