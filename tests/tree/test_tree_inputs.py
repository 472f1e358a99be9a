"""The random trees' other inputs: ``sample_weight`` in [0, 1] and Dask arrays.

Weights: refused outside [0, 1] before the charge; the weighted counts'
sensitivity brute-forced; all ones is the unweighted fit bit for bit and
weight 0 the row removed; as ε grows the leaves give their rows' weighted
class frequencies; an audit of the weighted release and its twin that
accepts weights up to 2. Dask: the release equals the in-memory one for the
same seed; what cannot run on Dask is refused before the charge.
"""

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from _tree_walk import leaf_of

from skdp import BudgetAccountant
from skdp.audit import assert_dp, audit_mechanism
from skdp.ensemble import PrivateRandomForestClassifier
from skdp.mechanisms import check_random_source
from skdp.tree import PrivateDecisionTreeClassifier, _fit
from skdp.tree._leaf_counts import leaf_count_sensitivity, weighted_leaf_class_counts
from skdp.tree._random_tree import leaf_indices


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, 3))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    return X, y, rng.uniform(size=n) ** 2  # weights far from uniform


MODELS = {
    "tree": lambda **p: PrivateDecisionTreeClassifier(
        **{"bounds": (0, 1), "classes": [0, 1], "max_depth": 3, **p}
    ),
    "forest_all": lambda **p: PrivateRandomForestClassifier(
        3, **{"bounds": (0, 1), "classes": [0, 1], "max_depth": 3, **p}
    ),
    "forest_disjoint": lambda **p: PrivateRandomForestClassifier(
        3,
        tree_rows="disjoint",
        **{"bounds": (0, 1), "classes": [0, 1], "max_depth": 3, **p},
    ),
}


def _fit_model(name, X, y, seed=0, **fit_params):
    params = fit_params.pop("params", {})
    model = MODELS[name](random_state=seed, **params)
    model.set_params(accountant=BudgetAccountant(delta=0.5))
    return model.fit(X, y, **fit_params)


# -- refusals ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["tree", "forest_all"])
@pytest.mark.parametrize(
    "weights, match",
    [(1.5, "above 1"), (-0.1, "negative"), (np.nan, "NaN"), ("shape", "shape")],
)
def test_bad_weights_are_refused_before_the_charge(name, weights, match):
    X, y, w = _data(50)
    w = w[:-1] if weights == "shape" else np.where(np.arange(50) == 7, weights, w)
    accountant = BudgetAccountant()
    model = MODELS[name](accountant=accountant)
    with pytest.raises(ValueError, match=match):
        model.fit(X, y, sample_weight=w)
    assert accountant.total() == (0.0, 0.0)


# -- sensitivity, brute force -------------------------------------------------

# two trees of depth 1 over one feature, thresholds 0.3 and 0.6
FEATURES = np.zeros((2, 1), dtype=np.intp)
THRESHOLDS = np.array([[0.3], [0.6]])
# weights at both ends of [0, 1]: below the grid 2**-32 (counts as 0), the
# largest double below 1, and 1
WEIGHTS = (0.0, 2.0**-40, 0.3, 1 - 2.0**-53, 1.0)


def _exact(rows):
    """Weighted counts of (x, label, weight) rows as Fractions."""
    if not rows:
        return np.zeros(8, dtype=object) + Fraction(0)
    X = np.array([[x] for x, _, _ in rows])
    codes = np.array([c for _, c, _ in rows])
    w = np.array([wt for _, _, wt in rows])
    counts = weighted_leaf_class_counts(
        leaf_indices(X, FEATURES, THRESHOLDS), codes, 2, 2, w
    )
    scale = Fraction(2) ** counts.exponent
    return np.array([Fraction(n) * scale for n in counts.numerators], dtype=object)


def test_weighted_counts_sensitivity_brute_force_over_add_remove_neighbours():
    # every dataset of up to 2 rows over x in {0.1, 0.5, 0.9} (every leaf
    # of both trees), 2 labels and the weights above, and every neighbour
    # without one of its rows: each row is counted in both trees, so the
    # exact L1 move is at most 2 and the L2 move at most sqrt(2)
    # (leaf_count_sensitivity(2)), attained by a row of weight 1
    domain = list(itertools.product((0.1, 0.5, 0.9), (0, 1), WEIGHTS))
    worst_l1, worst_l2 = Fraction(0), Fraction(0)
    for size in range(1, 3):
        for rows in itertools.combinations_with_replacement(domain, size):
            full = _exact(list(rows))
            for k in range(size):
                diff = full - _exact(list(rows[:k] + rows[k + 1 :]))
                worst_l1 = max(worst_l1, sum(abs(d) for d in diff))
                worst_l2 = max(worst_l2, sum(d * d for d in diff))
    l1, l2 = leaf_count_sensitivity(2)
    assert worst_l1 == l1
    assert worst_l2 == Fraction(l2 * l2).limit_denominator(10)


def test_weighted_counts_are_the_exact_sums_of_the_truncated_weights():
    # hand-derived: 2**-40 is below the grid (counts 0); 1 - 2**-53 counts
    # as 1 - 2**-32; the others exactly
    rows = [(0.1, 0, 0.3), (0.1, 0, 2.0**-40), (0.9, 1, 1 - 2.0**-53), (0.5, 1, 1.0)]
    counts = _exact(rows).reshape(2, 2, 2)
    grid_03 = Fraction(math.floor(Fraction(0.3) * 2**32), 2**32)
    assert counts[0, 0, 0] == counts[1, 0, 0] == grid_03
    assert counts[0, 1, 1] == 2 - Fraction(1, 2**32)  # x = 0.5 and 0.9
    assert counts[1, 1, 1] == 1 - Fraction(1, 2**32)  # only x = 0.9
    assert counts[1, 0, 1] == 1  # x = 0.5 is left of 0.6


# -- fits ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, params",
    [
        ("tree", {}),
        ("tree", {"mechanism": "gaussian"}),
        ("tree", {"classes": None, "bounds": None, "epsilon": 4.0}),
        ("forest_all", {}),
        ("forest_disjoint", {}),
    ],
)
def test_weights_one_are_the_unweighted_fit_bit_for_bit(name, params):
    X, y, _ = _data()
    plain = _fit_model(name, X, y, params=params)
    ones = _fit_model(name, X, y, params=params, sample_weight=np.ones(y.size))
    np.testing.assert_array_equal(plain.leaf_counts_, ones.leaf_counts_)
    np.testing.assert_array_equal(plain.predict_proba(X), ones.predict_proba(X))


@pytest.mark.parametrize("name", ["tree", "forest_all"])
def test_weight_zero_is_the_row_removed_bit_for_bit(name):
    X, y, w = _data()
    w[-1] = 0.0
    weighted = _fit_model(name, X, y, sample_weight=w)
    w_kept = w[:-1]
    removed = _fit_model(name, X[:-1], y[:-1], sample_weight=w_kept)
    np.testing.assert_array_equal(weighted.leaf_counts_, removed.leaf_counts_)


def test_as_epsilon_grows_the_leaves_give_their_rows_weighted_class_frequencies():
    # brute force: walk every row down the released tree by hand and sum
    # its weight per leaf and class (scikit-learn's weighted leaf values)
    X, y, w = _data(300)
    tree = _fit_model("tree", X, y, params={"epsilon": 1e12}, sample_weight=w)
    expected = np.zeros((8, 2))
    for row, label, weight in zip(X, y, w, strict=True):
        expected[leaf_of(row, tree), label] += weight
    np.testing.assert_allclose(tree.leaf_counts_, expected, atol=1e-6)
    full = expected.sum(axis=1) > 0
    np.testing.assert_allclose(
        tree.leaf_proba_[full],
        expected[full] / expected[full].sum(1, keepdims=True),
        atol=1e-9,
    )


def test_private_label_selection_drops_the_weights_of_the_rows_it_drops():
    X, y, w = _data(2000)
    y = y.astype(str)
    y[0] = "rare"  # a label the selection does not release
    tree = _fit_model(
        "tree", X, y, params={"classes": None, "epsilon": 1e9}, sample_weight=w
    )
    assert tree.classes_.tolist() == ["0", "1"]
    assert tree.leaf_counts_.sum() == pytest.approx(w[1:].sum(), rel=1e-9)


# -- audit of the weighted release, and its twin ------------------------------

EPS = 1.0
AUDIT = {"n_samples": 1_500, "n_pilot": 500, "random_state": 0}
SPLITS = (np.zeros((1, 0), dtype=np.intp), np.zeros((1, 0)))  # one leaf
D0 = (np.zeros((4, 1)), np.zeros(4, dtype=np.intp), np.full(4, 0.5))


def _grown(weight):
    X, codes, w = D0
    return np.vstack([X, [[0.0]]]), np.append(codes, 0), np.append(w, weight)


def _released_count(data, seed):
    """The fit's weighted stage at ε = 1: the weights' check, the exact
    weighted counts and their Laplace release; output the class-0 count."""
    X, codes, w = data
    model = PrivateDecisionTreeClassifier(EPS, max_depth=0)
    weights = _fit.check_row_weights(model, w, X)
    source = check_random_source(seed)
    counts, per_row = _fit.forest_counts(
        X, codes, 2, *SPLITS, "all", source, None, weights
    )
    noisy, _ = _fit.release_leaf_counts(counts, per_row, EPS, 0.0, source)
    return float(noisy[0, 0, 0])


def _weights_up_to_two(estimator, sample_weight, X):
    weights = np.asarray(sample_weight, dtype=float)
    assert np.all((weights >= 0) & (weights <= 2))
    return weights


def test_audit_of_the_weighted_leaf_counts_passes():
    assert_dp(_released_count, D0, _grown(1.0), EPS, **AUDIT)


def test_audit_catches_weights_up_to_two(monkeypatch):
    monkeypatch.setattr(_fit, "check_row_weights", _weights_up_to_two)
    mutant = audit_mechanism(_released_count, D0, _grown(2.0), **AUDIT)
    assert mutant.epsilon_lower_bound > EPS, str(mutant)


# -- Dask ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, params",
    [("forest_all", {}), ("tree", {"bounds": None, "epsilon": 4.0})],
)
def test_a_dask_fit_is_the_in_memory_fit_bit_for_bit(name, params):
    da = pytest.importorskip("dask.array")
    X, y, _ = _data()
    memory = _fit_model(name, X, y, params=params)
    accountant = BudgetAccountant()
    model = MODELS[name](random_state=0, accountant=accountant, **params)
    chunked = model.fit(da.from_array(X, chunks=(37, 3)), da.from_array(y, chunks=37))
    np.testing.assert_array_equal(memory.leaf_counts_, chunked.leaf_counts_)
    np.testing.assert_array_equal(memory.lower_, chunked.lower_)
    spent = (memory.epsilon_spent_, memory.delta_spent_)
    assert accountant.total() == pytest.approx(spent, rel=1e-15)


@pytest.mark.parametrize(
    "name, params, fit_params, match",
    [
        ("forest_disjoint", {}, {}, "tree_rows='all'"),
        ("tree", {"classes": None}, {}, "classes=\\[...\\]"),
        ("tree", {}, {"sample_weight": np.ones(400)}, "in-memory data only"),
    ],
)
def test_what_dask_cannot_run_is_refused_before_the_charge(
    name, params, fit_params, match
):
    da = pytest.importorskip("dask.array")
    X, y, _ = _data()
    accountant = BudgetAccountant()
    model = MODELS[name](accountant=accountant, **params)
    with pytest.raises(ValueError, match=match):
        model.fit(
            da.from_array(X, chunks=100), da.from_array(y, chunks=100), **fit_params
        )
    assert accountant.total() == (0.0, 0.0)


@pytest.mark.parametrize("name", ["tree", "forest_all"])
def test_extreme_rows_and_weights_fit_without_a_warning(name):
    # values at ±max double and subnormal, weights subnormal, below the
    # grid, the largest double below 1, and 1
    big, tiny = np.finfo(float).max, 5e-324
    X = np.array([[big, -big, tiny], [-big, tiny, big], [tiny, big, -tiny]] * 4)
    y = np.array([0, 1, 1] * 4)
    w = np.array([tiny, 2.0**-40, 1 - 2.0**-53, 1.0] * 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = _fit_model(name, X, y, params={"bounds": (-big, big)}, sample_weight=w)
        proba = model.predict_proba(X)
    assert np.all(np.isfinite(model.leaf_counts_)) and np.all(np.isfinite(proba))
