"""Keyed 64-bit mixing, a hash of each group label's value, and the keys of
the positions drawn in each group.

Contribution bounding (:mod:`skdp.utils._groups`) draws each group's
choice of kept rows from a key that mixes in its label, so groups with the
same rows still choose independently. That key must be a function of the
label's **value** alone:

* equal labels are one group, so they hash equally: ``1``, ``1.0`` and
  ``True`` (an integral number hashes as the integer, whatever its type: a
  long double or a ``Fraction`` beyond ``2**53`` too), ``-0.0`` and
  ``0.0``, a string or a ``timedelta64`` in a numpy array or in a list of
  objects;
* it never depends on the other labels: not on the array's dtype (a float
  array with one non-integral label still hashes ``3.0`` as ``3``; a list
  whose float array would round a numpy integer stays a list of objects,
  :func:`_kept_values`), nor on
  a string array's width, nor on a label's rank among the labels (the
  integer codes of :func:`~skdp.utils._group_labels.group_codes` shift when a
  group is added; hashing them would let one group move the others).

Two different labels may share a hash (a 64-bit collision, or Python's own
hash of an exotic object): they stay two groups, formed by equality; only
their keys coincide. Labels of types other than numbers, strings, bytes,
tuples and frozensets hash with Python's ``hash``, which for some types
changes between processes (``PYTHONHASHSEED``): still a function of the
value within a run, but seeded results are then reproducible only with a
fixed ``PYTHONHASHSEED``.
"""

import datetime
import math
import numbers

import numpy as np

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
# one tag per kind of label, so an integer and a string or a float's bits
# do not meet by construction (they could only by a 64-bit collision)
_INT, _FLOAT, _STR, _BYTES, _TUPLE, _SET, _OTHER, _DATE, _SPAN = (
    np.uint64(t) for t in range(1, 10)
)
_TWO_63 = 2.0**63
# salt of the positions' keys: not the stream of the content's hash
_POSITION_SALT = np.uint64(0x6A09E667F3BCC909)
_PY_MODULUS = np.uint64(2**61 - 1)  # Python's hash of an int is this residue


def _mix(h):
    """splitmix64's finaliser, in place on a uint64 array (wrapping)."""
    h ^= h >> np.uint64(30)
    h *= _M1
    h ^= h >> np.uint64(27)
    h *= _M2
    h ^= h >> np.uint64(31)
    return h


def _tagged(tag, bits):
    """``mix(tag * golden ^ bits)``: one hash per (kind, 64-bit word)."""
    h = np.asarray(bits, dtype=np.uint64) ^ np.uint64(int(tag) * int(_GOLDEN) % 2**64)
    return _mix(h)


def _float_hashes(values):
    """Hashes of float64 values: integral ones in int64's range as that
    integer (``-0.0`` is the integer 0), the others by their bits."""
    values = values.astype(np.float64)
    integral = (values == np.trunc(values)) & (np.abs(values) < _TWO_63)
    integral |= values == -_TWO_63
    as_int = np.where(integral, values, 0.0).astype(np.int64).view(np.uint64)
    return np.where(
        integral, _tagged(_INT, as_int), _tagged(_FLOAT, values.view(np.uint64))
    )


def _unsigned_hashes(values):
    """Hashes of uint64 values: below 2**63 as int64; above as the float they
    equal when there is one, else as Python's hash of the integer."""
    values = values.astype(np.uint64)
    small = values < np.uint64(2**63)
    as_float = values.astype(np.float64)
    exact = ~small & (as_float < 2.0**64)
    exact[exact] = as_float[exact].astype(np.uint64) == values[exact]
    out = _tagged(_OTHER, values % _PY_MODULUS)
    out[small] = _tagged(_INT, values[small])
    out[exact] = _tagged(_FLOAT, as_float[exact].view(np.uint64))
    return out


def _code_unit_hashes(units, lengths, tag):
    """Hashes of strings given as a matrix of code units and their lengths
    (units past a string's length, the array's padding, are ignored)."""
    h = _tagged(tag, lengths.astype(np.uint64))
    for j, column in enumerate(units.T):
        inside = j < lengths
        step = np.uint64((j + 1) * int(_GOLDEN) % 2**64)
        h = np.where(inside, _mix((h ^ column.astype(np.uint64)) + step), h)
    return h


def _string_hashes(strings):
    """Hashes of a numpy str (``U``) or bytes (``S``) array, width-free."""
    strings = np.ascontiguousarray(strings)
    lengths = np.char.str_len(strings).astype(np.int64)
    if strings.dtype.kind == "U":
        unit, tag = np.uint32, _STR
    else:
        unit, tag = np.uint8, _BYTES
    width = strings.dtype.itemsize // np.dtype(unit).itemsize
    units = strings.view(unit).reshape(strings.size, width)
    return _code_unit_hashes(units, lengths, tag)


def _time_hashes(times):
    """Hashes of datetime64 or timedelta64 values, in microseconds whatever
    their unit: numpy gives an array the finest unit of its labels, so the
    unit depends on the other labels (a day is not the same integer in days
    and in hours). Finer differences share a hash (a collision: harmless)."""
    if times.dtype.kind == "M":
        return _tagged(_DATE, times.astype("M8[us]").view(np.uint64))
    return _tagged(_SPAN, times.astype("m8[us]").view(np.uint64))


def _time_hash(value):
    """Hash of one date, datetime or time span (numpy or Python), as in an
    array of them; one with a time zone goes by Python's hash."""
    if getattr(value, "tzinfo", None) is not None:
        return _python_hash(value)
    if isinstance(value, (np.timedelta64, datetime.timedelta)):
        return _time_hashes(np.array([np.timedelta64(value)]))[0]
    return _time_hashes(np.array([np.datetime64(value)]))[0]


def _number_hash(value):
    """Hash of one Python or numpy number, equal for equal numbers."""
    if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
        if value.imag != 0:
            return _python_hash(value)
        value = value.real
    if isinstance(value, (bool, np.bool_, numbers.Integral)):
        value = int(value)
        if -(2**63) <= value < 2**63:
            return _tagged(_INT, np.array([value]).astype(np.int64).view(np.uint64))[0]
        if 0 <= value < 2**64:
            return _unsigned_hashes(np.array([value], dtype=np.uint64))[0]
    try:
        as_float = float(value)
    except (TypeError, ValueError, OverflowError):
        return _python_hash(value)
    if as_float == value:
        return _float_hashes(np.array([as_float]))[0]
    # an int of at most 309 digits (a Decimal("1e999999999") is not made one)
    exact = not isinstance(value, int) and math.isfinite(as_float)
    as_int = _integral_value(value) if exact else None
    if as_int is not None:  # a long double, Fraction or Decimal beyond 2**53
        return _number_hash(as_int)
    return _python_hash(value)


def _integral_value(value):
    """``value`` as a Python int if it is one exactly (else None): an
    integer that a long double (or a Fraction, a Decimal) holds but a double
    rounds hashes as in an integer array."""
    try:
        as_int = int(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return as_int if as_int == value else None


def _python_hash(value):
    """Python's hash, for what has no canonical bits here (equal values hash
    equally by Python's contract)."""
    return _tagged(_OTHER, np.array([hash(value) % 2**64], dtype=np.uint64))[0]


def _object_hash(value):
    """Hash of one label of any hashable type (see the module docstring)."""
    # times first: numpy's timedelta64 is an integer type (numbers.Integral),
    # and read as a number it hashed unlike the same label in a timedelta64
    # array (and raised in int(), leaving the fallback key 0)
    if isinstance(
        value, (np.datetime64, np.timedelta64, datetime.date, datetime.timedelta)
    ):
        return _time_hash(value)
    if isinstance(value, (bool, np.bool_, numbers.Number)):
        return _number_hash(value)
    if isinstance(value, str):
        return _string_hashes(np.array([value], dtype=str))[0]
    if isinstance(value, bytes):
        return _string_hashes(np.array([value], dtype=bytes))[0]
    if isinstance(value, tuple):
        h = _tagged(_TUPLE, np.array([len(value)], dtype=np.uint64))
        for item in value:
            h = _mix((h ^ _object_hash(item)) + _GOLDEN)
        return h[0]
    if isinstance(value, frozenset):
        total = np.zeros(1, dtype=np.uint64)
        for item in value:  # a wrapping sum: the same for any order
            total += _object_hash(item)
        return _tagged(_SET, total)[0]
    return _python_hash(value)


def label_hashes(labels):
    """Hash of every label's value (uint64), equal for equal labels.

    ``labels`` is a 1-D array as :func:`~skdp.utils._group_labels.as_group_labels`
    returns it, already checked (no missing label).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.utils._label_hashes import label_hashes
    >>> a = label_hashes(np.array([3.0, -0.0, 2.5]))
    >>> b = label_hashes(np.array([3, 0]))
    >>> bool(a[0] == b[0]), bool(a[1] == b[1])
    (True, True)
    """
    kind = labels.dtype.kind
    if kind == "b":
        return _float_hashes(labels.astype(np.float64))
    if kind == "i":
        return _tagged(_INT, labels.astype(np.int64).view(np.uint64))
    if kind == "u":
        return _unsigned_hashes(labels)
    if kind == "f" and labels.dtype.itemsize <= 8:
        # a long double goes as an object: rounding it to a double would
        # hash it unlike the same label in a list of objects
        return _float_hashes(labels)
    if kind in "mM":
        return _time_hashes(labels)
    if kind in "US":
        return _string_hashes(labels)
    values = labels.tolist()
    try:
        first = dict.fromkeys(values)  # by equality: equal labels, one entry
        for value in first:
            first[value] = _object_hash(value)
        hashes = [first[v] for v in values]
    except Exception:  # a hash that changed since the labels were checked
        hashes = [_guarded_hash(v) for v in values]
    return np.fromiter(hashes, dtype=np.uint64, count=len(values))


def _guarded_hash(value):
    """:func:`_object_hash`, or 0 for a label whose hash fails (this runs
    after the charge: a label that hashed when checked and fails now, which
    Python's contract excludes, gets a public key instead of an error)."""
    try:
        return _object_hash(value)
    except Exception:
        return np.uint64(0)


def _missing(labels):
    """Whether any label is missing (None, NaN or NaT); a label that cannot
    be compared with itself (``Decimal("sNaN")`` raises) counts as missing."""
    if labels.dtype.kind in "fc":
        return bool(np.isnan(labels).any())
    if labels.dtype.kind in "mM":
        return bool(np.isnat(labels).any())
    if labels.dtype.kind == "O":
        return any(_missing_object(v) for v in labels)
    return False


def _missing_object(value):
    """Whether one Python label is None or unequal to itself (NaN-like)."""
    try:
        return value is None or bool(value != value)
    except Exception:
        return True


def _kept_values(labels, items):
    """Whether numpy's array of a list has the list's values: a float array
    rounds big integers, and a date array of a finer unit than an item's
    wraps far dates (kept only if every item is a numpy date of its unit)."""
    if labels.ndim != 1:
        return True
    if labels.dtype.kind in "fc":
        if labels.dtype.itemsize > (8 if labels.dtype.kind == "f" else 16):
            return False  # a long double array compares ints inexactly
        # numpy compares a numpy integer with a float after rounding it to a
        # float (uint64(2**63 + 5) == 2.0**63): compare its exact value
        return all(
            kept == _exact_value(item)
            for kept, item in zip(labels.tolist(), items, strict=True)
        )
    if labels.dtype.kind in "mM":  # no unit changed (numpy compares wrapped)
        return all(getattr(v, "dtype", None) == labels.dtype for v in items)
    return True


def _exact_value(item):
    """A numpy integer as a Python int (exact comparisons); else ``item``."""
    if isinstance(item, np.integer) and not isinstance(item, np.timedelta64):
        return int(item)
    return item


def _group_keys(seed, label_hash):
    """Each group's key: a keyed mix of (seed, its label's hash)."""
    return _mix(label_hash ^ _mix(np.full(1, np.uint64(seed) ^ _POSITION_SALT)))


def _position_keys(group_key, rank):
    """Key of canonical position ``rank`` in a group of key ``group_key``
    (uint64 arrays, wrapping); it never reads the rows' content. Within a
    group the keys are distinct: ``rank * golden`` (odd), the ``xor`` and
    the mix are bijections of 64-bit words."""
    return _mix(group_key ^ (rank.astype(np.uint64) * _GOLDEN))


def _label_hash_by_code(labels, codes, n_codes):
    """The hash of each code's label (one representative row per code: equal
    labels hash equally, so which row represents it does not matter)."""
    representative = np.zeros(n_codes, dtype=np.intp)
    representative[codes] = np.arange(codes.size)
    return label_hashes(labels[representative])
