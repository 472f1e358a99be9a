"""Private per-feature quantiles: exponential mechanism or permute-and-flip."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from skdp.accounting._composition import budget_left, equal_shares
from skdp.accounting._group_privacy import row_budget_for_groups
from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms import check_random_source
from skdp.sensitivity._quantile import feature_cell_counts
from skdp.stats._mean import BoundsPlan
from skdp.stats._quantile_joint import (
    check_joint_levels,
    joint_release,
    quantile_ledger_label,
    rank_error_bounds,
)
from skdp.stats._quantile_release import (
    candidate_grid,
    check_quantile_levels,
    check_selection_epsilon,
    exponential_release,
    permute_and_flip_release,
    sorted_clipped_column,
)
from skdp.stats._svt_clip import bounds_plan_for_unit
from skdp.utils._dask import is_dask_collection, row_statistic, validate_rows
from skdp.utils._privacy_unit import GroupsMixin

__all__ = ["PrivateQuantile"]


class PrivateQuantile(GroupsMixin, PrivateEstimatorMixin, BaseEstimator):
    """Per-feature quantiles under differential privacy.

    Each feature is clipped to bounds (public, or chosen privately first)
    and each requested quantile is
    released by an exponential-type selection on rank errors: either the
    exponential mechanism over a fine public grid of the bounds (about 2**33
    points, Smith's 2011 mechanism discretised so that the possible outputs
    do not depend on the data), or permute-and-flip over public candidates.
    Heavily tied data are handled: a tied value on the grid is an atom with
    the score of its rank interval, so a column that is 92% zeros has median
    0, and the computation runs in log space.

    The estimator only releases ``quantiles_``; it has no ``transform``
    (quantiles are inputs to other steps, e.g. bounds for
    :class:`~skdp.preprocessing.DPClipper`, not a per-row transformation).

    Parameters
    ----------
    quantiles : float or array-like of shape (n_quantiles,), default=(0.5,)
        Quantile levels in ``[0, 1]`` (0.5 is the median).
    epsilon : float, default=1.0
        Total ε of one ``fit``, over all quantile levels and features.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        Public ``(lower, upper)`` bounds, scalars or per-feature arrays. They
        must not be derived from the sensitive data. ``None`` chooses both
        privately first, as :class:`PrivateMean` does (the sparse vector
        technique around 0, grid up to ``upper_limit``), spending
        ``bounds_share`` of ``epsilon``; ``(lower, None)`` takes a public
        lower bound (e.g. 0) and chooses only the upper one. Public bounds
        are better when you know them: they cost nothing and clip nothing.
    bounds_share : float, default=0.3
        Share of ``epsilon`` spent on choosing the bounds when they are not
        all public (see Notes).
    upper_limit : float, default=1e9
        The largest plausible magnitude of a value (public), for private
        bounds.
    method : {"joint", "exponential", "permute_and_flip"}, default="joint"
        ``"joint"``: all levels of a feature in one joint exponential
        mechanism over ordered outputs on a public grid fine near every
        scale (ties are atoms); 3x more accurate than splitting ε over
        levels at 9 deciles, whatever the width of the bounds. Its step is
        at most ``2**-8`` of the magnitude and at most ``(upper - lower) /
        2**11`` at ε/d < 2, one bit finer per doubling of ε/d above (up to
        ten bits: ``2**-18`` and ``/ 2**21``), so it converges to the sample
        quantiles as ε grows; every integer below 512 is an output for
        bounds up to ``2**36`` wide. ``"exponential"``: each level separately, by the
        exponential mechanism over a fine uniform public grid of the bounds
        (about 2**33 points; ties are atoms), for values finer than the
        joint grid's relative step.
        ``"permute_and_flip"``: selection among public ``candidates``.
    candidates : None, int or array-like of shape (n_candidates,), \
default=None
        Public candidates for ``method="permute_and_flip"``: None for 1000
        evenly spaced points in each feature's bounds, an int for that many,
        or a strictly increasing array shared by all features. Ignored by
        ``method="exponential"``.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows with ``fit(..., groups=...)``
        (required then, refused without): see :ref:`user_level_privacy`.
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit``; ``None`` uses the default accountant at fit time.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws from the operating system's CSPRNG. An int gives
        reproducible (and therefore not secret) output for tests and examples.

    Attributes
    ----------
    quantiles_ : ndarray of shape (n_quantiles, `n_features_in_`)
        The private quantiles, within the bounds; row ``k`` is level
        ``quantiles[k]``. With ``"joint"`` they are ordered like the levels;
        the other methods release each level independently (not forced to
        be ordered).
    lower_, upper_ : ndarray of shape (`n_features_in_`,)
        The bounds per feature: given, or chosen privately.
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit`` (``epsilon`` and 0).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    PrivateMean : Private means from public bounds.
    DPClipper : Clip features to public bounds.

    Notes
    -----
    **Privacy.** (ε, 0)-DP under add/remove-one-row neighbours. Both methods
    are exponential mechanisms with the rank utility (as in OpenDP's
    ``make_quantile_score_candidates``)::

        u(y; x) = -|(1 - q) #{x_i < y} - q #{x_i > y}|

    over outputs ``y``, computed on the clipped data. For every fixed ``y``,
    adding a row changes ``(1 - q) #{x_i < y} - q #{x_i > y}`` by ``1 - q``
    (row below ``y``), ``-q`` (row above) or 0 (row equal to ``y``), and
    removing one by the opposite, so ``Δu = max(q, 1 - q)`` with the row count
    treated as private (:func:`skdp.sensitivity._quantile.
    quantile_score_sensitivity`; checked by brute force over all add/remove
    neighbours of small datasets). The scores are not monotone (a new row
    moves scores on its two sides in opposite directions), so the selection
    uses the general scale ``2Δ/ε``.

    *Exponential.* The output space is the public grid ``G = {j 2**k} ∩
    [L, U]``, with ``2**k`` at most ``(U - L) / 2**33`` and fixed by the
    bounds alone (:func:`skdp.sensitivity._quantile_grid.
    quantile_grid_exponent`), and ``y ∈ G`` is released with probability
    ``∝ exp(ε u(y; x) / (2Δ))``: the exponential mechanism over a public,
    finite candidate set. Because rows equal to ``y`` count on neither side,
    a grid point equal to a tied value is an atom with the score of its rank
    interval: on Adult's capital-gain (92% zeros) the median is 0. The scores
    are constant between consecutive distinct data values, so the grid falls
    into at most ``2m + 1`` classes for ``m`` distinct values
    (:func:`skdp.sensitivity._quantile_grid.grid_score_classes`); a class is
    chosen with probability ``∝ count exp(ε u / (2Δ))``, its size counted in
    exact integers, and a uniform point of it is drawn with exact integer
    sampling (:func:`skdp.mechanisms._quantile_sampling.uniform_grid_points`).
    The set of possible outputs is ``G`` for every dataset: no float
    arithmetic with data-valued ends (the interval sampler this replaces let
    one output reveal the data: an outside review measured ε ≥ 5 at a claim of
    1). It approximates Smith's (2011) continuous mechanism to ``2**-33`` of the
    bounds' width.

    *Permute-and-flip (McKenna–Sheldon 2020).* Scores of the public
    candidates from the rows counted in each gap between candidates and on
    each candidate, in one pass without sorting
    (:func:`skdp.sensitivity._quantile.candidate_cell_counts`), selection by
    :func:`skdp.mechanisms.permute_and_flip` with the non-monotone scale;
    the output is a candidate.

    *Joint (default).* All ``m`` levels of a feature are one exponential
    mechanism over strictly increasing sequences of rank *states* on a
    public grid fixed by the bounds alone
    (:class:`~skdp.sensitivity._quantile_grid.RelativeGrid`): the uniform
    grid ``{j 2**k} ∩ [L, U]`` of 2**11 to 2**12 points, refined near 0 as a
    floating-point format of 9 significant bits (256 points per binade over
    24 binades, uniform below), at most 21,505 points. Each grid point
    carries 33 states whose ranks run through its atom (the ``a`` rows
    equal to it): one rank each, then its top, for ``a <= 32``, an even
    split of it for larger atoms; each state in ``step / finest step``
    copies so that a point's base measure is its step (uniform, as in Smith's
    and Gillenwater et al.'s continuous mechanisms: the finer points near 0
    do not pull the release there), and the utility is minus the gap error
    ``Σ_j |r_j - r_{j-1} - (q_j - q_{j-1}) n|`` of Gillenwater, Joseph and
    Kulesza (2021), whose sensitivity under add/remove one row is 2 for any
    ``m`` (:mod:`skdp.sensitivity._joint_quantile`, brute-forced in the
    tests). One release per feature at ``ε/d`` replaces ``m`` releases at
    ``ε/(m d)``. Ties are atoms: a tied value on the grid spans its rank
    interval, so quantiles inside a large atom come out exactly at it.
    Sampled exactly by a forward-backward chain in log space
    (:mod:`skdp.mechanisms._joint_quantile`) whose blocks are the runs of
    states of equal rank (grid points with no row at or between them), so
    its cost grows with the distinct values, not the grid; outputs are grid
    points. At the default ε the column is counted in chunks, never sorted.
    *Refined with ε (public rule).* With ``r = clip(floor(log2(ε/d)), 0,
    10)`` the grid has ``r`` more bits everywhere (relative ``2**-(8 + r)``,
    coarse step ``(U - L)/2**(11 + r)``, ``24 + r`` binades) and each point
    ``min(r, 7)`` more split bits (``2**(5 + min(r, 7)) + 1`` states; an
    atom of ``a`` rows costs ``min(a, 2**(5 + min(r, 7))) + 1`` blocks): the
    rows of one grid cell, and the flat stretch the gap utility leaves after
    an output inside an atom, would otherwise stay as an error at any ε
    (6 ranks at ε = 1e6 before). The grid is a function of the bounds and ε
    only, so the privacy argument is unchanged; nothing changes below
    ε/d = 2. Grids of more than ``2**17`` points are counted from the rows'
    sorted distinct cells (a sort of the column, same blocks). Mean
    rank error of 9 deciles at ε = 1
    (``benchmarks/bench_joint_quantile_width.py``): 6.0 rows on N(0, 5) with
    n = 1000 (the reference JointExp on the same data: 6.0, standard errors
    0.2; the independent split: 15.3), the same with bounds 10**4 times
    wider; Adult's median hours-per-week is exactly 40 with bounds
    (0, 100000).

    **Ties off the grid.** A tie at a value that is not a grid point (a
    column of a few dozen distinct values such as 10.57626) cannot be an
    output: its rows count on one side of every grid point. Below ``ε/d =
    1024`` a level inside such a tie comes out in the empty stretch next to
    it (the rank utility is flat there): 2.99 rank points off for a median
    of RAND's health-insurance table (``benchmarks/bench_real_tables.py``),
    its value 1.5 % off. From there on (the finest grid) each row is first
    moved to its nearest grid point, a fixed public map, and such a level
    comes out within ``2**-19`` of it, relative. Give such values as public
    ``candidates`` with ``method="permute_and_flip"`` to release them exactly.

    **Budget split (public).** ``"joint"``: one release per feature at
    ``ε/d``; else one per level and feature at ``ε / (k d)`` (``k`` levels,
    ``d`` features); they compose to ε, one ledger entry per ``fit``.

    **Private bounds.** With ``bounds=None`` (or ``(lower, None)``), the
    bounds are released first by the search of :class:`PrivateMean` with
    ``bounds_share * ε`` (its Notes give the mechanism), and the quantiles
    above use the rest, ``ε' = ε - bounds_share * ε`` in place of ε, on the
    released bounds (post-processing of the first release chooses the grid
    of the second; sequential composition gives ε, one ledger entry each).
    Clipping to the released bounds moves no row across a quantile inside
    them, so only levels beyond the bounds (the search leaves at most a few
    rows above its upper bound) come out at a bound. The search never
    releases equal bounds (its candidates lie strictly beyond the origin,
    checked before the charge; a column of zeros gets ``[0, w]`` and its
    quantiles come out at the atom 0); were a feature's bounds equal, every
    quantile would be that value, a public rule whatever the data.
    The default ``bounds=None`` makes the estimator usable without knowing
    the data's scale: fixed wide public bounds such as ``(-1e9, 1e9)`` put
    almost all of the grid's base measure outside a small column's range.
    Median of 3,000 rows at ε = 1, mean rank error over 20 seeds: 50 points
    with ``(-1e9, 1e9)`` on lognormal(-7, 0.5), 0.15 with private bounds; on
    N(40, 10), where the wide bounds work, the bounds' share costs 0.04 →
    0.10 points.

    **Groups (user-level privacy).** With ``groups`` and
    ``max_rows_per_group = k``, neighbours add or remove one whole group,
    which first keeps at most ``k`` rows by a rule on its own rows only
    (:func:`~skdp.utils._groups.kept_rows`). That is ``k`` steps of one row,
    so every rank utility moves by at most ``k`` times the row's:
    ``k max(q, 1 - q)`` (attained by ``k`` equal rows), ``2k`` for the joint
    gap utility (brute-forced in ``tests/test_groups_stats.py``). The
    selections run at ``ε_r = ε/k`` rounded down
    (:func:`~skdp.accounting._group_privacy.row_budget_for_groups`; group
    privacy): rank errors are ``k`` times a row's (``rank_error_bound``).
    The bound search (``bounds=None``) runs for groups alike
    (:class:`SVTClipSelector`, Notes). The ledger charges the stated ε.

    **Floating point.** Both methods output points of a public set (the grid,
    or the candidates). The class weights are computed in floating point:
    the probability of each class carries a relative rounding error of order
    ``m 2**-53`` and, through the 53-bit uniform of the selection, an
    additive one below ``m 2**-53`` for ``m`` classes (the selection caveat in
    the limitations page).

    References
    ----------
    .. [1] A. Smith, "Privacy-preserving statistical estimation with optimal
       convergence rates", STOC 2011.
    .. [2] R. McKenna and D. Sheldon, "Permute-and-Flip: A new mechanism for
       differentially private selection", NeurIPS 2020.
    .. [3] OpenDP, ``make_private_quantile`` and
       ``make_quantile_score_candidates`` (rank score with ties on neither
       side).
    .. [4] J. Gillenwater, M. Joseph and A. Kulesza, "Differentially Private
       Quantiles", ICML 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant
    >>> from skdp.stats._quantile import PrivateQuantile
    >>> X = np.random.default_rng(0).normal(5, 1, size=(10_000, 2))
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> pq = PrivateQuantile((0.25, 0.5, 0.75), epsilon=1.0, bounds=(0, 10),
    ...                      accountant=acc, random_state=0).fit(X)
    >>> np.round(pq.quantiles_, 1)
    array([[4.3, 4.3],
           [5. , 5. ],
           [5.7, 5.7]])
    >>> acc.total()
    (1.0, 0.0)
    """

    _parameter_constraints = {
        "quantiles": ["array-like", Interval(Real, 0, 1, closed="both")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "bounds": ["array-like", tuple, None],
        "bounds_share": [Interval(Real, 0, 1, closed="neither")],
        "upper_limit": [Interval(Real, 0, None, closed="neither")],
        "method": [StrOptions({"joint", "exponential", "permute_and_flip"})],
        "candidates": [None, "array-like", Interval(Integral, 2, None, closed="left")],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        quantiles=(0.5,),
        *,
        epsilon=1.0,
        bounds=None,
        bounds_share=0.3,
        upper_limit=1e9,
        method="joint",
        candidates=None,
        max_rows_per_group=None,
        accountant=None,
        random_state=None,
    ):
        self.quantiles = quantiles
        self.epsilon = epsilon
        self.bounds = bounds
        self.bounds_share = bounds_share
        self.upper_limit = upper_limit
        self.method = method
        self.candidates = candidates
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, groups=None):
        """Release the private quantiles of each feature.

        Parameters
        ----------
        X : array-like or Dask collection of shape (n_samples, n_features)
            Training data. With ``method="permute_and_flip"`` a Dask array
            or DataFrame is read on its cluster (see :ref:`dask`); the other
            methods need the data in memory.
        y : None
            Ignored.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit (in memory), with ``max_rows_per_group``:
            neighbours add or remove one whole group (Notes). None: one row.

        Returns
        -------
        self : PrivateQuantile
        """
        if is_dask_collection(X) and self.method != "permute_and_flip":
            raise ValueError(
                f"PrivateQuantile(method={self.method!r}) needs the data in memory; "
                "method='permute_and_flip' (public candidates) takes a Dask input. "
                "Nothing was charged."
            )
        X = validate_rows(self, X)
        unit = self._privacy_unit(groups, X)
        n_features = X.shape[1]
        bounds_plan = BoundsPlan.from_estimator(self, n_features)
        run_bounds = bounds_plan_for_unit(bounds_plan, unit, n_features)
        levels = check_quantile_levels(self.quantiles)
        if bounds_plan.svt is None:
            self._check_levels_fit(levels, bounds_plan.lower, bounds_plan.upper)
        elif self.method == "permute_and_flip" and not (
            self.candidates is None or isinstance(self.candidates, Integral)
        ):
            candidate_grid(self.candidates, np.zeros(n_features), np.ones(n_features))
        elif self.method == "joint":
            check_joint_levels(levels, [0.0], [bounds_plan.svt.widths[0]])
        epsilon = self._quantile_epsilon()
        row_epsilon = unit.row_budget(self, epsilon)[0]
        with unit.planning_at_row_budget(self):
            check_selection_epsilon(self.method, levels, row_epsilon, n_features)
        source = check_random_source(self.random_state)
        items = [
            *bounds_plan.cost_items(),
            (quantile_ledger_label(self.method, levels, n_features), epsilon, 0.0),
        ]
        self._charge([(unit.label(lab), *cost) for lab, *cost in items], unit=unit)
        (X,) = unit.bound(source, X)
        lower, upper = run_bounds.run(X, source, self)

        with np.errstate(all="ignore"):  # after the charge nothing may warn
            released = self._release(X, lower, upper, levels, row_epsilon, source)
        self.quantiles_, self._unit_rows = released, unit.unit_rows
        self.lower_, self.upper_ = lower, upper
        return self

    def _check_levels_fit(self, levels, lower, upper):
        """Refuse, before the charge, levels or candidates public bounds cannot take."""
        if self.method == "permute_and_flip":
            candidate_grid(self.candidates, lower, upper)
        if self.method == "joint":
            check_joint_levels(levels, lower, upper)

    def _quantile_epsilon(self):
        """ε of the quantile releases: all of it, or what the bounds leave."""
        if BoundsPlan.chooses_privately(self.bounds)[0]:
            return budget_left(self.epsilon, self.epsilon * self.bounds_share)
        return self.epsilon

    def _row_epsilon(self, epsilon):
        """The selections' ε: ``epsilon``, or ``ε_r`` with ``k ε_r <= ε``."""
        k = getattr(self, "_unit_rows", 1)
        return epsilon if k == 1 else row_budget_for_groups(epsilon, 0.0, k)[0]

    def _release(self, X, lower, upper, levels, epsilon, source):
        """The quantiles on (public or released) bounds; equal bounds give
        their one value (a public rule on released values)."""
        point = lower == upper
        # a point's column runs on stand-in bounds (0, 1) whose release is
        # then replaced: the same work for every data set
        released = self._release_on(
            X,
            np.where(point, 0.0, lower),
            np.where(point, 1.0, upper),
            levels,
            epsilon,
            source,
        )
        released[:, point] = lower[point]
        return released

    def _release_on(self, X, lower, upper, levels, epsilon, source):
        n_features = X.shape[1]
        epsilon_each = equal_shares(epsilon, levels.size * n_features)
        released = np.empty((levels.size, n_features))
        if self.method == "permute_and_flip":
            grid = candidate_grid(self.candidates, lower, upper)
            counts = row_statistic(X, feature_cell_counts, grid, lower, upper)
            for j in range(n_features):
                released[:, j] = permute_and_flip_release(
                    counts[j], grid[:, j], levels, epsilon_each, source
                )
            return released
        for j in range(n_features):
            if self.method == "joint":
                released[:, j] = joint_release(
                    X[:, j],
                    lower[j],
                    upper[j],
                    levels,
                    equal_shares(epsilon, n_features),
                    source,
                )
                continue
            column = sorted_clipped_column(X[:, j], lower[j], upper[j])
            released[:, j] = exponential_release(
                column, lower[j], upper[j], levels, epsilon_each, source
            )[0]
        return released

    def rank_error_bound(self, alpha=0.05):
        """Rank error the mechanism guarantees with probability ``1 - alpha``.

        Post-processing of public quantities (free): it depends on ε, the
        levels, the bounds and the method, never on the data.

        Parameters
        ----------
        alpha : float, default=0.05
            Failure probability, for all levels and features at once.

        Returns
        -------
        bound : ndarray of shape (n_quantiles, `n_features_in_`)
            With probability at least ``1 - alpha``, each released quantile's
            rank interval ``[#{x < v}, #{x <= v}]`` is within ``bound`` rows
            of ``q n`` plus the error of the best public candidate (0 when
            the grid can realise the target rank, e.g. continuous data on
            the fine grid, or ties on a grid point).

        Notes
        -----
        The exponential mechanism with utility sensitivity Δ over ``C``
        outputs satisfies ``P(u <= OPT - 2Δ(ln C + t)/ε) <= exp(-t)``
        (McSherry and Talwar 2007; the same bound holds for permute-and-flip,
        McKenna and Sheldon 2020). For the independent methods the rank
        distance is at most ``|u|``; ``C`` is the grid size or the number of
        candidates, ``ε`` a level's share, ``Δ = max(q, 1 - q)``. For
        ``"joint"``, ``C`` is the number of increasing state sequences,
        ``binom(N, m)``, ``Δ = 2``, and each output's rank deviation is at
        most ``|u| / 2``. A union bound spreads ``alpha`` over the releases.
        """
        check_is_fitted(self)
        return rank_error_bounds(
            self.method,
            check_quantile_levels(self.quantiles),
            self.lower_,
            self.upper_,
            self.candidates,
            self._row_epsilon(self._quantile_epsilon()),
            alpha,
        )
