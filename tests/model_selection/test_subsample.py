"""The block votes of NoisyMaxSearchCV(method='subsample').

The internal cross-validation is a loop of its own; these tests hold it to
``cross_val_score(..., error_score=np.nan)``, the function it replaced, and
check that failures stay inside a block (its vote is the only output).
"""

import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_config
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import KFold, ShuffleSplit, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from skdp import BudgetAccountant, SampleAggregateEstimator
from skdp.model_selection import NoisyMaxSearchCV
from skdp.model_selection._subsample import (
    _ABSTAIN,
    _block_vote,
    _candidate_scores,
    _half_split,
    _plain_labels,
)


def reference_scores(candidates, X, y, cv, scoring):
    """What the search computed before: one cross_val_score per candidate."""
    means = []
    for candidate in candidates:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                scores = cross_val_score(
                    clone(candidate), X, y, cv=cv, scoring=scoring, error_score=np.nan
                )
            except ValueError:
                means.append(-np.inf)
                continue
        means.append(scores.mean() if np.all(np.isfinite(scores)) else -np.inf)
    return np.array(means)


@pytest.fixture(autouse=True)
def one_blas_thread():
    # tiny fits; multi-threaded BLAS on a loaded machine slows them tenfold
    with threadpool_limits(limits=1, user_api="blas"):
        yield


@pytest.fixture(scope="module")
def block():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(240, 4))
    y = (X[:, 0] + X[:, 1] + rng.normal(size=240) > 0).astype(int)
    return X, y


LOGISTIC = [LogisticRegression(C=C) for C in (1e-3, 0.05, 1.0, 100.0)]
TREES = [DecisionTreeClassifier(max_depth=d, random_state=0) for d in (1, 3, 9)]


@pytest.mark.parametrize(
    "candidates, cv, scoring",
    [
        (LOGISTIC, 3, None),
        (LOGISTIC, 5, "roc_auc"),
        (TREES, 3, "f1"),
        (TREES, KFold(4, shuffle=True, random_state=1), None),
    ],
)
def test_scores_equal_cross_val_score(block, candidates, cv, scoring):
    X, y = block
    np.testing.assert_array_equal(
        _candidate_scores(candidates, X, y, cv, scoring),
        reference_scores(candidates, X, y, cv, scoring),
    )


@pytest.mark.parametrize(
    "labels",
    [
        lambda y: np.where(y == 1, "yes", "no"),  # strings: counted directly
        lambda y: y.astype(bool),
        lambda y: y + 0.5,  # floats: scikit-learn's accuracy_score
        lambda y: pd.Series(y, name="target"),
    ],
)
def test_default_accuracy_for_every_kind_of_label(block, labels):
    X, y = block
    y = labels(y)
    np.testing.assert_array_equal(
        _candidate_scores(LOGISTIC, X, y, 3, None),
        reference_scores(LOGISTIC, X, y, 3, None),
    )


def test_regressors_and_frames(block):
    X, y = block
    frame = pd.DataFrame(X, columns=list("abcd"))
    target = X @ np.array([1.0, -2.0, 0.5, 0.0]) + y
    ridges = [Ridge(alpha=a) for a in (1e-2, 10.0, 1e4)]
    for scoring in (None, "neg_mean_absolute_error"):
        np.testing.assert_array_equal(
            _candidate_scores(ridges, frame, target, 3, scoring),
            reference_scores(ridges, frame, target, 3, scoring),
        )


def test_pairwise_candidates_split_the_kernel_both_ways(block):
    X, y = block
    kernel = X @ X.T
    candidates = [SVC(kernel="precomputed", C=C) for C in (1e-3, 1.0)]
    np.testing.assert_array_equal(
        _candidate_scores(candidates, kernel, y, 3, None),
        reference_scores(candidates, kernel, y, 3, None),
    )


def test_unseeded_shuffling_splitter_gives_every_candidate_the_same_folds(block):
    # identical candidates score identically only if they share their folds
    X, y = block
    twins = [DecisionTreeClassifier(random_state=0)] * 3
    scores = _candidate_scores(twins, X, y, ShuffleSplit(2, test_size=0.3), None)
    assert np.all(scores == scores[0]) and np.isfinite(scores[0])


# -- cv=1: one split per block --------------------------------------------------
def test_one_split_alternates_rows_within_each_class():
    # class 0 is rows 1, 2, 5 and class 1 rows 0, 3, 4, 6; ordered by class
    # (1, 2, 5, 0, 3, 4, 6), the rows alternate: training first
    y = np.array([1, 0, 0, 1, 1, 0, 1])
    train, test = _half_split(LogisticRegression(), y, len(y))
    np.testing.assert_array_equal(train, [1, 3, 5, 6])
    np.testing.assert_array_equal(test, [0, 2, 4])
    # a regressor's rows alternate in their order
    train, test = _half_split(Ridge(), y.astype(float), len(y))
    np.testing.assert_array_equal(train, [0, 2, 4, 6])
    np.testing.assert_array_equal(test, [1, 3, 5])


def every_other_row_of_each_class(y):
    """Training rows: the 1st, 3rd, ... row of each class (even class sizes)."""
    rank = np.zeros(len(y), dtype=int)
    for label in np.unique(y):
        rank[y == label] = np.arange(np.sum(y == label))
    return np.flatnonzero(rank % 2 == 0), np.flatnonzero(rank % 2 == 1)


@pytest.fixture(scope="module")
def even_block(block):
    # 120 rows of each class, so that each class alternates from its first row
    X, y = block
    rows = np.concatenate([np.flatnonzero(y == c)[:120] for c in (0, 1)])
    rows.sort()
    return X[rows], y[rows]


@pytest.mark.parametrize(
    "candidates, scoring",
    [(LOGISTIC, None), (LOGISTIC, "roc_auc"), (TREES, "f1")],
)
def test_one_split_scores_equal_cross_val_score_on_that_split(
    even_block, candidates, scoring
):
    X, y = even_block
    split = [every_other_row_of_each_class(y)]
    np.testing.assert_array_equal(
        _candidate_scores(candidates, X, y, 1, scoring),
        reference_scores(candidates, X, y, split, scoring),
    )


def test_one_split_of_frames_regressors_and_kernels(even_block):
    X, y = even_block
    frame = pd.DataFrame(X, columns=list("abcd"))
    target = X @ np.array([1.0, -2.0, 0.5, 0.0]) + y
    halves = [(np.arange(0, len(y), 2), np.arange(1, len(y), 2))]
    ridges = [Ridge(alpha=a) for a in (1e-2, 10.0, 1e4)]
    np.testing.assert_array_equal(
        _candidate_scores(ridges, frame, target, 1, None),
        reference_scores(ridges, frame, target, halves, None),
    )
    kernel = X @ X.T
    svcs = [SVC(kernel="precomputed", C=C) for C in (1e-3, 1.0)]
    np.testing.assert_array_equal(
        _candidate_scores(svcs, kernel, y, 1, None),
        reference_scores(svcs, kernel, y, [every_other_row_of_each_class(y)], None),
    )


def test_one_split_of_a_tiny_block_abstains(block):
    X, y = block
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _block_vote(LOGISTIC, X[:1], y[:1], 1, None) == _ABSTAIN
        assert _block_vote(LOGISTIC, X[:0], y[:0], 1, None) == _ABSTAIN


def test_search_with_one_split_fits_once_per_candidate_and_block(block):
    fits = []

    class Counted(LogisticRegression):
        def fit(self, X, y):
            fits.append(len(y))
            return super().fit(X, y)

    acc = BudgetAccountant(epsilon=2.0)
    NoisyMaxSearchCV(
        Counted(),
        {"C": [1e-3, 1.0]},
        cv=1,
        n_blocks=4,
        refit=False,
        accountant=acc,
        random_state=0,
    ).fit(*block)
    # one fit per candidate and block, on half of its rows (the odd one in)
    assert len(fits) == 2 * 4
    assert 2 * 120 <= sum(fits) <= 2 * (120 + 2)
    assert [e.epsilon for e in acc.entries] == [1.0]


class FailsWithFewPositives(ClassifierMixin, BaseEstimator):
    """Fits like a majority vote, but raises on fewer than ``need`` ones."""

    def __init__(self, need=0):
        self.need = need

    def fit(self, X, y):
        if np.sum(y == 1) < self.need:
            raise ValueError("too few positives")
        self.classes_ = np.unique(y)
        self.major_ = self.classes_[
            np.argmax(np.bincount(np.searchsorted(self.classes_, y)))
        ]
        return self

    def predict(self, X):
        return np.full(len(X), self.major_)


def test_a_failing_candidate_loses_the_vote_without_a_warning(block):
    X, y = block
    always_fails = FailsWithFewPositives(need=10**6)
    scores = _candidate_scores([always_fails, LOGISTIC[2]], X, y, 3, None)
    assert scores[0] == -np.inf and np.isfinite(scores[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _block_vote([always_fails, LOGISTIC[2]], X, y, 3, None) == 1
        assert _block_vote([always_fails], X, y, 3, None) == _ABSTAIN
        assert _block_vote(LOGISTIC, X[:2], y[:2], 3, None) == _ABSTAIN


def test_data_dependent_failures_stay_in_their_blocks(block):
    # the fit fails in blocks with few positives (a property of the private
    # rows): those blocks abstain; the search neither raises nor warns, and
    # the charge is the planned one
    X, y = block
    acc = BudgetAccountant(epsilon=5.0)
    search = NoisyMaxSearchCV(
        FailsWithFewPositives(),
        {"need": [0, 30]},
        n_blocks=8,
        refit=False,
        accountant=acc,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        search.fit(X, y)
    assert search.best_index_ in (0, 1)
    assert sum(Fraction(repr(e.epsilon)) for e in acc.entries) == 1


def test_plain_labels_only_for_matching_integer_bool_or_string_arrays():
    ints = np.array([0, 1, 1])
    assert _plain_labels(ints, ints.copy())
    assert _plain_labels(ints.astype(str), ints.astype(str))
    assert not _plain_labels(ints, ints.astype(np.int32))
    assert not _plain_labels(ints.astype(float), ints.astype(float))
    assert not _plain_labels(ints.astype(object), ints.astype(object))
    assert not _plain_labels(ints.reshape(-1, 1), ints.reshape(-1, 1))
    assert not _plain_labels(pd.Series(ints), ints)


@pytest.mark.parametrize("backend", ["loky", "threading"])
def test_parallel_blocks_vote_as_the_sequential_loop(block, backend):
    X, y = block
    X, y = np.tile(X, (4, 1)), np.tile(y, 4)

    def run(n_jobs):
        acc = BudgetAccountant(epsilon=2.0)  # in memory: workers cannot spend it
        search = NoisyMaxSearchCV(
            LogisticRegression(),
            {"C": [1e-4, 1e-2, 1.0]},
            n_blocks=6,
            refit=False,
            n_jobs=n_jobs,
            accountant=acc,
            random_state=3,
        )
        with parallel_config(backend=backend):
            search.fit(X, y)
        return search.best_index_, [e.epsilon for e in acc.entries]

    sequential = run(None)
    assert sequential[1] == [1.0]
    assert run(2) == sequential


def test_private_candidates_fit_their_blocks_under_a_throw_away_accountant(block):
    # the nested accountant of each block's candidates is set to a scratch
    # one: neither the search's accountant nor the default one is charged
    private = make_pipeline(
        StandardScaler(),
        SampleAggregateEstimator(
            LogisticRegression(),
            classes=[0, 1],
            n_blocks=3,
            epsilon=0.5,
            output_bounds=("l2", 5.0),
        ),
    )
    acc = BudgetAccountant(epsilon=2.0)
    with BudgetAccountant() as default:
        NoisyMaxSearchCV(
            private,
            {"sampleaggregateestimator__epsilon": [0.5, 1.0]},
            n_blocks=4,
            refit=False,
            accountant=acc,
            random_state=0,
        ).fit(*block)
    assert [e.epsilon for e in acc.entries] == [1.0]
    assert default.entries == ()


class LocalHandle:
    """Copied as itself (so clone works), never pickled (a process-local thing)."""

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        raise TypeError("a LocalHandle stays in its process")


class HoldsAHandle(ClassifierMixin, BaseEstimator):
    """Always predicts class ``shift``; ``handle`` cannot be pickled."""

    def __init__(self, handle=None, shift=0):
        self.handle, self.shift = handle, shift

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[self.shift])


def test_unpicklable_candidates_vote_in_threads(block):
    # processes would fail after the charge; threads need no pickling
    acc = BudgetAccountant(epsilon=2.0)
    search = NoisyMaxSearchCV(
        HoldsAHandle(handle=LocalHandle()),
        {"shift": [0, 1]},
        n_blocks=4,
        refit=False,
        n_jobs=2,
        accountant=acc,
        random_state=0,
    ).fit(*block)
    assert search.best_index_ in (0, 1) and len(acc.entries) == 1
