"""Private one-hot encoding: public categories, or categories found privately."""

from numbers import Real

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import (
    _check_feature_names_in,
    check_is_fitted,
    validate_data,
)

from skdp.accounting import PrivacyCost
from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms import check_random_source, partition_selection
from skdp.mechanisms._partition import partition_noise_std, partition_threshold

__all__ = ["PrivateOneHotEncoder", "one_hot", "one_hot_feature_names"]


def one_hot(codes, widths, n_rows):
    """CSR one-hot matrix: column ``j``'s codes (``-1``: none) in its own
    block of ``widths[j]`` output columns, blocks side by side."""
    offsets = np.concatenate(([0], np.cumsum(widths)))
    rows = [np.flatnonzero(c >= 0) for c in codes]
    cols = [c[r] + off for c, r, off in zip(codes, rows, offsets, strict=False)]
    rows, cols = np.concatenate([[], *rows]), np.concatenate([[], *cols])
    return sparse.csr_matrix(
        (np.ones(rows.size), (rows.astype(np.intp), cols.astype(np.intp))),
        shape=(n_rows, int(offsets[-1])),
    )


def one_hot_feature_names(names, values):
    """``"<column>_<value>"`` for every value of every column, in order."""
    return np.asarray(
        [f"{name}_{v}" for name, vs in zip(names, values, strict=True) for v in vs],
        dtype=object,
    )


def _column_values(X, j, name):
    """Column ``j`` as a float or str array; refuses mixed or missing values."""
    column = X[:, j]
    if column.dtype.kind in "biuf":
        column = column.astype(float)
        if not np.all(np.isfinite(column)):
            raise ValueError(
                f"column {name} contains NaN or infinity; impute it with a "
                "data-independent rule (or a public category) before encoding."
            )
        return column + 0.0  # -0.0 becomes 0.0: one category, whatever the rows
    if all(isinstance(v, str) for v in column):
        return column.astype(str)
    if all(isinstance(v, Real) and not isinstance(v, bool) for v in column):
        return _column_values(column.astype(float)[:, None], 0, name)
    raise ValueError(
        f"column {name} mixes strings with other values or holds missing "
        "values; make it all strings or all numbers first (e.g. fill missing "
        "values with a public placeholder such as 'missing')."
    )


class PrivateOneHotEncoder(PrivateEstimatorMixin, TransformerMixin, BaseEstimator):
    """Private counterpart of :class:`~sklearn.preprocessing.OneHotEncoder`.

    With public ``categories`` (a list per column) encoding reads nothing
    private and charges nothing. With ``categories="auto"`` the categories
    are discovered privately: a value is kept when its noisy row count
    reaches a threshold (partition selection), so rare values, which would
    single people out, are never revealed.

    Parameters
    ----------
    categories : "auto" or list of array-like, default="auto"
        ``"auto"``: discover each column's categories privately. A list: the
        public categories of each column (sorted here); nothing is charged.
    epsilon : float, default=1.0
        ε of one ``fit`` with ``categories="auto"``, split evenly over the
        columns.
    delta : float, default=1e-6
        δ of one ``fit`` with ``categories="auto"``, split evenly over the
        columns.
    handle_unknown : {"ignore", "error"}, default="ignore"
        What ``transform`` does with a value outside ``categories_``:
        ``"ignore"`` encodes it as all zeros (the default here, unlike
        scikit-learn, because private discovery leaves rare training values
        out), ``"error"`` raises.
    sparse_output : bool, default=True
        Return a CSR matrix (as scikit-learn does) or a dense array.
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit`` (``categories="auto"`` only).
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG.

    Attributes
    ----------
    categories_ : list of ndarray
        The categories of each column, sorted (str or float arrays).
    category_counts_ : list of ndarray or None
        With ``categories="auto"``, the noisy row counts of the kept
        categories (released with them, at no extra cost); None otherwise.
    threshold_ : int or None
        The noisy count a category needed to be kept.
    noise_std_ : float or None
        Standard deviation of the discrete Laplace noise on each count
        (public), or None for public categories.
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    skdp.mechanisms.partition_selection : The selection mechanism.

    Notes
    -----
    **Discovery.** Column ``j``'s distinct values are counted exactly; each
    count gets discrete Laplace noise of scale ``d/ε`` and the value is kept
    when the noisy count reaches ``τ`` (:func:`~skdp.mechanisms.
    partition_selection`, with ``(ε/d, δ/d)`` per column). One row adds 1 to
    one value of each column, so every column's selection is
    ``(ε/d, δ/d)``-DP under add/remove one row, and the ``d`` selections
    compose to ``(ε, δ)``. Values that appear in few rows (below ``τ``,
    about ``(d/ε) ln(1/δ)``) are unlikely to be kept; they are "unknown" at
    ``transform``. The released categories are data values: a value kept
    is one that many rows share.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.preprocessing import PrivateOneHotEncoder
    >>> X = np.array([["a"]] * 500 + [["b"]] * 500 + [["rare"]])
    >>> enc = PrivateOneHotEncoder(random_state=0).fit(X)
    >>> enc.categories_
    [array(['a', 'b'], dtype='<U1')]
    >>> enc.transform([["b"], ["rare"]]).toarray()
    array([[0., 1.],
           [0., 0.]])
    """

    _parameter_constraints = {
        "categories": [StrOptions({"auto"}), list],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "handle_unknown": [StrOptions({"ignore", "error"})],
        "sparse_output": ["boolean"],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        categories="auto",
        *,
        epsilon=1.0,
        delta=1e-6,
        handle_unknown="ignore",
        sparse_output=True,
        accountant=None,
        random_state=None,
    ):
        self.categories = categories
        self.epsilon = epsilon
        self.delta = delta
        self.handle_unknown = handle_unknown
        self.sparse_output = sparse_output
        self.accountant = accountant
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.allow_nan = False
        return tags

    def _fit_cost(self, n_features=None):
        if isinstance(self.categories, list):
            return PrivacyCost(0.0, 0.0)
        return PrivacyCost(self.epsilon, self.delta)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fix the public categories, or discover them privately.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Categorical data (strings or numbers, no missing values).
        y : None
            Ignored.

        Returns
        -------
        self : PrivateOneHotEncoder
        """
        columns = self._validate_columns(X, reset=True)
        d = len(columns)
        if isinstance(self.categories, list):
            self.categories_ = self._public_categories(columns)
            self._charge([])
            self.category_counts_, self.threshold_, self.noise_std_ = None, None, None
            return self
        eps, delta = self.epsilon / d, self.delta / d
        self.threshold_ = partition_threshold(eps, delta)
        self.noise_std_ = partition_noise_std(eps)
        source = check_random_source(self.random_state)
        self._charge([(f"categories of {d} column(s)", self.epsilon, self.delta)])
        self.categories_, self.category_counts_ = [], []
        for column in columns:
            values, counts = np.unique(column, return_counts=True)
            keep, noisy = partition_selection(counts, eps, delta, random_state=source)
            # rebuilt from the kept values alone: the column's string width
            # (that of its longest value, kept or not) must not show
            self.categories_.append(
                np.array(values[keep].tolist(), dtype=values.dtype.kind)
            )
            self.category_counts_.append(noisy[keep])
        return self

    def _validate_columns(self, X, reset):
        X = validate_data(self, X, dtype=None, reset=reset, ensure_all_finite=False)
        names = getattr(self, "feature_names_in_", None)
        return [
            _column_values(X, j, repr(names[j]) if names is not None else j)
            for j in range(X.shape[1])
        ]

    def _public_categories(self, columns):
        if len(self.categories) != len(columns):
            raise ValueError(
                f"categories has {len(self.categories)} lists for "
                f"{len(columns)} columns; give one list per column."
            )
        public = []
        for given, column in zip(self.categories, columns, strict=True):
            # the public list's own types: never cast to the data's string
            # width, which would truncate a longer public category
            kind = str if column.dtype.kind == "U" else float
            public.append(np.unique(np.asarray(given, dtype=kind)))
        return public

    def transform(self, X):
        """One-hot encode with the fitted categories (free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_encoded : sparse matrix or ndarray of shape (n_samples, n_outputs)
            ``n_outputs`` is the total number of categories.
        """
        check_is_fitted(self)
        columns = self._validate_columns(X, reset=False)
        n = columns[0].shape[0]
        all_codes = []
        for j, (column, cats) in enumerate(zip(columns, self.categories_, strict=True)):
            # no cast: a cast to the categories' string width would truncate
            codes = np.minimum(np.searchsorted(cats, column), max(cats.size - 1, 0))
            known = (cats[codes] == column) if cats.size else np.zeros(n, bool)
            if self.handle_unknown == "error" and not known.all():
                raise ValueError(
                    f"column {j} has values outside the fitted categories; use "
                    "handle_unknown='ignore' to encode them as zeros."
                )
            all_codes.append(np.where(known, codes, -1))
        widths = [cats.size for cats in self.categories_]
        out = one_hot(all_codes, widths, n)
        return out if self.sparse_output else out.toarray()

    def get_feature_names_out(self, input_features=None):
        """Output feature names, ``"<column>_<category>"``.

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
        return one_hot_feature_names(names, self.categories_)
