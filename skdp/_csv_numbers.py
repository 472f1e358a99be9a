"""Plain numbers of a CSV block, parsed exactly by vectorised numpy passes.

The engine of :mod:`skdp._csv`'s fast path. A *plain* field (an optional
leading ``-``, at most 15 digits and at most one ``.``) is the integer of
its digits divided by a power of ten, both exact doubles, so the one
rounding of the division gives the correctly rounded value of the decimal:
the same double as ``float(cell)``. Every other field is marked irregular
and left to the caller.
"""

from typing import NamedTuple

import numpy as np

__all__ = ["Parsed", "Workspace", "parse_fast_block"]

#: More digits than this and the integer of the digits may not be exact.
_MAX_PLAIN_DIGITS = 15

_COMMA, _NEWLINE, _DOT, _MINUS, _QUOTE = b',\n.-"'
# _TERMS[16 * place + digit] = digit * 10**place: place 0-15 counts the
# bytes after the digit in its field, a dot included; "digits" 10-15 stand
# for the other bytes of a plain field (separators, dot, minus) and give 0.
_TERMS = np.zeros(256, dtype=np.int64)
for _place in range(16):
    _TERMS[16 * _place : 16 * _place + 10] = np.arange(10) * 10**_place
_POW10 = 10 ** np.arange(_MAX_PLAIN_DIGITS + 2, dtype=np.int64)
_BYTE_INDEX = np.arange(1 << 18, dtype=np.int64).astype(np.uint8)


class Workspace:
    """Arrays reused from block to block: fresh memory for every block's
    temporaries costs as much as the parsing (page faults)."""

    def __init__(self):
        self.arrays = {}

    def get(self, name, n, dtype):
        array = self.arrays.get(name)
        if array is None or array.size < n:
            # blocks differ a little in size: room for somewhat larger ones
            array = self.arrays[name] = np.empty(n + n // 4, dtype=dtype)
        return array[:n]


def _tidy(block):
    """Drop what ``strip`` makes irrelevant in a quote-free block: spaces
    next to a separator."""
    block = b"\n" + block
    for pair, single in ((b" ,", b","), (b", ", b","), (b" \n", b"\n")):
        while pair in block:
            block = block.replace(pair, single)
    while b"\n " in block:
        block = block.replace(b"\n ", b"\n")
    return block[1:]


def _drop_blank_lines(block):
    block = b"\n" + block
    while b"\n\n" in block:
        block = block.replace(b"\n\n", b"\n")
    return block[1:]


def _field_ends(codes, n_fields):
    """Index of every field's separator, or None if a row is ragged or the
    quotes are left to the :mod:`csv` module (see :func:`_outside_quotes`)."""
    ends = np.flatnonzero((codes == _COMMA) | (codes == _NEWLINE))
    quotes = np.flatnonzero(codes == _QUOTE)
    if quotes.size:
        ends = _outside_quotes(codes, ends, quotes)
        if ends is None:
            return None
    newline = np.flatnonzero(codes[ends] == _NEWLINE)
    if ends.size % n_fields or not np.array_equal(
        newline, np.arange(n_fields - 1, ends.size, n_fields)
    ):
        return None
    return ends


def _outside_quotes(codes, ends, quotes):
    """The separators outside quoted fields, or None unless every quote is
    where the csv module reads it as quoting and no quoted field holds a
    newline.

    The block starts outside quotes, so quotes open and close in turn. An
    opening quote must start a field (or follow a closing one: ``""`` in a
    quoted field is a quote); a closing quote must end the field or be
    followed by a quote. Anything else (a quote inside an unquoted field,
    text after a closing quote) is left to the csv module.
    """
    if quotes.size % 2:
        return None
    opening, closing = quotes[0::2], quotes[1::2]
    before = codes[opening - 1]  # a block ends with a newline: right at 0
    after = codes[closing + 1]
    for neighbours in (before, after):
        if not np.all(
            (neighbours == _COMMA) | (neighbours == _NEWLINE) | (neighbours == _QUOTE)
        ):
            return None
    inside = np.searchsorted(quotes, ends) % 2 == 1
    if np.any(codes[ends[inside]] == _NEWLINE):
        return None
    return ends[~inside]


def _byte_index(n):
    """0, 1, ..., 255, 0, 1, ... (the byte positions modulo 256), n long."""
    global _BYTE_INDEX
    if _BYTE_INDEX.size < n:
        _BYTE_INDEX = np.arange(n, dtype=np.int64).astype(np.uint8)
    return _BYTE_INDEX[:n]


def _plain_values(codes, ends, work):
    """``(values, irregular)`` per field: a plain field's exact value (NaN
    if empty), and whether the field is not plain.

    Each digit adds ``digit * 10**d`` with ``d`` the bytes after it in its
    field, modulo 256 (uint8, exact for a plain field) and summed modulo
    2**64 (int64, exact for a plain field's at most 16 places); for a field
    with a dot, the digits before it got one place too many, undone per
    field. A field that is not plain is irregular whatever these say.
    """
    lengths = np.diff(ends, prepend=-1) - 1
    places = np.repeat(ends.astype(np.uint8), lengths + 1)
    places -= _byte_index(codes.size)
    places -= 1  # bytes after each byte in its field, modulo 256
    places <<= 4
    digit = np.subtract(codes, ord("0"), out=work.get("digit", codes.size, np.uint8))
    places |= digit & np.uint8(15)
    index = work.get("index", codes.size, np.intp)
    np.copyto(index, places)
    sums = np.take(_TERMS, index, out=work.get("sums", codes.size, np.int64))
    np.cumsum(sums, out=sums)
    mantissas = np.diff(sums[ends], prepend=0)
    valid = (digit < 10) | (codes == _DOT) | (codes == _MINUS)
    valid |= (codes == _COMMA) | (codes == _NEWLINE)
    irregular = np.zeros(ends.size, dtype=bool)
    irregular[np.searchsorted(ends, np.flatnonzero(~valid))] = True
    n_digits = lengths.copy()
    decimals = _undo_dots(codes, ends, mantissas, n_digits, irregular)
    values = mantissas.astype(np.float64)
    values /= _POW10[decimals]
    minus = np.flatnonzero(codes == _MINUS)
    minus_fields = np.searchsorted(ends, minus)
    leading = minus == ends[minus_fields] - lengths[minus_fields]
    irregular[minus_fields[~leading]] = True
    n_digits[minus_fields] -= 1
    values[minus_fields[leading]] *= -1.0
    irregular |= (n_digits > _MAX_PLAIN_DIGITS) | ((n_digits <= 0) & (lengths > 0))
    values[lengths == 0] = np.nan
    return values, irregular


def _undo_dots(codes, ends, mantissas, n_digits, irregular):
    """Fix the fields with a dot in place; returns the decimals per field."""
    dots = np.flatnonzero(codes == _DOT)
    fields = np.searchsorted(ends, dots)
    irregular[fields[1:][fields[1:] == fields[:-1]]] = True
    n_digits[fields] -= 1
    decimals = np.zeros(ends.size, dtype=np.intp)
    after = np.minimum(ends[fields] - dots - 1, _MAX_PLAIN_DIGITS)
    decimals[fields] = after
    whole, fraction = np.divmod(mantissas[fields], _POW10[after])
    mantissas[fields] = whole // 10 * _POW10[after] + fraction
    return decimals


class Parsed(NamedTuple):
    """A block parsed with numpy: per field its value and whether it is
    irregular (left to the csv module and :func:`parse_cell`)."""

    block: bytes
    ends: np.ndarray
    values: np.ndarray
    irregular: np.ndarray


def parse_fast_block(block, n_fields, work):
    """Parse a block with numpy; None if its rows are ragged or its quotes
    are not plain quoted fields (the csv module then reads it).

    ``block`` is whole lines, each ended by ``\\n``, without a ``\\r``
    (:func:`skdp._csv._blocks` turns every line end into ``\\n``)."""
    # one-byte searches (memchr) before any copy; spaces stay next to a
    # quote: ' "5"' is not a quoted field
    if b'"' not in block and b" " in block:
        block = _tidy(block)
    codes = np.frombuffer(block, dtype=np.uint8)
    ends = _field_ends(codes, n_fields)
    blank_row_is_a_row = ends is not None and n_fields == 1
    if (ends is None or blank_row_is_a_row) and b"\n\n" in b"\n" + block:
        block = _drop_blank_lines(block)
        codes = np.frombuffer(block, dtype=np.uint8)
        ends = _field_ends(codes, n_fields)
    if ends is None:
        return None
    if ends.size == 0:
        values, irregular = np.empty(0), np.empty(0, dtype=bool)
    else:
        values, irregular = _plain_values(codes, ends, work)
    shape = (-1, n_fields)
    return Parsed(block, ends, values.reshape(shape), irregular.reshape(shape))
