"""Median with noise scaled to its smooth sensitivity (Nissim–Raskhodnikova–Smith)."""

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

from skdp.accounting import PrivacyCost
from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms import cauchy_noise, check_random_source, laplace_mechanism
from skdp.preprocessing._affine import AffineTransformMixin
from skdp.preprocessing._ptr import lower_medians
from skdp.sensitivity import median_smooth_sensitivity
from skdp.utils._validation import check_required_bounds, validate_private_data

__all__ = [
    "SmoothSensitivityMedian",
    "smooth_parameters",
    "smooth_release",
    "smooth_sensitivities",
]

#: ``S_K`` keeps the floor ``e^{-βK}(U - L)``; K is chosen so that the floor is
#: at most this fraction of ``U - L``.
SMOOTH_FLOOR = 1e-12

#: Largest per-feature ε for which the NRS Laplace constants are used.
LAPLACE_MAX_EPSILON = 1.0


def smooth_parameters(epsilon, delta, n_features, noise):
    """Public per-feature constants of :class:`SmoothSensitivityMedian`.

    Returns
    -------
    eps_feature : float
        The ε each feature's release uses: ``ε/d`` (Cauchy) or
        ``min(ε/d, 1)`` (Laplace).
    beta : float
        Smoothing parameter: ``ε_f/6`` (Cauchy) or ``ε_f/(2 ln(2d/δ))``
        (Laplace).
    multiplier : float
        Noise scale per unit of smooth sensitivity: ``6/ε_f`` or ``2/ε_f``.
    cap : int
        Public truncation ``K = ceil(ln(1/1e-12)/β)``.
    """
    if noise == "cauchy":
        eps_feature = epsilon / n_features
        beta = eps_feature / 6.0
        multiplier = 6.0 / eps_feature
    else:
        eps_feature = min(epsilon / n_features, LAPLACE_MAX_EPSILON)
        beta = eps_feature / (2.0 * math.log(2.0 * n_features / delta))
        multiplier = 2.0 / eps_feature
    cap = max(1, math.ceil(math.log(1.0 / SMOOTH_FLOOR) / beta))
    return eps_feature, beta, multiplier, cap


def smooth_sensitivities(X, beta, lower, upper, cap):
    """``S_K`` of the lower median of every column (selection of a window)."""
    return np.array(
        [
            median_smooth_sensitivity(X[:, j], beta, (lower[j], upper[j]), cap=cap)
            for j in range(X.shape[1])
        ]
    )


def smooth_release(medians, scales, noise, *, random_state):
    """Release ``medians + scales * Z``, Z standard Laplace or Cauchy.

    Laplace: one vector query of ``medians / scales`` with per-coordinate
    scale 1 (exact discrete Laplace on a ``2**-20``-fine grid), rescaled.
    Cauchy: floating-point ``scales * tan(pi (U - 1/2))`` added to the medians.
    """
    medians = np.asarray(medians, dtype=float)
    scales = np.asarray(scales, dtype=float)
    if noise == "cauchy":
        return medians + cauchy_noise(
            scales, size=medians.shape, random_state=random_state
        )
    size = medians.size
    unit = laplace_mechanism(
        medians / scales, float(size), float(size), random_state=random_state
    )
    return np.atleast_1d(unit) * scales


class SmoothSensitivityMedian(
    AffineTransformMixin,
    PrivateEstimatorMixin,
    OneToOneFeatureMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Per-feature median with noise scaled to its smooth sensitivity.

    No proposal is needed (unlike :class:`PTRMedian`) and nothing is refused:
    the noise is proportional to the β-smooth sensitivity ``S`` of the lower
    median, which is small on data that are stable around the median and
    ``U - L`` (times ``e^{-βK}``) in the worst case. ``transform`` subtracts
    the medians.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total ε of one ``fit``, over all features (see Notes for the Laplace
        variant's cap at 1 per feature).
    delta : float, default=1e-6
        Total δ of one ``fit``, ``0 < delta < 1``. Ignored (and not charged)
        with ``noise="cauchy"``, which is pure ε-DP.
    bounds : tuple of (float or array-like, float or array-like)
        Public ``(lower, upper)`` bounds, scalars or per-feature arrays.
    noise : {"laplace", "cauchy"}, default="laplace"
        Laplace noise gives (ε, δ)-DP with light tails; Cauchy noise gives pure
        ε-DP with heavy tails (no mean or variance).
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit``; ``None`` uses the default accountant at fit time.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG. An int gives
        reproducible (and therefore not secret) noise for tests and examples.

    Attributes
    ----------
    median_ : ndarray of shape (`n_features_in_`,)
        The private medians, clipped to the bounds.
    lower_, upper_ : ndarray of shape (`n_features_in_`,)
        The public bounds per feature.
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    PTRMedian : Private median by propose-test-release (needs a proposal).

    Notes
    -----
    **Smooth sensitivity.** For the lower median ``x_(m)``, ``m = ceil(n/2)``,
    of the data clipped to ``[L, U]``, under add/remove-one-row neighbours,
    ``S*_β(x) = max_{k=0..n} e^{-βk} A(x, k)`` with ``A(x, k)`` the largest
    local sensitivity within ``k`` steps (``k = 0`` included;
    :func:`skdp.sensitivity.median_smooth_sensitivity`,
    ALGORITHMS_ADDREMOVE.md §2.4, brute-force checked). skdp uses the
    truncation ``S_K = max(S*_β, e^{-βK}(U - L))`` for the public
    ``K = ceil(ln(1e12)/β)``: a maximum of a β-smooth upper bound and a
    constant is again one, and it is computed from about ``K + 1`` order
    statistics by selection (``O(n + K log K)``). It overestimates ``S*`` only
    where ``S* < 1e-12 (U - L)``.

    **Privacy.** NRS (2007) need, for neighbours, ``|f(x) - f(x')| <= S(x)``
    and ``S(x) <= e^β S(x')``; both hold for ``S_K`` under add/remove, so
    their constants carry over (ALGORITHMS_ADDREMOVE.md §4.2). Per feature,
    with ``ε_f`` its share:

    * ``noise="laplace"``: ``β = ε_f / (2 ln(2/δ_f))``, release
      ``f(x) + (2 S / ε_f) Lap(1)``, (ε_f, δ_f)-DP (NRS Lemma 2.9 with
      α = ε/2; ALGORITHMS.md §2.3). NRS prove this for ε ≤ 1 (the dilation
      step needs β small), so **ε_f = min(ε/d, 1)**: a larger request is
      capped and only ``d·min(ε/d, 1)`` is charged (``epsilon_spent_`` shows
      it). Using the ε = 1 constants for ε > 1 is sound ((1, δ)-DP implies
      (ε, δ)-DP) but wastes budget that a re-derivation could use; we did not
      re-derive it. ``δ_f = δ/d``.
    * ``noise="cauchy"``: ``β = ε_f/6``, release ``f(x) + (6 S / ε_f) C``,
      C standard Cauchy, pure ε_f-DP (NRS, Cauchy-type admissible noise with
      γ = 2; ALGORITHMS.md §2.3). ``ε_f = ε/d``.

    The β is tied to the noise: computing ``S`` with a larger β than the
    noise's constants allow breaks privacy.

    **Budget split (public).** Equal shares over the ``d`` features; one
    ledger entry "smooth-sensitivity releases".

    **Noise and floating point.** The Laplace variant releases
    ``f(x)/s`` with skdp's exact discrete Laplace of scale 1 on a fine
    power-of-two grid and multiplies by ``s = 2S/ε_f`` (post-processing);
    the NRS analysis is for continuous Laplace noise, which this approximates
    to about ``2**-20`` relative. The Cauchy variant is floating-point
    (:func:`skdp.mechanisms.cauchy_noise`: exact uniforms, inverse CDF in
    floats, ``f(x) + s·C`` rounded), so it is *not* protected against
    Mironov's (2012) low-order-bit attack; skdp has no exact discrete Cauchy.

    **Accuracy.** The noise multipliers (2/ε, 6/ε) are large and ``S >= LS``:
    on well-behaved data :class:`PTRMedian` (with a good proposal) or the
    exponential-mechanism quantile is usually more accurate; this estimator's
    advantage is needing no proposal and never refusing. Report the Cauchy
    variant's error as a median absolute error (it has no variance).

    **transform** subtracts ``median_``; ``inverse_transform`` adds it back.

    References
    ----------
    .. [1] K. Nissim, S. Raskhodnikova and A. Smith, "Smooth Sensitivity and
       Sampling in Private Data Analysis", STOC 2007.
    .. [2] J. Near and C. Abuah, "Programming Differential Privacy", ch. 7.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant
    >>> from skdp.preprocessing._smooth import SmoothSensitivityMedian
    >>> X = np.random.default_rng(0).normal(50, 10, size=(10_000, 1))
    >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    >>> ssm = SmoothSensitivityMedian(1.0, 1e-6, bounds=(0, 100), accountant=acc,
    ...                               random_state=0).fit(X)
    >>> bool(abs(ssm.median_[0] - 50) < 2)
    True
    >>> acc.total()
    (1.0, 1e-06)
    """

    _location_attribute = "median_"
    _scale_attribute = None

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "bounds": ["array-like", tuple, None],
        "noise": [StrOptions({"laplace", "cauchy"})],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        epsilon=1.0,
        delta=1e-6,
        *,
        bounds=None,
        noise="laplace",
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.noise = noise
        self.accountant = accountant
        self.random_state = random_state

    def _fit_cost(self, n_features=None):
        delta = self.delta if self.noise == "laplace" else 0.0
        return PrivacyCost(self.epsilon, delta)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Release the median of each feature.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (non-empty, finite).
        y : None
            Ignored.

        Returns
        -------
        self : SmoothSensitivityMedian
        """
        X = validate_private_data(self, X)
        n_features = X.shape[1]
        lower, upper = check_required_bounds(
            self.bounds, n_features, type(self).__name__
        )
        if self.noise == "laplace" and self.delta == 0:
            raise ValueError(
                "noise='laplace' needs delta > 0; use noise='cauchy' for pure "
                "epsilon-DP."
            )
        eps_f, beta, multiplier, cap = smooth_parameters(
            self.epsilon, self.delta, n_features, self.noise
        )
        _check_scale_range(lower, upper, beta, multiplier, cap)
        source = check_random_source(self.random_state)
        delta = self.delta if self.noise == "laplace" else 0.0
        self._charge([("smooth-sensitivity releases", n_features * eps_f, delta)])

        sensitivities = smooth_sensitivities(X, beta, lower, upper, cap)
        medians = lower_medians(X, lower, upper)
        released = smooth_release(
            medians, multiplier * sensitivities, self.noise, random_state=source
        )
        self.median_ = np.clip(released, lower, upper)
        self.lower_, self.upper_ = lower, upper
        return self


def _check_scale_range(lower, upper, beta, multiplier, cap):
    """Noise scales lie in ``[m e^{-βK}(U - L), m (U - L)]``: both must be usable.

    The largest must be a finite float and the smallest must keep
    ``bound / scale`` finite (public checks, before any charge).
    """
    with np.errstate(over="ignore"):
        largest = multiplier * (upper - lower)
        smallest = largest * math.exp(-beta * cap)
        worst = np.maximum(np.abs(lower), np.abs(upper)) / smallest
    if not np.all(np.isfinite(largest)):
        raise ValueError(
            "SmoothSensitivityMedian: the bounds are too wide for this epsilon "
            f"(the largest noise scale {multiplier:g} * (upper - lower) overflows); "
            f"got ({lower}, {upper})."
        )
    if not np.all(np.isfinite(worst) & (smallest > 0)):
        raise ValueError(
            "SmoothSensitivityMedian: the bounds are too far from 0 for their "
            f"width (bound / smallest noise scale overflows); got ({lower}, {upper})."
        )
