"""The selection step of a :class:`~skdp.NoisyMaxSearchCV` fit.

After the charge: the candidates fitted on disjoint blocks (``"subsample"``,
a vote per block) or on a training part and scored on the held-out rest
(``"holdout"``), then the released choice by permute-and-flip.
"""

import numpy as np
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import _num_samples
from threadpoolctl import threadpool_limits

from skdp.ensemble._blocks import _block_indices, _block_labels, _group_block_labels
from skdp.metrics._selection_scoring import selection_scoring
from skdp.model_selection._cost import route_accountant
from skdp.model_selection._holdout import (
    _timed_fit_on_part,
    holdout_row_scores,
    holdout_total,
    select_by_holdout_scores,
)
from skdp.model_selection._holdout_parts import split_parts
from skdp.model_selection._search_common import seed_if_reproducible
from skdp.model_selection._subsample import (
    block_votes,
    select_by_votes,
    vote_histogram,
)
from skdp.utils._progress import format_params
from skdp.utils._warnings import silenced

__all__ = ["SearchSelectionMixin"]

_MAX_SEED = 2**31 - 1


class SearchSelectionMixin:
    """Selection methods of the search, run after its charge."""

    def _seed_if_reproducible(self, model, source):
        return seed_if_reproducible(model, self.random_state, source)

    def _parallel(self, calls):
        # Threads by default (nothing to pickle); one BLAS thread per fit, as
        # the fits are small and nested BLAS threads oversubscribe the cores.
        verbose = self.verbose if self.verbose > 2 else 0
        with threadpool_limits(limits=1, user_api="blas"):
            return Parallel(n_jobs=self.n_jobs, verbose=verbose, prefer="threads")(
                calls
            )

    def _select_subsample(self, X, y, plan, source, progress, groups=None):
        k = int(self.n_blocks)
        if groups is None:
            labels = _block_labels(_num_samples(X), k, source)
        else:  # a whole group in one block
            labels = _group_block_labels(groups, k, source)
        blocks = _block_indices(labels, k)
        seeds = source.integers(_MAX_SEED, size=k)  # each block's own randomness
        choices = block_votes(
            plan["candidates"],
            X,
            y,
            blocks,
            cv=self.cv,
            scoring=selection_scoring(self.scoring, "subsample"),
            n_jobs=self.n_jobs,
            progress=progress,
            seeds=seeds,
            groups=groups,
        )
        votes = vote_histogram(choices, len(plan["candidates"]))
        return select_by_votes(votes, self.epsilon, source)

    def _select_holdout(self, X, y, plan, source, progress, unit):
        """Candidates fitted on the training part, one chosen by their
        summed scores on the held-out part; with groups each group lands
        whole in one part (:func:`~._holdout_parts.holdout_split`), the
        candidates get their part's groups and the scores are per group."""
        parts = split_parts(X, y, self.holdout_size, source, unit.groups)
        seeded = [
            self._seed_if_reproducible(route_accountant(c, None), source)
            for c in plan["candidates"]
        ]
        with silenced():
            trained = self._fit_candidates_on_part(seeded, plan, parts, progress)
            totals = np.array(
                [
                    holdout_total(
                        m,
                        parts.X_held,
                        parts.y_held,
                        plan["scoring"],
                        plan["sensitivity"],
                        holdout_row_scores,  # this module's (a test patches it)
                        parts.held_groups,
                        unit.max_rows,
                    )
                    for m in trained
                ]
            )
        # the totals are in units of the sensitivity (of k times it with
        # groups: holdout_total)
        best = select_by_holdout_scores(totals, self.epsilon, 1.0, source)
        return best, trained[best]

    def _fit_candidates_on_part(self, seeded, plan, parts, progress):
        n = len(seeded)
        return self._parallel(
            delayed(_timed_fit_on_part)(
                progress,
                f"candidate {i + 1}/{n} ({format_params(params)})",
                candidate,
                cost,
                parts.X_train,
                parts.y_train,
                **parts.fit_params,
            )
            for i, (candidate, cost, params) in enumerate(
                zip(seeded, plan["costs"], plan["grid"], strict=True)
            )
        )
