"""The neighbour test of every public estimator.

Fit on a data set D and on D' = D plus one adversarial row (a label no other
row holds, a category no other row holds, a row of extreme doubles), with the
same seeds. Under add/remove-one-row differential privacy the released
values may move like noise, but everything that is not noise must be the
same on both: which attributes are fitted, their types, shapes and dtypes,
the label and category sets (a value held by one row may appear only with
probability δ), the warnings (by category) and the exceptions. A difference
there holds with certainty, so one seed would show it; a few seeds guard the
label and category sets against a lucky draw.

A fit also warns of nothing but skdp's own warnings, which are computed from
released values (a RuntimeWarning after the charge would be a branch on the
data).

``skdp describe`` is in it too, through its Python function (one added cell
of any kind); its command line has its own neighbour tests on files, flags,
stderr and exit codes (tests/test_describe_neighbours.py).

Invalid input (NaN, infinity, a label outside a stated label set) is refused
before the charge: that is the caller's contract, checked by the validation
tests; the rows here are all valid.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline

import skdp
from skdp.exceptions import NoiseDominatedWarning, PTRRefusedWarning

SEEDS = range(5)
SKDP_WARNINGS = (NoiseDominatedWarning, PTRRefusedWarning)
N_ROWS = 400


def _base_table():
    """Skewed, zero-inflated, unscaled columns and a balanced label."""
    rng = np.random.default_rng(0)
    X = np.column_stack(
        [
            rng.lognormal(3.0, 1.0, N_ROWS),
            np.where(rng.random(N_ROWS) < 0.8, 0.0, rng.exponential(1e4, N_ROWS)),
            rng.normal(40.0, 10.0, N_ROWS).round(),
        ]
    )
    y = np.arange(N_ROWS) % 2
    return X, y


EXTREME_ROWS = {
    "max_double": [np.finfo(float).max, -np.finfo(float).max, 1.0],
    "subnormal": [5e-324, -5e-324, 2.0**-1060],
    "huge_and_tiny": [1e300, 1e-300, -1e300],
}


def _neighbours(kind):
    """``(name, D, D')`` pairs for an estimator of ``kind``."""
    X, y = _base_table()
    for name, row in EXTREME_ROWS.items():
        X2 = np.vstack([X, row])
        yield name, (X, y), (X2, np.append(y, y[0]))
    if kind == "classifier":
        X2 = np.vstack([X, X[:1]])
        yield "new_label", (X, y), (X2, np.append(y, 7))
        # labels read cell by cell: a list's dtype, a string's width and the
        # sign of a zero must not come from one row
        listed = [int(v) for v in y]
        yield "float_label_in_a_list", (X, listed), (X2, [*listed, 1.0])
        words = ["no", "yes"]
        named = [words[v] for v in y]
        yield "long_new_label", (X, named), (X2, [*named, "a-unique-long-label"])
        zeros = np.asarray(y, dtype=float)
        signed = np.append(zeros, -0.0)[[-1, *range(len(zeros))]]
        yield "negative_zero_label", (X, zeros), (np.vstack([X[:1], X]), signed)


REGRESSION_TARGET_BOUNDS = (-1e3, 1e3)
LABEL_ROWS = (
    "new_label",
    "float_label_in_a_list",
    "long_new_label",
    "negative_zero_label",
)


# One instance of each public estimator as a user writes it: defaults, plus
# what the estimator cannot do without (a regressor's public target bounds,
# a large budget so that the label set of 200 rows per class is released).
CLASSIFIERS = [
    skdp.PrivateLogisticRegression(epsilon=10.0),
    skdp.PrivateGaussianNB(epsilon=10.0),
    skdp.PrivateDecisionTreeClassifier(epsilon=10.0),
    skdp.PrivateRandomForestClassifier(epsilon=10.0),
    skdp.SampleAggregateEstimator(
        LogisticRegression(), classes=[0, 1], n_blocks=4, epsilon=10.0
    ),
    skdp.PrivateHistGradientBoostingClassifier(epsilon=10.0, max_iter=3),
    # the default above is cyclic boosting below ε = 1000: the trees, stated
    skdp.PrivateHistGradientBoostingClassifier(
        epsilon=10.0, max_iter=3, boosting="trees"
    ),
]
REGRESSORS = [
    skdp.PrivateLinearRegression(target_bounds=REGRESSION_TARGET_BOUNDS),
    skdp.SampleAggregateEstimator(
        Ridge(), n_blocks=4, output_bounds=(-1e3, 1e3), epsilon=10.0
    ),
    skdp.PrivateHistGradientBoostingRegressor(
        epsilon=10.0, max_iter=3, target_bounds=REGRESSION_TARGET_BOUNDS
    ),
]
TRANSFORMERS = [
    skdp.DPClipper(),
    skdp.DPClipper(method=None, norm="l2", max_norm=10.0),
    skdp.SVTClipSelector(),
    skdp.PrivateMean(),
    skdp.PrivateQuantile(),
    skdp.PTRMedian(bounds=(0, 1e5), proposed_sensitivity=1e3),
    skdp.SmoothSensitivityMedian(bounds=(0, 1e5)),
    skdp.IQRScale(),
    skdp.PrivateRobustScaler(),
    skdp.PrivateStandardScaler(),
    skdp.PrivateMinMaxScaler(),
    skdp.PrivateHistogram(bounds=(0, 1e5)),
    skdp.PrivateJointHistogram(3, bounds=(0, 1e5)),
    skdp.PrivateKMeans(3, bounds=(0, 1e5)),
    skdp.PrivateKBinsDiscretizer(),
    skdp.PrivatePCA(max_norm=1e4),
]
SEARCHES = [
    skdp.NoisyMaxSearchCV(
        skdp.PrivateLogisticRegression(classes=[0, 1]),
        {"C": [0.1, 1.0]},
        n_blocks=4,
        refit=False,
    ),
]


def _fitted_structure(estimator):
    """Everything about a fitted estimator that is not a released number."""
    structure = {}
    for name, value in sorted(vars(estimator).items()):
        if not name.endswith("_") or name.startswith("_"):
            continue
        try:
            array = np.asarray(value) if _is_arraylike(value) else None
        except ValueError:  # one array per column, of released lengths
            structure[name] = ("ragged", len(value), [_dtype(v) for v in value])
            continue
        structure[name] = (
            type(value).__name__,
            None if array is None else (array.shape, array.dtype.str),
        )
    return structure


def _dtype(value):
    return np.asarray(value).dtype.str


def _is_arraylike(value):
    return isinstance(value, np.ndarray | list | tuple | float | int | np.number)


def _label_sets(estimator):
    """The released sets of discrete values: labels, categories, names."""
    sets = {}
    for name in ("classes_", "categories_"):
        if hasattr(estimator, name):
            sets[name] = repr(getattr(estimator, name))
    return sets


def _seeded(estimator, seed, accountant):
    """A clone whose private steps (itself, or a pipeline's) use ``seed`` and
    ``accountant``."""
    model = clone(estimator)
    params = model.get_params()
    names = [n for n in params if n.split("__")[-1] in ("random_state", "accountant")]
    values = {"random_state": seed, "accountant": accountant}
    model.set_params(**{n: values[n.split("__")[-1]] for n in names})
    return model


def _observe(estimator, X, y, seed):
    """Fit a clone; return what must not depend on the added row."""
    accountant = skdp.BudgetAccountant(delta=1.0)
    model = _seeded(estimator, seed, accountant)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model.fit(X, y) if y is not None else model.fit(X)
        except Exception as exc:  # the type, not the message (it may quote data)
            return {"exception": type(exc).__name__}, []
    categories = sorted({w.category.__name__ for w in caught})
    foreign = [
        f"{w.category.__name__}: {w.message}"
        for w in caught
        if not issubclass(w.category, SKDP_WARNINGS)
    ]
    observed = {
        "structure": _fitted_structure(model),
        "ledger": [(e.label, e.epsilon, e.delta) for e in accountant.entries],
        "labels": _label_sets(model),
        "warnings": categories,
    }
    return observed, foreign


def _states_its_labels(estimator):
    """A label outside a stated set is invalid input, refused before the
    charge (the caller's statement is wrong); only an estimator that selects
    its labels gets the label rows."""
    params = estimator.get_params()
    return any(
        name.split("__")[-1] == "classes" and value is not None
        for name, value in params.items()
    )


def _cases(estimators, kind):
    return [
        pytest.param(est, name, d, d2, id=f"{type(est).__name__}-{i}-{name}")
        for i, est in enumerate(estimators)
        for name, d, d2 in _neighbours(kind)
        if not (name in LABEL_ROWS and _states_its_labels(est))
    ]


# Pipelines of private steps: a transform must map every finite row to a
# finite row, or the next step refuses it after the first step's charge.
PIPELINES = [
    make_pipeline(
        skdp.PrivateStandardScaler(), skdp.PrivateLogisticRegression(classes=[0, 1])
    ),
    make_pipeline(skdp.IQRScale(), skdp.PrivateGaussianNB(classes=[0, 1])),
    make_pipeline(
        skdp.PrivateMean(bounds=(-1e300, 1e300)),
        skdp.PrivateLogisticRegression(classes=[0, 1]),
    ),
    make_pipeline(
        skdp.PrivateMinMaxScaler(clip=False),
        skdp.PrivatePCA(max_norm=1e3),
        skdp.PrivateGaussianNB(classes=[0, 1]),
    ),
]

ALL_CASES = (
    _cases(CLASSIFIERS, "classifier")
    + _cases(REGRESSORS, "regressor")
    + _cases(TRANSFORMERS, "transformer")
    + _cases(SEARCHES, "classifier")
    + _cases(PIPELINES, "classifier")
)


@pytest.mark.parametrize("estimator, row, D, D2", ALL_CASES)
def test_one_added_row_changes_nothing_but_noise(estimator, row, D, D2):
    for seed in SEEDS:
        before, foreign_before = _observe(estimator, *D, seed)
        after, foreign_after = _observe(estimator, *D2, seed)
        assert not foreign_before + foreign_after, (
            f"warnings that are not computed from released values: "
            f"{foreign_before + foreign_after}"
        )
        assert before == after, f"seed {seed}: the added {row} row is visible"


NUMBER_CATEGORIES = [0.1, 0.3, 16777216.0, 16777217.0, 1e39, 2.0, -7.0]


def _category_table(new_value):
    """Columns of repeated values, among them doubles that float32 cannot
    hold apart or at all; strings when the added value is a string."""
    if isinstance(new_value, str):
        column = np.array(["a", "b", "c"] * 140, dtype=object)
    else:
        column = np.array(NUMBER_CATEGORIES * 60)
    return np.column_stack([column, column[::-1]])


@pytest.mark.parametrize("new_value", ["zzz", 2.5, 1e300, 5e-324])
def test_one_added_category_changes_nothing_but_noise(new_value):
    encoder = skdp.PrivateOneHotEncoder(epsilon=10.0)
    X = _category_table(new_value)
    X2 = np.vstack([X, np.array([[new_value, new_value]], dtype=X.dtype)])
    for seed in SEEDS:
        before, foreign_before = _observe(encoder, X, None, seed)
        after, foreign_after = _observe(encoder, X2, None, seed)
        assert not foreign_before + foreign_after
        assert before == after, f"seed {seed}: the added {new_value!r} is visible"


def test_every_kept_category_encodes_as_itself():
    X = _category_table(0.0)
    encoder = skdp.PrivateOneHotEncoder(epsilon=10.0, random_state=0).fit(X)
    kept = [np.isin(X[:, j], encoder.categories_[j]) for j in range(X.shape[1])]
    for categories in encoder.categories_:
        assert len(set(categories.tolist())) == len(categories), "duplicates"
    encoded = (
        np.asarray(encoder.transform(X).todense())
        if hasattr(encoder.transform(X), "todense")
        else encoder.transform(X)
    )
    widths = [len(c) for c in encoder.categories_]
    starts = np.cumsum([0, *widths[:-1]])
    for j, (start, width) in enumerate(zip(starts, widths, strict=True)):
        ones = encoded[:, start : start + width].sum(axis=1)
        np.testing.assert_array_equal(ones[kept[j]], 1)


def test_every_public_estimator_is_in_the_neighbour_test():
    public = {
        name
        for name in skdp.__all__
        if isinstance(getattr(skdp, name), type)
        and issubclass(getattr(skdp, name), BaseEstimator)
    }
    tested = {
        type(est).__name__ for est in CLASSIFIERS + REGRESSORS + TRANSFORMERS + SEARCHES
    }
    assert public - {"PrivateOneHotEncoder"} <= tested  # tested above


def _describe_structure(columns, seed):
    """What ``skdp describe`` (its Python function) releases, but the numbers."""
    from skdp._describe import describe

    accountant = skdp.BudgetAccountant()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = describe(columns, accountant=accountant, random_state=seed)
    return {
        "columns": list(result),
        "keys": {name: sorted(stats) for name, stats in result.items()},
        "ledger": [(e.label, e.epsilon, e.delta) for e in accountant.entries],
        "warnings": sorted({w.category.__name__ for w in caught}),
    }


@pytest.mark.parametrize(
    "cell", ["abc", None, float("nan"), 1e308, 5e-324, True, [1.0, 2.0]]
)
def test_describe_one_added_cell_changes_nothing_but_noise(cell):
    # The command line's own neighbour tests (files, flags, stderr, exit
    # codes) are in tests/test_describe_neighbours.py; this is the same
    # property for the function, in the common test.
    X, _ = _base_table()
    columns = {f"x{j}": list(X[:, j]) for j in range(X.shape[1])}
    columns["empty"] = [None] * N_ROWS
    added = {name: [*cells, cell] for name, cells in columns.items()}
    for seed in SEEDS[:2]:
        assert _describe_structure(columns, seed) == _describe_structure(added, seed)


@pytest.mark.parametrize("estimator", CLASSIFIERS[:2], ids=lambda e: type(e).__name__)
@pytest.mark.parametrize(
    "labels, added",
    [
        ([True, False] * 200, 2),  # numpy would make every label an int
        ([2**60, 2**60 + 1] * 200, 0.5),  # ... every label a float, merged
        ([np.datetime64("2020-01-01", "D")] * 400, np.datetime64(0, "s")),
    ],
    ids=["int_among_bools", "float_among_big_ints", "date_of_another_unit"],
)
def test_a_label_list_of_mixed_kinds_is_refused_before_the_charge(
    estimator, labels, added
):
    # Labels of one kind are read as that kind; a list that mixes kinds (or
    # holds dates) is invalid input, refused with nothing charged, instead of
    # letting numpy retype every label from one cell.
    X, _ = _base_table()
    accountant = skdp.BudgetAccountant(delta=1.0)
    model = clone(estimator).set_params(accountant=accountant, random_state=0)
    if not isinstance(added, np.datetime64):
        fitted = model.fit(X, labels)
        assert type(fitted.classes_[0].item()) is type(labels[0])
    spent = len(accountant.entries)
    with pytest.raises(ValueError):
        clone(model).fit(np.vstack([X, X[:1]]), [*labels, added])
    assert len(accountant.entries) == spent
