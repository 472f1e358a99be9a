"""One accountant through Pipeline, GridSearchCV and cross_validate.

Every fit inside a search is charged exactly once to the shared accountant,
whichever joblib backend runs it: process workers spend an in-memory ledger
through its owner (skdp.accounting._channel), a file ledger directly.
"""

import pickle

import numpy as np
import pytest
from _accounting_probe import ChargeProbe
from joblib import parallel_config
from sklearn.base import clone
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant, BudgetExceededError, DPClipper, default_accountant

GRID = {"chargeprobe__epsilon": [0.1, 0.2], "ridge__alpha": [1.0, 10.0]}
N_FOLDS = 3
# every candidate on every fold, plus the refit of the best candidate
EXPECTED_FITS = 4 * N_FOLDS + 1


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(60, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=60)
    return X, y


def make_search(accountant=None, n_jobs=None):
    pipe = make_pipeline(
        DPClipper(bounds=(-1.0, 1.0), accountant=accountant),
        ChargeProbe(accountant=accountant),
        Ridge(),
    )
    return GridSearchCV(pipe, GRID, cv=N_FOLDS, n_jobs=n_jobs)


def assert_charged_every_fit(accountant, search):
    entries = accountant.entries
    assert len(entries) == EXPECTED_FITS
    best = search.best_params_["chargeprobe__epsilon"]
    expected = N_FOLDS * 2 * (0.1 + 0.2) + best
    assert accountant.total()[0] == pytest.approx(expected, rel=1e-12)
    assert {e.label for e in entries} == {"ChargeProbe: probe"}


def file_accountant(tmp_path):
    return BudgetAccountant(epsilon=100.0, ledger=tmp_path / "ledger.sqlite")


@pytest.mark.parametrize("backend", ["sequential", "threading"])
def test_grid_search_charges_every_fit_in_process(data, backend):
    acc = BudgetAccountant(epsilon=100.0)
    search = make_search(acc, n_jobs=2)
    with parallel_config(backend=backend):
        search.fit(*data)
    assert_charged_every_fit(acc, search)
    # the fitted best estimator still holds the very same accountant
    assert search.best_estimator_[1].accountant is acc


def test_grid_search_over_processes_with_a_file_ledger(data, tmp_path):
    acc = file_accountant(tmp_path)
    search = make_search(acc, n_jobs=2)
    with parallel_config(backend="loky"):
        search.fit(*data)
    assert_charged_every_fit(acc, search)


def test_grid_search_over_processes_with_a_memory_ledger(data):
    acc = BudgetAccountant(epsilon=100.0)
    search = make_search(acc, n_jobs=2)
    with parallel_config(backend="loky"):
        search.fit(*data)
    assert_charged_every_fit(acc, search)


def test_a_plan_over_budget_is_refused_in_the_workers_before_any_fit(data):
    # the owner checks the whole plan when the first worker's spend arrives;
    # error_score="raise" re-raises the worker's refusal itself
    search = make_search(BudgetAccountant(1.0), n_jobs=2)
    search.set_params(error_score="raise")
    with parallel_config(backend="loky"):
        with pytest.raises(BudgetExceededError, match="refused before its first fit"):
            search.fit(*data)
    assert search.estimator[1].accountant.entries == ()


@pytest.mark.parametrize("backend", ["sequential", "threading"])
def test_with_block_default_reaches_every_fit(data, backend):
    acc = BudgetAccountant(epsilon=100.0)
    search = make_search(accountant=None, n_jobs=2)
    with acc, parallel_config(backend=backend):
        search.fit(*data)
    assert_charged_every_fit(acc, search)


def test_with_block_default_over_processes_with_a_file_ledger(data, tmp_path):
    acc = file_accountant(tmp_path)
    search = make_search(accountant=None, n_jobs=2)
    with acc, parallel_config(backend="loky"):
        search.fit(*data)
    assert_charged_every_fit(acc, search)


def test_with_block_default_over_processes_in_memory(data):
    acc = BudgetAccountant(epsilon=100.0)
    search = make_search(accountant=None, n_jobs=2)
    with acc, parallel_config(backend="loky"):
        search.fit(*data)
    assert_charged_every_fit(acc, search)


def test_no_accountant_at_all_over_processes_records_in_the_default(data):
    # the workers charge the parent's default, never a throw-away one of theirs
    before = len(default_accountant().entries)
    search = make_search(accountant=None, n_jobs=2)
    with parallel_config(backend="loky"):
        search.fit(*data)
    assert len(default_accountant().entries) == before + EXPECTED_FITS


def test_insufficient_budget_refuses_the_search_before_any_fit(data):
    acc = BudgetAccountant(epsilon=0.5)
    search = make_search(acc).set_params(error_score="raise")
    with pytest.raises(BudgetExceededError, match="costs epsilon=2, delta=0"):
        search.fit(*data)  # 3 x (0.1 + 0.1 + 0.2 + 0.2) + 0.2
    assert acc.entries == ()


@pytest.mark.parametrize(
    "backend, ledger",
    [("sequential", False), ("threading", False), ("loky", False), ("loky", True)],
)
def test_cross_validate_charges_every_fold(data, tmp_path, backend, ledger):
    acc = file_accountant(tmp_path) if ledger else BudgetAccountant(epsilon=100.0)
    pipe = make_pipeline(ChargeProbe(0.25, accountant=acc), Ridge())
    with parallel_config(backend=backend):
        cross_validate(pipe, *data, cv=5, n_jobs=2)
    assert len(acc.entries) == 5
    assert acc.total()[0] == 1.25


def test_estimator_clone_and_pickle_keep_the_accountant_identity():
    acc = BudgetAccountant()
    probe = ChargeProbe(accountant=acc)
    assert clone(probe).accountant is acc
    # in the owner's process a pickled copy is the accountant itself
    assert pickle.loads(pickle.dumps(probe)).accountant is acc


def test_epsilon_spent_matches_the_ledger(data):
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    probe = ChargeProbe(0.3, 1e-7, accountant=acc).fit(data[0])
    (entry,) = acc.entries
    assert (probe.epsilon_spent_, probe.delta_spent_) == (entry.epsilon, entry.delta)


def test_default_accountant_is_resolved_at_fit_time(data):
    probe = ChargeProbe(0.1)
    first, second = BudgetAccountant(), BudgetAccountant()
    with first:
        probe.fit(data[0])
    with second:
        probe.fit(data[0])
    assert len(first.entries) == len(second.entries) == 1
    assert probe.accountant is None


# -- experiments: every fit recorded, whatever the backend --------------------
def test_learning_curve_over_all_cores_with_a_file_ledger(data, tmp_path):
    from sklearn.model_selection import learning_curve

    acc = file_accountant(tmp_path)
    pipe = make_pipeline(ChargeProbe(0.125, accountant=acc), Ridge())
    sizes = [0.5, 0.75, 1.0]
    with parallel_config(backend="loky"):
        learning_curve(pipe, *data, train_sizes=sizes, cv=N_FOLDS, n_jobs=-1)
    assert len(acc.entries) == len(sizes) * N_FOLDS
    assert acc.total()[0] == 0.125 * len(sizes) * N_FOLDS


@pytest.mark.parametrize("processes", [False, True])
def test_grid_search_on_a_dask_cluster_with_a_file_ledger(data, tmp_path, processes):
    distributed = pytest.importorskip("distributed")
    acc = file_accountant(tmp_path)
    search = make_search(acc, n_jobs=2)
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=processes,
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster),
        parallel_config(backend="dask"),
    ):
        search.fit(*data)
    assert_charged_every_fit(acc, search)


def test_fit_cost_of_a_grid_search_checks_the_budget_before_any_fit(data):
    from skdp.model_selection import fit_cost

    search = make_search()
    cost = fit_cost(search)
    # 2 ChargeProbe settings x 2 ridge alphas x 3 folds + the largest refit
    assert cost.epsilon == pytest.approx(N_FOLDS * 2 * (0.1 + 0.2) + 0.2)
    acc = BudgetAccountant(epsilon=cost.epsilon - 0.05)
    with pytest.raises(Exception, match="exceed the privacy budget"):
        acc.check(cost.epsilon, cost.delta)
    assert acc.entries == ()
    enough = BudgetAccountant(epsilon=cost.epsilon)
    enough.check(cost.epsilon, cost.delta)
    make_search(enough).fit(*data)
    assert enough.total()[0] <= cost.epsilon


def test_fit_cost_refuses_composites_that_may_fit_many_times():
    from sklearn.multiclass import OneVsRestClassifier

    from skdp import SampleAggregateEstimator
    from skdp.model_selection import fit_cost

    ovr = OneVsRestClassifier(SampleAggregateEstimator(Ridge(), output_bounds=(-1, 1)))
    with pytest.raises(ValueError, match="how many times"):
        fit_cost(ovr)


def test_fit_cost_of_a_randomized_search_uses_its_own_draws(data):
    from scipy.stats import uniform
    from sklearn.model_selection import RandomizedSearchCV

    from skdp.model_selection import fit_cost

    acc = BudgetAccountant(epsilon=100.0)
    pipe = make_pipeline(ChargeProbe(accountant=acc), Ridge())
    search = RandomizedSearchCV(
        pipe,
        {"chargeprobe__epsilon": uniform(0.01, 0.5)},
        n_iter=4,
        cv=N_FOLDS,
        random_state=7,
    )
    cost = fit_cost(search)
    search.fit(*data)
    drawn = search.cv_results_["param_chargeprobe__epsilon"]
    # every candidate on every fold, and the refit at the largest candidate cost
    assert cost.epsilon == pytest.approx(N_FOLDS * sum(drawn) + max(drawn))
    assert acc.total()[0] <= cost.epsilon * (1 + 1e-12)
    with pytest.raises(ValueError, match="integer random_state"):
        fit_cost(search.set_params(random_state=None))
