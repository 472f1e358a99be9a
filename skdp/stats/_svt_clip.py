"""Clipping bounds chosen privately by the sparse vector technique."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from skdp.base import PrivateEstimatorMixin
from skdp.exceptions import NoiseDominatedWarning
from skdp.mechanisms import check_random_source
from skdp.stats._svt_problems import bounds_problems
from skdp.stats._svt_search import (
    _THRESHOLD_SHARE,
    plan_svt_bounds,
    release_svt_bounds,
    release_svt_bounds_record,
    run_svt_bounds,
    run_svt_bounds_record,
    svt_bound_widths,
    svt_bounds_statistic,
    svt_plan_for_groups,
)
from skdp.utils._dask import (
    ChunkedRows,
    is_dask_collection,
    row_statistic,
    transform_rows,
    validate_rows,
)
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._validation import validate_private_data
from skdp.utils._warnings import warn_at_caller

__all__ = [
    "SVTClipSelector",
    "bounds_plan_for_unit",
    "plan_svt_bounds",
    "release_svt_bounds",
    "run_svt_bounds",
    "search_svt_bounds",
    "svt_bound_widths",
    "svt_bounds_statistic",
    "warn_if_bounds_useless",
]


def search_svt_bounds(X, plan, source):
    """The released bounds (an
    :class:`~skdp.stats._svt_search.SVTBoundsRelease`), in memory or
    on a Dask input.

    The caller has charged the cost. On :class:`~skdp.utils._dask.ChunkedRows`
    the tallies of the blocks are computed where the data lives and added
    (:func:`~skdp.stats._svt_search.svt_bounds_statistic`), then
    released here: the same release as in memory for the same seed.

    Runs under ``np.errstate(all="ignore")``: the caller's error state must
    not turn the search's rounding (the layout's ``nextafter(-0.0, -1)``,
    the ramp of a subnormal value, both underflows by design) into an
    exception after the charge, and on one neighbour but not the other.
    """
    with np.errstate(all="ignore"):
        if not isinstance(X, ChunkedRows):
            return run_svt_bounds_record(X, plan, source)
        # each block builds its layouts (about 1 ms; they bin alike with or
        # without the lookup table) rather than receive them (about 200 kB)
        statistic = row_statistic(X, svt_bounds_statistic, plan)
        return release_svt_bounds_record(statistic, plan, source)


def bounds_plan_for_unit(bounds_plan, unit, n_features):
    """``bounds_plan`` (a :class:`~skdp.stats._mean.BoundsPlan`) with its
    private search run for ``unit`` (:func:`~skdp.stats._svt_search.
    svt_plan_for_groups`); public bounds and one row: unchanged. Its
    ``cost_items`` are still charged from the original plan."""
    if bounds_plan.svt is None or unit.groups is None:
        return bounds_plan
    svt = svt_plan_for_groups(bounds_plan.svt, n_features, unit.unit_rows)
    return bounds_plan._replace(svt=svt)


def feature_label(estimator, index):
    """A feature's name if the estimator saw names, else ``#index``."""
    names = getattr(estimator, "feature_names_in_", None)
    return repr(str(names[index])) if names is not None else f"#{index}"


def feature_list(estimator, features, limit=8):
    """``'a', 'b' and 3 more``: the first ``limit`` features' labels."""
    labels = ", ".join(feature_label(estimator, f) for f in features[:limit])
    more = len(features) - limit
    return labels + (f" and {more} more" if more > 0 else "")


_KIND_SUMMARY = {
    "collapsed": "collapsed to about a constant",
    "top": "reached the top of the grid",
    "noise": "were searched below the noise",
}


def warn_if_bounds_useless(estimator, release, plan):
    """Warn (:class:`~skdp.exceptions.NoiseDominatedWarning`) naming the
    features whose released bounds are useless, grouped by cause.

    The decision is :func:`~skdp.stats._svt_problems.bounds_problems`
    of the release and the public plan: post-processing, it reads no data.
    An estimator that searches for another (``DPClipper(method="svt")``)
    sets ``_warn_as`` on it, and the warning names that one and its columns.
    """
    problems = bounds_problems(release, plan)
    if not problems:
        return
    estimator = getattr(estimator, "_warn_as", estimator)
    groups = []
    for kind, summary in _KIND_SUMMARY.items():
        features = sorted(f for f, (k, _) in problems.items() if k == kind)
        if features:
            example = problems[features[0]][1]
            groups.append(
                f"{summary}: feature(s) {feature_list(estimator, features)} "
                f"(feature {feature_label(estimator, features[0])}: {example})"
            )
    warn_at_caller(
        f"{type(estimator).__name__}: the private bounds of {len(problems)} of "
        f"{plan.origin.size} feature(s) are useless; " + "; ".join(groups) + ". "
        f"The bound search's budget is split over {plan.origin.size} "
        "feature(s): state public bounds for these features, fit them in a "
        "separate step with fewer features, or raise epsilon (or the bounds' "
        "share of it); a realistic upper_limit shortens the grid.",
        NoiseDominatedWarning,
    )


class SVTClipSelector(
    GroupsMixin,
    PrivateEstimatorMixin,
    OneToOneFeatureMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Choose clipping bounds per feature with the sparse vector technique.

    Scanning a public geometric grid of candidate bounds outward from an
    origin, AboveThreshold stops at the first candidate with (roughly) at
    most ``n_above`` rows beyond it. Without a public ``lower``, a cheap
    private sign test first decides which sides need a search. The chosen
    bounds are released and ``transform`` clips to them. This is how skdp
    avoids ever reading bounds from the data: they are chosen privately and
    the choice is charged.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total ε of one ``fit``, over all features and both sides.
    lower : float, array-like of shape (n_features,) or None, default=None
        Public lower bounds. ``None`` chooses them privately too: a sign test
        (15% of ε) decides per feature whether the data have values on both
        sides of 0; a side without is bounded at 0, and the rest of ε goes to
        the searches of the other side(s) around the origin 0 (see Notes).
    upper_limit : float, default=1e9
        The largest plausible distance of a value from the origin (public);
        the top of the default grid, and the bound used when no candidate
        fires.
    grid : "geometric" or array-like, default="geometric"
        Candidate distances from the origin: "geometric" is
        ``upper_limit * 2**(-k/4)``, k = 160, ..., 0 (161 candidates spanning
        a factor 2**40); or a strictly increasing array of positive distances.
    n_above : float or None, default=None
        The threshold: stop when about this many rows lie beyond the
        candidate. ``None`` uses ``max(3 / (threshold_share * epsilon_run),
        0.5)`` (three scales of the threshold noise, and at least half a row,
        so that at large ε the search stops within a grid step of the data's
        extreme), where ``epsilon_run`` is the ε of one AboveThreshold run.
    threshold_share : float, default=0.8
        Share of each run's ε spent on the threshold noise (Lyu–Su–Li ε₁/ε;
        public, in (0, 1)); the rest goes to the query noise. 0.5 is the
        classic equal split. The default 0.8 cuts the runaway tail (Notes).
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows with ``fit(..., groups=...)``
        (required then, refused without): see :ref:`user_level_privacy`.
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit``; ``None`` uses the default accountant at fit time.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG; an int gives
        reproducible (not secret) noise for tests and examples.

    Attributes
    ----------
    lower_ : ndarray of shape (`n_features_in_`,)
        Lower bound per feature (given, or chosen privately).
    upper_ : ndarray of shape (`n_features_in_`,)
        Upper bound per feature, chosen privately.
    n_above_ : float
        The threshold of a search that has a feature's whole search budget
        (public: ``n_above`` or its default). With ``lower=None`` and the
        default ``n_above``, a feature searched on both sides uses twice this,
        and a side whose released count is small for its budget uses a
        smaller one (Notes, "Scarce budget").
    side_counts_ : ndarray of shape (2, `n_features_in_`) or None
        With ``lower=None``: the sign test's released noisy counts of negative
        (row 0) and positive (row 1) values per feature; None otherwise.
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit``: ``epsilon`` and 0.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    DPClipper : Clip to public bounds, or to bounds chosen by this class.
    PrivateMean : Uses this class when its ``bounds`` are not given.

    Notes
    -----
    **Privacy.** ε-DP under add/remove-one-row neighbours. For feature f and
    origin o (the public ``lower`` if given, else 0), the upper candidates are
    ``b_j = o + w_j`` for the public distances ``w_j``. Query j is minus the
    soft count ``q_j = sum_i clip((x_i - b_j)/(b_{j+1} - b_j), 0, 1)``
    (:func:`skdp.sensitivity.soft_counts_above`): adding or removing a row
    changes every ``q_j`` by a value in [0, 1] in the same direction, so the
    queries have sensitivity 1 for any grid spacing and are monotone, and
    AboveThreshold with threshold noise Lap(1/ε₁) and query noise Lap(1/ε₂),
    ``ε₁ = threshold_share · ε_run``, ``ε₂ = ε_run - ε₁``, is ε_run-DP
    (Lyu, Su and Li 2017, Alg. 1 with c = 1 for monotone queries, which holds
    for any split ε₁ + ε₂; Dwork–Roth Thm 3.23 for the equal split). The
    lower bound is the same search on ``-x`` around ``-o``. The index that
    fires is all that is released; the no-hit fallback is the grid's top,
    which does not depend on the data.

    **Sign test (lower=None).** First, per feature, the counts of negative
    and of positive values are released with Laplace noise: a row adds 1 to
    at most one of the two counts of each feature, so the vector of 2d counts
    has L1 sensitivity d under add/remove (checked by brute force in the
    tests), and noise of scale ``d / ε_sign`` with ``ε_sign = 0.15 ε`` is
    ε_sign-DP. A side whose noisy count is at most 3 noise scales is not
    searched: its bound is 0. Like the searches, this may clip rows: about
    ``3 d / ε_sign = 20 d / ε`` plus noise at most, where the equal-split
    two-sided search of earlier versions clipped about ``12 d / ε`` per
    side; a side that is occupied is missed with probability
    ``exp(-3)/2`` (2.5%) only when its count is near 0, and the test then
    costs a two-sided search (no bad bound). If both counts are that small
    the upper side is searched. The searches that remain are adaptive in the
    released test only (post-processing), so by sequential composition the
    fit is (ε_sign + ε_search)-DP = ε-DP. For non-negative data this spends
    the search budget on the upper side alone instead of half on a lower
    bound that stops at once at 0.

    **Budget split (public).** With a public ``lower``, ε is divided equally
    among the d features (basic composition): ``epsilon_run = epsilon / d``,
    one ledger entry. With ``lower=None``: ``0.15 ε`` for the sign test (one
    ledger entry) and ``0.85 ε`` for the searches (one entry), divided equally
    among the features and, for a feature searched on both sides, between
    the sides: ``epsilon_run = 0.85 ε / d`` or ``0.85 ε / (2d)``.

    **Choice of the threshold and of the split.** Beyond the data's maximum
    every query is 0. The threshold noise exceeds ``n_above`` with
    probability ``exp(-3)/2`` (about 2.5%) at the default of three threshold
    noise scales, and such a run then keeps walking up the grid until a query
    noise beats the excess ``t``: each query fires with probability
    ``exp(-ε₂ t)/2``. Integrating over the Laplace threshold noise, the
    probability of passing K more candidates decays like ``K^{-ε₁/ε₂}``
    (for large K it is about ``exp(-3) Γ(a+1) (2/K)^a / 2`` with
    ``a = ε₁/ε₂``). With the equal split (a = 1) that tail is so heavy that
    0.2–0.6% of the runs chose a bound more than 10 times the maximum, up to
    the grid's top, which ruined the RMSE of private means
    (``benchmarks/README.md``, issue 4). With ``threshold_share=0.8`` (a = 4)
    it decays like ``K^{-4}``; the price is a query noise of ``Lap(5/ε_run)``
    instead of ``Lap(2/ε_run)`` (2.5 times larger), so a query fires a little
    earlier at random below the maximum (slightly more clipping). Both defaults
    were chosen by simulating private means of lognormal data and of Adult's
    columns. Keep ``upper_limit`` realistic: it is the fallback when nothing
    fires.

    **Scarce budget (lower=None, default n_above).** Below the smallest
    non-zero value every query equals the side's count N (the atom at 0 is
    not counted), so a search crosses about ``K`` candidates of the grid
    where the gap to the threshold is ``N - n_above``; each fires with
    probability about ``exp(-ε₂ (N - n_above))/2``. When ε is split over
    many features ``n_above`` (three threshold-noise scales) approaches or
    exceeds N and a candidate near the grid's bottom fires: Adult's
    capital-gain beside its ~100 one-hot columns got an upper bound of
    0.004 at ε = 1, breast cancer's 30 features about 0.001. So the
    threshold of each side is read from the sign test's release: with
    ``N̂`` that side's released noisy count and ``s = min(threshold_share,
    0.65)``, a side whose threshold ``max(0.02 N̂, 2/(s ε_run))`` is below the
    default ``3 / (threshold_share ε_run)`` is searched with that threshold
    (at most about 2% of its rows above the bound, and at least two scales
    of the threshold noise) and the share ``s``, which cuts the query noise
    from ``Lap(5/ε_run)`` to ``Lap(2.9/ε_run)`` where the gap, not the
    runaway tail (now like ``K^{-1.9}``), decides. Simulated on Adult,
    breast cancer, lognormal means and 90%-zero lognormal columns
    (``benchmarks/bench_bounds_atoms.py``): the share 0.5 with one scale
    clipped less but ran past the data ten times too far in 1% of the
    means of 1,000 lognormal rows at ε = 0.5 (a side the sign test finds by
    noise); 0.65 with two scales in 0.3%, and about 0.2 of Adult's 110
    columns per fit.
    other sides keep the rule above.
    *Privacy:* ``(n_above, threshold_share)`` of each run is a function of
    the released sign counts and public constants, i.e. post-processing of
    an ε_sign-DP release, and AboveThreshold is ε_run-DP for every public
    threshold and split. Conditioned on the released counts ``r`` the runs
    are independent, each ε_run-DP with the same ε_run as before (the
    budget split does not depend on ``r``), so the density ratio of the
    whole release on neighbours is at most ``exp(ε_sign) exp(ε_search)``:
    the fit stays ε-DP and its whole cost is charged before the data is
    read (audited end to end in the tests).

    **Groups (user-level privacy).** With ``groups`` and
    ``max_rows_per_group = k``, neighbours add or remove one whole group,
    which first keeps at most ``k`` rows by a rule on its own rows only
    (:func:`~skdp.utils._groups.kept_rows`). A kept group moves each sign
    count and each soft count by at most ``k`` in the same direction (``k``
    times a row's; L1 ``k d`` for the sign counts; brute-forced in
    ``tests/test_groups_stats.py``), so the queries stay monotone with
    sensitivity ``k``. The search takes the generic group-privacy route,
    which for these pure-ε steps is the same: the sign test and every
    AboveThreshold run use ``ε_r`` with ``k ε_r <= ε`` of their budgets
    (:func:`~skdp.accounting._group_privacy.row_budget_for_groups`), i.e.
    noise ``k`` times the row's, and the default thresholds (in noise
    scales) grow with it; ``n_above`` given is a count of rows, as before.
    The ledger charges the stated ε. ``n_above_`` and ``side_counts_`` are
    those of the run.

    **Warnings (post-processing).** After the release a
    :class:`~skdp.exceptions.NoiseDominatedWarning` names each feature whose
    bounds are useless, decided from the released bounds, the released sign
    counts and public parameters only
    (:func:`~skdp.stats._svt_problems.bounds_problems`): the released
    interval is no wider than the grid's candidate at a tenth of its length
    (collapsed), a bound lies in the grid's top tenth (the search ran past
    the data, or ``upper_limit`` is too small), or a searched side's
    released count ``N̂`` is below 8 scales
    ``1/ε₂`` of its search's query noise (the search cannot tell where that
    side's values lie, and the bound may cut most of them).

    **Computation.** One pass over the data in blocks of rows, no sort and
    no copy of ``X``: each value is binned against the public grid and every
    bin's row count and rounded ramp sum are added up (with the sign counts,
    in one tally for both sides of every feature); every candidate's query
    follows from these per-bin sums, bit for bit the values of a sort and
    prefix sums (:func:`skdp.sensitivity.soft_counts_above`). The tallies of
    chunks of rows add up, so chunked data give the same release
    (``svt_bounds_statistic``, ``release_svt_bounds``). The noise is drawn
    for all candidates in one vectorised call; only the first hit matters.

    References
    ----------
    .. [1] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
       Privacy", 2014, §3.6.
    .. [2] M. Lyu, D. Su and N. Li, "Understanding the sparse vector technique
       for differential privacy", PVLDB 2017.
    .. [3] D. Durfee, "Unbounded differentially private quantile and maximum
       estimation", NeurIPS 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import SVTClipSelector
    >>> X = np.random.default_rng(0).lognormal(3, 1, size=(10_000, 1))
    >>> sel = SVTClipSelector(epsilon=1.0, lower=0.0, upper_limit=1e6,
    ...                       random_state=0).fit(X)
    >>> bool(np.mean(X > sel.upper_[0]) < 0.01)  # clips under 1% of the rows
    True
    >>> bool(sel.upper_[0] < 2 * X.max())  # and does not run away
    True
    """

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "lower": ["array-like", Real, None],
        "upper_limit": [Interval(Real, 0, None, closed="neither")],
        "grid": [StrOptions({"geometric"}), "array-like"],
        "n_above": [Interval(Real, 0, None, closed="left"), None],
        "threshold_share": [Interval(Real, 0, 1, closed="neither")],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        epsilon=1.0,
        *,
        lower=None,
        upper_limit=1e9,
        grid="geometric",
        n_above=None,
        threshold_share=_THRESHOLD_SHARE,
        max_rows_per_group=None,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.lower = lower
        self.upper_limit = upper_limit
        self.grid = grid
        self.n_above = n_above
        self.threshold_share = threshold_share
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, groups=None):
        """Choose the bounds of each feature privately.

        Parameters
        ----------
        X : array-like or Dask collection of shape (n_samples, n_features)
            Training data. A Dask array or DataFrame is read on its cluster
            (see :ref:`dask`).
        y : None
            Ignored.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit (in memory), with ``max_rows_per_group``:
            neighbours add or remove one whole group (Notes). None: one row.

        Returns
        -------
        self : SVTClipSelector
        """
        X = validate_rows(self, X)
        unit = self._privacy_unit(groups, X)
        plan = plan_svt_bounds(
            X.shape[1],
            self.epsilon,
            lower=self.lower,
            upper_limit=self.upper_limit,
            grid=self.grid,
            n_above=self.n_above,
            threshold_share=self.threshold_share,
        )
        run = svt_plan_for_groups(plan, X.shape[1], unit.unit_rows)
        source = check_random_source(self.random_state)
        items = plan.cost_items(self.epsilon)
        self._charge([(unit.label(label), *cost) for label, *cost in items], unit=unit)
        (X,) = unit.bound(source, X)
        release = search_svt_bounds(X, run, source)
        self.lower_, self.upper_ = release.lower, release.upper
        self.side_counts_ = release.side_counts
        self.n_above_ = run.run_parameters(X.shape[1], 1)[1]
        warn_if_bounds_useless(self, release, run)
        return self

    def transform(self, X):
        """Clip every feature to ``[lower_, upper_]``.

        Parameters
        ----------
        X : array-like or Dask collection of shape (n_samples, n_features)

        Returns
        -------
        X_clipped : ndarray or Dask array of shape (n_samples, n_features)
            A lazy Dask array for a Dask input (see :ref:`dask`).
        """
        check_is_fitted(self)
        if is_dask_collection(X):
            return transform_rows(self, X, np.clip, self.lower_, self.upper_)
        X = validate_private_data(self, X, reset=False)
        return np.clip(X, self.lower_, self.upper_)
