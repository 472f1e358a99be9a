"""Private PCA from one noisy second-moment matrix (Analyze Gauss)."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.extmath import svd_flip
from sklearn.utils.validation import check_is_fitted

from skdp.base import PrivateEstimatorMixin
from skdp.linear_model._release import gaussian_fit_cost, noisy_gram
from skdp.mechanisms import check_random_source, gaussian_noise_multipliers
from skdp.preprocessing._affine import saturated
from skdp.sensitivity import exact_clipped_gram
from skdp.sensitivity._linear import check_term_size
from skdp.utils._dask import row_statistic, validate_rows
from skdp.utils._validation import validate_private_data

__all__ = ["PrivatePCA"]


def clipped_moments_gram(rows, max_norm):
    """The exact Gram of ``[clip(x), c] / (c sqrt(2))``: additive over rows."""
    return exact_clipped_gram(rows, max_norm, intercept=True)[0]


def second_moments(matrix, max_norm):
    """Count, mean and covariance from the noisy Gram of ``[clip(x), c]/(c√2)``.

    Post-processing: the count is at least 1, the covariance is symmetric.
    The released sums are divided by the count before the units (``2c`` and
    ``2c²``) are restored, so no intermediate grows with the row count.
    """
    d = matrix.shape[0] - 1
    count = max(2.0 * matrix[d, d], 1.0)
    mean = (matrix[:d, d] / count) * (2.0 * max_norm)
    second = (matrix[:d, :d] / count) * (2.0 * max_norm**2)
    return count, mean, second - np.outer(mean, mean)


class PrivatePCA(
    PrivateEstimatorMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    BaseEstimator,
):
    """Private counterpart of :class:`~sklearn.decomposition.PCA`.

    Releases the row count, the sum and the second-moment matrix of rows
    clipped to a public L2 norm in one Gaussian release (Analyze Gauss,
    Dwork, Talwar, Thakurta and Zhang 2014) and takes the principal axes of
    the private covariance (post-processing).

    Parameters
    ----------
    n_components : int or None, default=None
        Number of components kept; ``None`` keeps all.
    epsilon : float, default=1.0
        ε of one ``fit``.
    delta : float, default=1e-6
        δ of one ``fit``, ``0 < delta < 1``.
    max_norm : float, default=1.0
        Public bound on a row's L2 norm, in ``[1e-150, 1e150]``: rows are
        scaled down to it. Scale
        the features by public ranges first (the noise in data units grows
        like ``max_norm²``).
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit``; ``None`` uses the default accountant at fit time.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG.

    Attributes
    ----------
    components_ : ndarray of shape (`n_components_`, `n_features_in_`)
        Private principal axes, by decreasing private variance.
    explained_variance_ : ndarray of shape (`n_components_`,)
        Private variance along each axis (at least 0).
    explained_variance_ratio_ : ndarray of shape (`n_components_`,)
        Its share of the private total variance.
    mean_ : ndarray of shape (`n_features_in_`,)
        Private mean of the clipped rows.
    n_samples_ : float
        Private row count (noisy, at least 1).
    n_components_ : int
        Number of components kept.
    noise_std_ : float
        Standard deviation of the noise on each entry of the released
        second-moment matrix, in units of ``2 max_norm²``.
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    skdp.linear_model.PrivateLinearRegression : The same release with targets.

    Notes
    -----
    **Statistic.** Each row is clipped to ``clip(x) = x min(1, c/||x||)``,
    ``c = max_norm``, extended by the constant ``c`` and divided by
    ``c sqrt(2)``: ``q = [clip(x), c] / (c sqrt(2))`` has ``||q|| <= 1``. The
    upper triangle of ``Σ q qᵀ`` holds the count (``n/2``), the sum
    (``Σ clip(x)/(2c)``) and the second moments (``Σ clip(x) clip(x)ᵀ/(2c²)``)
    together (:func:`~skdp.sensitivity.exact_clipped_gram`, exact sums). The
    sums are integers on a public grid, so on a Dask input the blocks' sums
    add up to the in-memory ones and the release is the same for a seed.

    **Sensitivity (add/remove one row).** A row moves ``Σ q qᵀ`` by ``q qᵀ``,
    of Frobenius norm ``||q||² <= 1``; the upper triangle keeps a subset of
    its entries, so the L2 sensitivity is 1 (Dwork et al. 2014 state ``1``
    for unit-norm rows under the same relation; replace-one would double
    it). Brute-forced in the tests of the exact sums. It holds for the
    floats at every magnitude the range of ``max_norm`` allows: the clip
    factor is applied with the grid's unit as one normal float on the row
    scaled by a power of two, so a huge row next to ``max_norm=1e-150`` no
    longer moves the sum by 2.29 through a subnormal factor rounded up.

    **Privacy.** One Gaussian mechanism with the analytic calibration
    (Balle and Wang 2018), exact discrete noise on a power-of-two grid;
    ``rho`` is recorded as for the linear models. Everything after it
    (centring, eigendecomposition, sign convention) is post-processing and
    never raises on finite input.

    References
    ----------
    .. [1] C. Dwork, K. Talwar, A. Thakurta and L. Zhang, "Analyze Gauss:
       Optimal Bounds for Privacy-Preserving Principal Component Analysis",
       STOC 2014.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant
    >>> from skdp.decomposition import PrivatePCA
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50_000, 1)) @ [[0.6, 0.6, 0.0]] / 3
    >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    >>> pca = PrivatePCA(1, accountant=acc, random_state=0).fit(X)
    >>> np.round(np.abs(pca.components_), 1)
    array([[0.7, 0.7, 0. ]])
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "max_norm": [Interval(Real, 0, None, closed="neither")],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=None,
        *,
        epsilon=1.0,
        delta=1e-6,
        max_norm=1.0,
        accountant=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.max_norm = max_norm
        self.accountant = accountant
        self.random_state = random_state

    def _fit_cost(self, n_features=None):
        return gaussian_fit_cost(self.epsilon, self.delta)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Charge ``(epsilon, delta)`` and release the principal axes.

        Parameters
        ----------
        X : array-like or Dask collection of shape (n_samples, n_features)
            Training data (finite). A Dask array or DataFrame is read on its
            cluster (see :ref:`dask`).
        y : None
            Ignored.

        Returns
        -------
        self : PrivatePCA
        """
        X = validate_rows(self, X, order="C")
        d = X.shape[1]
        n_components = d if self.n_components is None else self.n_components
        if n_components > d:
            raise ValueError(
                f"n_components={n_components} must be at most the number of "
                f"features ({d})."
            )
        check_term_size((d + 1) ** 2)
        if not (1e-150 <= self.max_norm <= 1e150):
            raise ValueError(
                f"max_norm={self.max_norm} is out of range: the second moments "
                "are in units of max_norm², which must be a normal float; use "
                "1e-150 <= max_norm <= 1e150 (scale the features instead)."
            )
        (multiplier,) = gaussian_noise_multipliers(self.epsilon, self.delta, [1.0])
        source = check_random_source(self.random_state)
        cost = gaussian_fit_cost(self.epsilon, self.delta)
        self._charge([("count, sums and second moments", cost)])

        # nothing after the charge may warn: at a large max_norm a noisy mean
        # far beyond it (a tiny count) overflows its square
        with np.errstate(all="ignore"):
            gram = row_statistic(X, clipped_moments_gram, self.max_norm)
            matrix = noisy_gram(gram, d + 1, multiplier, source)
            count, self.mean_, covariance = second_moments(matrix, self.max_norm)
            values, vectors = np.linalg.eigh(covariance)
        order = np.argsort(values)[::-1]
        values = np.maximum(values[order], 0.0)
        _, components = svd_flip(None, vectors[:, order].T, u_based_decision=False)
        total = values.sum()
        self.n_samples_ = float(count)
        self.n_components_ = n_components
        self.components_ = components[:n_components]
        self.explained_variance_ = values[:n_components]
        self.explained_variance_ratio_ = (
            values[:n_components] / total if total > 0 else np.zeros(n_components)
        )
        self.noise_std_ = float(multiplier)
        self._covariance = covariance
        return self

    def get_covariance(self):
        """The private covariance matrix of the clipped rows (free).

        All of it, not only the kept components: post-processing of the one
        release (symmetric; it may be indefinite where the noise dominates).

        Returns
        -------
        covariance : ndarray of shape (`n_features_in_`, `n_features_in_`)
        """
        check_is_fitted(self)
        return self._covariance.copy()

    @property
    def _n_features_out(self):
        return self.n_components_

    def transform(self, X):
        """Project onto the private principal axes (post-processing; free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray of shape (n_samples, `n_components_`)
        """
        check_is_fitted(self)
        X = validate_private_data(self, X, reset=False)
        with np.errstate(over="ignore", invalid="ignore"):
            projected = (X - self.mean_) @ self.components_.T
        # finite rows give finite output (see saturated); inf - inf in the
        # product of a row of ±1.8e308 is NaN: the largest double of its sign
        # would be a guess, so such a coordinate is 0 (a public rule)
        projected[np.isnan(projected)] = 0.0
        return saturated(projected)

    def inverse_transform(self, X):
        """Map projections back to feature space (post-processing; free).

        Parameters
        ----------
        X : array-like of shape (n_samples, `n_components_`)

        Returns
        -------
        X_original : ndarray of shape (n_samples, `n_features_in_`)
        """
        check_is_fitted(self)
        return np.asarray(X, dtype=float) @ self.components_ + self.mean_
