"""Contribution bounding: at most ``k`` rows per privacy unit (group).

With ``groups`` the privacy unit is a group of rows (a person, a household):
neighbouring data sets add or remove one whole group. A group's influence on
a release grows with its number of rows, so each estimator first keeps at
most a public ``k = max_rows_per_group`` rows of every group and states its
sensitivities for a group of at most ``k`` rows.

The rule that picks the kept rows must depend on the group's own rows only,
or adding one group could change which rows of another group are kept (and
the release would move by more than the stated bound). It must also give the
same rows for any order of the input, or the release would depend on the
order (which may itself encode another group). :func:`kept_rows` keeps the
``k`` rows of each group with the smallest keyed hash of the row's content,
ties broken by the content itself:

* the hash ``H(seed, content)`` is a keyed 64-bit mix (splitmix64's
  finaliser, applied column after column) of the rows' **bit patterns**: a
  row is its values as stored, so ``-0.0`` and ``0.0`` (or two NaN payloads)
  are different contents, and the order is a total order on contents;
* rows of one group with the same hash are ordered by their content (bit
  patterns, column by column); rows with the same content are the same row
  as far as any release can tell, so which copy is kept changes nothing;
* the seed is public or drawn from the estimator's random source, never
  from the data.

The kept set of a group is therefore a function of the seed and the
multiset of the group's rows: the same for any row order, and unchanged by
adding or removing any other group. The indices are returned in increasing
order, so the kept rows keep the input's order.

**One pass.** Group labels become integer codes (an offset for integers in
a compact range; a sort of the distinct labels otherwise), and each row's
code, the leading bits of its hash and its index are packed into one 64-bit
word: a single ``np.sort`` (numpy's vectorised sort) orders every group's
rows by hash, and a row's rank in its group is its position minus its
group's start. Only a group whose truncated hashes tie across the ``k``-th
place is re-sorted by its full hash and content (rare; exact). When the
codes and indices leave fewer than 16 bits for the hash, a lexicographic
sort on (code, full hash) is used instead (slower, same rows), with the same
re-sort of the groups tied at the cut only.
"""

import numpy as np
from scipy import sparse

__all__ = [
    "as_group_labels",
    "group_blocks",
    "group_codes",
    "kept_rows",
    "row_hashes",
]

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIN_HASH_BITS = 16


def _mix(h):
    """splitmix64's finaliser, in place on a uint64 array (wrapping)."""
    h ^= h >> np.uint64(30)
    h *= _M1
    h ^= h >> np.uint64(27)
    h *= _M2
    h ^= h >> np.uint64(31)
    return h


def _bit_columns(column):
    """A column (1-D or 2-D, numeric) as uint64 bit patterns, one row each."""
    values = np.asarray(column)
    if values.ndim == 1:
        values = values[:, None]
    if values.dtype.kind == "f":
        values = values.astype(np.float64, copy=False)
    elif values.dtype.kind in "biu":
        values = values.astype(np.int64, copy=False)
    else:
        raise TypeError(f"contribution bounding hashes numbers, got {values.dtype}")
    return np.ascontiguousarray(values).view(np.uint64)


def _sparse_row_hashes(matrix, h):
    """Mix a CSR matrix's rows into ``h``: each stored ``(column, value)`` is
    hashed and a row's hashes are added (an order-free combination)."""
    matrix = sparse.csr_matrix(matrix)
    values = np.ascontiguousarray(matrix.data, dtype=np.float64).view(np.uint64)
    cells = _mix(values ^ _mix(matrix.indices.astype(np.uint64) + _GOLDEN))
    per_row = np.zeros(matrix.shape[0], dtype=np.uint64)
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    np.add.at(per_row, rows, cells)
    h ^= per_row
    return _mix(h)


def row_hashes(seed, columns):
    """Keyed 64-bit hash of every row's content (bit patterns).

    Parameters
    ----------
    seed : int
        The key, in ``[0, 2**64)``; public or drawn from a random source.
    columns : sequence of array-like or sparse matrix
        Numeric columns of one row each (1-D of length n, or 2-D with n
        rows); ``None`` entries are skipped.

    Returns
    -------
    h : ndarray of uint64, shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.utils._groups import row_hashes
    >>> h = row_hashes(0, [np.array([[1.0], [1.0], [-0.0], [0.0]])])
    >>> bool(h[0] == h[1]), bool(h[2] == h[3])
    (True, False)
    """
    columns = [c for c in columns if c is not None]
    n = columns[0].shape[0]
    h = np.full(n, np.uint64(seed) ^ _GOLDEN, dtype=np.uint64)
    _mix(h)
    step = 0
    for column in columns:
        if sparse.issparse(column):
            h = _sparse_row_hashes(column, h)
            continue
        for bits in _bit_columns(column).T:
            step += 1
            h ^= bits
            h += np.uint64(step * int(_GOLDEN) % 2**64)
            _mix(h)
    return h


def _missing(labels):
    """Whether any label is missing (None, NaN or NaT)."""
    if labels.dtype.kind in "fc":
        return bool(np.isnan(labels).any())
    if labels.dtype.kind in "mM":
        return bool(np.isnat(labels).any())
    if labels.dtype.kind == "O":
        return any(v is None or v != v for v in labels)
    return False


def as_group_labels(groups):
    """``groups`` as a 1-D array of labels.

    An array (or pandas object) is taken as it is; another sequence is a
    list of labels, whatever they are: tuples stay one label each, not the
    rows of a 2-D array, and a list that mixes strings with other kinds
    stays objects (numpy would make ``[1, "1"]`` two equal strings), and
    so do strings ending in NUL (numpy reads ``"a\\x00"`` back as ``"a"``).
    """
    if hasattr(groups, "__array__") or isinstance(groups, np.ndarray):
        return np.asarray(groups)
    items = list(groups)
    try:
        labels = np.asarray(items)
    except ValueError:
        labels = None
    if labels is not None and labels.dtype.kind in "US":
        # numpy turns [1, "1"] into ["1", "1"], and drops trailing NULs
        # ("a\x00" is read back as "a"): two labels would become one
        kind, nul = (str, "\x00") if labels.dtype.kind == "U" else (bytes, b"\x00")
        plain = all(isinstance(v, kind) and not v.endswith(nul) for v in items)
        labels = labels if plain else None
    if labels is None or labels.ndim != 1:
        labels = np.empty(len(items), dtype=object)
        labels[:] = items
    return labels


def group_codes(groups):
    """Integer codes of the group labels and the number of codes.

    Integers (and dates) in a range of at most ``2 n + 1024`` values are
    offset from their minimum (codes may skip unused values); other arrays
    of numbers, strings or dates are numbered in sorted order, Python
    objects by first appearance. Two labels are one group when they
    are equal (``1 == 1.0``, ``-0.0 == 0.0``); Python objects are numbered
    by equality (they must be hashable). A missing label (None, NaN, NaT)
    or an unhashable one raises ``ValueError``.

    Examples
    --------
    >>> from skdp.utils._groups import group_codes
    >>> group_codes([7, 5, 7])
    (array([2, 0, 2]), 3)
    >>> group_codes(["b", "a", "b"])
    (array([1, 0, 1]), 2)
    """
    labels = as_group_labels(groups)
    if labels.ndim != 1:
        raise ValueError(f"groups must be 1-D, got shape {labels.shape}")
    if _missing(labels):
        raise ValueError("groups holds a missing label (None, NaN or NaT)")
    if labels.dtype.kind in "mM":
        labels = labels.view(np.int64)
    if labels.dtype.kind == "f" and labels.size and np.all(labels == np.trunc(labels)):
        if np.abs(labels).max() < 2.0**62:
            labels = labels.astype(np.int64)
    if labels.dtype.kind == "b":
        labels = labels.astype(np.int8)
    if labels.dtype.kind == "i":  # int8 - int8 wraps: -100 - 100 is 56
        labels = labels.astype(np.int64, copy=False)
    if labels.dtype.kind in "iu" and labels.size:
        low, high = labels.min(), labels.max()
        if int(high) - int(low) <= 2 * labels.size + 1024:
            # int64 or unsigned: every difference is small and non-negative
            return (labels - low).astype(np.int64), int(high) - int(low) + 1
    if labels.dtype.kind != "O":
        try:
            uniques, codes = np.unique(labels, return_inverse=True)
            return codes.ravel(), uniques.size
        except TypeError:
            pass
    # Python objects: by equality (hash), never by sorting: a partial order
    # (sets) made np.unique split one label into several groups
    numbering = {}
    try:
        codes = np.fromiter(
            (numbering.setdefault(v, len(numbering)) for v in labels.tolist()),
            dtype=np.int64,
            count=labels.size,
        )
    except TypeError as exc:
        raise ValueError(
            f"groups holds a label that cannot be hashed ({exc}); use "
            "numbers, strings or tuples"
        ) from None
    return codes, len(numbering)


def _ranks_in_groups(sorted_codes):
    """Position of each entry of a sorted code array within its run."""
    n = sorted_codes.size
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    sizes = np.diff(np.r_[starts, n])
    return np.arange(n) - np.repeat(starts, sizes)


def _content_key(columns, rows):
    """Lexicographic sort keys (bit patterns) of the given rows' content."""
    keys = []
    for column in columns:
        if column is None:
            continue
        if sparse.issparse(column):
            # only the columns stored in these rows: the others are 0 in all
            # of them and change no comparison (n x d dense could not fit)
            column = sparse.csr_matrix(column)[rows]
            column = column[:, np.unique(column.indices)].toarray()
        else:
            column = np.asarray(column)[rows]
        keys.extend(_bit_columns(column).T)
    return keys


def _resolve_ties(order_rows, codes, hashes, k, columns):
    """Exact kept rows of groups whose packed order ties at the ``k``-th place.

    ``order_rows`` are row indices ordered by (code, truncated hash) with a
    tie at the cut; returns the kept rows ordered by (code, full hash,
    content), which is the rule of the module docstring.
    """
    rows = np.asarray(order_rows)
    keys = [*reversed(_content_key(columns, rows)), hashes[rows], codes[rows]]
    ordered = rows[np.lexsort(keys)]
    return ordered[_ranks_in_groups(codes[ordered]) < k]


def _packed_order(codes, n_codes, hashes):
    """Rows ordered by (code, leading hash bits), and the truncated hashes in
    that order; None when fewer than ``_MIN_HASH_BITS`` bits are left."""
    n = codes.size
    index_bits = max(int(n - 1).bit_length(), 1)
    code_bits = max(int(n_codes - 1).bit_length(), 1)
    hash_bits = 64 - index_bits - code_bits
    if hash_bits < _MIN_HASH_BITS:
        return None
    key = codes.astype(np.uint64) << np.uint64(64 - code_bits)
    key |= (hashes >> np.uint64(64 - hash_bits)) << np.uint64(index_bits)
    key |= np.arange(n, dtype=np.uint64)
    key.sort()
    rows = (key & np.uint64((1 << index_bits) - 1)).astype(np.intp)
    key >>= np.uint64(index_bits)
    return rows, key  # key: code and truncated hash, comparable within a code


def kept_rows(groups, max_rows_per_group, seed, columns):
    """Indices of the rows kept when each group keeps at most ``k`` rows.

    Parameters
    ----------
    groups : array-like of shape (n_samples,)
        Group labels (any hashable values; equal labels are one group).
    max_rows_per_group : int
        Public bound ``k >= 1``.
    seed : int
        Key of the hash, in ``[0, 2**64)``; public or random, never read
        from the data.
    columns : sequence of array-like or sparse matrix
        The rows' content (``X``, ``y``, ``sample_weight``; numbers), each
        with ``n_samples`` rows; ``None`` entries are skipped.

    Returns
    -------
    kept : ndarray of intp
        Increasing row indices: every row of a group with at most ``k``
        rows, else the ``k`` rows of smallest ``(hash, content)``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.utils._groups import kept_rows
    >>> X = np.arange(6.0)[:, None]
    >>> kept = kept_rows([0, 0, 0, 1, 1, 2], 2, 0, [X])
    >>> np.bincount(np.asarray([0, 0, 0, 1, 1, 2])[kept]).tolist()
    [2, 2, 1]
    """
    k = int(max_rows_per_group)
    codes, n_codes = group_codes(groups)
    n = codes.size
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    counts = np.bincount(codes, minlength=n_codes)
    if counts.max() <= k:
        return np.arange(n, dtype=np.intp)
    hashes = row_hashes(seed, columns)
    packed = _packed_order(codes, n_codes, hashes)
    if packed is None:  # the full hashes, compared within a group
        rows = np.lexsort((hashes, codes))
        packed = rows, hashes[rows]
    rows, key = packed
    sorted_codes = codes[rows]
    rank = _ranks_in_groups(sorted_codes)
    # a tie of (truncated) hashes across the cut (ranks k-1 and k of a group)
    cut = np.flatnonzero(rank[1:] == k)  # position k-1 of each full group
    tied = cut[key[cut] == key[cut + 1]]
    if tied.size == 0:
        kept = rows[rank < k]
        kept.sort()
        return kept
    # those groups: the rows up to the tied hash, in the exact order
    tied_at = np.full(n_codes, -1, dtype=np.intp)  # group -> position of its tie
    tied_at[sorted_codes[tied]] = tied
    tied_groups = tied_at[sorted_codes] >= 0
    same_key = key == key[np.maximum(tied_at[sorted_codes], 0)]
    candidates = tied_groups & ((rank < k) | same_key)
    exact = _resolve_ties(rows[candidates], codes, hashes, k, columns)
    kept = np.concatenate([rows[~tied_groups & (rank < k)], exact])
    kept.sort()
    return kept


def group_blocks(groups, n_blocks, seed, columns):
    """Rows of each of ``n_blocks`` blocks, a whole group in one block.

    A group's block is its keyed hash modulo ``n_blocks``: the wrapping sum
    of its rows' :func:`row_hashes` (an order-free combination of the
    multiset of its rows), mixed once more. It is a function of the seed and
    the group's own rows only, so adding or removing a group leaves every
    other group in its block (and the added group lands in one block).
    Within a block the rows are ordered by (hash, content), the same order
    for any order of the input. The modulo's bias is below
    ``n_blocks / 2**64``, and it only moves the blocks' sizes (utility),
    never which blocks a group can change.

    Parameters
    ----------
    groups : array-like of shape (n_samples,)
        Group labels (equal labels are one group).
    n_blocks : int
        Number of blocks, public.
    seed : int
        Key of the hash, in ``[0, 2**64)``; never read from the data.
    columns : sequence of array-like or sparse matrix
        The rows' content (numbers), each with ``n_samples`` rows.

    Returns
    -------
    blocks : list of ``n_blocks`` ndarrays of intp
        Row indices of each block (some may be empty).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.utils._groups import group_blocks
    >>> X = np.arange(6.0)[:, None]
    >>> blocks = group_blocks([0, 0, 1, 1, 2, 2], 4, 7, [X])
    >>> sorted(int(r) for b in blocks for r in b)
    [0, 1, 2, 3, 4, 5]
    >>> block_of = {int(r): b for b, rows in enumerate(blocks) for r in rows}
    >>> all(block_of[2 * g] == block_of[2 * g + 1] for g in range(3))
    True
    """
    codes, n_codes = group_codes(groups)
    hashes = row_hashes(seed, columns)
    per_group = np.zeros(n_codes, dtype=np.uint64)
    np.add.at(per_group, codes, hashes)  # uint64: wraps, order-free
    _mix(per_group)
    labels = (per_group % np.uint64(n_blocks)).astype(np.int64)[codes]
    order = np.lexsort(
        [*reversed(_content_key(columns, np.arange(codes.size))), hashes, labels]
    )
    counts = np.bincount(labels, minlength=n_blocks)
    return np.split(order, np.cumsum(counts)[:-1])
