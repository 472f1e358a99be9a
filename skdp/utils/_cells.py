"""One cell's canonical value: a function of the cell alone, never of its column.

numpy infers one dtype for a whole list (``[1, 2, 2.5]`` makes every value a
float, ``[1, "a"]`` every value a string), so one row could change how every
other row is read. Categories and labels are therefore read cell by cell
into ``(kind, canonical value)`` keys.
"""

import math
from numbers import Integral, Real

import numpy as np

__all__ = ["as_cells", "canonical_number", "cell_key", "distinct_cells", "key_value"]

#: Sort ranks of the kinds of value an object column may hold: categories
#: are sorted by ``(rank, value)``, so mixed kinds need no comparison.
_BOOL, _NUMBER, _STR, _NAN, _NONE = range(5)


def cell_key(value, name):
    """``(rank, canonical value)`` of one cell of an object column.

    The key is a function of the cell alone, never of the other rows, and
    two cells share a key exactly when they are the same value
    (:func:`canonical_number`). Booleans, strings, NaN and missing values
    (None, ``pandas.NA``, ``NaT``) are kinds of their own.
    """
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return (_NONE, 0)
    if isinstance(value, str):
        return (_STR, str(value))
    if isinstance(value, bool | np.bool_):
        return (_BOOL, bool(value))
    if isinstance(value, Integral):
        return (_NUMBER, canonical_number(int(value)))
    if isinstance(value, Real):
        value = float(value)
        if math.isnan(value):
            return (_NAN, 0)  # NaN != NaN: a key that equals itself
        return (_NUMBER, canonical_number(value))
    raise ValueError(
        f"column {name} holds {value!r} of type {type(value).__name__}; the "
        "encoder takes strings, numbers, booleans, None and NaN: convert the "
        "column (e.g. with str) before encoding."
    )


def canonical_number(value):
    """One representative per number, whatever its type: an integer of at
    most ``2**53`` in magnitude is an int (``1.0`` and ``1`` are one
    category, named ``1``); a larger one a float when a float holds it
    exactly, an int otherwise; anything else the float it is. Python
    compares ints and floats exactly, so distinct numbers stay distinct."""
    if isinstance(value, float) and not value.is_integer():
        return value  # inf included
    if abs(value) <= 2**53:
        return int(value)
    try:
        as_float = float(value)
    except OverflowError:  # an int beyond the floats
        return value
    return as_float if as_float == value else int(value)


def key_value(key):
    """The canonical value a key stands for."""
    return {_NAN: math.nan, _NONE: None}.get(key[0], key[1])


def _cell_kind(value):
    """str, bool, number or other: the kinds a label list may not mix."""
    if isinstance(value, str | np.str_):
        return "str"
    if isinstance(value, bool | np.bool_):
        return "bool"
    if isinstance(value, Real):
        return "number"
    return "other"


def as_cells(values):
    """A list or tuple of labels, read so that no cell changes how the others
    are read; any other array-like as it is (its dtype is the caller's).

    numpy picks one dtype for a whole list: ``[0, 1, "a"]`` is three strings,
    ``[True, False, 2]`` three ints, ``[2**60 + 1, 0.5]`` floats that merge
    neighbouring integers, and a date of another resolution changes every
    date's unit. So a list is handed to numpy only when its cells are of one
    kind (all strings, all booleans, or all integral numbers within int64,
    as ints); anything else (kinds mixed, a number that is
    not an integer, a date or another object) stays an object array of the
    cells, which scikit-learn's classification checks refuse before any
    charge, as invalid labels.
    """
    if not isinstance(values, list | tuple):
        return values
    kinds = {_cell_kind(value) for value in values}
    if kinds in ({"str"}, {"bool"}):
        return np.asarray(values)
    if kinds == {"number"}:
        numbers = [_as_python_number(value) for value in values]
        if all(isinstance(n, int) or n.is_integer() for n in numbers):
            try:
                return np.array([int(n) for n in numbers], dtype=np.int64)
            except OverflowError:
                pass  # beyond int64: as objects, refused as labels
    cells = np.empty(len(values), dtype=object)
    cells[:] = list(values)
    return cells


def _as_python_number(value):
    """A Python int or float of a Real cell (numpy scalars, Fractions)."""
    if isinstance(value, Integral):
        return int(value)
    return float(value)


def distinct_cells(cells, name):
    """The sorted distinct keys of an object column's cells, each cell's
    index among them, and their counts (:func:`cell_key`, cell by cell)."""
    keys = [cell_key(value, name) for value in cells]
    order = sorted(set(keys))
    index = {key: i for i, key in enumerate(order)}
    inverse = np.array([index[key] for key in keys], dtype=np.intp)
    return order, inverse, np.bincount(inverse, minlength=len(order))
