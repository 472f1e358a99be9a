"""Group labels are read once, before the charge.

A grouped fit checks ``groups`` before its charge; contribution bounding
(kept rows, blocks, partitions) runs after it. The labels' codes and the
hashes of their values are computed in the check and carried by the
privacy unit (:class:`~skdp.utils._group_labels.GroupLabels`): after the
charge no label object is hashed or compared, so a label whose hash fails
later cannot raise there, and the codes are computed once per fit.
"""

import datetime
import sys

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import skdp
from skdp.base import PrivateEstimatorMixin
from skdp.utils import _groups
from skdp.utils._groups import group_blocks, group_codes, kept_rows
from skdp.utils._partitions import partition_contribution, partition_rows


class _FragileLabel:
    """A label whose ``__hash__`` and ``__eq__`` fail once ``broken``:
    they raise (``"raises"``) or answer otherwise (``"changes"``)."""

    broken = None

    def __init__(self, value):
        self.value = value

    def __hash__(self):
        if _FragileLabel.broken == "raises":
            raise RuntimeError("label hashed after the charge")
        return hash(self.value) + (_FragileLabel.broken == "changes")

    def __eq__(self, other):
        if _FragileLabel.broken == "raises":
            raise RuntimeError("label compared after the charge")
        same = isinstance(other, _FragileLabel) and self.value == other.value
        return same and _FragileLabel.broken is None


@pytest.fixture
def break_labels_at_the_charge(monkeypatch):
    """Labels hash while fit checks them, and fail (``how``) once charged."""
    charge = PrivateEstimatorMixin._charge
    how = []

    def charge_then_break(self, items, unit=None):
        accountant = charge(self, items, unit)
        _FragileLabel.broken = how[0] if how else None
        return accountant

    monkeypatch.setattr(PrivateEstimatorMixin, "_charge", charge_then_break)
    monkeypatch.setattr(_FragileLabel, "broken", None)
    return how


def _people(n_people=30, seed=0):
    rng = np.random.default_rng(seed)
    person = np.repeat(np.arange(n_people), rng.integers(1, 7, n_people))
    X = rng.uniform(0, 10, size=(person.size, 2))
    y = (X[:, 0] > 5).astype(int)
    return X, y, person


def _grouped_fits():
    return {
        "mean": (skdp.PrivateMean(bounds=(0, 10), max_rows_per_group=3), False),
        "encoder": (
            skdp.PrivateOneHotEncoder(
                max_rows_per_group=3,
                max_partitions_per_group=2,
                max_rows_per_partition=1,
            ),
            False,
        ),
        "sample_aggregate": (
            skdp.SampleAggregateEstimator(
                LogisticRegression(), n_blocks=3, classes=[0, 1]
            ).set_params(max_rows_per_group=3),
            True,
        ),
        "search": (
            skdp.NoisyMaxSearchCV(
                LogisticRegression(), {"C": [1e-3, 1.0]}, n_blocks=3, refit=False
            ).set_params(max_rows_per_group=3),
            True,
        ),
        "holdout_search": (
            skdp.NoisyMaxSearchCV(
                skdp.PrivateLogisticRegression(classes=[0, 1], epsilon=1.0),
                {"C": [1e-3, 1.0]},
                method="holdout",
                refit=False,
            ).set_params(max_rows_per_group=3),
            True,
        ),
        "random_stopping": (
            skdp.model_selection.RandomStoppingSearchCV(
                skdp.PrivateLogisticRegression(classes=[0, 1], epsilon=1.0),
                {"C": [1e-3, 1.0]},
                n_iter=2.0,
                scoring=skdp.metrics.make_private_scorer("accuracy", epsilon=1.0),
                refit=False,
            ).set_params(max_rows_per_group=3),
            True,
        ),
        "forest": (
            skdp.PrivateRandomForestClassifier(
                3, max_depth=2, bounds=(0, 10), classes=[0, 1], tree_rows="disjoint"
            ).set_params(max_rows_per_group=3),
            True,
        ),
        "linear_model": (
            skdp.PrivateLinearRegression(
                feature_bounds=(0, 10), target_bounds=(0, 1), max_rows_per_group=3
            ),
            True,
        ),
    }


def _release(model, X):
    if hasattr(model, "predict_proba") and hasattr(model, "estimators_"):
        return model.predict_proba(X).tolist()  # the forest's leaf counts
    for attribute in ("mean_", "coef_", "best_index_"):
        if hasattr(model, attribute):
            return np.asarray(getattr(model, attribute)).tolist()
    if hasattr(model, "categories_"):
        return [c.tolist() for c in model.categories_]
    return model.estimator_.coef_.tolist()  # sample-and-aggregate


@pytest.mark.parametrize("how", ["raises", "changes"])
@pytest.mark.parametrize("name", list(_grouped_fits()))
def test_a_label_whose_hash_fails_after_the_charge_changes_nothing(
    name, how, break_labels_at_the_charge
):
    # contribution bounding hashed and compared the labels again after the
    # charge: a label whose hash then raised made the fit raise with the
    # budget spent, and one that answered otherwise split its group (a
    # public branch on the data after the charge)
    estimator, supervised = _grouped_fits()[name]
    X, y, person = _people()
    if name == "encoder":
        X = np.floor(X[:, :1] / 5)
    y = y if supervised else None
    releases = []
    for broken in (None, how):
        break_labels_at_the_charge[:] = [broken]
        accountant = skdp.BudgetAccountant(delta=1.0)
        model = estimator.set_params(accountant=accountant, random_state=0)
        model.fit(X, y, groups=[_FragileLabel(int(p)) for p in person])
        assert _FragileLabel.broken == broken  # the charge came first
        planned = skdp.model_selection.fit_cost(model, X.shape[1]).epsilon
        assert sum(e.epsilon for e in accountant.entries) == pytest.approx(planned)
        releases.append(_release(model, X))
        _FragileLabel.broken = None
    assert releases[0] == releases[1]


def test_the_codes_are_computed_once_per_grouped_fit(monkeypatch):
    # the check before the charge numbered the labels, and kept_rows
    # numbered them again after it (two passes over the labels)
    calls = []
    carried = getattr(_groups, "GroupLabels", ())  # checked labels: no count

    def counted(groups):
        calls.append(not isinstance(groups, carried))
        return group_codes(groups)

    for module in list(sys.modules.values()):
        if module.__name__.startswith("skdp") and (
            getattr(module, "group_codes", None) is group_codes
        ):
            monkeypatch.setattr(module, "group_codes", counted)
    X, y, person = _people()
    for estimator, supervised in _grouped_fits().values():
        calls.clear()
        estimator.set_params(accountant=skdp.BudgetAccountant(delta=1.0))
        estimator.fit(X, y if supervised else None, groups=person.astype(str))
        assert sum(calls) == 1, type(estimator).__name__


def _labels_of_every_kind(n_people, rng):
    ids = rng.integers(0, n_people, size=8 * n_people)
    day = datetime.date(2020, 1, 1)
    return {
        "int": ids,
        "str": np.array([f"p{i}" for i in ids]),
        "object": [1.0 if i == 1 else ("p", i) if i % 3 else int(i) for i in ids],
        "tuple": [(int(i) % 5, f"q{i}") for i in ids],
        "datetime": [day + datetime.timedelta(days=int(i)) for i in ids],
        "datetime64": np.datetime64("2020-01-01") + ids.astype("m8[D]"),
    }


@pytest.mark.parametrize("seed", range(3))
def test_precomputed_labels_give_the_same_rows_as_raw_labels(seed):
    from skdp.utils._group_labels import GroupLabels

    rng = np.random.default_rng(seed)
    for kind, raw in _labels_of_every_kind(40, rng).items():
        X = rng.integers(0, 3, size=(len(raw), 2)).astype(float)  # ties
        labels = GroupLabels.of(raw)
        unhashed = GroupLabels.of(raw, hashed=False)  # hashed when checked
        np.testing.assert_array_equal(
            GroupLabels.of(unhashed).code_hashes, labels.code_hashes
        )
        for k in (1, 3, 9):
            expected = kept_rows(raw, k, seed, [X])
            np.testing.assert_array_equal(kept_rows(labels, k, seed, [X]), expected)
        blocks = zip(
            group_blocks(raw, 4, seed, [X]),
            group_blocks(labels, 4, seed, [X]),
            strict=True,
        )
        for old, new in blocks:
            np.testing.assert_array_equal(new, old, err_msg=kind)
        bound = partition_contribution(4, 2, 1)
        part = X[:, 0]
        np.testing.assert_array_equal(
            partition_rows(labels, part, bound, (seed, 7), [X]),
            partition_rows(raw, part, bound, (seed, 7), [X]),
            err_msg=kind,
        )
        # a subset (the rows kept by a first bound) numbers its groups in the
        # order its raw labels are numbered: the searches' group folds (a
        # group k-fold sorts them) rely on it
        rows = np.flatnonzero(rng.random(len(raw)) < 0.5)
        subset = np.asarray(labels)[rows]
        codes, n_codes = group_codes(labels[rows])
        expected, _ = group_codes(_groups.as_group_labels(subset))
        _, expected = np.unique(expected, return_inverse=True)
        np.testing.assert_array_equal(codes, expected, err_msg=kind)
        assert n_codes == codes.max() + 1
        np.testing.assert_array_equal(
            kept_rows(labels[rows], 2, seed, [X[rows]]),
            kept_rows(subset, 2, seed, [X[rows]]),
            err_msg=kind,
        )


def _function_calls():
    from skdp import metrics, tools

    def confusion(X, y, **kw):
        return metrics.private_confusion_matrix(
            y, (X[:, 0] > 5).astype(int), labels=[0, 1], **kw
        ).counts

    return {
        "nanmean": lambda X, y, **kw: tools.nanmean(X, 1.0, (0, 10), axis=0, **kw),
        "nanquantile": lambda X, y, **kw: tools.nanquantile(
            X, 0.5, 1.0, (0, 10), axis=0, **kw
        ),
        "confusion_matrix": confusion,
    }


@pytest.mark.parametrize("name", list(_function_calls()))
def test_a_function_with_fragile_labels_releases_as_with_sound_ones(name, monkeypatch):
    # the functions' units bound after the charge as the estimators' do
    # (tools.nanmean per column, nanquantile through its estimators, the
    # metrics' rows): none reads a label once the budget is spent
    spend_many = skdp.BudgetAccountant.spend_many
    how = []

    def spend_then_break(self, *args, **kwargs):
        entries = spend_many(self, *args, **kwargs)
        _FragileLabel.broken = how[0]
        return entries

    monkeypatch.setattr(skdp.BudgetAccountant, "spend_many", spend_then_break)
    monkeypatch.setattr(_FragileLabel, "broken", None)
    X, y, person = _people()
    X[::7, 1] = np.nan  # a column's present values: a subset of the labels
    if name == "confusion_matrix":
        X = np.nan_to_num(X)
    releases = []
    for broken in (None, "raises"):
        how[:] = [broken]
        accountant = skdp.BudgetAccountant()
        released = _function_calls()[name](
            X,
            y,
            groups=[_FragileLabel(int(p)) for p in person],
            max_rows_per_group=3,
            accountant=accountant,
            random_state=0,
        )
        assert _FragileLabel.broken == broken and accountant.entries
        releases.append(np.asarray(released, dtype=float).tolist())
        _FragileLabel.broken = None
    assert releases[0] == releases[1]
