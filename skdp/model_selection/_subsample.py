"""Subsample-and-vote selection of ``NoisyMaxSearchCV(method='subsample')``.

Each disjoint block of rows votes for the candidate with the best internal
cross-validation score; the votes are counted and one candidate is released
by permute-and-flip. A block's vote depends on that block's rows only, so
adding or removing a row changes at most one vote.

The internal cross-validation is a plain loop (split once per block, fit and
score each candidate on each fold) that gives the scores
``cross_val_score(clone(candidate), X_block, y_block, cv=cv, scoring=scoring,
error_score=np.nan)`` gives, without its per-call set-up: with a grid of a
few candidates on blocks of a few hundred rows that set-up cost as much as
the fits themselves. ``cv=1`` is one split per block (:func:`_half_split`),
scored as ``cross_val_score`` scores that one split.
"""

import copy
import pickle
import time
from numbers import Integral, Number

import numpy as np
from sklearn.base import ClassifierMixin, clone, is_classifier
from sklearn.metrics import accuracy_score, check_scoring
from sklearn.model_selection import GroupKFold, StratifiedGroupKFold, check_cv
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils.metaestimators import _safe_split
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import _num_samples, indexable
from threadpoolctl import threadpool_limits

from skdp.accounting import BudgetAccountant
from skdp.ensemble._blocks import (
    _seeded_clone,
    _without_group_bound,
    replaces_random_state,
)
from skdp.mechanisms import permute_and_flip
from skdp.model_selection._cost import accountant_keys, route_accountant
from skdp.utils._groups import GroupLabels, group_codes
from skdp.utils._warnings import silenced

__all__ = ["block_votes", "select_by_votes", "vote_histogram"]

_ABSTAIN = -1


# -- one block ----------------------------------------------------------------
def is_one_split(cv):
    """Whether ``cv`` asks for one split per block (``cv=1``)."""
    return isinstance(cv, Integral) and not isinstance(cv, bool) and cv == 1


def _half_split(estimator, y, n_rows):
    """The one ``(train, test)`` split of a block for ``cv=1``.

    The rows alternate between the training and the test half in their
    order in the block (the first to training, which gets the odd row out).
    For a classifier with one column of labels they are first ordered by
    class (keeping their order within a class), so that each class is split
    in two halves that differ by at most one row. The rule is fixed: only
    the rows' order in the block and their classes place them.
    """
    order = np.arange(n_rows)
    if is_classifier(estimator) and np.ndim(y) == 1:
        _, classes = np.unique(np.asarray(y), return_inverse=True)
        order = np.argsort(classes, kind="stable")
    return np.sort(order[::2]), np.sort(order[1::2])


def _group_half_split(groups):
    """``cv=1`` with groups: whole groups alternate between the halves.

    The groups are taken in the order of their first row in the block (the
    first to training), so no group has rows on both sides.
    """
    _, first, codes = np.unique(groups, return_index=True, return_inverse=True)
    rank = np.argsort(np.argsort(first, kind="stable"), kind="stable")
    to_train = rank[codes.ravel()] % 2 == 0
    return np.flatnonzero(to_train), np.flatnonzero(~to_train)


def _group_splitter(estimator, cv):
    """An integer ``cv`` with groups: scikit-learn's group k-fold, stratified
    for classifiers (as ``check_cv`` stratifies without groups)."""
    if is_classifier(estimator):
        return StratifiedGroupKFold(n_splits=cv)
    return GroupKFold(n_splits=cv)


def _splits(estimator, X, y, cv, groups=None):
    """The ``(train, test)`` index pairs of a block's internal folds.

    With ``groups`` (the block's labels) no group is split between a fold's
    training and test rows: ``cv=1`` alternates whole groups, an integer
    uses group k-fold, and a splitter gets ``groups`` in ``split``. The
    labels are first numbered within the block
    (:func:`~skdp.utils._groups.group_codes`, equal labels one number): the
    splitters sort them, which labels of mixed types (``[1, "p2"]``,
    accepted as groups) made raise, and every block abstained. The numbers
    are a function of the block's own labels.
    """
    if groups is None:
        if is_one_split(cv):
            return [_half_split(estimator, y, _num_samples(X))]
        return check_cv(cv, y, classifier=is_classifier(estimator)).split(X, y)
    groups, _ = group_codes(groups)
    if is_one_split(cv):
        return [_group_half_split(groups)]
    if isinstance(cv, Integral):
        return _group_splitter(estimator, cv).split(X, y, groups)
    return check_cv(cv, y, classifier=is_classifier(estimator)).split(X, y, groups)


def _fold_data(estimator, X, y, cv, groups=None):
    """``(X_train, y_train, X_test, y_test)`` of each internal fold.

    The splitter is the one ``cross_val_score`` would build for
    ``estimator`` (stratified for classifiers when ``cv`` is an integer;
    by group with ``groups``, see :func:`_splits`).
    """
    folds = []
    for train, test in _splits(estimator, X, y, cv, groups):
        X_train, y_train = _fold_rows(estimator, X, y, train)
        X_test, y_test = _fold_rows(estimator, X, y, test, train)
        folds.append((X_train, y_train, X_test, y_test))
    return folds


def _rows(data, indices):
    """``_safe_indexing(data, indices)``, which indexes a NumPy array directly.

    Indexing a plain array here gives the same array without
    ``_safe_indexing``'s dispatch, which costs more than the indexing of a
    small block.
    """
    if type(data) is np.ndarray:
        return data[indices]
    return _safe_indexing(data, indices)


def _fold_rows(estimator, X, y, indices, train=None):
    """``_safe_split(estimator, X, y, indices, train)``, plain arrays directly."""
    if get_tags(estimator).input_tags.pairwise:
        return _safe_split(estimator, X, y, indices, train)
    return _rows(X, indices), _rows(y, indices)


def _fold_key(estimator):
    """What the folds depend on besides the rows: the splitter and the split."""
    return is_classifier(estimator), get_tags(estimator).input_tags.pairwise


def _score_number(score):
    """The score as a float, or ``nan`` where ``cross_val_score`` has none."""
    if hasattr(score, "item"):
        try:
            score = score.item()
        except ValueError:
            return np.nan
    return float(score) if isinstance(score, Number) else np.nan


def _is_default_accuracy(model, scoring):
    """Whether the score is ``ClassifierMixin.score``: ``accuracy_score``."""
    return scoring is None and getattr(type(model), "score", None) is (
        ClassifierMixin.score
    )


def _plain_labels(y_true, y_pred):
    """Whether ``accuracy_score(y_true, y_pred)`` is ``mean(y_true == y_pred)``.

    True for two 1-d arrays of the same length and the same integer, boolean
    or string dtype: their target type is binary or multiclass, which
    ``accuracy_score`` scores by that mean. Other labels (floats, objects,
    frames, several outputs) go through scikit-learn's scorer.
    """
    return (
        isinstance(y_true, np.ndarray)
        and isinstance(y_pred, np.ndarray)
        and y_true.ndim == 1
        and y_true.shape == y_pred.shape
        and y_true.dtype == y_pred.dtype
        and y_true.dtype.kind in "biuU"
    )


def _fold_score(model, scoring, X_test, y_test):
    """The fold's score, as ``cross_val_score`` computes it.

    The default score of a scikit-learn classifier is counted directly when
    the labels allow it (:func:`_plain_labels`): the same number without
    ``accuracy_score``'s target-type checks, which cost a few times a
    small block's ``predict``.
    """
    if _is_default_accuracy(model, scoring):
        y_pred = model.predict(X_test)
        if _plain_labels(y_test, y_pred):
            return float(np.mean(y_test == y_pred))
        return _score_number(accuracy_score(y_test, y_pred))
    return _score_number(check_scoring(model, scoring)(model, X_test, y_test))


def _mean_fold_score(model, folds, scoring):
    """Mean score of ``model`` over ``folds``; ``-inf`` if any fold fails.

    A fit or score that raises, or a score that is not a finite number, leaves
    the candidate without a score, as ``error_score=np.nan`` does in
    ``cross_val_score``. ``model`` is a fresh, unfitted clone that nothing
    else uses: the last fold fits it, the others fit clones of it (taken
    before it is fitted), which saves a clone per candidate and block.
    """
    scores = np.empty(len(folds))
    for f, (X_train, y_train, X_test, y_test) in enumerate(folds):
        fold_model = model if f == len(folds) - 1 else clone(model)
        try:
            fold_model.fit(X_train, y_train)
            scores[f] = _fold_score(fold_model, scoring, X_test, y_test)
        except Exception:
            return -np.inf
        if not np.isfinite(scores[f]):
            return -np.inf
    return scores.mean()


def _seeded_splitter(cv, seed):
    """A copy of a splitter with its ``random_state`` set to ``seed``.

    A shuffling splitter left at ``random_state=None`` draws from NumPy's
    global generator (a generator object is shared as well); an integer
    ``cv``, a list of splits or a splitter seeded with an integer is
    returned as it is.
    """
    if isinstance(cv, Integral | type) or not hasattr(cv, "random_state"):
        return cv
    if not replaces_random_state(cv.random_state, keep_integers=True):
        return cv
    seeded = copy.deepcopy(cv)
    seeded.random_state = int(seed)
    return seeded


def _candidate_scores(candidates, X, y, cv, scoring, keys=None, seed=0, groups=None):
    """Mean internal CV score of each candidate on one block; ``-inf`` if none.

    Fits run under a throw-away accountant (one per candidate in a block,
    shared by its folds: cloning keeps an accountant, it is not copied), set
    on the parameters ``keys[i]`` of candidate ``i`` (its
    ``accountant_keys``, found here if not given). It holds any epsilon and
    a delta of 1: with ``BudgetAccountant()`` (delta 0) every candidate
    that spends delta (skdp's linear models by default) was refused, and
    every block abstained. The
    folds are split once per block (per kind of split, should the candidates
    differ in it), so every candidate is scored on the same folds.

    **Randomness of the block's own.** Every ``random_state`` of the
    candidates (and of their parameter objects) and of a splitter ``cv``
    that is not an integer is set to the block's ``seed``, drawn from the
    search's source before any block runs: left at None (or a generator
    object) they would draw from a generator every block shares,
    where how much one block draws depends on its rows, and a later block's
    vote would depend on an earlier block's rows (breaking the one-vote
    sensitivity). An estimator that draws from the global generator without
    a ``random_state`` parameter cannot be isolated this way (see
    :class:`NoisyMaxSearchCV`, Notes).
    """
    if keys is None:
        keys = [accountant_keys(candidate) for candidate in candidates]
    means = np.full(len(candidates), -np.inf)
    folds_by_key = {}
    cv = _seeded_splitter(cv, seed)
    with silenced():
        for i, candidate in enumerate(candidates):
            seeded = _without_group_bound(
                _seeded_clone(candidate, seed, keep_integers=True)
            )
            scratch = BudgetAccountant(delta=1.0)
            model = route_accountant(seeded, scratch, keys[i])
            try:
                key = _fold_key(model)
                if key not in folds_by_key:
                    folds_by_key[key] = _fold_data(model, X, y, cv, groups)
            except Exception:
                continue  # e.g. fewer rows than folds: no score
            means[i] = _mean_fold_score(model, folds_by_key[key], scoring)
    return means


def _block_vote(candidates, X, y, cv, scoring, keys=None, seed=0, groups=None):
    """Index of the candidate with the best internal CV score, or abstain.

    Nothing a block computes is released except this index, which enters the
    noisy vote. Ties go to the first candidate; a block where no candidate
    has a score (no rows, fewer rows than folds, every fit failing) abstains.
    """
    means = _candidate_scores(candidates, X, y, cv, scoring, keys, seed, groups)
    return _ABSTAIN if np.all(means == -np.inf) else int(np.argmax(means))


def _timed_block_vote(candidates, keys, X, y, cv, scoring, seed, groups=None):
    """:func:`_block_vote` and its wall time in seconds (for ``verbose``)."""
    start = time.perf_counter()
    X, y = indexable(X, y)
    vote = _block_vote(candidates, X, y, cv, scoring, keys, seed, groups)
    return vote, time.perf_counter() - start


# -- all blocks ---------------------------------------------------------------
def _preferred_workers(candidates):
    """Processes when the candidates can be sent to them, else threads.

    Decided from the (public) candidates alone, after the charge: a candidate
    that cannot be pickled (a process-local handle, say) runs in threads, not
    failing the paid-for search in the workers.
    """
    try:
        pickle.dumps(candidates)
    except Exception:
        return "threads"
    return "processes"


def _numbered_groups(groups):
    """A block's groups as their numbers (labels the numbers themselves):
    a worker process gets its arguments pickled, and pickling the label
    objects after the charge read them (one that failed to pickle made the
    search raise with the budget spent)."""
    codes, n_codes = group_codes(groups)
    return GroupLabels(codes, codes, n_codes)


def block_votes(
    candidates, X, y, blocks, *, cv, scoring, n_jobs, progress, seeds=None, groups=None
):
    """One vote per block, one joblib task per block.

    ``seeds[b]`` is block ``b``'s seed for every ``random_state`` of its fits
    (:func:`_candidate_scores`); the caller draws them from its source
    before the blocks run (all 0 when None). ``groups`` (one label per row,
    or None) is passed to each block's internal split (:func:`_splits`).

    The tasks prefer worker processes: the block fits are small and hold the
    GIL for much of their time, so threads do not run them in parallel
    (threads remain for candidates that cannot be pickled). Each
    task receives its block's rows only and the candidates without an
    accountant (a block fits under its own throw-away one, set on the
    parameters found here once for all blocks); the votes come
    back to this process, which prints the ``verbose`` lines (block number
    and time, never the vote) as they arrive, in block order.
    """
    k = len(blocks)
    candidates = [route_accountant(clone(c), None) for c in candidates]
    keys = [accountant_keys(c) for c in candidates]
    if seeds is None:
        seeds = np.zeros(k, dtype=np.int64)
    calls = (
        delayed(_timed_block_vote)(
            candidates,
            keys,
            _rows(X, idx),
            _rows(y, idx),
            cv,
            scoring,
            int(seed),
            None if groups is None else _numbered_groups(groups[idx]),
        )
        for idx, seed in zip(blocks, seeds, strict=True)
    )
    verbose = progress.verbose if progress.verbose > 2 else 0
    parallel = Parallel(
        n_jobs=n_jobs,
        verbose=verbose,
        prefer=_preferred_workers(candidates),
        return_as="generator",
    )
    choices = []
    # One BLAS thread per fit: the fits are small, and nested BLAS threads
    # oversubscribe the cores (loky limits its workers the same way).
    # silenced here too: with threads, the workers' own contexts restore the
    # warning filters in any order (see silenced)
    with threadpool_limits(limits=1, user_api="blas"), silenced():
        for b, (vote, seconds) in enumerate(parallel(calls)):
            progress(2, f"END block {b + 1}/{k}; total time={seconds:.1f}s")
            choices.append(vote)
    return choices


def vote_histogram(choices, n_candidates):
    """Votes per candidate; abstaining blocks add nothing.

    Adding or removing one row changes one block's choice, so at most one
    vote moves from one candidate to another (or to or from abstention): each
    count changes by at most 1, in opposite directions (not monotone).
    """
    choices = np.asarray(choices, dtype=np.intp)
    return np.bincount(choices[choices != _ABSTAIN], minlength=n_candidates)


def select_by_votes(votes, epsilon, random_state):
    """Permute-and-flip over the votes at the non-monotone scale ``2/ε``."""
    return permute_and_flip(
        votes, epsilon, sensitivity=1.0, monotonic=False, random_state=random_state
    )
