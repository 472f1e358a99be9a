"""How a private selection reads a private scorer: by its metric's name."""

from skdp.metrics._scorer import PrivateScorer

__all__ = ["selection_scoring"]

# parameters of a private scorer that change its metric, which a selection
# reading the scorer by its name could not honour
_UNREAD_BY_SELECTION = ("pos_label", "average")

# a private scorer's metric as the holdout selection of NoisyMaxSearchCV names it
_HOLDOUT_NAMES = {
    "neg_mean_absolute_error": "neg_absolute_error",
    "neg_mean_squared_error": "neg_squared_error",
}


def selection_scoring(scoring, method):
    """The scoring a private selection uses for ``scoring``.

    A :class:`PrivateScorer` is read as its metric's scikit-learn name: a
    private selection (:class:`~skdp.NoisyMaxSearchCV`) releases only its
    choice, made private by its own ε (block votes, or held-out totals of
    per-row scores of known sensitivity), so the scores themselves are
    never released and the scorer's ε is not spent. Any other scoring is
    returned unchanged. A scorer with a ``pos_label`` or ``average`` is
    refused (the name alone would select by scikit-learn's default ones).

    Examples
    --------
    >>> from skdp.metrics import make_private_scorer
    >>> from skdp.metrics._selection_scoring import selection_scoring
    >>> scorer = make_private_scorer("neg_mean_squared_error", epsilon=1.0,
    ...                              target_bounds=(0, 1))
    >>> selection_scoring(scorer, "subsample"), selection_scoring(scorer, "holdout")
    ('neg_mean_squared_error', 'neg_squared_error')
    """
    if not isinstance(scoring, PrivateScorer):
        return scoring
    unread = {k: v for k, v in scoring.kwargs.items() if k in _UNREAD_BY_SELECTION}
    if unread:
        raise ValueError(
            f"A private selection reads the private scorer {scoring!r} as its "
            f"metric's scikit-learn name {scoring.name!r} and would ignore its "
            f"{unread}. With method='subsample', pass a scikit-learn scorer "
            f"instead, e.g. sklearn.metrics.make_scorer(..., **{unread!r}) "
            "(the selection's scores are never released). Nothing was charged."
        )
    if method == "holdout":
        return _HOLDOUT_NAMES.get(scoring.name, scoring.name)
    return scoring.name
