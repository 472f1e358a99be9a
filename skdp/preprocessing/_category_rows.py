"""The rows each column's category selection counts, with groups.

A cell stands for itself in contribution bounding by numbers computed from
the cell alone (:func:`_content`); with stated partition bounds each group
keeps, per column, a bounded number of values and rows per value
(:func:`_partition_rows`).
"""

import hashlib

import numpy as np

from skdp.utils._cells import distinct_cells
from skdp.utils._partitions import partition_rows, seeds_of

__all__ = []


def _digests(values):
    """Two int64 words per value: 128 bits of BLAKE2b of its bytes."""
    words = [hashlib.blake2b(value, digest_size=16).digest() for value in values]
    return np.frombuffer(b"".join(words), dtype=np.int64).reshape(len(words), 2)


def _content(column, name):
    """Numbers that stand for each cell in contribution bounding.

    A numeric column is its own content; a string or object cell is the
    128-bit digest of its canonical value (:func:`cell_key`), a function of
    the cell alone, so a group's kept rows never depend on another group's
    values (a code among the column's distinct values would).
    """
    if column.dtype.kind in "biuf":
        return column
    if column.dtype.kind == "U":
        distinct, inverse = np.unique(column, return_inverse=True)
        raw = [v.encode("utf-8", "surrogatepass") for v in distinct.tolist()]
        return _digests(raw)[inverse.ravel()]
    order, inverse, _ = distinct_cells(column, name)
    return _digests([_key_bytes(key) for key in order])[inverse]


def _key_bytes(key):
    """The bytes of a cell's key ``(rank, canonical value)``, for any value:
    an int in hexadecimal (Python refuses ints of more than 4300 digits in
    decimal, which made ``repr`` raise after the charge), a float by its
    ``hex``, a string as UTF-8 (lone surrogates kept)."""
    rank, value = key
    if isinstance(value, str):
        kind, payload = "s", value.encode("utf-8", "surrogatepass")
    elif isinstance(value, bool):
        kind, payload = "b", bytes([value])
    elif isinstance(value, int):
        kind, payload = "i", format(value, "x").encode()
    else:
        kind, payload = "f", float(value).hex().encode()
    return f"{rank}{kind}".encode() + payload


def _partition_rows(unit, bound, source, kept, columns):
    """Each column's rows after the ``k``-row bound (``kept``) and, with a
    stated ``bound``, its ``p`` values and ``c`` rows per value per group."""
    if bound is None:
        return [kept] * len(columns)
    kept = np.asarray(kept)
    groups = unit.groups[kept]
    content = [_content(column[kept], j) for j, column in enumerate(columns)]
    seeds = seeds_of(source)
    return [
        kept[partition_rows(groups, part, bound, seeds, content)] for part in content
    ]
