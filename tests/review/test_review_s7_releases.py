"""Adversarial review of three releases changed together: joint quantiles
with exact ranks in small atoms, PrivateLinearRegression's row-norm
histogram, and boosting's sampled features per node. Each test is a
reproducer of a finding (it failed before its fix) or an attack that held."""

import itertools
import math

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp.ensemble import PrivateHistGradientBoostingRegressor
from skdp.ensemble._hist_gradient_boosting import grower
from skdp.ensemble._hist_gradient_boosting.binning import (
    N_CELLS,
    grid_cell_table,
    grid_cells,
)
from skdp.linear_model import PrivateLinearRegression, _release, _row_norms, _scaling
from skdp.mechanisms import analytic_gaussian_sigma
from skdp.sensitivity._joint_quantile import (
    grid_rank_counts,
    rank_blocks,
    rank_states,
    state_points,
)

pytestmark = pytest.mark.filterwarnings("ignore")  # noise warnings of tiny fits


# -- A. joint quantiles: exact ranks in atoms of at most 2**bits rows --------


def joint_law(data, levels, epsilon, bits, multiplicity):
    """Exact law of the released grid points, from the fit's blocks.

    Every increasing sequence of the expanded states (each block ``sizes``
    copies of its rank, each state on the grid point ``state_points``
    gives it), weighted ``exp(ε u / 4)``; also the map state -> grid point,
    which must not depend on the data (the support and the base measure).
    """
    _, below, atoms = grid_rank_counts(np.array(data, dtype=float), 0.0, 3.0, 0)
    ranks, sizes, points, gap = rank_blocks(below, atoms, bits, multiplicity)
    sizes = sizes.astype(int)
    block = np.repeat(np.arange(ranks.size), sizes)
    offset = np.arange(block.size) - (np.cumsum(sizes) - sizes)[block]
    point = state_points(points[block], offset, gap[block], multiplicity, bits)
    expanded = np.repeat(ranks, sizes)
    # the definition: S = 2**bits + 1 states a point, w_i copies of each
    copies = np.repeat(multiplicity, (1 << bits) + 1)
    np.testing.assert_array_equal(
        expanded, np.repeat(rank_states(below, atoms, bits), copies)
    )
    chosen = np.array(list(itertools.combinations(range(expanded.size), len(levels))))
    n = len(data)
    r = np.column_stack(
        [np.zeros(len(chosen)), expanded[chosen], np.full(len(chosen), n)]
    )
    q = np.concatenate(([0.0], levels, [1.0]))
    utility = -np.abs(np.diff(r, axis=1) - np.diff(q) * n).sum(axis=1)
    weights = np.exp(epsilon / 4 * (utility - utility.max()))
    law = {}
    for key, w in zip(map(tuple, point[chosen]), weights, strict=True):
        law[key] = law.get(key, 0.0) + w
    total = weights.sum()
    return {k: v / total for k, v in law.items()}, tuple(point)


@pytest.mark.parametrize("bits", [0, 1])  # atoms cross 2**bits at 1->2 and 2->3 rows
def test_joint_law_of_every_neighbour_across_the_exact_rank_switch(bits):
    # all datasets of up to 3 rows on a 4-point grid (atoms on the points,
    # rows between them) and every added row: atoms appear, disappear and
    # cross 2**bits rows, where their states switch from exact ranks to the
    # even split; uneven public copies make the base measure visible
    domain = [0.0, 1.0, 1.5, 2.0, 3.0]
    multiplicity = np.array([1, 3, 1, 2])
    levels, epsilon = np.array([0.25, 0.75]), 1.0
    laws = {}
    for size in range(5):
        for data in itertools.combinations_with_replacement(domain, size):
            laws[data] = joint_law(data, levels, epsilon, bits, multiplicity)
    worst = 0.0
    for data, (law, support) in laws.items():
        if len(data) == 4:
            continue
        for row in domain:
            grown, grown_support = laws[tuple(sorted((*data, row)))]
            assert grown_support == support  # states on the same points
            assert grown.keys() == law.keys()
            gaps = [abs(math.log(law[k]) - math.log(grown[k])) for k in law]
            worst = max(worst, *gaps)
    assert worst <= epsilon + 1e-9
    assert worst > epsilon / 4  # the brute force sees real differences


# -- B. PrivateLinearRegression: the row-norm histogram ------------------------


def recorded_releases(monkeypatch):
    calls = []
    for module in (_release, _row_norms, _scaling):
        original = module.gaussian_release

        def spy(value, sensitivity, multiplier, _original=original, **kwargs):
            calls.append((np.size(value), float(multiplier)))
            return _original(value, sensitivity, multiplier, **kwargs)

        monkeypatch.setattr(module, "gaussian_release", spy)
    return calls


@pytest.mark.parametrize("groups", [False, True])
@pytest.mark.parametrize("target_bounds", [None, (-20.0, 20.0)])
def test_row_norms_compose_with_the_fits_releases_to_its_charge(
    monkeypatch, groups, target_bounds
):
    # every Gaussian release the fit draws, the row norms' 4096 counts
    # included, composes to exactly the charged (eps, delta): Σ (k/r_i)² =
    # 1/R² for a unit of k rows (Dong, Roth and Su's GDP composition)
    calls = recorded_releases(monkeypatch)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.normal(size=120)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    k = 3 if groups else 1
    model = PrivateLinearRegression(
        epsilon=1.0,
        delta=1e-5,
        target_bounds=target_bounds,
        max_rows_per_group=k if groups else None,
        accountant=acc,
        random_state=0,
    )
    model.fit(X, y, groups=np.repeat(np.arange(40), 3) if groups else None)
    sizes = [size for size, _ in calls]
    assert sizes.count(_row_norms.N_NORM_BINS) == 1
    mu2 = sum((k / m) ** 2 for _, m in calls)
    assert mu2 * analytic_gaussian_sigma(1.0, 1.0, 1e-5) ** 2 == pytest.approx(1.0)


def test_constant_features_do_not_cancel_the_intercept_to_noise():
    # Finding: with private scales, two constant features at 3.0 sit at
    # their released location (z = 0 for every row); the released largest
    # row norm is then the histogram's lowest edge, 1e-150, and became the
    # clipping norm. The coefficients grow like 1/B and the intercept in the
    # user's units cancels them to rounding noise: predictions of 1e133 or
    # 0 for targets of mean 0.96 (the box's diagonal gave 1.18 and 0.963).
    # Fix: the released norm caps B down to MIN_ROW_NORM = 2**-26 only.
    rng = np.random.default_rng(0)
    y = rng.normal(size=400) + 1.0
    for value in (3.0, 3.0000000000000004):  # exactly at, one ulp off
        X = np.full((400, 2), value)
        acc = BudgetAccountant(epsilon=math.inf, delta=0.5)
        for epsilon, seed in [(1.0, 2), (1e6, 0)]:
            model = PrivateLinearRegression(
                epsilon=epsilon,
                delta=1e-5,
                target_bounds=(-5.0, 5.0),
                accountant=acc,
                random_state=seed,
            ).fit(X, y)
            prediction = model.predict(X[:1])[0]
            assert abs(prediction - y.mean()) < (0.5 if epsilon == 1.0 else 0.01)


# -- C. boosting: the features each node samples -------------------------------


def test_feature_draws_are_the_same_on_neighbouring_data(monkeypatch):
    # the masks come from the fit's random source: with public bins and
    # target bounds, neighbours and one seed must draw the same masks (a
    # number of draws that depended on the data, e.g. on which nodes hold
    # rows, would shift them); every level draws 2**level nodes' masks
    masks = []
    original = grower.sampled_features

    def spy(n_nodes, n_features, n_sampled, source):
        mask = original(n_nodes, n_features, n_sampled, source)
        masks.append((n_nodes, None if mask is None else mask.copy()))
        return mask

    monkeypatch.setattr(grower, "sampled_features", spy)
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(60, 7))
    y = X[:, 0] + rng.normal(size=60)
    drawn = []
    for rows in (X, np.vstack([X, [[1.0] * 7]])):  # a row added at the corner
        masks.clear()
        PrivateHistGradientBoostingRegressor(
            max_iter=2,
            max_depth=3,
            max_features=0.3,
            feature_bounds=(-1.0, 1.0),
            target_bounds=(-3.0, 3.0),
            accountant=BudgetAccountant(epsilon=math.inf, delta=0.5),
            random_state=0,
        ).fit(rows, np.append(y, 3.0)[: rows.shape[0]])
        drawn.append(list(masks))
    assert [n for n, _ in drawn[0]] == [1, 2, 4] * 2
    assert all(m.sum(axis=1).tolist() == [2] * n for n, m in drawn[0])
    for (_, a), (_, b) in zip(*drawn, strict=True):
        np.testing.assert_array_equal(a, b)


def test_cell_table_holds_every_cell_in_uint16():
    big = np.finfo(float).max
    values = np.array([[-big, -1.0, -5e-324, 0.0, 5e-324, 1e-300, 1.0, big]]).T
    table = grid_cell_table(np.hstack([values, values[::-1]]))
    assert N_CELLS <= 1 << 16
    np.testing.assert_array_equal(table[:, 0], grid_cells(values[:, 0]))
    assert table[0, 0] == 0 and table[-1, 0] == N_CELLS - 1
