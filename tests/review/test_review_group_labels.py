"""Review of the privacy unit's GroupLabels and of the groups routing.

Attacks on: labels read after the charge (a label object pickled to a
worker), GroupLabels given by a caller (forged codes or hashes made the
bounding raise after the charge), the routing request of a step without
``max_rows_per_group``, and the robust scaler's planned parts.
"""

import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.compose import TransformedTargetRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import make_pipeline

import skdp
from skdp.model_selection import _subsample
from skdp.utils._group_labels import GroupLabels


class _UnpicklableLabel:
    """A label that hashes and compares soundly and refuses to be pickled
    once ``broken`` (the budget charged)."""

    broken = False

    def __init__(self, value):
        self.value = value

    def __hash__(self):
        return hash(self.value)

    def __eq__(self, other):
        return isinstance(other, _UnpicklableLabel) and self.value == other.value

    def __reduce__(self):
        if _UnpicklableLabel.broken:
            raise RuntimeError("label pickled after the charge")
        return (_UnpicklableLabel, (self.value,))


def _people(n_people=30, seed=0):
    rng = np.random.default_rng(seed)
    person = np.repeat(np.arange(n_people), rng.integers(1, 7, n_people))
    X = rng.uniform(0, 10, size=(person.size, 2))
    y = (X[:, 0] > 5).astype(int)
    return X, y, person


class _PicklingParallel:
    """joblib's Parallel as worker processes see the tasks: pickled."""

    def __init__(self, **kwargs):
        pass

    def __call__(self, calls):
        for function, args, kwargs in calls:
            pickle.dumps((args, kwargs))
            yield function(*args, **kwargs)


def test_search_workers_get_no_label_object_after_the_charge(monkeypatch):
    # NoisyMaxSearchCV(method='subsample', n_jobs=2) sent each block its
    # GroupLabels (the label objects) to a worker process after the charge:
    # a label that failed to pickle made the search raise with the budget
    # spent (PicklingError). The blocks now get their group numbers.
    spend_many = skdp.BudgetAccountant.spend_many

    def spend_then_break(self, *args, **kwargs):
        entries = spend_many(self, *args, **kwargs)
        _UnpicklableLabel.broken = True
        return entries

    monkeypatch.setattr(skdp.BudgetAccountant, "spend_many", spend_then_break)
    monkeypatch.setattr(_UnpicklableLabel, "broken", False)
    # a worker process receives its task pickled: pickle each task here and
    # run it in this process (no 5 s start of worker processes)
    monkeypatch.setattr(_subsample, "Parallel", _PicklingParallel)
    X, y, person = _people()
    labels = [_UnpicklableLabel(int(p)) for p in person]
    search = skdp.NoisyMaxSearchCV(
        LogisticRegression(),
        {"C": [1e-3, 1.0]},
        n_blocks=3,
        refit=False,
        n_jobs=2,  # processes: the tasks are pickled
        max_rows_per_group=3,
        random_state=0,
        accountant=skdp.BudgetAccountant(),
    )
    search.fit(X, y, groups=labels)
    assert _UnpicklableLabel.broken  # the charge came before the blocks
    _UnpicklableLabel.broken = False
    same = search.set_params(n_jobs=1, accountant=skdp.BudgetAccountant())
    assert same.fit(X, y, groups=person).best_index_ == search.best_index_


def _forged(person):
    codes = person.astype(np.int64)
    n = int(codes.max()) + 1
    return {
        "n_codes too small": GroupLabels(person, codes, 3, np.zeros(3, np.uint64)),
        "code_hashes too short": GroupLabels(person, codes, n, np.zeros(2, np.uint64)),
        "negative codes": GroupLabels(person, codes - 5, n, np.zeros(n, np.uint64)),
        "float codes": GroupLabels(person, codes + 0.0, n, np.zeros(n, np.uint64)),
        "labels too short": GroupLabels(person[:3], codes, n, np.zeros(n, np.uint64)),
    }


@pytest.mark.parametrize("forgery", list(_forged(np.arange(3))))
def test_forged_group_labels_are_refused_before_the_charge(forgery):
    # GroupLabels is taken as checked: codes out of [0, n_codes), hashes of
    # another length or labels of another length made kept_rows /
    # partition_rows raise (IndexError, ValueError, TypeError) after the
    # budget was charged
    X, _, person = _people()
    groups = _forged(person)[forgery]
    for estimator in (
        skdp.PrivateMean(bounds=(0, 10), max_rows_per_group=3),
        skdp.stats.PrivateHistogram(
            bins=3, bounds=(0, 10), max_rows_per_group=3, max_partitions_per_group=1
        ),
    ):
        accountant = skdp.BudgetAccountant()
        with pytest.raises(ValueError, match=r"GroupLabels whose.*Nothing was charged"):
            estimator.set_params(accountant=accountant).fit(X[:, :1], groups=groups)
        assert len(accountant.entries) == 0


def test_checked_group_labels_are_accepted_as_the_raw_labels():
    # the check refuses forgeries only: GroupLabels.of(labels) and its
    # subsets release exactly what the raw labels release
    X, _, person = _people()
    rows = np.flatnonzero(person % 3 != 1)
    released = []
    for groups in (person[rows], GroupLabels.of(person)[rows]):
        mean = skdp.PrivateMean(
            bounds=(0, 10), max_rows_per_group=2, random_state=0
        ).set_params(accountant=skdp.BudgetAccountant())
        released.append(mean.fit(X[rows], groups=groups).mean_.tolist())
    assert released[0] == released[1]


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def test_a_bound_dropped_after_another_request_leaves_groups_unset(routing):
    # any set_*_request stores the whole request (groups requested while
    # the bound was stated); a later set_params(max_rows_per_group=None)
    # kept it requested, so the step got groups and refused in its own fit
    # after the pipeline's scaler had charged (1 entry spent)
    X, y, person = _people()
    accountant = skdp.BudgetAccountant(delta=1.0)
    last = skdp.PrivateLogisticRegression(
        classes=[0, 1], max_rows_per_group=3, accountant=accountant
    )
    last.set_fit_request(sample_weight=True).set_params(max_rows_per_group=None)
    assert last.get_metadata_routing().fit.requests["groups"] is None
    pipe = make_pipeline(
        skdp.PrivateMinMaxScaler(max_rows_per_group=3, accountant=accountant), last
    )
    with pytest.raises(ValueError, match=r"groups.*PrivateLogisticRegression"):
        pipe.fit(X, y, groups=person)
    assert len(accountant.entries) == 0


def test_a_bound_stated_after_another_request_requests_groups(routing):
    # the other way: a request stored while unbounded (groups unset) stayed
    # unset once the bound was stated, and the router refused the groups
    model = skdp.PrivateLogisticRegression(classes=[0, 1])
    model.set_fit_request(sample_weight=True).set_params(max_rows_per_group=3)
    assert model.get_metadata_routing().fit.requests["groups"] is True
    model.set_fit_request(groups=False)  # the caller's statement is kept
    assert model.get_metadata_routing().fit.requests["groups"] is False


@pytest.mark.parametrize("composition", ["basic", "zcdp", "pld"])
def test_robust_scaler_planned_parts_are_the_recorded_ones(composition):
    # fit_cost returns the ledger parts fit charges: under zCDP one (ε, δ)
    # atom counts more than its parts, and a group fit in a row ledger (or
    # a row fit in a person ledger) converts each part (held: equal totals
    # for both scale methods, with and without proposals; PLD refuses both
    # the plan and the fit before any charge)
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, size=(120, 2))
    person = np.arange(120) // 4
    slack = 1e-6 if composition == "zcdp" else 0.0
    for scale, proposal, grouped, person_ledger in [
        ("quantile", None, False, True),
        ("dwork_lei", None, True, False),
        ("quantile", 0.5, True, True),
        ("dwork_lei", 0.5, False, False),
    ]:
        unit = {"unit": "group", "max_rows_per_group": 5} if person_ledger else {}
        accountants = [
            skdp.BudgetAccountant(
                50.0, 1e-2, composition=composition, slack=slack, **unit
            )
            for _ in range(2)
        ]
        model = skdp.PrivateRobustScaler(
            bounds=(0, 10),
            scale_method=scale,
            proposed_sensitivity=proposal,
            delta=1e-5,
            random_state=0,
            max_rows_per_group=3 if grouped else None,
            accountant=accountants[0],
        )
        plan = skdp.model_selection.fit_cost(model, 2)
        if composition == "pld":
            with pytest.raises(ValueError, match="pld"):
                model.fit(X, groups=person if grouped else None)
            with pytest.raises(ValueError, match="pld"):
                accountants[1].spend(plan, label="plan")
            assert len(accountants[0].entries) == 0
            continue
        model.fit(X, groups=person if grouped else None)
        accountants[1].spend(plan, label="plan")
        assert accountants[0].total() == accountants[1].total()
        assert len(accountants[0].entries) == len(accountants[1].entries)


def test_a_search_over_the_bound_with_none_charges_no_unbounded_candidate(routing):
    # GridSearchCV routes groups by its base estimator's request (bounded);
    # the candidate with max_rows_per_group=None is refused by the
    # pipeline's router before its scaler fits: 2 folds x 2 steps of the
    # bounded candidate and the refit's 2 steps, all for a group (held)
    X, y, person = _people()
    accountant = skdp.BudgetAccountant(delta=1.0)
    pipe = make_pipeline(
        skdp.PrivateStandardScaler(
            bounds=(0, 10), max_rows_per_group=3, accountant=accountant
        ),
        skdp.PrivateLogisticRegression(
            classes=[0, 1], max_rows_per_group=3, accountant=accountant
        ),
    )
    grid = {"privatelogisticregression__max_rows_per_group": [3, None]}
    search = GridSearchCV(pipe, grid, cv=GroupKFold(2), error_score=np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the refused candidate's FitFailedWarning
        search.fit(X, y, groups=person)
    assert [e.unit for e in accountant.entries] == ["group"] * 6


@pytest.mark.xfail(
    strict=True,
    reason="TransformedTargetRegressor fits its transformer on y without "
    "metadata: a private transformer without max_rows_per_group protects one "
    "row while the regressor protects a group (the ledger names the unit, a "
    "person-level accountant converts it; set_budget refuses the mix)",
)
def test_a_target_transformer_is_not_silently_row_level(routing):
    X, y, person = _people()
    accountant = skdp.BudgetAccountant(delta=1.0)
    model = TransformedTargetRegressor(
        skdp.PrivateLinearRegression(
            feature_bounds=(0, 10),
            target_bounds=(-5, 5),
            max_rows_per_group=3,
            accountant=accountant,
        ),
        transformer=skdp.PrivateStandardScaler(bounds=(0, 1), accountant=accountant),
    )
    try:
        model.fit(X, y.astype(float), groups=person)
    except ValueError:
        pass  # a refusal would do, if before any charge
    assert all(e.unit == "group" for e in accountant.entries)
