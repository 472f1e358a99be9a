"""Private one-hot encoding: public categories, or categories found privately."""

from numbers import Integral, Real

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
from skdp.accounting._composition import equal_shares
from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms import check_random_source, partition_selection
from skdp.mechanisms._partition import (
    check_partition_parameters,
    partition_noise_std,
    partition_threshold,
)
from skdp.preprocessing._category_rows import _content, _partition_rows
from skdp.utils._cells import cell_key, distinct_cells, key_value
from skdp.utils._partitions import stated_partition_bound
from skdp.utils._privacy_unit import GroupsMixin

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


def _objects(keys):
    """An object array of the values of ``keys``."""
    out = np.empty(len(keys), dtype=object)
    out[:] = [key_value(key) for key in keys]
    return out


def _column_values(X, j, name):
    """Column ``j`` in its own dtype, or as canonical objects.

    A numeric or string column keeps its dtype (public: the array's, stated
    by the caller); ``-0.0`` becomes ``0.0`` and every NaN the same NaN.
    An object column is read cell by
    cell (:func:`_cell_key`) into an object array of canonical values
    (a Real other than int and float, e.g. a Fraction, as its float).
    """
    column = X[:, j]
    if column.dtype.kind == "f":
        # -0.0 becomes 0.0, every NaN (sign, payload) the one quiet NaN
        zero = column.dtype.type(0.0)
        return np.where(np.isnan(column), column.dtype.type(np.nan), column + zero)
    if column.dtype.kind in "biuU":
        return column
    if column.dtype.kind != "O":
        raise ValueError(
            f"column {name} has dtype {column.dtype}; the encoder takes "
            "numbers, strings or objects."
        )
    return _objects([cell_key(v, name) for v in column])


def _keys(column, name):
    """The sort keys of a column's cells (object columns), or the column."""
    if column.dtype.kind != "O":
        return column
    return [cell_key(v, name) for v in column]


def _distinct_counts(column, name):
    """Sorted distinct values of a column and their row counts."""
    if column.dtype.kind != "O":
        return np.unique(column, return_counts=True, equal_nan=True)
    order, _, counts = distinct_cells(column, name)
    return _objects(order), counts.astype(np.int64)


def _released_categories(values, keep):
    """The kept values, in the column's dtype; a string column's width is
    that of its longest *kept* value (a dropped value's length must not
    show)."""
    kept = values[keep]
    if kept.dtype.kind == "U":
        return np.array(kept.tolist(), dtype=str)
    return kept


def _codes(column, cats, name):
    """Index of each cell's category in ``cats``, ``-1`` where it has none."""
    if cats.size == 0:
        return np.full(column.shape[0], -1)
    same = column.dtype == cats.dtype != object
    if same or column.dtype.kind == cats.dtype.kind == "U":
        # no cast: a cast to the categories' string width would truncate
        codes = np.minimum(np.searchsorted(cats, column), cats.size - 1)
        found = cats[codes]
        known = found == column
        if column.dtype.kind == "f":
            known |= np.isnan(found) & np.isnan(column)
        return np.where(known, codes, -1)
    index = {key: i for i, key in enumerate(_keys(_as_objects(cats), name))}
    keys = _keys(_as_objects(column), name)
    return np.array([index.get(key, -1) for key in keys], dtype=np.intp)


def _as_objects(values):
    """An object array of the values (Python scalars), for key matching."""
    out = np.empty(values.shape[0], dtype=object)
    out[:] = values.tolist()
    return out


class PrivateOneHotEncoder(
    GroupsMixin, PrivateEstimatorMixin, TransformerMixin, BaseEstimator
):
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
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows with ``fit(..., groups=...)``
        (required then, refused without): see Notes.
    max_partitions_per_group, max_rows_per_partition : int or None, \
            default=None
        With groups, public bounds ``p`` on the values of a column a group
        adds rows to and ``c`` on the rows it adds to one value; ``None``:
        ``k``. Stated, they set the selection's threshold (Notes).
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit`` (``categories="auto"`` only).
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG.

    Attributes
    ----------
    categories_ : list of ndarray
        The categories of each column, sorted, exactly as the values they
        stand for: in the column's dtype for a numeric or string array, as
        Python objects for an object column or a list (Notes).
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
    is one that many rows share. Each column's ``(ε/d, δ/d)`` must be one
    the selection can run at (``ε/d >= 2**-32``, ``δ/d > 0``); otherwise
    ``fit`` refuses before charging.

    **Groups.** With ``groups`` a group of ``k`` rows may touch up to ``k``
    values of a column and add up to ``k`` to one count. Each group keeps
    at most ``k`` rows (:func:`~skdp.utils._groups.kept_rows`, hashing each
    cell's own canonical value, so the rows kept never depend on another
    group), so one added group is at most ``k`` added rows, and each
    column's selection runs as for one row at ``(ε_r, δ_r)``, the largest
    budget with ``k ε_r <= ε/d`` and ``δ_r Σ_{i<k} e^{i ε_r} <= δ/d``
    (:meth:`~skdp.utils._privacy_unit.PrivacyUnit.row_budget`; group
    privacy, Dwork and Roth 2014, Thm. 2.2, Vadhan 2017, Lemma 2.2): the
    noise scale is ``k d/ε`` (the L1 bound ``k`` of a group's counts) and
    ``τ`` is that of :func:`~skdp.mechanisms.partition_selection` at
    ``(ε_r, δ_r)``, whose proof serves unchanged. Laplace thresholding
    derived for the group directly (Desfontaines et al. 2022) needs, for a
    group touching ``p <= k`` new values of counts ``c_i`` with ``Σ c_i <=
    k``, ``Σ_i P(c_i + Z >= τ) <= δ/d``: at ``k = 5``, ``ε = 1``, ``δ =
    1e-6``, one column, the worst case over the ``c_i`` gives ``τ = 76``
    against the generic route's 78 (a single value, ``p = 1``: 72); only a
    stated bound ``p`` well below ``k`` would pay for a rule of its own.
    ``threshold_`` and ``noise_std_`` are those of ``(ε_r, δ_r)``. With
    public ``categories`` nothing is read (free).

    **Partitions per group.** With ``max_partitions_per_group = p`` or
    ``max_rows_per_partition = c`` stated, each group (after its ``k``
    rows) keeps, per column, its ``p`` values of smallest keyed hash of the
    value and at most ``c`` rows of each (:func:`~skdp.utils._partitions.
    partition_rows`, its own rows only). It then moves at most ``p`` counts
    by ``m_i <= c`` with ``Σ m_i <= L = min(k, p c)``: the noise scale is
    ``L d/ε`` and ``τ`` the smallest with ``Σ_i P(m_i + Z >= τ) <= δ/d``
    for the worst such ``m_i`` (Desfontaines et al. 2022, Laplace
    thresholding for a unit touching several partitions; exhaustively
    checked in ``tests/utils/test_partitions.py``). At ``ε =
    1``, ``δ = 1e-6``, ``k = 10``: ``τ = 156`` (``p = c = k``), 142 (``p =
    1``), 45 (``p = 3, c = 1``), 15 (``c = p = 1``), against 161 for ``k``
    alone (the generic route).

    **Values, cell by cell.** Nothing about a column is inferred from its
    cells as a whole. A numeric or string array keeps its dtype (the
    caller's declaration: build the array or DataFrame with the dtype you
    mean, e.g. ``read_csv(dtype=...)``), and its categories are its exact
    values in that dtype. A list, or an object column, is read cell by
    cell: each cell is a string, a bool, a number (kept exactly, one
    representative per value: an integer up to ``2**53`` is an int, so
    ``1.0`` and ``1`` are one category named ``1``; other Reals, e.g.
    fractions, are read as floats), NaN or missing (None, ``pandas.NA``),
    each a category of its own kind, sorted by kind (bool, number, str,
    NaN, missing) and then by value. One row of another kind adds (at most)
    its own category; it never changes how the other values are read.
    A cell of any other type (bytes, dates) is refused before the charge.
    Every kept training value encodes as itself.

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
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "max_partitions_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "max_rows_per_partition": [Interval(Integral, 1, None, closed="left"), None],
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
        max_rows_per_group=None,
        max_partitions_per_group=None,
        max_rows_per_partition=None,
        accountant=None,
        random_state=None,
    ):
        self.max_partitions_per_group = max_partitions_per_group
        self.max_rows_per_partition = max_rows_per_partition
        self.categories = categories
        self.epsilon = epsilon
        self.delta = delta
        self.handle_unknown = handle_unknown
        self.sparse_output = sparse_output
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.allow_nan = True
        return tags

    def _fit_cost(self, n_features=None):
        if isinstance(self.categories, list):
            return PrivacyCost(0.0, 0.0)
        return PrivacyCost(self.epsilon, self.delta)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, groups=None):
        """Fix the public categories, or discover them privately.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Categorical data: strings, numbers, booleans, None or NaN.
        y : None
            Ignored.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit, with ``max_rows_per_group``.

        Returns
        -------
        self : PrivateOneHotEncoder
        """
        columns = self._validate_columns(X, reset=True)
        d = len(columns)
        # the unit's checks need the rows' number and an in-memory array
        unit = self._privacy_unit(groups, np.empty((len(columns[0]), 0)))
        bound = stated_partition_bound(self, unit)
        if isinstance(self.categories, list):
            self.categories_ = self._public_categories(columns)
            self._charge([], unit)
            self.category_counts_, self.threshold_, self.noise_std_ = None, None, None
            return self
        eps, delta = self._column_budget(d, unit, bound)
        self.threshold_ = partition_threshold(eps, delta, bound)
        self.noise_std_ = partition_noise_std(eps, bound)
        source = check_random_source(self.random_state)
        label = unit.label(f"categories of {d} column(s)")
        self._charge([(label, self.epsilon, self.delta)], unit)
        kept = slice(None)  # one row: every row (and no digest to compute)
        if unit.groups is not None:
            content = [_content(column, j) for j, column in enumerate(columns)]
            kept = unit.kept(source, *content)
        rows = _partition_rows(unit, bound, source, kept, columns)
        self.categories_, self.category_counts_ = [], []
        for j, column in enumerate(c[r] for c, r in zip(columns, rows, strict=True)):
            values, counts = _distinct_counts(column, j)
            keep, noisy = partition_selection(
                counts, eps, delta, bound=bound, random_state=source
            )
            self.categories_.append(_released_categories(values, keep))
            self.category_counts_.append(noisy[keep])
        return self

    def _column_budget(self, d, unit, bound):
        """``(ε/d, δ/d)`` of each column's selection (rounded down, so that
        the ``d`` selections fit in ``(ε, δ)`` exactly), as for one row at the
        unit's row budget (for the stated ``bound`` if any); refused before
        the charge when the selection cannot run at it."""
        eps, delta = equal_shares(self.epsilon, d), equal_shares(self.delta, d)
        if bound is None:
            eps, delta = unit.row_budget(self, eps, delta)
        try:
            check_partition_parameters(eps, delta, bound)
        except ValueError as error:
            if unit.groups is None:
                raise ValueError(
                    f"epsilon={self.epsilon} and delta={self.delta} are split "
                    f"over {d} column(s), ({eps!r}, {delta!r}) each: {error}"
                ) from None
            raise ValueError(
                f"epsilon={self.epsilon} and delta={self.delta}, split over {d} "
                f"column(s) for groups of max_rows_per_group={unit.max_rows} "
                f"rows, leave ({eps!r}, {delta!r}) to each column's selection "
                f"run as for one row: {error} Lower max_rows_per_group or "
                "raise epsilon. Nothing was charged."
            ) from None
        return eps, delta

    def _validate_columns(self, X, reset):
        # A list's dtype would be numpy's inference over every cell (one
        # string row turns all numbers into strings): read it cell by cell.
        dtype = None if hasattr(X, "dtype") or hasattr(X, "dtypes") else object
        X = validate_data(self, X, dtype=dtype, reset=reset, ensure_all_finite=False)
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
        for j, given in enumerate(self.categories):
            # the public list's own values: never cast to the data's dtype
            # or string width, which would truncate a longer public category
            given = np.asarray(given, dtype=object).ravel()
            values, _ = _distinct_counts(_objects([cell_key(v, j) for v in given]), j)
            if all(isinstance(v, str) for v in values):
                values = np.array(values.tolist(), dtype=str)
            public.append(values)
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
            codes = _codes(column, cats, j)
            if self.handle_unknown == "error" and (codes < 0).any():
                raise ValueError(
                    f"column {j} has values outside the fitted categories; use "
                    "handle_unknown='ignore' to encode them as zeros."
                )
            all_codes.append(codes)
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
