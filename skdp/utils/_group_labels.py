"""Group labels, read once: their integer codes and the hash of each value.

A grouped fit checks ``groups`` before its charge (every label present and
hashable), and contribution bounding uses the labels after it: which rows a
group keeps (:func:`~skdp.utils._groups.kept_rows`), its block
(:func:`~skdp.utils._groups.group_blocks`), its partitions
(:func:`~skdp.utils._partitions.partition_rows`). Reading the labels again
there would hash and compare every label object a second time after the
charge, where a label whose ``__hash__`` or ``__eq__`` fails (or answers
otherwise) on a later call would raise or branch on the data; and it would
number the labels twice. :class:`GroupLabels` holds what the check computed
(the codes, their number and the hash of each code's value,
:func:`~skdp.utils._label_hashes.label_hashes`); the privacy unit carries
it, and the functions above take it in place of the labels and never touch
a label object. Taking rows of it (``labels[rows]``) keeps the codes and the
hashes: a subset's codes may skip values, which changes none of those
functions' results (they depend on which rows share a code, never on the
code's value).
"""

import numpy as np

from skdp.utils._label_hashes import (
    _kept_values,
    _label_hash_by_code,
    _missing,
    label_hashes,
)

__all__ = ["GroupLabels", "as_group_labels", "group_codes"]


class GroupLabels:
    """Checked group labels with their codes and the hashes of their values.

    Parameters
    ----------
    labels : ndarray of shape (n_samples,)
        The labels (:func:`as_group_labels`).
    codes : ndarray of int64 of shape (n_samples,)
        A code per row, equal for equal labels (:func:`group_codes`).
    n_codes : int
        Codes lie in ``[0, n_codes)``.
    code_hashes : ndarray of uint64 of shape (n_codes,) or None
        The hash of each code's label value (None: computed from the labels
        when asked, for labels given by a caller outside a fit).
    whole : bool, default=True
        Whether ``codes`` are :func:`group_codes` of ``labels`` (False for
        rows taken from other labels: their codes are renumbered on demand).

    Examples
    --------
    >>> from skdp.utils._group_labels import GroupLabels
    >>> labels = GroupLabels.of(["b", "a", "b", "c"])
    >>> labels.codes.tolist(), labels.n_codes
    ([1, 0, 1, 2], 3)
    >>> labels[[0, 3]].codes.tolist(), labels[[0, 3]].numbered()[0].tolist()
    ([1, 2], [0, 1])
    """

    __slots__ = ("code_hashes", "codes", "labels", "n_codes", "whole")
    ndim = 1

    def __init__(self, labels, codes, n_codes, code_hashes=None, whole=True):
        self.labels = labels
        self.codes = codes
        self.n_codes = int(n_codes)
        self.code_hashes = code_hashes
        self.whole = whole

    @classmethod
    def of(cls, groups, hashed=True):
        """Check and number ``groups``: raises ``ValueError`` on a missing or
        unhashable label. ``hashed``: hash every code's value now (before a
        charge, so that nothing reads a label after it)."""
        if isinstance(groups, GroupLabels):
            if hashed and groups.code_hashes is None:
                return GroupLabels(
                    groups.labels,
                    groups.codes,
                    groups.n_codes,
                    groups.hashes_by_code(),
                    groups.whole,
                )
            return groups
        labels = as_group_labels(groups)
        codes, n_codes = group_codes(labels)
        hashes = _label_hash_by_code(labels, codes, n_codes) if hashed else None
        return cls(labels, codes, n_codes, hashes)

    def structure_problem(self):
        """What makes these codes unusable (None: nothing), read from the
        codes, their number and the hashes only (no label is read).

        A :class:`GroupLabels` given by a caller is taken as checked; codes
        out of ``[0, n_codes)``, hashes of another length or labels of
        another length made the bounding after the charge raise.
        """
        codes, hashes = self.codes, self.code_hashes
        if not (isinstance(codes, np.ndarray) and codes.ndim == 1):
            return "its codes are not a 1-D array"
        if codes.dtype.kind != "i":
            return f"its codes are {codes.dtype}, not integers"
        if codes.size and (codes.min() < 0 or codes.max() >= self.n_codes):
            return f"its codes are not all in [0, n_codes={self.n_codes})"
        labels = self.labels
        if not (isinstance(labels, np.ndarray) and labels.shape == codes.shape):
            return "its labels are not an array of one label per code"
        if hashes is not None and not (
            isinstance(hashes, np.ndarray)
            and hashes.dtype == np.uint64
            and hashes.shape == (self.n_codes,)
        ):
            return f"its code_hashes are not uint64 of shape ({self.n_codes},)"
        if not isinstance(self.whole, (bool, np.bool_)):
            return "its whole is not a bool"
        return None

    @property
    def shape(self):
        return self.codes.shape

    def __len__(self):
        return self.codes.shape[0]

    def __array__(self, dtype=None, copy=None):
        """The labels, for code outside skdp that reads them (a splitter)."""
        labels = self.labels if dtype is None else self.labels.astype(dtype)
        return labels.copy() if copy else labels

    def __getitem__(self, rows):
        """The labels of ``rows`` with their codes and hashes (no label is
        read: numpy copies the references)."""
        return GroupLabels(
            self.labels[rows], self.codes[rows], self.n_codes, self.code_hashes, False
        )

    def label_keys(self, rows=None):
        """The hash of the label value of each of ``rows`` (all: None)."""
        codes = self.codes if rows is None else self.codes[rows]
        if self.code_hashes is not None:
            return self.code_hashes[codes]
        return label_hashes(self.labels if rows is None else self.labels[rows])

    def hashes_by_code(self):
        """The hash of each code's label value, shape ``(n_codes,)``."""
        if self.code_hashes is not None:
            return self.code_hashes
        return _label_hash_by_code(self.labels, self.codes, self.n_codes)

    def numbered(self):
        """Codes and their number, numbered as :func:`group_codes` numbers
        these labels: the same order of the groups (the same codes, but
        that a range of integers is numbered without gaps).

        Rows taken from other labels are renumbered from their codes, and
        no label is read: numbers, strings and dates (numbered in sorted
        order, which their codes keep) in the order of their codes; Python
        objects (numbered by first appearance) by their codes' first
        appearance.
        """
        if self.whole:
            return self.codes, self.n_codes
        uniques, first, inverse = np.unique(
            self.codes, return_index=True, return_inverse=True
        )
        if self.labels.dtype.kind != "O":
            return inverse.ravel().astype(np.int64), int(uniques.size)
        rank = np.empty(uniques.size, dtype=np.int64)
        rank[np.argsort(first)] = np.arange(uniques.size)
        return rank[inverse.ravel()], int(uniques.size)


def as_group_labels(groups):
    """``groups`` as a 1-D array of labels.

    An array (or pandas object) is taken as it is; another sequence is a
    list of labels, whatever they are: tuples stay one label each, not the
    rows of a 2-D array, and a list that mixes strings with other kinds
    stays objects (numpy would make ``[1, "1"]`` two equal strings), and
    so do strings ending in NUL, numbers a float array would round
    (``2**53 + 1``) and dates a finer unit would wrap.
    """
    if hasattr(groups, "__array__") or isinstance(groups, np.ndarray):
        return np.asarray(groups)
    items = list(groups)
    try:
        labels = np.asarray(items)
    except ValueError:
        labels = None
    if labels is not None and labels.dtype.kind in "US":
        # numpy makes [1, "1"] two "1", and reads "a\x00" back as "a"
        kind, nul = (str, "\x00") if labels.dtype.kind == "U" else (bytes, b"\x00")
        plain = all(isinstance(v, kind) and not v.endswith(nul) for v in items)
        labels = labels if plain else None
    if labels is not None and not _kept_values(labels, items):
        labels = None  # [2**53 + 1, 2**53, 0.5] as floats: two labels merged
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
    or an unhashable one raises ``ValueError``. Labels already checked
    (:class:`GroupLabels`) give their codes without reading a label.

    Examples
    --------
    >>> from skdp.utils._groups import group_codes
    >>> group_codes([7, 5, 7])
    (array([2, 0, 2]), 3)
    >>> group_codes(["b", "a", "b"])
    (array([1, 0, 1]), 2)
    """
    if isinstance(groups, GroupLabels):
        return groups.numbered()
    labels = as_group_labels(groups)
    if labels.ndim != 1:
        raise ValueError(f"groups must be 1-D, got shape {labels.shape}")
    if _missing(labels):
        raise ValueError("groups holds a missing label (None, NaN or NaT)")
    if labels.dtype.kind in "mM":
        labels = labels.view(np.int64)
    if labels.dtype.kind == "f" and labels.size and np.all(labels == np.trunc(labels)):
        if float(np.abs(labels).max()) < 2.0**62:  # float16: no cast of 2**62
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
