"""Losses: bounded, on-grid gradients and hessians; the released baseline."""

from fractions import Fraction

import numpy as np
import pytest

from skdp.ensemble._hist_gradient_boosting.loss import (
    GRID_BITS,
    BinaryLogistic,
    MultinomialLogistic,
    SquaredError,
    on_grid,
    release_baseline,
)

BIG = np.finfo(float).max
RAW = np.array(
    [-BIG, -1e300, -30.0, -1.0, -5e-324, 0.0, 0.3, 1.0, 40.0, BIG, np.inf, np.nan]
)


@pytest.mark.parametrize(
    "loss,target",
    [
        (BinaryLogistic(), np.arange(RAW.size) % 2),
        (MultinomialLogistic(3), np.arange(RAW.size) % 3),
        (SquaredError(), np.linspace(-1, 1, RAW.size)),
    ],
)
def test_gradients_stay_within_their_bounds_on_the_grid(loss, target):
    raw = np.column_stack([RAW] * loss.n_trees_per_iteration)
    with np.errstate(all="ignore"):
        g, h = loss.gradients(raw, target)
    for values, bound in ((g, loss.g_max), (h, loss.h_max)):
        assert np.all(np.isfinite(values)) and np.all(np.abs(values) <= bound)
        assert np.all(
            np.ldexp(values, GRID_BITS) == np.rint(np.ldexp(values, GRID_BITS))
        )


def test_log_loss_gradients_match_scikit_learn_at_moderate_scores():
    from sklearn._loss.loss import HalfBinomialLoss

    raw = np.linspace(-3, 3, 13)
    y = (np.arange(13) % 2).astype(float)
    g_ref, h_ref = HalfBinomialLoss().gradient_hessian(y, raw)
    g, h = BinaryLogistic().gradients(raw[:, None], y.astype(int))
    np.testing.assert_allclose(g[:, 0], g_ref, atol=2.0**-GRID_BITS)
    np.testing.assert_allclose(h[:, 0], h_ref, atol=2.0**-GRID_BITS)


def test_on_grid_rounds_to_the_nearest_step_within_the_bound():
    values = np.array([0.3, -7.0, 1e-300, np.nan])
    assert on_grid(values, 2.0).tolist() == [
        np.rint(0.3 * 2**GRID_BITS) / 2**GRID_BITS,
        -2.0,
        0.0,
        0.0,
    ]


def _exact_on_grid(value, bound):
    """The grid point nearest to ``value`` clipped to the bound (ties to
    even steps), from exact rationals; NaN is 0."""
    if np.isnan(value):
        return 0.0
    clipped = min(max(Fraction(float(np.clip(value, -bound, bound))), -bound), bound)
    return float(round(clipped * 2**GRID_BITS) / Fraction(2**GRID_BITS))


def test_on_grid_is_the_exact_nearest_step_at_extreme_doubles():
    big, tiny = np.finfo(float).max, np.nextafter(0.0, 1.0)
    step = 2.0**-GRID_BITS
    edges = [big, -big, np.inf, -np.inf, np.nan, tiny, -tiny, 0.0, -0.0]
    halfway = [step / 2, -step / 2, 1.5 * step, 2.5 * step, 1.0 - step / 2]
    rng = np.random.default_rng(0)
    spread = rng.normal(size=300) * 10.0 ** rng.integers(-320, 300, size=300)
    values = np.array([*edges, *halfway, *spread])
    for bound in (0.25, 1.0, 2.0):
        with np.errstate(all="raise"):
            got = on_grid(values, bound)
        want = [_exact_on_grid(v, bound) for v in values]
        assert got.tolist() == want
    assert np.signbit(on_grid(np.array([-0.0, -tiny]), 1.0)).all()  # -0.0 kept


def test_baselines_are_the_priors_and_the_mean_without_noise():
    codes = np.array([0, 0, 0, 1])
    assert release_baseline(BinaryLogistic(), codes, 1, None, None) == pytest.approx(
        [np.log(1 / 3)]
    )
    np.testing.assert_allclose(
        release_baseline(MultinomialLogistic(3), np.array([0, 1, 1, 2]), 3, None, None),
        np.log([0.25, 0.5, 0.25]),
    )
    z = np.array([-1.0, 0.5, 1.0, 0.5])
    assert release_baseline(SquaredError(), z, 1, None, None).tolist() == [0.25]


def test_baseline_sums_move_by_their_stated_sensitivity():
    for loss, extra in ((BinaryLogistic(), 1), (SquaredError(), -1.0)):
        base = np.array([0, 1, 1]) if extra == 1 else np.array([0.5, 1.0])
        before = loss.baseline_sums(base, 2)
        after = loss.baseline_sums(np.append(base, extra), 2)
        assert np.sqrt(((after - before) ** 2).sum()) == pytest.approx(
            loss.baseline_sensitivity
        )
