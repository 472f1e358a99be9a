"""Rank scores of quantile candidates.

One utility serves both private quantile methods (public candidates, and
every point of a public grid, grouped in
:mod:`skdp.sensitivity._quantile_grid`). For a quantile level ``q`` and an
output value ``y``,

    u(y; x) = -|(1 - q) * #{x_i < y} - q * #{x_i > y}|,

the (negated) distance between the rank of ``y`` and the target rank ``q n``,
with rows equal to ``y`` counted on neither side (OpenDP's
``make_quantile_score_candidates``). For ``y`` that is not a data value,
``#{x_i < y} + #{x_i > y} = n`` and ``u(y; x) = -|#{x_i < y} - q n|``.

Everything here is derived for add/remove-one-row neighbours (n is private)
and is deterministic: no noise, no accountant.
"""

import numpy as np

__all__ = ["candidate_rank_scores", "quantile_score_sensitivity"]


def quantile_score_sensitivity(q):
    """Sensitivity of the rank score ``u(y; x)`` under add/remove-one-row.

    Parameters
    ----------
    q : float
        Quantile level in ``[0, 1]``.

    Returns
    -------
    sensitivity : float
        ``max(q, 1 - q)``, between 1/2 (the median) and 1 (min and max).

    Notes
    -----
    Fix an output ``y``. Adding a row ``z`` to ``x`` changes
    ``s(y) = (1 - q) #{x_i < y} - q #{x_i > y}`` by ``1 - q`` when ``z < y``,
    by ``-q`` when ``z > y`` and by 0 when ``z = y``; removing a row gives the
    opposite changes. So ``|s|``, and hence ``u = -|s|``, moves by at most
    ``max(q, 1 - q)``, for every ``y`` at once. The bound is attained (a row
    below a ``y`` at which ``s >= 0``). The row count ``n`` is not treated as
    public: its change is the ``q`` in the two cases. Checked by brute force
    over every add/remove neighbour of small datasets in the tests.

    The scores are not monotone: adding a row below the target rank moves
    scores above it down and scores below it up. The selection mechanisms
    therefore need the general scale ``2Δ/ε``.

    Examples
    --------
    >>> from skdp.sensitivity._quantile import quantile_score_sensitivity
    >>> quantile_score_sensitivity(0.5), quantile_score_sensitivity(0.9)
    (0.5, 0.9)
    """
    q = float(q)
    return max(q, 1.0 - q)


def candidate_rank_scores(sorted_values, candidates, q):
    """Rank score ``u(c; x)`` of each public candidate ``c``.

    Parameters
    ----------
    sorted_values : ndarray of shape (n_samples,)
        One feature, sorted (clipped or not: only comparisons matter).
    candidates : ndarray of shape (n_candidates,)
        Public candidates, sorted.
    q : float
        Quantile level in ``[0, 1]``.

    Returns
    -------
    scores : ndarray of shape (n_candidates,)
        ``-|(1 - q) #{x < c} - q #{x > c}|``, from two binary searches per
        candidate on the sorted data (O(m log n) after the sort).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._quantile import candidate_rank_scores
    >>> candidate_rank_scores(np.array([1.0, 2.0, 2.0, 3.0]),
    ...                       np.array([0.0, 2.0, 2.5]), 0.5)
    array([-2., -0., -1.])
    """
    n = sorted_values.shape[0]
    below = np.searchsorted(sorted_values, candidates, side="left")
    above = n - np.searchsorted(sorted_values, candidates, side="right")
    return -np.abs((1.0 - q) * below - q * above)
