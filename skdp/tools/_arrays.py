"""Rows, axes and charges shared by the functions of :mod:`skdp.tools`.

The privacy unit is a row: the first axis of the array (each value of a 1-D
array is a row). A statistic over ``axis=0`` is one value per column; over
``axis=None`` one value for the whole array, which for several columns is a
statistic of per-row values (each row's mean, sum or count) or is refused.
``axis=1`` would release one value per row: their number is the number of
rows, which is not public under add/remove neighbours, so it is refused.
"""

import numpy as np

from skdp.accounting._composition import equal_shares
from skdp.accounting._default import charged_default
from skdp.utils._function_unit import stated_for_unit

__all__ = [
    "Rows",
    "as_rows",
    "charge_function",
    "check_output_options",
    "equal_shares",
    "mechanism_of",
]


class Rows:
    """A 2-D float view of an input and how to shape the statistic back.

    ``X`` has one row per privacy unit; ``per_column`` says whether the
    result keeps one value per column (``axis=0`` of a 2-D input) or is a
    scalar (a 1-D input, or ``axis=None`` of one column); ``ndim`` is the
    input's number of dimensions (for ``keepdims``).
    """

    def __init__(self, X, per_column, ndim=2):
        self.X = X
        self.per_column = per_column
        self.ndim = ndim

    @property
    def n_columns(self):
        return self.X.shape[1]

    def shape(self, values, keepdims=False, dtype=None):
        """``values`` of shape (..., n_columns) as numpy would return them.

        ``keepdims=True`` keeps the reduced axes with size one (numpy's
        ``keepdims``): ``(..., 1)`` for a 1-D input, ``(..., 1, n_columns)``
        for ``axis=0`` and ``(..., 1, 1)`` for ``axis=None`` of a 2-D one.
        ``dtype`` casts the released values (post-processing), as numpy's
        ``dtype`` sets the type of its result; a scalar is then that
        numpy scalar type.
        """
        values = np.asarray(values, dtype=float)
        if keepdims:
            shaped = values if self.ndim == 1 else values[..., None, :]
        elif self.per_column:
            shaped = values
        else:
            shaped = values[..., 0]
        if dtype is None:
            return shaped if shaped.ndim else float(shaped)
        with np.errstate(all="ignore"):  # a non-finite release cast: no warning
            cast = shaped.astype(dtype)
        return cast if cast.ndim else cast[()]


def check_output_options(function, dtype=None, keepdims=False):
    """``(dtype, keepdims)`` checked before any charge: a numeric numpy dtype
    (or None) and a boolean, as numpy takes them."""
    if dtype is not None:
        try:
            dtype = np.dtype(dtype)
        except TypeError as exc:
            raise TypeError(
                f"{function}: dtype={dtype!r} is not a numpy data type. "
                "Nothing was charged."
            ) from exc
        if dtype.kind not in "iufc":
            raise TypeError(
                f"{function}: dtype={dtype} is not numeric; the release is a "
                "number. Pass a float, integer or complex dtype (or None). "
                "Nothing was charged."
            )
    if not isinstance(keepdims, bool | np.bool_):
        raise TypeError(
            f"{function}: keepdims must be True or False; got {keepdims!r}. "
            "Nothing was charged."
        )
    return dtype, bool(keepdims)


def as_rows(array, axis, function, *, allow_nan=False, whole_array=False):
    """The rows of ``array`` for ``axis``, or an error naming the fix.

    Parameters
    ----------
    array : array-like of shape (n_samples,) or (n_samples, n_features)
    axis : None, 0 or -1 (1-D), 1 (refused)
    function : str
        The calling function's name, for messages.
    allow_nan : bool, default=False
        Keep NaN (the ``nan*`` functions); otherwise the estimator refuses it.
    whole_array : bool, default=False
        Whether ``axis=None`` over several columns is a statistic of the
        rows' own values (the caller reduces each row); otherwise refused.

    Returns
    -------
    rows : Rows
        Raises ``ValueError`` before any charge on an unsupported axis.
    """
    values = np.asarray(array)
    if values.ndim == 0 or values.ndim > 2:
        raise ValueError(
            f"{function} takes a 1-D array (one value per row) or a 2-D array "
            f"(rows by columns); got {values.ndim} dimension(s). Reshape it so "
            "that the first axis holds one row per person."
        )
    if values.dtype.kind not in "biuf":
        raise ValueError(
            f"{function} needs numbers; got an array of dtype {values.dtype}."
        )
    values = values.astype(float, copy=False)
    if values.ndim == 1:
        if axis not in (None, 0, -1):
            raise ValueError(
                f"{function}: axis={axis!r} is out of range for 1-D input."
            )
        return Rows(values[:, None], per_column=False, ndim=1)
    if axis in (1, -1):
        raise ValueError(
            f"{function}: axis=1 releases one value per row, and the number of "
            "rows is not public under add/remove-one-row neighbours. Use axis=0 "
            "(one value per column) or axis=None."
        )
    if axis not in (None, 0):
        raise ValueError(f"{function}: axis={axis!r} is out of range for 2-D input.")
    if axis == 0 or values.shape[1] == 1:
        return Rows(values, per_column=axis == 0)
    if not whole_array:
        raise ValueError(
            f"{function}: axis=None over {values.shape[1]} columns is not "
            "supported: a row holds several values, so it is not one row per "
            "value. Use axis=0 (one value per column), or pass array.ravel() "
            "if every value belongs to a different person."
        )
    return Rows(values, per_column=False)


def mechanism_of(delta):
    """``"gaussian"`` for ``delta > 0``, else ``"laplace"`` (pure ε-DP)."""
    return "gaussian" if delta > 0 else "laplace"


def charge_function(accountant, items, unit=None):
    """Charge ``(label, PrivacyCost)`` items atomically, before the data is read.

    ``accountant=None`` is the default accountant in effect now (as for an
    estimator's ``fit``; refused in a worker process where none is in effect).
    ``unit`` (a :class:`~skdp.utils._privacy_unit.PrivacyUnit`, or None for
    one row) is named in the labels and carried by the costs.
    """
    if unit is not None:
        items = stated_for_unit(items, unit)
    if accountant is None:
        accountant = charged_default("An skdp.tools function")
    if not hasattr(accountant, "spend_many"):
        raise TypeError(
            "accountant must be a skdp.BudgetAccountant or None; got "
            f"{type(accountant).__name__}."
        )
    accountant.spend_many(items)
