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
order (which may itself encode another group). And the kept rows must be a
**uniform** draw from the group's rows, or every estimator answers about a
biased sample (the rows of smallest content hash, the first rule here: with
one row kept of five, a true accuracy of 0.85 came out at 0.67 to 0.97).
:func:`kept_rows` therefore, in every group of ``m > k`` rows:

1. orders the rows canonically by ``(H(seed, content), content)``, giving
   positions ``0 .. m-1``. ``H`` is a keyed 64-bit mix (splitmix64's
   finaliser, column after column) of the rows' **bit patterns**: a row is
   its values as stored, so ``-0.0`` and ``0.0`` (or two NaN payloads) are
   different contents and the order is a total order on contents; rows with
   the same content are interchangeable, so the content at each position is
   a function of the group's multiset of rows;
2. keys position ``r`` by ``G(seed, label, r)``, a keyed mix of the seed,
   the hash of the group label's **value**
   (:func:`~skdp.utils._label_hashes.label_hashes`; never the label's code,
   a rank among all labels that shifts when a group is added) and ``r``;
3. keeps the ``k`` positions of smallest ``(G, r)``.

``G`` never reads the content, so the kept positions are a (pseudo)random
``k``-subset, uniform over the ``m``-choose-``k``, drawn afresh for each
label: a uniform sub-multiset of the group's rows; groups with the same
rows draw independently. The seed is public or random, never from the data.
Groups are formed by label equality: labels whose hashes collide stay two
groups (their draws coincide, nothing more). The kept set of a group is a
function of the seed, its label and the multiset of its rows: the same for
any row order, unchanged by adding or removing any other group, returned
in increasing order (the input's order).

**Two sorts.** Group labels become integer codes (an offset for integers in
a compact range; a sort of the distinct labels otherwise), and each row's
code, the leading bits of its hash and its index are packed into one 64-bit
word: one ``np.sort`` (numpy's vectorised sort) orders every group's rows
by hash, and a row's position in its group is its place minus its group's
start. A second packed sort, of (code, leading bits of ``G``, place) over
the groups of more than ``k`` rows, picks the ``k`` positions; a group whose
truncated ``G`` tie across the ``k``-th place is re-sorted by full ``G`` and
position. Rows whose truncated hashes tie (a run) are in the input's order
after the first sort; only a run that the choice cuts (some kept, some not)
is re-sorted by full hash and content (exact; runs wholly kept or dropped
give the same rows in any order). When the codes and indices leave fewer
than 16 bits for the hash, a lexicographic sort on (code, full hash or
``G``) replaces the packed one (slower, same rows).
"""

import numpy as np
from scipy import sparse

from skdp.utils._group_labels import GroupLabels, as_group_labels, group_codes
from skdp.utils._label_hashes import _GOLDEN, _group_keys, _mix, _position_keys

__all__ = [
    "GroupLabels",
    "as_group_labels",
    "group_blocks",
    "group_codes",
    "kept_rows",
    "row_hashes",
]

_MIN_HASH_BITS = 16
_MAX_ROUNDS = 8  # up to this k, k segment minima pick the positions; past, a sort
# salt of the blocks' keys: not the stream of the content or positions' keys
_BLOCK_SALT = np.uint64(0xBB67AE8584CAA73B)


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


def _runs(sorted_codes):
    """Start and size of each run of equal codes in a sorted code array."""
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    return starts, np.diff(np.r_[starts, sorted_codes.size])


def _ranks_in_groups(sorted_codes, runs=None):
    """Position of each entry of a sorted code array within its run."""
    starts, sizes = _runs(sorted_codes) if runs is None else runs
    return np.arange(sorted_codes.size) - np.repeat(starts, sizes)


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
    sorted_codes = (key >> np.uint64(hash_bits)).astype(np.intp)
    return rows, key, sorted_codes  # key: code and truncated hash


def _order_in_groups(codes, n_codes, hashes):
    """Rows ordered by (code, hash), the hash possibly truncated, and a
    boolean per position: True where the (code, truncated hash) changes."""
    packed = _packed_order(codes, n_codes, hashes)
    if packed is not None:  # the packed key holds the code
        rows, key, sorted_codes = packed
        return rows, sorted_codes, np.r_[True, key[1:] != key[:-1]]
    rows = np.lexsort((hashes, codes))  # the full hashes, within a group
    key, sorted_codes = hashes[rows], codes[rows]
    new_run = np.r_[
        True, (key[1:] != key[:-1]) | (sorted_codes[1:] != sorted_codes[:-1])
    ]
    return rows, sorted_codes, new_run


def _chosen_by_rounds(runs, keys, k):
    """Per position, whether its key is among the ``k`` smallest of its
    group: ``k`` rounds of a segment minimum over the keys above the last
    round's (exact: a group's keys are distinct). A group of at most ``k``
    positions runs out of keys above: the minimum is then 2**64 - 1, and
    all its positions are chosen."""
    starts, sizes = runs
    above = np.zeros(keys.size, dtype=np.uint64)
    for round_ in range(k):
        left = keys > above if round_ else np.ones(keys.size, dtype=bool)
        candidates = np.where(left, keys, np.uint64(2**64 - 1))
        above = np.repeat(np.minimum.reduceat(candidates, starts), sizes)
    return keys <= above


def _chosen_positions(sorted_codes, n_codes, runs, rank, keys, k):
    """Per position (in the order by group), whether it is among the ``k``
    of smallest ``(key, rank)`` of its group: exact, ties of the truncated
    keys resolved by the full key, then the rank (a group's full keys are
    distinct: the rank only orders them if a future key allows ties)."""
    if k <= _MAX_ROUNDS:
        return _chosen_by_rounds(runs, keys, k)
    order, _, new_key = _order_in_groups(sorted_codes, n_codes, keys)
    # order is by (code, truncated key, position): groups stay where they
    # were, so a place in it is its group's start + rank
    chosen = np.zeros(sorted_codes.size, dtype=bool)
    chosen[order[rank < k]] = True
    cut = np.flatnonzero(rank[1:] == k)  # place k-1 of each group past k
    tied = cut[~new_key[cut + 1]]  # truncated keys equal across the cut
    if tied.size:
        in_tied = np.isin(sorted_codes, sorted_codes[order[tied]])
        positions = np.flatnonzero(in_tied)
        exact = positions[
            np.lexsort((rank[positions], keys[positions], sorted_codes[positions]))
        ]
        chosen[positions] = False
        chosen[exact[_ranks_in_groups(sorted_codes[exact]) < k]] = True
    return chosen


def kept_rows(groups, max_rows_per_group, seed, columns):
    """Indices of the rows kept when each group keeps at most ``k`` rows.

    Parameters
    ----------
    groups : array-like of shape (n_samples,) or GroupLabels
        Group labels (any hashable values; equal labels are one group), or
        labels checked before a charge
        (:class:`~skdp.utils._group_labels.GroupLabels`, as the privacy
        unit carries them: no label is then read).
    max_rows_per_group : int
        Public bound ``k >= 1``.
    seed : int
        Key of the hashes, in ``[0, 2**64)``; public or random, never read
        from the data.
    columns : sequence of array-like or sparse matrix
        The rows' content (``X``, ``y``, ``sample_weight``; numbers), each
        with ``n_samples`` rows; ``None`` entries are skipped.

    Returns
    -------
    kept : ndarray of intp
        Increasing row indices: every row of a group with at most ``k``
        rows, else ``k`` rows drawn as a uniform sub-multiset of the
        group's rows (the rule of the module docstring).

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
    labels = GroupLabels.of(groups, hashed=False)
    codes, n_codes = labels.codes, labels.n_codes
    n = codes.size
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    counts = np.bincount(codes, minlength=n_codes)
    if counts.max() <= k:
        return np.arange(n, dtype=np.intp)
    hashes = row_hashes(seed, columns)
    rows, sorted_codes, new_run = _order_in_groups(codes, n_codes, hashes)
    runs = starts, sizes = _runs(sorted_codes)
    rank = _ranks_in_groups(sorted_codes, runs)
    # a group's first row in this order stands for its label (equal labels
    # hash equally, so which row does not matter)
    first = rows[starts]
    group_key = _group_keys(seed, labels.label_keys(first))
    keys = _position_keys(np.repeat(group_key, sizes), rank)
    chosen = _chosen_positions(sorted_codes, n_codes, runs, rank, keys, k)
    rows = _canonical_where_needed(rows, sorted_codes, new_run, chosen, hashes, columns)
    kept = rows[chosen]
    kept.sort()
    return kept


def _canonical_where_needed(rows, sorted_codes, new_run, chosen, hashes, columns):
    """``rows`` with each run of equal truncated hashes that is partly
    chosen put in the exact order (full hash, then content).

    A run entirely kept or entirely dropped gives the same rows in any
    order; only the runs cut by the choice need the canonical order.
    """
    in_long_run = ~new_run  # runs of two or more positions, the only ones
    in_long_run[:-1] |= ~new_run[1:]  # that an order may change
    long = np.flatnonzero(in_long_run)
    if long.size == 0:
        return rows
    run = np.cumsum(new_run[long]) - 1  # each long run starts a new run
    n_chosen = np.bincount(run, weights=chosen[long])
    partial = (n_chosen > 0) & (n_chosen < np.bincount(run))
    if not partial.any():
        return rows
    positions = long[partial[run]]
    some = rows[positions]
    keys = [*reversed(_content_key(columns, some)), hashes[some], run[partial[run]]]
    rows = rows.copy()
    rows[positions] = some[np.lexsort(keys)]
    return rows


def group_blocks(groups, n_blocks, seed, columns):
    """Rows of each of ``n_blocks`` blocks, a whole group in one block.

    A group's block is its keyed hash modulo ``n_blocks``: the wrapping sum
    of its rows' :func:`row_hashes` (an order-free combination of the
    multiset of its rows) combined with the hash of its label's value, mixed
    once more. The label enters because groups of identical rows (few
    distinct values) would otherwise all land in one block. It is a function
    of the seed, the label and the group's own rows only, so adding or
    removing a group leaves every other group in its block (and the added
    group lands in one block).
    Within a block the rows are ordered by (hash, content), the same order
    for any order of the input. The modulo's bias is below
    ``n_blocks / 2**64``, and it only moves the blocks' sizes (utility),
    never which blocks a group can change.

    Parameters
    ----------
    groups : array-like of shape (n_samples,) or GroupLabels
        Group labels (equal labels are one group), or labels checked before
        a charge (:class:`~skdp.utils._group_labels.GroupLabels`: no label
        is then read).
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
    labels = GroupLabels.of(groups, hashed=False)
    codes, n_codes = labels.codes, labels.n_codes
    hashes = row_hashes(seed, columns)
    per_group = np.zeros(n_codes, dtype=np.uint64)
    np.add.at(per_group, codes, hashes)  # uint64: wraps, order-free
    by_code = labels.hashes_by_code()
    per_group ^= _mix(by_code ^ _BLOCK_SALT)  # same rows, other label: other block
    _mix(per_group)
    block = (per_group % np.uint64(n_blocks)).astype(np.int64)[codes]
    order = np.lexsort(
        [*reversed(_content_key(columns, np.arange(codes.size))), hashes, block]
    )
    counts = np.bincount(block, minlength=n_blocks)
    return np.split(order, np.cumsum(counts)[:-1])
