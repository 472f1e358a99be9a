"""The neighbour test with a whole group added, for every estimator that
accepts ``groups``.

As tests/test_neighbours.py (whose helpers it uses), but the neighbouring
data sets differ by one whole group: many rows of an extreme row, many
copies of an existing row, or a group whose label is of another kind than
the others' (a string among integers). Everything that is not noise —
fitted attributes' types, shapes and dtypes, the ledger, the label sets,
the warnings, the exceptions — must be the same on both.
"""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from test_neighbours import (
    EXTREME_ROWS,
    SKDP_WARNINGS,
    _base_table,
    _fitted_structure,
    _label_sets,
    _seeded,
)

import skdp
from skdp.metrics import make_private_scorer
from skdp.model_selection import RandomStoppingSearchCV

K = 3
SEEDS = range(2)

GROUP_ESTIMATORS = [
    skdp.PrivateMean(bounds=(-1e300, 1e300), max_rows_per_group=K),
    skdp.PrivateHistogram(bounds=(0, 1e5), max_rows_per_group=K),
    skdp.PrivateLogisticRegression(epsilon=10.0, classes=[0, 1], max_rows_per_group=K),
    skdp.PrivateLinearRegression(target_bounds=(-1e3, 1e3), max_rows_per_group=K),
    skdp.PrivateGaussianNB(
        epsilon=10.0, bounds=(0, 1e5), classes=[0, 1], max_rows_per_group=K
    ),
    skdp.PrivateStandardScaler(bounds=(-1e300, 1e300), max_rows_per_group=K),
    # statistics (skdp/stats): quantiles, medians, IQR, SVT bounds, joint histogram
    skdp.SVTClipSelector(max_rows_per_group=K),
    skdp.PrivateQuantile(max_rows_per_group=K),
    skdp.PTRMedian(bounds=(0, 1e5), proposed_sensitivity=1e3, max_rows_per_group=K),
    skdp.SmoothSensitivityMedian(bounds=(0, 1e5), max_rows_per_group=K),
    skdp.IQRScale(max_rows_per_group=K),
    skdp.IQRScale(method="dwork_lei", max_rows_per_group=K),
    skdp.PrivateJointHistogram(3, bounds=(0, 1e5), max_rows_per_group=K),
    # preprocessing (group-privacy route: private bounds, quantiles, categories)
    skdp.DPClipper(max_rows_per_group=K),
    skdp.DPClipper(method="quantile", max_rows_per_group=K),
    skdp.PrivateMinMaxScaler(max_rows_per_group=K),
    skdp.PrivateRobustScaler(bounds=(-1e5, 1e5), max_rows_per_group=K),
    skdp.PrivateKBinsDiscretizer(bounds=(0, 1e5), max_rows_per_group=K),
    # epsilon 1: the zeros of column 1 always kept, no rounded normal value
    skdp.PrivateOneHotEncoder(epsilon=1.0, max_rows_per_group=K),
    # models and meta-estimators (h-gmodels)
    skdp.SampleAggregateEstimator(
        LogisticRegression(max_iter=5),  # unscaled rows: lbfgs's 100 took 1 s
        classes=[0, 1],
        n_blocks=4,
        max_rows_per_group=K,
    ),
    skdp.NoisyMaxSearchCV(
        LogisticRegression(max_iter=5),
        {"C": [0.01, 1.0]},
        n_blocks=4,
        refit=False,
        max_rows_per_group=K,
    ),
    # holdout searches: a whole group in one part, scores per group
    skdp.NoisyMaxSearchCV(
        skdp.PrivateLogisticRegression(epsilon=10.0, classes=[0, 1]),
        {"C": [0.01, 1.0]},
        method="holdout",
        refit=False,
        max_rows_per_group=K,
    ),
    RandomStoppingSearchCV(
        skdp.PrivateLogisticRegression(epsilon=10.0, classes=[0, 1]),
        {"C": [0.01, 1.0]},
        scoring=make_private_scorer("accuracy", epsilon=1.0),
        n_iter=2.0,
        max_rows_per_group=K,
    ),
    skdp.PrivatePCA(2, max_rows_per_group=K),
    skdp.PrivateDecisionTreeClassifier(
        bounds=(-1e300, 1e300), classes=[0, 1], max_rows_per_group=K
    ),
    skdp.PrivateRandomForestClassifier(
        3,
        bounds=(-1e300, 1e300),
        classes=[0, 1],
        tree_rows="disjoint",
        max_rows_per_group=K,
    ),
    skdp.PrivateKMeans(2, bounds=(-1e300, 1e300), max_rows_per_group=K),
    # boosting (area: skdp/ensemble/_hist_gradient_boosting)
    skdp.PrivateHistGradientBoostingClassifier(
        epsilon=10.0, classes=[0, 1], max_iter=2, max_depth=2, max_rows_per_group=K
    ),
    skdp.PrivateHistGradientBoostingClassifier(  # the default is cyclic: trees too
        epsilon=10.0,
        classes=[0, 1],
        max_iter=2,
        max_depth=2,
        max_rows_per_group=K,
        boosting="trees",
    ),
    skdp.PrivateHistGradientBoostingRegressor(
        epsilon=10.0, max_iter=2, max_depth=2, max_rows_per_group=K
    ),
    # partitions a group touches (area: bins and categories per group)
    skdp.PrivateHistogram(
        bounds=(0, 1e5),
        mechanism="gaussian",
        delta=1e-6,
        max_rows_per_group=K,
        max_partitions_per_group=1,
        max_rows_per_partition=1,
    ),
    skdp.PrivateJointHistogram(
        3, bounds=(0, 1e5), max_rows_per_group=K, max_partitions_per_group=2
    ),
    skdp.PrivateOneHotEncoder(
        max_rows_per_group=K, max_partitions_per_group=1, max_rows_per_partition=1
    ),
]


def _group_neighbours():
    X, y = _base_table()
    groups = np.arange(X.shape[0]) // 4  # 4 rows each: K of them are kept
    size = 5 * K
    for name, row in EXTREME_ROWS.items():
        X2 = np.vstack([X, np.tile(row, (size, 1))])
        yield (
            name,
            (X, y, groups),
            (X2, np.append(y, [y[0]] * size), _new(groups, size)),
        )
    copies = np.vstack([X, np.repeat(X[:1], size, axis=0)])
    yield (
        "copies",
        (X, y, groups),
        (copies, np.append(y, [y[0]] * size), _new(groups, size)),
    )
    labels = groups.astype(object)
    yield (
        "string_label",
        (X, y, labels),
        (copies, np.append(y, [y[1]] * size), np.append(labels, ["zzz"] * size)),
    )


def _new(groups, size):
    return np.append(groups, np.full(size, groups.max() + 1))


def _observe(estimator, X, y, groups, seed):
    accountant = skdp.BudgetAccountant(delta=1.0)
    model = _seeded(estimator, seed, accountant)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model.fit(X, y, groups=groups)
        except Exception as exc:
            return {"exception": type(exc).__name__}, []
    foreign = [w for w in caught if not issubclass(w.category, SKDP_WARNINGS)]
    return {
        "structure": _fitted_structure(model),
        "ledger": [(e.label, e.epsilon, e.delta) for e in accountant.entries],
        "labels": _label_sets(model),
        "warnings": sorted({w.category.__name__ for w in caught}),
    }, [str(w.message) for w in foreign]


CASES = [
    pytest.param(est, name, d, d2, id=f"{type(est).__name__}-{name}")
    for est in GROUP_ESTIMATORS
    for name, d, d2 in _group_neighbours()
]


@pytest.mark.parametrize("estimator, group, D, D2", CASES)
def test_one_added_group_changes_nothing_but_noise(estimator, group, D, D2):
    for seed in SEEDS:
        before, foreign_before = _observe(estimator, *D, seed)
        after, foreign_after = _observe(estimator, *D2, seed)
        assert not foreign_before + foreign_after
        assert "exception" not in before, before
        assert before == after, f"seed {seed}: the added {group} group is visible"


def test_every_estimator_that_accepts_groups_is_in_the_group_neighbour_test():
    # the top-level names and the subpackage's (RandomStoppingSearchCV is
    # public in skdp.model_selection only)
    public = [getattr(skdp, name) for name in skdp.__all__] + [
        getattr(skdp.model_selection, name) for name in skdp.model_selection.__all__
    ]
    accepting = {
        cls.__name__
        for cls in public
        if isinstance(cls, type)
        and issubclass(cls, BaseEstimator)
        and "max_rows_per_group" in inspect.signature(cls).parameters
    }
    assert accepting == {type(e).__name__ for e in GROUP_ESTIMATORS}
