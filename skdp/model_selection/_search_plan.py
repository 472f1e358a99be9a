"""The public plan of a :class:`~skdp.NoisyMaxSearchCV` fit.

Everything decided before the data is read: the candidates and refit
models, the holdout scoring and its sensitivity, the ledger items (the
whole cost, charged before any work), the work announced to the user and
the input refused before the charge.
"""

from collections.abc import Iterator

from sklearn.base import clone
from sklearn.metrics import check_scoring
from sklearn.model_selection import ParameterGrid, check_cv
from sklearn.utils import get_tags

from skdp.accounting import PrivacyCost
from skdp.accounting._composition import TIGHT_COMPOSITIONS
from skdp.metrics._selection_scoring import selection_scoring
from skdp.model_selection._cost import (
    check_private_model,
    fit_cost,
    largest_cost,
    sum_costs,
)
from skdp.model_selection._holdout import _HOLDOUT_SCORINGS
from skdp.model_selection._search_common import check_search_rows, with_group_bound
from skdp.model_selection._subsample import is_one_split
from skdp.utils._progress import plural
from skdp.utils._validation import check_epsilon

__all__ = ["SearchPlanMixin"]


class SearchPlanMixin:
    """Planning methods of the search, from public parameters only."""

    def _candidate_params(self):
        grid = list(ParameterGrid(self.param_grid))
        if not grid or grid == [{}]:
            raise ValueError("param_grid is empty: there is nothing to select.")
        return grid

    def _candidates(self, grid):
        """Unfitted candidates; bad parameter names raise here, before a charge."""
        return [clone(self.estimator).set_params(**params) for params in grid]

    def _refit_models(self, grid):
        if self.refit is False:
            return None
        if self.refit is True:
            models = self._candidates(grid)
        else:
            models = [self.refit(dict(params)) for params in grid]
        for model in models:
            try:
                check_private_model(model)
            except ValueError as exc:
                raise ValueError(
                    "refit fits the chosen configuration on all the rows, so it "
                    f"must be private: {exc} Pass refit=False to release "
                    "best_params_ only, or refit=callable(params) returning a "
                    "private estimator."
                ) from exc
        if self.max_rows_per_group is not None:
            models = [self._with_group_bound(model) for model in models]
        return models

    def _with_group_bound(self, model, role=None):
        """The model with the search's ``max_rows_per_group``: one bound
        states the unit of the whole fit (selection, candidates, refit)."""
        if role is not None:
            return with_group_bound(self, model, self.max_rows_per_group, role)
        return with_group_bound(
            self,
            model,
            self.max_rows_per_group,
            "the refit fits all the rows",
            "Pass refit=False to release best_params_ only, or "
            "refit=callable(params) returning a private estimator that takes "
            "groups.",
        )

    def _holdout_scoring(self):
        kind = get_tags(self.estimator).estimator_type
        scoring = selection_scoring(self.scoring, "holdout")
        if scoring is None:
            scoring = "accuracy" if kind == "classifier" else None
        if scoring not in _HOLDOUT_SCORINGS:
            raise ValueError(
                f"method='holdout' needs a score with bounded sensitivity; "
                f"scoring={self.scoring!r} has none. Use 'accuracy' (classifiers) "
                "or 'neg_absolute_error' / 'neg_squared_error' with loss_bound."
            )
        if scoring == "accuracy" and kind != "classifier":
            raise ValueError("scoring='accuracy' needs a classifier.")
        if scoring != "accuracy" and self.loss_bound is None:
            raise ValueError(
                f"scoring={scoring!r} needs a public loss_bound: per-row losses "
                "are clipped to [0, loss_bound], the score's sensitivity."
            )
        return scoring, 1.0 if scoring == "accuracy" else float(self.loss_bound)

    def _plan(self, n_features):
        """Validate everything public and compute the ledger items."""
        grid = self._candidate_params()
        candidates = self._candidates(grid)
        refits = self._refit_models(grid)
        eps = check_epsilon(self.epsilon)
        plan = {"grid": grid, "candidates": candidates, "refits": refits}
        if self.method == "subsample":
            # no check of n_blocks against the row count, which is private:
            # a block without rows (or whose fits fail) abstains
            check_scoring(self.estimator, selection_scoring(self.scoring, "subsample"))
            if isinstance(self.cv, bool):
                raise ValueError(f"cv must be an integer or a splitter, not {self.cv}.")
            if isinstance(self.cv, Iterator):  # every block needs the splits
                raise ValueError(
                    "cv is a one-pass iterator of splits, which one use would "
                    "exhaust for every block: pass a list of splits or a splitter. "
                    "Nothing was charged."
                )
            selection = PrivacyCost(eps, mechanism="permute_and_flip")
            items = [("vote selection (permute-and-flip)", selection)]
        else:
            for candidate in candidates:
                check_private_model(candidate)
            if self.max_rows_per_group is not None:
                candidates = plan["candidates"] = [
                    self._with_group_bound(c, "each candidate fits its training part")
                    for c in candidates
                ]
            plan["scoring"], plan["sensitivity"] = self._holdout_scoring()
            plan["costs"] = [fit_cost(c, n_features) for c in candidates]
            items = self._holdout_items(sum_costs(plan["costs"]), eps)
        if refits is not None:
            plan["refit_cost"] = largest_cost([fit_cost(m, n_features) for m in refits])
            items.append(
                (
                    "refit of the chosen candidate (largest candidate cost)",
                    plan["refit_cost"],
                )
            )
        return plan, items

    def _holdout_items(self, training, epsilon):
        """Ledger items of candidate training and holdout selection.

        They use disjoint rows, so together they cost the larger of the two
        (parallel composition), charged as one ``(max epsilon, delta)``
        entry. An accountant with a tight composition (``"zcdp"``, ``"pld"``)
        gains more from the releases' own profiles than it loses by adding
        them up (sequential composition, also an upper bound), so it is
        charged each training release and the selection instead.
        """
        if self._resolve_accountant().composition in TIGHT_COMPOSITIONS:
            selection = PrivacyCost(epsilon, mechanism="permute_and_flip")
            return [
                ("candidate training (parts)", training),
                ("holdout selection (permute-and-flip)", selection),
            ]
        cost = PrivacyCost(max(training.epsilon, epsilon), training.delta)
        return [("candidate training || holdout selection (disjoint rows)", cost)]

    def _check_rows(self, X, y):
        check_search_rows(self.estimator, X, y)

    def _plan_message(self, plan):
        """The work ahead, from public parameters, in GridSearchCV's words."""
        n = len(plan["grid"])
        refit = "" if plan["refits"] is None else ", then 1 refit on all rows"
        if self.method == "holdout":
            unit = "row" if self.max_rows_per_group is None else "group"
            return (
                f"Fitting {plural(n, 'candidate')} on the training part (each {unit} "
                f"held out with probability {self.holdout_size:g}), totalling "
                f"{plural(n, 'fit')}{refit}"
            )
        k = int(self.n_blocks)
        try:
            folds = 1 if is_one_split(self.cv) else check_cv(self.cv).get_n_splits()
        except Exception:  # a splitter that needs the data to count
            return (
                f"Fitting cross-validation folds for each of {plural(n, 'candidate')}"
                f" in each of {plural(k, 'block')}{refit}"
            )
        return (
            f"Fitting {plural(folds, 'fold')} for each of {plural(n, 'candidate')} "
            f"in each of {plural(k, 'block')}, totalling "
            f"{plural(folds * n * k, 'fit')}{refit}"
        )

    def _fit_cost(self, n_features=None):
        check_epsilon(self.epsilon)
        _, items = self._plan(n_features)
        return sum_costs([cost for _, cost in items])
