"""Private binning: uniform bins on public bounds, or private quantile bins."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from skdp.accounting import PrivacyCost
from skdp.accounting._composition import equal_shares
from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms import check_random_source
from skdp.preprocessing._encoders import one_hot, one_hot_feature_names
from skdp.sensitivity._moments import bin_indices
from skdp.stats._quantile_joint import joint_release
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._validation import check_required_bounds, validate_private_data

__all__ = ["PrivateKBinsDiscretizer"]


def private_quantile_edges(X, lower, upper, n_bins, epsilon, source):
    """Edges ``[L, q_1, ..., q_{k-1}, U]`` per feature from private quantiles.

    Each feature's ``n_bins - 1`` quantiles are one joint release with
    ``epsilon / d`` rounded down, so that the ``d`` releases fit in
    ``epsilon`` exactly (they come out ordered).
    """
    levels = np.arange(1, n_bins) / n_bins
    epsilon_each = equal_shares(epsilon, X.shape[1])
    edges = []
    for j in range(X.shape[1]):
        inner = joint_release(X[:, j], lower[j], upper[j], levels, epsilon_each, source)
        edges.append(np.concatenate(([lower[j]], inner, [upper[j]])))
    return edges


class PrivateKBinsDiscretizer(
    GroupsMixin, PrivateEstimatorMixin, TransformerMixin, BaseEstimator
):
    """Private counterpart of :class:`~sklearn.preprocessing.KBinsDiscretizer`.

    Bins each feature into ``n_bins`` intervals. ``strategy="uniform"``
    divides public bounds evenly and reads nothing (free);
    ``strategy="quantile"`` places the inner edges at private quantiles.

    Parameters
    ----------
    n_bins : int, default=5
        Number of bins per feature (public, at least 2). Bins are never
        merged or dropped, so the output width is public too.
    encode : {"onehot", "onehot-dense", "ordinal"}, default="onehot"
        ``"onehot"``: a sparse CSR matrix; ``"onehot-dense"``: a dense one;
        ``"ordinal"``: the bin index.
    strategy : {"uniform", "quantile"}, default="quantile"
        Where the inner edges lie (see above).
    bounds : tuple of (float or array-like, float or array-like)
        Public ``(lower, upper)`` per feature. Values outside fall in the
        first or last bin.
    epsilon : float, default=1.0
        ε of one ``fit`` with ``strategy="quantile"`` (not charged for
        ``"uniform"``).
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows with ``fit(..., groups=...)``
        (required then, refused without): see Notes.
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit`` (quantile strategy only).
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG.

    Attributes
    ----------
    bin_edges_ : ndarray of ndarray of shape (`n_features_in_`,)
        Each feature's ``n_bins + 1`` non-decreasing edges.
    n_bins_ : ndarray of shape (`n_features_in_`,)
        ``n_bins`` for every feature.
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    PrivateQuantile : The quantiles alone.

    Notes
    -----
    **Quantile edges.** The ``n_bins - 1`` inner edges of each feature are
    its private ``k/n_bins`` quantiles, released together by the joint
    exponential mechanism of :class:`PrivateQuantile` (``method="joint"``:
    gap utility of sensitivity 2 under add/remove one row, ties as atoms,
    outputs ordered) with ``ε / d`` per feature; basic composition over the
    features gives ε-DP. Equal edges give empty bins rather than fewer
    bins: the encoding's width never depends on the data.

    **Groups.** With ``groups``, uniform edges read nothing (free). For
    quantile edges each group keeps at most ``k`` rows
    (:func:`~skdp.utils._groups.kept_rows`), so one added group is at most
    ``k`` added rows, and the joint releases run as for one row at
    ``ε_r = ε / k`` (rounded down,
    :meth:`~skdp.utils._privacy_unit.PrivacyUnit.row_budget`): group
    privacy gives ``k ε_r <= ε`` for the group, and the stated ``ε`` is
    charged. For the exponential mechanism this is exactly the noise of a
    utility sensitivity ``2k`` at ``ε`` (a group's ``k`` rows move the gap
    utility by at most ``2k``, several ranks at once); the coarser joint
    grid of ``ε_r`` is public.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import PrivateKBinsDiscretizer
    >>> X = np.array([[5.0], [25.0], [95.0]])
    >>> est = PrivateKBinsDiscretizer(4, encode="ordinal", strategy="uniform",
    ...                               bounds=(0, 100))
    >>> est.fit_transform(X).ravel()
    array([0., 1., 3.])
    """

    _parameter_constraints = {
        "n_bins": [Interval(Integral, 2, None, closed="left")],
        "encode": [StrOptions({"onehot", "onehot-dense", "ordinal"})],
        "strategy": [StrOptions({"uniform", "quantile"})],
        "bounds": ["array-like", tuple, None],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_bins=5,
        *,
        encode="onehot",
        strategy="quantile",
        bounds=None,
        epsilon=1.0,
        max_rows_per_group=None,
        accountant=None,
        random_state=None,
    ):
        self.n_bins = n_bins
        self.encode = encode
        self.strategy = strategy
        self.bounds = bounds
        self.epsilon = epsilon
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    def _fit_cost(self, n_features=None):
        epsilon = self.epsilon if self.strategy == "quantile" else 0.0
        return PrivacyCost(epsilon, 0.0)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, groups=None):
        """Fix the bin edges (uniform) or release them (quantile).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit, with ``max_rows_per_group``.

        Returns
        -------
        self : PrivateKBinsDiscretizer
        """
        X = validate_private_data(self, X)
        d = X.shape[1]
        lower, upper = check_required_bounds(self.bounds, d, type(self).__name__)
        unit = self._privacy_unit(groups, X)
        source = check_random_source(self.random_state)
        if self.strategy == "uniform":
            self._charge([], unit)
            edges = [
                np.linspace(lo, hi, self.n_bins + 1)
                for lo, hi in zip(lower, upper, strict=True)
            ]
        else:
            label = unit.label(f"{self.n_bins - 1} quantiles of {d} feature(s)")
            eps_rows, _ = unit.row_budget(self, self.epsilon)
            self._charge([(label, self.epsilon, 0.0)], unit)
            (X,) = unit.bound(source, X)
            edges = private_quantile_edges(
                X, lower, upper, self.n_bins, eps_rows, source
            )
        self.bin_edges_ = np.empty(d, dtype=object)
        self.bin_edges_[:] = edges
        self.n_bins_ = np.full(d, self.n_bins)
        return self

    def transform(self, X):
        """Bin the data (post-processing of the edges; free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_binned : ndarray or sparse matrix
            Bin indices (``"ordinal"``) or their one-hot encoding, with
            ``n_bins * n_features`` columns.
        """
        check_is_fitted(self)
        X = validate_private_data(self, X, reset=False)
        codes = [bin_indices(X[:, j], e) for j, e in enumerate(self.bin_edges_)]
        if self.encode == "ordinal":
            return np.column_stack(codes).astype(float)
        onehot = one_hot(codes, self.n_bins_, X.shape[0])
        return onehot if self.encode == "onehot" else onehot.toarray()

    def inverse_transform(self, X):
        """Map ordinal bin indices to the centres of their bins.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Bin indices (``encode="ordinal"`` only).

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        if self.encode != "ordinal":
            raise ValueError("inverse_transform needs encode='ordinal'.")
        codes = np.asarray(X, dtype=int)
        centres = [(e[1:] + e[:-1]) / 2 for e in self.bin_edges_]
        return np.column_stack([centres[j][codes[:, j]] for j in range(codes.shape[1])])

    def get_feature_names_out(self, input_features=None):
        """Output feature names.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input feature names; by default ``feature_names_in_`` or
            ``x0, x1, ...``.

        Returns
        -------
        feature_names_out : ndarray of str
        """
        check_is_fitted(self)
        names = _check_feature_names_in(self, input_features)
        if self.encode == "ordinal":
            return names
        return one_hot_feature_names(names, [range(self.n_bins)] * len(names))
