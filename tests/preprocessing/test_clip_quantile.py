"""DPClipper(method="quantile") resolves columns of any magnitude."""

import numpy as np
import pytest

from skdp import BudgetAccountant, DPClipper


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e5])
def test_quantile_bounds_converge_at_every_magnitude(seed, scale):
    # within the default domain [-1e9, 1e9] a uniform grid of 2**33 points
    # (step 1/4) held a 1e-3-scale column in one cell: its 99 % quantile was
    # 30 ranks (5.6e9 times) off at ε = 1e6
    rng = np.random.default_rng(seed)
    X = scale * rng.lognormal(0.0, 0.5, size=(3000, 1))
    clipper = DPClipper(
        method="quantile",
        epsilon=1e6,
        accountant=BudgetAccountant(1e6),
        random_state=seed,
    ).fit(X)
    for level, bound in ((0.01, clipper.lower_[0]), (0.99, clipper.upper_[0])):
        column = X[:, 0]
        below, upto = np.sum(column < bound), np.sum(column <= bound)
        rank_error = max(0.0, below - level * 3000, level * 3000 - upto)
        relative = abs(bound - np.quantile(column, level)) / np.quantile(column, level)
        assert rank_error <= 1.0 or relative <= 1e-3
