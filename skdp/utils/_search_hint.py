"""What a refused fit says when it is one of a scikit-learn search's fits."""

import sys

__all__ = ["search_refusal_hint"]

#: How many frames up the stack a refused fit looks for the search running it.
_MAX_FRAMES = 80


def _running_search():
    """The ``BaseSearchCV`` whose ``fit`` is on this thread's stack, or None.

    Only the thread that runs the search sees it: with ``n_jobs=1`` (and for
    the refit) the fits run under ``fit``'s frame; a worker thread or process
    of ``n_jobs > 1`` has a stack of its own.
    """
    from sklearn.model_selection._search import BaseSearchCV

    frame = sys._getframe(1)
    for _ in range(_MAX_FRAMES):
        if frame is None:
            return None
        candidate = frame.f_locals.get("self")
        if isinstance(candidate, BaseSearchCV) and frame.f_code.co_name == "fit":
            return candidate
        frame = frame.f_back
    return None


def search_refusal_hint():
    """A sentence for a refused fit that runs inside a scikit-learn search.

    Names the search, the cost of its whole plan when
    :func:`~skdp.model_selection.fit_cost` knows it (public parameters only:
    nothing of the data), :func:`~skdp.model_selection.check_budget` and
    :class:`~skdp.NoisyMaxSearchCV`. Empty outside a search.
    """
    search = _running_search()
    if search is None:
        return ""
    from skdp.model_selection._cost import fit_cost

    name = type(search).__name__
    try:
        cost = fit_cost(search)
        plan = f"the whole {name} costs epsilon={cost.epsilon:g}, delta={cost.delta:g}"
    except (ValueError, TypeError):
        plan = f"the whole {name} fits every candidate on every fold, then refits"
    return (
        f" This fit is one of {name}'s: {plan}. Check a search before it "
        "starts with skdp.model_selection.check_budget(search), which refuses "
        "before any fit; and note that a non-private search's scores and "
        "best_params_ on private data are releases no accountant records: "
        "skdp.NoisyMaxSearchCV selects privately and charges the whole plan."
    )
