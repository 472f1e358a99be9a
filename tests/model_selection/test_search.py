"""NoisyMaxSearchCV: cost charged up front, privacy of the selection step."""

import pickle
from fractions import Fraction
from itertools import product

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp import (
    BudgetAccountant,
    BudgetExceededError,
    DPClipper,
    PrivateMean,
    SampleAggregateEstimator,
)
from skdp.accounting import plan_epsilon
from skdp.audit import assert_dp, audit_mechanism
from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms import _selection, check_random_source
from skdp.model_selection import (
    NoisyMaxSearchCV,
    _search,
    _search_selection,
    _subsample,
    fit_cost,
)

# small n_blocks on purpose (fast): the public noise-dominated warning is
# tested in tests/ensemble/test_n_blocks_auto.py
pytestmark = pytest.mark.filterwarnings("ignore::skdp.NoiseDominatedWarning")

EPS = 1.0
FAST = {"n_samples": 20_000, "n_pilot": 5_000, "random_state": 0}


@pytest.fixture(scope="module")
def clf_data():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(3000, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=3000) > 0).astype(int)
    return X, y


def private_lr(C=1.0, epsilon=1.0):
    return SampleAggregateEstimator(
        LogisticRegression(C=C),
        n_blocks=20,
        epsilon=epsilon,
        output_bounds=("l2", 5.0),
        classes=[0, 1],  # public: a holdout candidate may train on no rows
        random_state=0,
    )


def refit_private(params):
    return SampleAggregateEstimator(
        LogisticRegression(**params),
        classes=[0, 1],
        n_blocks=60,
        epsilon=0.5,
        output_bounds=("l2", 5.0),
        random_state=0,
    )


class CountingClassifier(ClassifierMixin, BaseEstimator):
    """Majority-class model that counts its fits (class attribute)."""

    fits = 0

    def __init__(self, shift=0):
        self.shift = shift

    def fit(self, X, y):
        type(self).fits += 1
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


def spent(acc):
    return sum(Fraction(repr(e.epsilon)) for e in acc.entries)


# -- what is charged -----------------------------------------------------------
def test_subsample_charges_selection_and_largest_refit_before_work(clf_data):
    acc = BudgetAccountant(epsilon=10.0)
    search = NoisyMaxSearchCV(
        LogisticRegression(),
        {"C": [0.01, 1.0], "fit_intercept": [True, False]},
        epsilon=EPS,
        n_blocks=10,
        refit=lambda p: private_lr(C=p["C"], epsilon=0.5 if p["C"] < 1 else 0.7),
        accountant=acc,
        random_state=0,
    ).fit(*clf_data)
    labels = [e.label for e in acc.entries]
    assert labels[0].startswith("NoisyMaxSearchCV: vote selection")
    assert labels[1].startswith("NoisyMaxSearchCV: refit")
    # the refit's own entry goes to a prepaid accountant, not this one
    assert len(labels) == 2
    assert acc.entries[1].epsilon == 0.7  # the largest candidate cost
    assert spent(acc) == Fraction("1.7")
    assert search.cost_.epsilon == pytest.approx(1.7)
    assert search.epsilon_spent_ == pytest.approx(1.7)
    assert search.best_estimator_.accountant is acc  # later charges go here
    assert search.n_candidates_ == 4


def test_holdout_charges_max_of_training_and_selection(clf_data):
    acc = BudgetAccountant(epsilon=10.0)
    grid = {"estimator__C": [0.1, 1.0], "epsilon": [0.3, 0.4]}
    NoisyMaxSearchCV(
        private_lr(),
        grid,
        epsilon=EPS,
        method="holdout",
        refit=False,
        accountant=acc,
        random_state=0,
    ).fit(*clf_data)
    # training: 0.3 + 0.4 + 0.3 + 0.4 = 1.4 > selection 1.0 (disjoint rows)
    assert [e.epsilon for e in acc.entries] == [1.4]
    acc2 = BudgetAccountant(epsilon=10.0)
    NoisyMaxSearchCV(
        private_lr(),
        {"epsilon": [0.1, 0.2]},
        epsilon=EPS,
        method="holdout",
        accountant=acc2,
        random_state=0,
    ).fit(*clf_data)
    # max(0.3, 1.0) for selection, then the refit at the largest cost 0.2
    assert [e.epsilon for e in acc2.entries] == [1.0, 0.2]


def test_fit_cost_of_composites_sums_private_steps():
    pipe = make_pipeline(
        StandardScaler(),
        DPClipper(bounds=(-3, 3)),
        PrivateMean(epsilon=0.25, bounds=(-3, 3)),
        private_lr(epsilon=0.5),
    )
    assert fit_cost(pipe).epsilon == 0.75
    search = NoisyMaxSearchCV(
        LogisticRegression(), {"C": [1.0, 2.0]}, epsilon=0.5, refit=refit_private
    )
    assert fit_cost(search).epsilon == 1.0


def test_insufficient_budget_fails_before_any_fit(clf_data):
    acc = BudgetAccountant(epsilon=0.5)
    CountingClassifier.fits = 0
    search = NoisyMaxSearchCV(
        CountingClassifier(),
        {"shift": [0, 1]},
        epsilon=EPS,
        n_blocks=5,
        refit=False,
        accountant=acc,
    )
    with pytest.raises(BudgetExceededError):
        search.fit(*clf_data)
    assert CountingClassifier.fits == 0
    assert acc.entries == ()


def test_insufficient_budget_for_refit_fails_before_any_probe(clf_data):
    acc = BudgetAccountant(epsilon=1.2)
    search = NoisyMaxSearchCV(
        LogisticRegression(),
        {"C": [1.0, 2.0]},
        epsilon=EPS,
        refit=refit_private,  # 1.0 + 0.5 > 1.2
        accountant=acc,
    )
    with pytest.raises(BudgetExceededError):
        search.fit(*clf_data)
    assert acc.entries == ()


# -- bad input: clear errors, nothing charged ----------------------------------
BAD = [
    ({"param_grid": {}}, "param_grid is empty"),
    ({"param_grid": []}, "param_grid is empty"),
    ({"param_grid": {"no_such": [1]}}, "Invalid parameter"),
    ({"refit": True}, "must be private"),
    ({"method": "holdout", "refit": False}, "not a private estimator"),
    ({"scoring": "no_such_scorer"}, "no_such_scorer"),
    ({"cv": 0}, "'cv' parameter"),
    ({"cv": 1.5}, "'cv' parameter"),
    ({"cv": True}, "cv must be an integer"),
    ({"refit": lambda p: private_lr(C=p["C"], epsilon=-1.0)}, "epsilon"),
    (
        {"refit": lambda p: make_pipeline(StandardScaler(), private_lr(**p))},
        "StandardScaler is not a private",
    ),
]


@pytest.mark.parametrize("params, match", BAD)
def test_bad_input_raises_before_charging(clf_data, params, match):
    acc = BudgetAccountant(epsilon=100.0)
    search = NoisyMaxSearchCV(
        LogisticRegression(),
        {"C": [1.0, 2.0]},
        n_blocks=5,
        refit=False,
        accountant=acc,
    ).set_params(**params)
    with pytest.raises((ValueError, TypeError), match=match):
        search.fit(*clf_data)
    assert acc.entries == ()


@pytest.mark.parametrize("method", ["subsample", "holdout"])
def test_missing_target_raises_before_charging(clf_data, method):
    acc = BudgetAccountant(epsilon=100.0)
    search = NoisyMaxSearchCV(
        private_lr() if method == "holdout" else LogisticRegression(),
        {"estimator__C" if method == "holdout" else "C": [1.0, 2.0]},
        method=method,
        n_blocks=5,
        refit=False,
        accountant=acc,
    )
    with pytest.raises(ValueError, match="requires y"):
        search.fit(clf_data[0], None)
    assert acc.entries == ()


@pytest.mark.parametrize("scoring", ["r2", "roc_auc", "neg_mean_squared_error"])
def test_holdout_rejects_scores_without_bounded_sensitivity(clf_data, scoring):
    acc = BudgetAccountant(epsilon=100.0)
    search = NoisyMaxSearchCV(
        private_lr(),
        {"estimator__C": [1.0, 2.0]},
        method="holdout",
        scoring=scoring,
        accountant=acc,
    )
    with pytest.raises(ValueError, match="bounded sensitivity"):
        search.fit(*clf_data)
    assert acc.entries == ()


def test_holdout_regression_needs_a_loss_bound():
    rng = np.random.RandomState(1)
    X = rng.normal(size=(400, 2))
    y = X @ [1.0, -1.0] + 0.1 * rng.normal(size=400)
    reg = SampleAggregateEstimator(
        Ridge(), n_blocks=5, epsilon=0.5, output_bounds=(-3, 3), random_state=0
    )
    acc = BudgetAccountant(epsilon=100.0)
    search = NoisyMaxSearchCV(
        reg,
        {"estimator__alpha": [0.1, 1.0]},
        method="holdout",
        scoring="neg_absolute_error",
        accountant=acc,
    )
    with pytest.raises(ValueError, match="loss_bound"):
        search.fit(X, y)
    assert acc.entries == ()
    search.set_params(loss_bound=2.0, random_state=0).fit(X, y)
    assert search.predict(X[:3]).shape == (3,)


def test_holdout_rejects_candidates_that_charge_at_predict(clf_data):
    from sklearn.tree import DecisionTreeClassifier

    voting = SampleAggregateEstimator(
        DecisionTreeClassifier(), classes=[0, 1], n_blocks=5
    )
    acc = BudgetAccountant(epsilon=100.0)
    search = NoisyMaxSearchCV(
        voting, {"epsilon": [0.5, 1.0]}, method="holdout", accountant=acc
    )
    with pytest.raises(ValueError, match="charges the budget for every"):
        search.fit(*clf_data)
    assert acc.entries == ()


class Overspender(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Declares ``epsilon`` (the default ``_fit_cost``) but charges it twice."""

    def __init__(self, epsilon=0.5, accountant=None):
        self.epsilon = epsilon
        self.accountant = accountant

    def fit(self, X, y):
        self._charge([("first half", self.epsilon, 0.0)])
        self._charge([("undeclared", self.epsilon, 0.0)])
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


def test_a_fit_spending_more_than_declared_is_refused(clf_data):
    acc = BudgetAccountant(epsilon=10.0)
    search = NoisyMaxSearchCV(
        LogisticRegression(),
        {"C": [1.0, 2.0]},
        n_blocks=3,
        refit=lambda p: Overspender(),
        accountant=acc,
    )
    with pytest.raises(BudgetExceededError):
        search.fit(*clf_data)
    assert spent(acc) == Fraction("1.5")  # the declared cost, then refused


# -- selection quality, delegation, sklearn machinery ---------------------------
def test_subsample_selects_a_clearly_better_candidate(clf_data):
    # C=1e-6 predicts almost at chance: every block votes C=1 (20 votes to 0),
    # and permute-and-flip keeps a 20-vote lead with probability 1 - e^-10
    search = NoisyMaxSearchCV(
        LogisticRegression(),
        {"C": [1e-6, 1.0]},
        scoring="roc_auc",
        epsilon=EPS,
        n_blocks=20,
        refit=refit_private,
        random_state=0,
    ).fit(*clf_data)
    assert search.best_params_ == {"C": 1.0}
    # the private refit (SampleAggregate, epsilon=0.5) is well above chance;
    # its exact accuracy varies with the noise (0.798 with this seed)
    assert search.score(*clf_data) > 0.7
    assert set(search.classes_) == {0, 1}
    assert search.predict_proba(clf_data[0][:4]).shape == (4, 2)


def test_holdout_selects_the_better_private_candidate(clf_data):
    search = NoisyMaxSearchCV(
        private_lr().set_params(n_blocks=100),  # noise scale 0.2 per coefficient
        {"estimator__C": [1e-6, 1.0]},
        method="holdout",
        refit=False,
        epsilon=EPS,
        random_state=0,
    ).fit(*clf_data)
    assert search.best_params_ == {"estimator__C": 1.0}
    assert search.score(*clf_data) > 0.8  # the trained winner, already paid


def test_no_exact_scores_are_exposed(clf_data):
    search = NoisyMaxSearchCV(
        LogisticRegression(), {"C": [1.0, 2.0]}, n_blocks=5, refit=False
    ).fit(*clf_data)
    assert not hasattr(search, "cv_results_")
    assert not hasattr(search, "best_score_")
    assert not hasattr(search, "predict")  # refit=False, subsample: no model


def test_clone_and_pickle(clf_data):
    acc = BudgetAccountant(epsilon=10.0)
    search = NoisyMaxSearchCV(
        LogisticRegression(),
        {"C": [1.0, 2.0]},
        n_blocks=5,
        refit=refit_private,
        accountant=acc,
        random_state=0,
    )
    assert clone(search).accountant is acc
    fitted = clone(search).set_params(accountant=None).fit(*clf_data)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(
        again.predict(clf_data[0][:20]), fitted.predict(clf_data[0][:20])
    )


def test_inside_grid_search_every_fit_is_charged(clf_data):
    acc = BudgetAccountant(epsilon=100.0)
    search = NoisyMaxSearchCV(
        LogisticRegression(),
        {"C": [1.0, 2.0]},
        n_blocks=5,
        refit=refit_private,
        accountant=acc,
        random_state=0,
    )
    outer = GridSearchCV(search, {"epsilon": [0.5, 1.0]}, cv=2).fit(*clf_data)
    # 2 settings x 2 folds + refit; each fit costs its epsilon + 0.5
    expected = 2 * (0.5 + 0.5) + 2 * (1.0 + 0.5) + (outer.best_params_["epsilon"] + 0.5)
    assert float(spent(acc)) == pytest.approx(expected)


@pytest.mark.parametrize("backend", ["loky", "threading"])
def test_workers_never_charge_and_results_match(clf_data, backend):
    def run(n_jobs):
        acc = BudgetAccountant(epsilon=10.0)  # in memory: workers cannot spend it
        search = NoisyMaxSearchCV(
            private_lr(),
            {"estimator__C": [0.01, 1.0], "epsilon": [0.2, 0.3]},
            method="holdout",
            refit=False,
            n_jobs=n_jobs,
            accountant=acc,
            random_state=0,
        )
        with parallel_config(backend=backend):
            search.fit(*clf_data)
        return search.best_index_, spent(acc), search.best_estimator_.estimator_.coef_

    seq, par = run(None), run(2)
    assert seq[0] == par[0]
    assert seq[1] == par[1] == Fraction("1.0")  # max(1.0, 0.2+0.3+0.2+0.3)
    np.testing.assert_array_equal(seq[2], par[2])


def test_dask_local_cluster(clf_data):
    distributed = pytest.importorskip("distributed")
    acc = BudgetAccountant(epsilon=3.0)
    search = NoisyMaxSearchCV(
        LogisticRegression(),
        {"C": [0.01, 1.0]},
        n_blocks=6,
        refit=refit_private,
        accountant=acc,
        random_state=0,
    )
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
        parallel_config(backend="dask"),
    ):
        via_dask = search.fit(*clf_data).best_params_
    assert spent(acc) == Fraction("1.5")
    local = clone(search).set_params(accountant=None).fit(*clf_data).best_params_
    assert via_dask == local


# -- privacy of the selection step ---------------------------------------------
def votes_of(X, y, labels, n_blocks):
    """Deterministic per-block choices with a cheap rule (for brute force)."""
    choices = []
    for b in range(n_blocks):
        yb = y[labels == b]
        # candidate 0 'predict 0', 1 'predict 1', abstain on an empty block
        choices.append(-1 if yb.size == 0 else int(yb.mean() > 0.5))
    return _search.vote_histogram(choices, 2)


def test_bruteforce_votes_are_one_sensitive_and_not_monotone():
    rng = np.random.RandomState(0)
    n, k = 7, 3
    seen_opposite = False
    for y in product([0, 1], repeat=n):
        y = np.array(y)
        labels = rng.randint(k, size=n)
        base = votes_of(None, y, labels, k)
        neighbours = []
        for i in range(n):  # remove row i: the other rows keep their blocks
            keep = np.arange(n) != i
            neighbours.append(votes_of(None, y[keep], labels[keep], k))
        for value, block in product([0, 1], range(k)):  # add a row
            neighbours.append(
                votes_of(None, np.append(y, value), np.append(labels, block), k)
            )
        for other in neighbours:
            diff = other - base
            assert np.abs(diff).max() <= 1
            assert np.abs(diff).sum() <= 2
            seen_opposite |= diff.min() < 0 < diff.max()
    assert seen_opposite  # a vote moves between candidates: not monotone


def test_bruteforce_holdout_scores_are_monotone_and_bounded():
    class Fixed(BaseEstimator):
        def __init__(self, value):
            self.value = value

        def predict(self, X):
            return np.full(len(X), self.value, dtype=float)

    models = [Fixed(v) for v in (-1.0, 0.0, 2.0)]
    rng = np.random.RandomState(0)
    X, y = np.zeros((6, 1)), rng.normal(size=6) * 3
    for scoring in ("neg_absolute_error", "neg_squared_error"):
        base = np.array(
            [
                _search_selection.holdout_row_scores(m, X, y, scoring, 1.5).sum()
                for m in models
            ]
        )
        for y_new in (-10.0, -0.5, 0.0, 0.7, 3.0, 50.0):
            added = np.array(
                [
                    _search_selection.holdout_row_scores(
                        m, np.zeros((7, 1)), np.append(y, y_new), scoring, 1.5
                    ).sum()
                    for m in models
                ]
            )
            diff = added - base
            assert np.all(diff <= 0) and np.all(diff >= -1.5)


V0, V1 = np.array([6, 6]), np.array([5, 7])  # one block's vote moved


def release_selection(votes, seed, n_runs):
    source = check_random_source(seed)
    return np.array(
        [_search.select_by_votes(votes, EPS, source) for _ in range(n_runs)]
    )


def test_audit_vote_selection_passes():
    assert_dp(release_selection, V0, V1, EPS, **FAST)


def test_audit_catches_monotone_noise_on_votes(monkeypatch):
    def monotone(scores, epsilon, sensitivity, *, monotonic, random_state):
        return _selection.permute_and_flip(
            scores, epsilon, sensitivity, monotonic=True, random_state=random_state
        )

    monkeypatch.setattr(_subsample, "permute_and_flip", monotone)
    mutant = audit_mechanism(release_selection, V0, V1, **FAST)
    assert mutant.epsilon_lower_bound > 1.5 * EPS  # claims 1, leaks 2


H0, H1 = np.array([10.0, 10.0]), np.array([11.0, 10.0])  # a held-out row added


def release_holdout(totals, seed, n_runs):
    source = check_random_source(seed)
    return np.array(
        [
            _search_selection.select_by_holdout_scores(totals, EPS, 1.0, source)
            for _ in range(n_runs)
        ]
    )


def test_audit_holdout_selection_passes():
    assert_dp(release_holdout, H0, H1, EPS, **FAST)


def test_audit_catches_holdout_scale_halved(monkeypatch):
    original = _search_selection.select_by_holdout_scores

    def halved(totals, epsilon, sensitivity, random_state):
        return original(totals, 2 * epsilon, sensitivity, random_state)

    monkeypatch.setattr(_search_selection, "select_by_holdout_scores", halved)
    mutant = audit_mechanism(release_holdout, H0, H1, **FAST)
    assert mutant.epsilon_lower_bound > 1.3 * EPS


def test_seeded_search_reproduces_the_refit_and_unseeded_never_seeds(clf_data):
    def refit(params):  # no random_state of its own
        return SampleAggregateEstimator(
            LogisticRegression(**params),
            classes=[0, 1],
            n_blocks=20,
            output_bounds=("l2", 3.0),
        )

    def run(random_state):
        search = NoisyMaxSearchCV(
            LogisticRegression(),
            {"C": [0.01, 1.0]},
            n_blocks=5,
            refit=refit,
            random_state=random_state,
        ).fit(*clf_data)
        return search.best_estimator_

    first, again = run(0), run(0)
    np.testing.assert_array_equal(first.estimator_.coef_, again.estimator_.coef_)
    # unseeded: the refit keeps random_state=None (the secure generator), never
    # an integer drawn from it
    assert run(None).random_state is None


def test_more_blocks_than_rows_is_not_an_error(clf_data):
    # main raised "n_blocks=40 is larger than the number of rows" (with
    # nothing charged), which told whether n < n_blocks (n is private): now
    # blocks without rows abstain, for any n
    X, y = clf_data
    outcomes = []
    for n in (30, 3):
        acc = BudgetAccountant(epsilon=100.0)
        search = NoisyMaxSearchCV(
            LogisticRegression(),
            {"C": [1.0, 2.0]},
            n_blocks=40,
            refit=False,
            accountant=acc,
            random_state=0,
        ).fit(X[:n], y[:n])
        outcomes.append((search.best_index_ in (0, 1), len(acc.entries)))
    assert outcomes == [(True, 1), (True, 1)]


def test_holdout_under_zcdp_charges_each_release_in_the_accountants_currency(
    clf_data,
):
    from skdp.linear_model import PrivateLogisticRegression

    model = PrivateLogisticRegression(
        epsilon=0.3, delta=1e-7, max_norm=4.0, classes=[0, 1], random_state=0
    )
    search = NoisyMaxSearchCV(
        model,
        {"C": [0.1, 1.0, 10.0]},
        epsilon=0.5,
        method="holdout",
        random_state=0,
    )
    zcdp = BudgetAccountant(epsilon=5.0, delta=1e-5, composition="zcdp")
    cost = fit_cost(search.set_params(accountant=zcdp))
    search.fit(*clf_data)
    kinds = [e.mechanism for e in zcdp.entries]
    # three Gaussian trainings, the selection, the Gaussian refit
    assert kinds == ["gaussian"] * 3 + ["permute_and_flip", "gaussian"]
    assert search.cost_.epsilon == pytest.approx(cost.epsilon)
    assert len(search.cost_.parts) == 5
    # the ledger holds what the plan said: its zCDP total is the plan's
    assert zcdp.total()[0] == pytest.approx(plan_epsilon(cost, 1e-5, "zcdp"))
    assert search.cost_.epsilon == pytest.approx(0.9 + 0.5 + 0.3)
