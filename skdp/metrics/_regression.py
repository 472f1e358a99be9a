"""Private regression metrics from exact clipped sums.

The sums are the Bernstein-basis moment sums of
:func:`~skdp.sensitivity.exact_moment_sums` (count, sum and sum of squares
of a clipped column at the sensitivity of the count alone), over the
columns a metric needs: the target ``y``, the residual ``e = y - ŷ`` and its
magnitude ``|e|``, with ``y`` and ``ŷ`` clipped to the public target bounds.
"""

import numpy as np

from skdp.metrics._inputs import check_pair, is_dask_pair, paired_rows
from skdp.metrics._release import (
    PrivateEstimate,
    ReleasePlan,
    metric_unit,
    noise_std_error,
)
from skdp.sensitivity import exact_moment_sums, moments_from_sums
from skdp.sensitivity._mean import per_feature_sensitivities
from skdp.utils._dask import row_statistic
from skdp.utils._validation import check_required_bounds

__all__ = [
    "private_explained_variance_score",
    "private_mean_absolute_error",
    "private_mean_squared_error",
    "private_r2_score",
    "private_regression_report",
    "regression_sums",
]

_ALL_COLUMNS = ("y", "e", "abs")


def _column_bounds(lower, upper, columns):
    width = upper - lower
    bounds = {"y": (lower, upper), "e": (-width, width), "abs": (0.0, width)}
    return (np.array([bounds[c][i] for c in columns]) for i in (0, 1))


def regression_sums(rows, lower, upper, columns):
    """Exact moment sums of the columns ``y``, ``e = y - ŷ`` and ``|e|``.

    Parameters
    ----------
    rows : ndarray of shape (n_samples, 2)
        ``y_true`` and ``y_pred``; both are clipped to ``[lower, upper]``.
    lower, upper : float
        The public target bounds.
    columns : tuple of {"y", "e", "abs"}
        Which columns to sum.

    Returns
    -------
    sums : FixedPoint of shape (1, 3, len(columns))

    Notes
    -----
    **Sensitivity (add/remove one row).** Each column of a row is a
    function of that row alone, in public bounds (``y`` in ``[L, U]``,
    ``e`` in ``[-(U - L), U - L]``, ``|e|`` in ``[0, U - L]``); the
    Bernstein triple of each column is three non-negative integers summing
    to ``2**32`` (:func:`~skdp.sensitivity.exact_moment_sums`), so the
    released vector moves by ``d`` in L1 and ``sqrt(d)`` in L2 norm for
    ``d`` columns. It carries, per column, the count ``n``, ``Σ v`` and
    ``Σ v²``: e.g. ``Σ e² <= n (U - L)²`` enters at sensitivity 1, not at
    ``(U - L)²``, because it is normalised by the public width.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.metrics._regression import regression_sums
    >>> rows = np.array([[0.0, 1.0], [2.0, 2.0]])
    >>> regression_sums(rows, 0.0, 2.0, ("abs",)).as_float().ravel()
    array([1.25, 0.5 , 0.25])
    """
    y = np.clip(rows[:, 0], lower, upper)
    residual = y - np.clip(rows[:, 1], lower, upper)
    values = {"y": y, "e": residual, "abs": np.abs(residual)}
    X = np.column_stack([values[c] for c in columns])
    low, high = _column_bounds(lower, upper, columns)
    return exact_moment_sums(X, low, high)


def _moments(flat, low, high):
    """Counts, means and variances (batch first) of released sums."""
    d = low.size
    sums = np.asarray(flat, dtype=float).reshape(-1, 3, d)
    counts, means, variances = moments_from_sums(sums, low, high)
    batch = np.shape(flat)[:-1]
    return (
        counts.reshape(batch),
        means.reshape((*batch, d)),
        variances.reshape((*batch, d)),
    )


def _unit_square(flat, low, high, column):
    """Mean of ``a²`` for the column ``a = v / w`` in ``[0, 1]``: ``Σ a² / n``
    from the raw released ``Σ a²``, clipped to ``[0, 1]`` (unbiased; the
    variance plus the squared mean would add the clipped variance's bias
    when the spread is small)."""
    d = low.size
    sums = np.asarray(flat, dtype=float).reshape(-1, 3, d)
    counts = moments_from_sums(sums, low, high)[0]
    with np.errstate(all="ignore"):  # post-processing: nothing may warn
        second = np.clip(sums[:, 2, column] / counts, 0.0, 1.0)
    return second.reshape(np.shape(flat)[:-1])


def _unit_variances(flat, low, high):
    """Variances of the columns in units of their own widths (each column
    mapped to ``[0, 1]``): ratios of spreads are free of ``(U - L)²``,
    which overflows for widths above about ``1.3e154``."""
    d = low.size
    return _moments(flat, np.zeros(d), np.ones(d))[2]


def _ratio_to_variance(numerator, variance):
    """``1 - numerator / variance`` (0 where the variance is not positive)."""
    out = np.zeros(np.shape(variance))
    np.divide(numerator, variance, out=out, where=variance > 0)
    return np.where(variance > 0, 1.0 - out, 0.0)


def _statistics(columns, low, high):
    at = {c: i for i, c in enumerate(columns)}
    widths = high - low  # y and |e|: U - L; e: 2 (U - L)

    def mse(flat):
        # w² mean(a²) as (w sqrt(mean(a²)))²: 0 for exact predictions and
        # inf only where the mean square itself exceeds the largest double
        root = widths[at["abs"]] * np.sqrt(_unit_square(flat, low, high, at["abs"]))
        with np.errstate(over="ignore"):
            return root**2

    def mae(flat):
        return _moments(flat, low, high)[1][..., at["abs"]]

    def r2(flat):
        # mean(e²) / var(y), both in units of (U - L)²
        spread = _unit_variances(flat, low, high)[..., at["y"]]
        return _ratio_to_variance(_unit_square(flat, low, high, at["abs"]), spread)

    def explained_variance(flat):
        # var(e) / var(y): e's unit is 2 (U - L), y's is U - L
        spread = _unit_variances(flat, low, high)
        return _ratio_to_variance(4 * spread[..., at["e"]], spread[..., at["y"]])

    return {"mse": mse, "mae": mae, "r2": r2, "explained_variance": explained_variance}


def _released_sums(y_true, y_pred, target_bounds, columns, caller, **budget):
    """Check, charge and release the sums of ``columns``; return the
    released flat vector, the public noise variance and the column bounds.

    ``budget`` holds ``epsilon``, ``delta``, ``groups``,
    ``max_rows_per_group``, ``accountant`` and ``random_state``.
    """
    lower, upper = check_required_bounds(target_bounds, 1, caller)
    lower, upper = float(lower[0]), float(upper[0])
    if not lower < upper:
        raise ValueError(
            f"{caller} needs target_bounds=(lower, upper) with lower < upper; got "
            f"{target_bounds!r}. Nothing was charged."
        )
    low, high = _column_bounds(lower, upper, columns)
    if not np.all(np.isfinite(high - low)):
        raise ValueError(
            f"{caller}: the residual bounds ±(upper - lower) of target_bounds="
            f"{target_bounds!r} overflow; narrow the bounds. Nothing was charged."
        )
    unit = metric_unit(caller, budget["groups"], budget["max_rows_per_group"], y_true)
    l1, l2 = per_feature_sensitivities(len(columns), unit.unit_rows)
    size, eps, delta = 3 * len(columns), budget["epsilon"], budget["delta"]
    plan = ReleasePlan(size, l1, l2, eps, delta, budget["random_state"], unit)
    rows = _regression_rows(y_true, y_pred)
    plan.charge(budget["accountant"], f"{caller}: clipped sums of {list(columns)}")
    if unit.groups is not None:  # in memory: Dask is refused with groups
        rows = rows[plan.kept(rows)]
    exact = row_statistic(rows, regression_sums, lower, upper, columns)
    return plan.release(exact).ravel(), plan.variance, low, high


def _regression_rows(y_true, y_pred):
    if is_dask_pair(y_true, y_pred):
        return paired_rows(y_true, y_pred)
    y_true, y_pred = check_pair(y_true, y_pred, ("y_true", "y_pred"))
    rows = np.column_stack([y_true, y_pred]).astype(float)
    if not np.all(np.isfinite(rows)):
        raise ValueError(
            "y_true or y_pred contains NaN or inf; skdp needs finite values. "
            "Impute or drop them with a data-independent rule first. Nothing "
            "was charged."
        )
    return rows


def _estimate(statistic, flat, variance):
    return PrivateEstimate(
        float(statistic(flat)), noise_std_error(statistic, flat, variance)
    )


def _metric(name, columns, y_true, y_pred, target_bounds, caller, **budget):
    flat, variance, low, high = _released_sums(
        y_true, y_pred, target_bounds, columns, caller, **budget
    )
    return _estimate(_statistics(columns, low, high)[name], flat, variance)


_SHARED_DOC = """
    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or Dask array
        True and predicted targets of the private test rows; both are
        clipped to ``target_bounds``.
    target_bounds : tuple (lower, upper)
        Public bounds of the target (stated, never read from the data).
    epsilon : float, default=1.0
        ε of the release.
    delta : float, default=0.0
        0: Laplace noise (ε-DP); > 0: the analytic Gaussian ((ε, δ)-DP).
    groups : array-like of shape (n_samples,), default=None
        Each test row's person, with ``max_rows_per_group``: neighbours add
        or remove one whole group, of which at most ``k`` rows are kept
        (:ref:`user_level_privacy`; in memory only); every sensitivity
        below is then ``k`` times the row's. None: one row.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows (required with ``groups``).
    accountant : BudgetAccountant or None, default=None
        Charged before the targets are read.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws the noise from the operating system's CSPRNG.
"""


def private_mean_squared_error(
    y_true,
    y_pred,
    *,
    target_bounds,
    epsilon=1.0,
    delta=0.0,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """Mean squared error from private clipped sums.
    {shared}
    Returns
    -------
    mse : PrivateEstimate

    Notes
    -----
    One release of the moment sums of ``|e| = |clip(y) - clip(ŷ)|`` in
    ``[0, U - L]`` (:func:`regression_sums`): L1 = 1, L2 = 1 (one column).
    A row changes ``Σ e²`` by at most ``(U - L)²``; the normalised sums carry
    it at sensitivity 1. MSE = ``(U - L)² Σ a² / n`` with ``a = |e| / (U - L)``
    from the released sums, clipped to ``[0, (U - L)²]`` (post-processing).

    Examples
    --------
    >>> from skdp.metrics import private_mean_squared_error
    >>> y = [0.0, 1.0, 2.0, 3.0] * 500
    >>> est = private_mean_squared_error(y, [v + 0.6 for v in y],
    ...                                  target_bounds=(0, 4), random_state=0)
    >>> round(est.value, 1)
    0.4
    """
    return _metric(
        "mse",
        ("abs",),
        y_true,
        y_pred,
        target_bounds,
        "private_mean_squared_error",
        epsilon=epsilon,
        delta=delta,
        groups=groups,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    )


def private_mean_absolute_error(
    y_true,
    y_pred,
    *,
    target_bounds,
    epsilon=1.0,
    delta=0.0,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """Mean absolute error from private clipped sums.
    {shared}
    Returns
    -------
    mae : PrivateEstimate

    Notes
    -----
    One release of the moment sums of ``|e|`` in ``[0, U - L]``
    (:func:`regression_sums`, L1 = L2 = 1): a row changes ``Σ |e|`` by at
    most ``U - L``, carried at sensitivity 1 after normalisation.

    Examples
    --------
    >>> from skdp.metrics import private_mean_absolute_error
    >>> y = [0.0, 1.0, 2.0, 3.0] * 500
    >>> est = private_mean_absolute_error(y, [v + 0.5 for v in y],
    ...                                   target_bounds=(0, 4), random_state=0)
    >>> round(est.value, 2)
    0.5
    """
    return _metric(
        "mae",
        ("abs",),
        y_true,
        y_pred,
        target_bounds,
        "private_mean_absolute_error",
        epsilon=epsilon,
        delta=delta,
        groups=groups,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    )


def private_r2_score(
    y_true,
    y_pred,
    *,
    target_bounds,
    epsilon=1.0,
    delta=0.0,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """Coefficient of determination R² from private clipped sums.
    {shared}
    Returns
    -------
    r2 : PrivateEstimate

    Notes
    -----
    R² needs ``n``, ``Σ y``, ``Σ y²`` and ``Σ e²``: one release of the
    moment sums of the two columns ``y`` in ``[L, U]`` and ``|e|`` in
    ``[0, U - L]`` (:func:`regression_sums`), L1 = 2, L2 = √2 — one charge
    for the four sums. ``R² = 1 - mean(e²) / var(y)``, 0 when the released
    variance of ``y`` is 0 (post-processing).

    Examples
    --------
    >>> from skdp.metrics import private_r2_score
    >>> y = [0.0, 1.0, 2.0, 3.0] * 500
    >>> est = private_r2_score(y, [v + 0.5 for v in y], target_bounds=(0, 4),
    ...                        random_state=0)
    >>> round(est.value, 2)
    0.8
    """
    return _metric(
        "r2",
        ("y", "abs"),
        y_true,
        y_pred,
        target_bounds,
        "private_r2_score",
        epsilon=epsilon,
        delta=delta,
        groups=groups,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    )


def private_explained_variance_score(
    y_true,
    y_pred,
    *,
    target_bounds,
    epsilon=1.0,
    delta=0.0,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """Explained variance from private clipped sums.
    {shared}
    Returns
    -------
    explained_variance : PrivateEstimate

    Notes
    -----
    ``1 - var(e) / var(y)`` from one release of the moment sums of ``y`` in
    ``[L, U]`` and ``e`` in ``[-(U - L), U - L]`` (:func:`regression_sums`,
    L1 = 2, L2 = √2).

    Examples
    --------
    >>> from skdp.metrics import private_explained_variance_score
    >>> y = [0.0, 1.0, 2.0, 3.0] * 500
    >>> est = private_explained_variance_score(
    ...     y, [v + 0.5 for v in y], target_bounds=(0, 4), random_state=0)
    >>> round(est.value, 2)
    1.0
    """
    return _metric(
        "explained_variance",
        ("y", "e"),
        y_true,
        y_pred,
        target_bounds,
        "private_explained_variance_score",
        epsilon=epsilon,
        delta=delta,
        groups=groups,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    )


def private_regression_report(
    y_true,
    y_pred,
    *,
    target_bounds,
    epsilon=1.0,
    delta=0.0,
    groups=None,
    max_rows_per_group=None,
    accountant=None,
    random_state=None,
):
    """MSE, MAE, R² and explained variance from one release (one charge).
    {shared}
    Returns
    -------
    report : dict
        ``"mse"``, ``"mae"``, ``"r2"``, ``"explained_variance"``, each a
        :class:`PrivateEstimate`.

    Notes
    -----
    One release of the moment sums of the three columns ``y``, ``e`` and
    ``|e|`` (:func:`regression_sums`, L1 = 3, L2 = √3); every metric is
    post-processing of it.

    Examples
    --------
    >>> from skdp.metrics import private_regression_report
    >>> y = [0.0, 1.0, 2.0, 3.0] * 5000
    >>> report = private_regression_report(y, [v + 0.5 for v in y],
    ...                                    target_bounds=(0, 4), random_state=0)
    >>> round(report["mae"].value, 2), round(report["r2"].value, 1)
    (0.5, 0.8)
    """
    flat, variance, low, high = _released_sums(
        y_true,
        y_pred,
        target_bounds,
        _ALL_COLUMNS,
        "private_regression_report",
        epsilon=epsilon,
        delta=delta,
        groups=groups,
        max_rows_per_group=max_rows_per_group,
        accountant=accountant,
        random_state=random_state,
    )
    statistics = _statistics(_ALL_COLUMNS, low, high)
    return {name: _estimate(f, flat, variance) for name, f in statistics.items()}


for _function in (
    private_mean_squared_error,
    private_mean_absolute_error,
    private_r2_score,
    private_explained_variance_score,
    private_regression_report,
):
    _function.__doc__ = _function.__doc__.replace("{shared}", _SHARED_DOC)
