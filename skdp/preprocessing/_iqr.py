"""Private interquartile range by the Dwork–Lei two-grid propose-test-release."""

import math
from numbers import Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms import check_random_source, laplace_mechanism
from skdp.preprocessing._affine import AffineTransformMixin
from skdp.preprocessing._ptr import (
    CAP_FAILURE_PROBABILITY,
    handle_refusals,
)
from skdp.sensitivity import log_grid_bin, quartile_ranks, select_order_statistics

# One selection serves the IQR and both grids (the public functions would each
# partition the data again): the window helpers of the sensitivity module.
from skdp.sensitivity._iqr import _instability_from, _iqr_from
from skdp.utils._validation import (
    check_bounds,
    check_finite_width,
    validate_private_data,
)

__all__ = [
    "DEFAULT_BASE",
    "DEFAULT_WIDTH",
    "IQRScale",
    "iqr_parameters",
    "iqr_release",
    "iqr_statistics",
]

#: Public default grid: bins ``[2**(o + s/8), 2**(o + (s+1)/8))``, a factor
#: ``2**0.125`` (about 9%) wide; see the IQRScale Notes for the trade-off.
DEFAULT_BASE = 2.0
DEFAULT_WIDTH = 0.125


def iqr_parameters(epsilon, delta, n_features):
    """Public per-grid constants of :class:`IQRScale`.

    Returns
    -------
    eps_grid : float
        ``ε' = ε/(4d)``: each of the two grids spends ε' on its test and ε'
        on its release, for each of the ``d`` features.
    threshold : float
        ``T = 1 + ln(2d/δ)/ε'`` (``δ' = δ/(2d)`` per grid).
    cap : int
        ``K = ceil(T + ln(1/β)/ε')``, ``β = 1e-9``.
    """
    eps_grid = epsilon / (4.0 * n_features)
    threshold = 1.0 + math.log(2.0 * n_features / delta) / eps_grid
    cap = math.ceil(threshold + math.log(1.0 / CAP_FAILURE_PROBABILITY) / eps_grid)
    return eps_grid, threshold, cap


def _usable(iqr):
    return iqr > 0 and math.isfinite(iqr)


def iqr_statistics(X, bounds, base, width, cap):
    """IQR and ``min(A_j, K)`` on the two grids, for every column.

    One selection per column: the order statistics of ranks ``r1 ± W`` and
    ``r3 ± W``, ``W = ceil(3K/4) + 2`` (the windows of
    :func:`skdp.sensitivity.iqr_instability_distance` with ``cap=K``), serve
    the IQR and both grids' distances.

    Returns
    -------
    iqrs : ndarray of shape (d,)
        The IQRs of the clipped columns (0 or inf where not usable).
    distances : ndarray of shape (2, d)
        ``min(A_j, K)`` for grid ``j`` with offset ``j·width/2``; 0 where
        the IQR is 0 (or overflows to inf, which lies in no bin).
    """
    lower, upper = bounds
    n_samples, n_features = X.shape
    r1, r3 = quartile_ranks(n_samples)
    half = -(-3 * int(cap) // 4) + 2
    windows = [(r1 - half, r1 + half), (r3 - half, r3 + half)]
    iqrs = np.empty(n_features)
    distances = np.zeros((2, n_features))
    for f in range(n_features):
        ranks, values = select_order_statistics(X[:, f], (lower[f], upper[f]), windows)
        with np.errstate(over="ignore", invalid="ignore"):
            iqr = float(_iqr_from(ranks, values, n_samples))
        iqrs[f] = 0.0 if math.isnan(iqr) else iqr  # n = 0 unbounded: -inf + inf
        if not _usable(iqrs[f]):
            continue
        for grid in (0, 1):
            _, lo, hi = log_grid_bin(
                iqrs[f], base=base, width=width, offset=grid * width / 2
            )
            with np.errstate(invalid="ignore", over="ignore"):
                a = _instability_from(ranks, values, n_samples, lo, hi)
            distances[grid, f] = min(a, int(cap))
    return iqrs, distances


def iqr_release(iqrs, distances, eps_grid, threshold, base, width, *, random_state):
    """Two-grid test per coordinate; release ``IQR · base^(width · Lap(1/ε'))``.

    ``distances`` has shape (2, m): every entry is one 1-sensitive test
    (one vector Laplace query, per-entry scale ``1/ε'``). A coordinate passes
    when either grid passes; the release (for the first passing grid) is one
    vector query on ``log_base(IQR)/width`` with per-coordinate scale
    ``1/ε'`` (change below 1 for same-bin neighbours), mapped back by
    ``base ** (width · y)`` (post-processing). A pass with an unusable IQR
    (0 or overflow; only possible with probability at most δ', since its
    ``A = 0``) is reported as a refusal.

    Returns
    -------
    scales : ndarray of shape (m,)
        Released scales, NaN where refused.
    refused : ndarray of bool of shape (m,)
    """
    iqrs = np.asarray(iqrs, dtype=float)
    random_state = check_random_source(random_state)  # one stream for all draws
    distances = np.asarray(distances, dtype=float)
    size = distances.size
    noisy = laplace_mechanism(
        distances.ravel(), float(size), size * eps_grid, random_state=random_state
    ).reshape(distances.shape)
    passed = (noisy > threshold).any(axis=0)
    with np.errstate(over="ignore"):
        passed &= (iqrs > 0) & np.isfinite(iqrs)
    scales = np.full(iqrs.shape, np.nan)
    n_pass = int(passed.sum())
    if n_pass:
        logs = np.log(iqrs[passed]) / (math.log(base) * width)
        noisy_logs = laplace_mechanism(
            logs, float(n_pass), n_pass * eps_grid, random_state=random_state
        )
        with np.errstate(over="ignore", under="ignore"):
            scales[passed] = np.power(base, width * np.atleast_1d(noisy_logs))
    return scales, ~passed


class IQRScale(
    AffineTransformMixin,
    PrivateEstimatorMixin,
    OneToOneFeatureMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Per-feature interquartile range by Dwork–Lei propose-test-release.

    The IQR is released on a logarithmic scale: two public grids of bins
    (shifted by half a bin) are tested privately for the stability of the
    IQR's bin; the first stable grid releases ``IQR · base^(width·Lap(1/ε'))``.
    If neither grid is stable the feature is refused (⊥, NaN).
    ``transform`` divides by the scales.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total ε of one ``fit``, over all features, grids, tests and releases.
    delta : float, default=1e-6
        Total δ of one ``fit``, ``0 < delta < 1``.
    bounds : tuple of (float or array-like, float or array-like) or None, \
            default=None
        Public ``(lower, upper)`` clipping bounds. ``None`` means an unbounded
        domain: nothing is clipped and the instability distance is computed
        with ``±inf`` padding (adding a point far away is always possible).
    base : float or None, default=None
        Base of the logarithmic grid (``> 1``); ``None`` means 2.
    width : float or None, default=None
        Bin width in units of ``log_base``; ``None`` means 1/8 (bins a factor
        ``2**0.125``, about 9%, wide with the default base). Must be public.
    on_refuse : {"nan", "raise"}, default="nan"
        On a refusal: set the scale to NaN and warn
        (:class:`~skdp.preprocessing._ptr.PTRRefusedWarning`), or raise
        :class:`~skdp.preprocessing._ptr.PTRRefusedError`. The budget is
        spent either way.
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit``; ``None`` uses the default accountant at fit time.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG. An int gives
        reproducible (and therefore not secret) noise for tests and examples.

    Attributes
    ----------
    scale_ : ndarray of shape (`n_features_in_`,)
        The private IQRs (positive), NaN where refused.
    refused_ : ndarray of bool of shape (`n_features_in_`,)
        Whether both grids refused the feature.
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit`` (equal to ``epsilon`` and ``delta``).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    PTRMedian : Private median by propose-test-release.

    Notes
    -----
    **Statistic.** ``IQR = x_(r3) - x_(r1)``, ``r1 = ceil(n/4)``,
    ``r3 = ceil(3n/4)``, of the clipped data (0 for one row).

    **Privacy.** (ε, δ)-DP under add/remove-one-row neighbours; in fact
    (ε, δ/2). For grid ``j`` (bins ``[base^(o_j + s·w), base^(o_j +
    (s+1)·w))``, ``o_0 = 0``, ``o_1 = w/2``), ``A_j(x)`` is the least number of
    added/removed rows after which the IQR leaves its bin (0 if the IQR is 0)
    (:func:`skdp.sensitivity.iqr_instability_distance`;
    ALGORITHMS_ADDREMOVE.md §3, brute-force checked). ``A_j`` has global
    sensitivity 1, and neighbours whose IQRs lie in different bins both have
    ``A_j <= 1`` (§3.3). Per grid: refuse if ``A_j + Lap(1/ε') <= 1 +
    ln(1/δ')/ε'``, else release ``log_base(IQR) + Lap(w/ε')`` (mapped back by
    ``base^·``). Same-bin neighbours: the log-IQRs differ by less than ``w``,
    so test and release are ε'-DP each; different bins: passing has
    probability at most ``½ exp(-ln(1/δ')) = δ'/2``. Each grid is
    ``(2ε', δ'/2)``-DP, the two grids ``(4ε', δ')`` (the first non-⊥ output
    is post-processing), and the ``d`` features ``(4dε', dδ')``. skdp sets
    ``ε' = ε/(4d)`` and ``δ' = δ/(2d)``: total (ε, δ/2), with the whole δ
    charged (the standard threshold leaves a factor-2 slack). The "1 +" and
    the ``/ε'`` are both needed: without ``/ε'`` (a common misreading) the
    refusal fails with probability ``½ δ'^ε'``, far above δ' for ε' < 1
    (ALGORITHMS.md §3.3, §9).

    **Budget split (public).** Ledger entries "stability tests" (ε/2, δ) and
    "scale releases" (ε/2, 0).

    **Default grid (public, data-independent).** Dwork and Lei choose the bin
    width ``ln(1 + 1/ln n)`` from ``n``, but under add/remove ``n`` is
    private, so skdp uses a fixed public default: base 2, width 1/8. The
    trade-off: the release error is a factor ``base^(w·Lap(1/ε'))``, so a
    finer grid is more accurate once it passes; but the IQR must stay in its
    bin for about ``1 + ln(2d/δ)/ε'`` changes, and a finer bin is left after
    fewer changes, so a finer grid needs more rows. Measured on normal data,
    one feature, δ = 1e-6: at ε = 1 width 1/8 passes from about 3·10^3 rows
    with a median relative error of about 27%, against about 60% for width
    1/4 and 100% for width 1; at ε = 0.1 it needs about 2·10^4 rows and the
    release noise dominates (``Lap(5)`` in log2 units). Width 1/8 (in log2)
    is close to Dwork–Lei's ``ln(1 + 1/ln n)`` (natural log) for
    ``n ≈ 10^5``. ``width`` and ``base`` are parameters; choose them from
    public knowledge, never from the data.

    **Cap.** ``A_j`` is computed as ``min(A_j, K)``, ``K = ceil(T +
    ln(1/β)/ε')``, ``β = 1e-9``, from windows of about ``3K/2`` order
    statistics around each quartile (selection, ``O(n + K log K)``);
    ``min(A_j, K) >= 2`` iff ``A_j >= 2``, so privacy is unchanged.

    **Noise.** Exact discrete Laplace on a power-of-two grid for the tests and
    for ``log_base(IQR)/w`` (:func:`skdp.mechanisms.laplace_mechanism`); the
    logarithm and the final ``base ** (w·y)`` are floating-point
    (post-processing of the exact release, but the log of the data is rounded
    before the release).

    **Public facts.** Non-empty data (validation rejects an empty ``X`` before
    charging) and the number of features.

    **transform** divides by ``scale_``. A refused feature has scale NaN, so
    its transformed column is NaN (downstream estimators then reject it
    loudly); use ``on_refuse="raise"`` to stop at ``fit`` instead.

    References
    ----------
    .. [1] C. Dwork and J. Lei, "Differential privacy and robust statistics",
       STOC 2009.
    .. [2] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
       Privacy", 2014, §7.1.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant
    >>> from skdp.preprocessing._iqr import IQRScale
    >>> X = np.random.default_rng(0).normal(0, 10, size=(100_000, 1))
    >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    >>> iqr = IQRScale(1.0, 1e-6, bounds=(-100, 100), accountant=acc,
    ...                random_state=0).fit(X)
    >>> iqr.refused_
    array([False])
    >>> bool(5 < iqr.scale_[0] < 40)  # the IQR is 13.5
    True
    >>> acc.total()
    (1.0, 1e-06)
    """

    _location_attribute = None
    _scale_attribute = "scale_"

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "bounds": ["array-like", tuple, None],
        "base": [Interval(Real, 1, None, closed="neither"), None],
        "width": [Interval(Real, 0, None, closed="neither"), None],
        "on_refuse": [StrOptions({"nan", "raise"})],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        epsilon=1.0,
        delta=1e-6,
        *,
        bounds=None,
        base=None,
        width=None,
        on_refuse="nan",
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.base = base
        self.width = width
        self.on_refuse = on_refuse
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Test the stability of each feature's IQR bin and release the IQR.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (non-empty, finite).
        y : None
            Ignored.

        Returns
        -------
        self : IQRScale

        Raises
        ------
        PTRRefusedError
            If ``on_refuse="raise"`` and a feature was refused (after
            charging the budget).
        """
        X = validate_private_data(self, X)
        n_features = X.shape[1]
        bounds = iqr_bounds(self.bounds, n_features)
        base, width = grid_parameters(self.base, self.width)
        eps_grid, threshold, cap = iqr_parameters(self.epsilon, self.delta, n_features)
        source = check_random_source(self.random_state)
        half = self.epsilon / 2.0
        self._charge(
            [("stability tests", half, self.delta), ("scale releases", half, 0.0)]
        )

        iqrs, distances = iqr_statistics(X, bounds, base, width, cap)
        scales, self.refused_ = iqr_release(
            iqrs, distances, eps_grid, threshold, base, width, random_state=source
        )
        # post-processing: an IQR of clipped data is at most upper - lower
        self.scale_ = np.minimum(scales, bounds[1] - bounds[0])
        handle_refusals(
            self.refused_,
            self.on_refuse,
            "IQR",
            getattr(self, "feature_names_in_", None),
        )
        return self


def iqr_bounds(bounds, n_features):
    """Per-feature bounds; ``None`` is the unbounded domain ``(-inf, inf)``."""
    if bounds is None:
        return np.full(n_features, -np.inf), np.full(n_features, np.inf)
    lower, upper = check_bounds(bounds, n_features)
    check_finite_width(lower, upper, "IQRScale")
    return lower, upper


def grid_parameters(base, width):
    """Resolve the public grid defaults (base 2, width 1/8)."""
    base = DEFAULT_BASE if base is None else float(base)
    width = DEFAULT_WIDTH if width is None else float(width)
    return base, width
