"""Mechanism outputs normalised into numeric rows or hashable keys."""

from dataclasses import dataclass
from numbers import Real

import numpy as np

_FAST_SCALARS = {
    type(None),
    int,
    float,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float32,
    np.float64,
}


# --------------------------------------------------------------------------
# Outputs: normalisation into numeric rows or hashable keys
# --------------------------------------------------------------------------
def _scalar_key(value):
    if value is None:
        return None
    if isinstance(value, bool | np.bool_):
        return float(value)
    if isinstance(value, Real | np.number):
        return float(value)
    if isinstance(value, np.ndarray | list | tuple):
        return tuple(_scalar_key(v) for v in np.asarray(value, dtype=object).ravel())
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


@dataclass
class _Outputs:
    """A batch of mechanism outputs.

    ``values`` is an (n, d) float array and ``none`` an (n,) mask when every
    output is None, a number or a fixed-length numeric vector; otherwise
    ``keys`` holds one hashable key per output.
    """

    raw: object
    values: np.ndarray | None
    none: np.ndarray | None
    keys: list | None

    def __len__(self):
        return len(self.none) if self.keys is None else len(self.keys)

    def key_of_row(self, row, is_none):
        if is_none:
            return None
        if row.shape[0] == 1:
            return float(row[0])
        return tuple(float(v) for v in row)

    def unique_keys(self):
        """Return (list of distinct keys, inverse index array)."""
        if self.values is None:
            index = {}
            inverse = np.empty(len(self.keys), dtype=np.intp)
            for i, key in enumerate(self.keys):
                inverse[i] = index.setdefault(key, len(index))
            return list(index), inverse
        if self.values.shape[1] == 1 and not np.isnan(self.values[~self.none]).any():
            # one column: code None as the smallest value, then a 1-D unique
            col = self.values[:, 0].copy()
            col[self.none] = -np.inf
            has_none = bool(self.none.any())
            if has_none and np.isneginf(col[~self.none]).any():
                col = None  # -inf is a real output too: use the general path
            if col is not None:
                _uniq, first, inverse = np.unique(
                    col, return_index=True, return_inverse=True
                )
                keys = [
                    self.key_of_row(self.values[i], bool(self.none[i])) for i in first
                ]
                return keys, inverse.ravel()
        with np.errstate(invalid="ignore"):
            nan = np.isnan(self.values)
        block = np.column_stack(
            [self.none, np.where(nan, 0.0, self.values), nan]
        ).astype(np.float64)
        _rows, first, inverse = np.unique(
            block, axis=0, return_index=True, return_inverse=True
        )
        keys = [self.key_of_row(self.values[i], bool(self.none[i])) for i in first]
        return keys, inverse.ravel()


def _is_numeric_key(key):
    return isinstance(key, float) or (
        isinstance(key, tuple) and all(isinstance(v, float) for v in key)
    )


def _normalise(raw):
    """Turn raw outputs (a list or a numeric array) into an ``_Outputs``."""
    if isinstance(raw, np.ndarray) and raw.dtype.kind in "biuf":
        values = raw.astype(np.float64).reshape(raw.shape[0], -1)
        return _Outputs(raw, values, np.zeros(raw.shape[0], dtype=bool), None)
    items = list(raw)
    kinds = set(map(type, items))
    if kinds and kinds <= _FAST_SCALARS:  # numbers and None: no per-item keys
        none = np.fromiter((x is None for x in items), dtype=bool, count=len(items))
        values = np.fromiter(
            (np.nan if x is None else x for x in items),
            dtype=np.float64,
            count=len(items),
        )
        if not none.all():
            return _Outputs(items, values[:, None], none, None)
    keys = [_scalar_key(item) for item in items]
    present = [k for k in keys if k is not None]
    if present and all(_is_numeric_key(k) for k in present):
        widths = {1 if isinstance(k, float) else len(k) for k in present}
        if len(widths) == 1 and (width := widths.pop()) > 0:
            values = np.full((len(keys), width), np.nan)
            none = np.zeros(len(keys), dtype=bool)
            for i, key in enumerate(keys):
                if key is None:
                    none[i] = True
                else:
                    values[i] = key
            return _Outputs(items, values, none, None)
    if not present:  # every output is None
        return _Outputs(
            items, np.zeros((len(keys), 1)), np.ones(len(keys), dtype=bool), None
        )
    return _Outputs(items, None, None, keys)


def _concat(batches):
    raws = list(batches)
    if all(isinstance(b, np.ndarray) and b.dtype.kind in "biuf" for b in raws):
        flat = [b.reshape(b.shape[0], -1) for b in raws]
        if len({f.shape[1] for f in flat}) == 1:
            return _normalise(np.concatenate(flat))
    items = []
    for b in raws:
        items.extend(list(b))
    return _normalise(items)
