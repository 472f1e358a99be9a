"""A private label set: the values of one column that partition selection keeps."""

import numpy as np

from skdp.accounting._composition import split_budget
from skdp.mechanisms._partition import (
    check_partition_parameters,
    partition_selection,
    partition_threshold,
)
from skdp.mechanisms._random import check_random_source
from skdp.utils._cells import canonical_number, distinct_cells, key_value
from skdp.utils._validation import check_public_classes

__all__ = ["LABELS_SHARE", "LabelPlan", "select_labels"]


def select_labels(values, epsilon, delta, *, random_state=None):
    """The distinct values of ``values`` that pass private partition selection.

    Parameters
    ----------
    values : ndarray of shape (n_samples,)
        One value per row (class labels, or one column's categories),
        already validated: sortable by :func:`numpy.unique`.
    epsilon : float
        ε of the selection, ``> 0``.
    delta : float
        δ of the selection, in (0, 1).
    random_state : None, int, RandomState or RandomSource, default=None
        Source of the selection's noise, see
        :func:`~skdp.mechanisms.check_random_source`.

    Returns
    -------
    labels : ndarray of shape (n_labels,)
        The released values, sorted, with the dtype of ``values``; possibly
        empty.
    codes : ndarray of int of shape (n_samples,)
        Each row's index in ``labels``, or -1 for a row whose value was not
        released.

    Notes
    -----
    **Privacy ((ε, δ)-DP, add/remove one row).** A row holds one value, so
    it adds 1 to one value's count: this is
    :func:`~skdp.mechanisms.partition_selection` over the counts of the
    values present, whose proof covers a value that only the added row
    holds (the δ term). ``codes`` is not released: it is a per-row function
    of the row's own value and of the released ``labels``, so a model fitted
    on the rows with ``codes >= 0`` is a stable transformation of the data
    (one row added or removed adds or removes at most one row there), and
    the two steps compose: ``(ε + ε', δ + δ')`` for a model that is
    ``(ε', δ')``-DP given ``labels``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.mechanisms import select_labels
    >>> y = np.array(["cat"] * 500 + ["dog"] * 300 + ["emu"])
    >>> labels, codes = select_labels(y, 1.0, 1e-6, random_state=0)
    >>> labels.tolist(), codes[[0, 500, 800]].tolist()
    (['cat', 'dog'], [0, 1, -1])
    """
    present, inverse, counts = _distinct_labels(values)
    source = check_random_source(random_state)
    keep, _ = partition_selection(counts, epsilon, delta, random_state=source)
    renumber = np.where(keep, np.cumsum(keep) - 1, -1)
    released = [value for value, kept in zip(present, keep, strict=True) if kept]
    return _label_array(released), renumber[inverse]


def _distinct_labels(values):
    """Canonical distinct labels (sorted), each row's index among them, and
    their row counts. Each row's canonical label is a function of its own
    cell (:func:`~skdp.utils._cells.cell_key`): ``1.0`` is the label ``1``,
    ``-0.0`` the label ``0``, and no other row changes how it is read."""
    values = np.asarray(values)
    if values.dtype.kind == "O":
        order, inverse, counts = distinct_cells(values, "y")
        return [key_value(key) for key in order], inverse, counts
    present, inverse, counts = np.unique(
        values, return_inverse=True, return_counts=True
    )
    labels = present.tolist()
    if present.dtype.kind == "f":  # 1.0 is the label 1, -0.0 the label 0
        labels = [canonical_number(value) for value in labels]
    return labels, inverse.reshape(-1), counts


def _label_array(labels):
    """The released labels as an array whose dtype (a string's width
    included) is a function of the released labels only, and that holds
    each of them exactly (an object array when no numpy dtype does: ints
    beyond int64, or numbers a float64 would merge)."""
    array = np.array(labels) if labels else np.array([])
    exact = (
        labels
        and array.dtype.kind in "biufU"
        and array.tolist() == labels
        and len(set(array.tolist())) == len(labels)
        and all(type(a) is type(b) for a, b in zip(array.tolist(), labels, strict=True))
    )
    if exact:
        return np.array(labels, dtype=str) if array.dtype.kind == "U" else array
    out = np.empty(len(labels), dtype=object)
    out[:] = labels
    return out


#: Share of a classifier's ε and δ that selects its label set when the caller
#: states none (``classes=None``); the model gets the rest.
LABELS_SHARE = 0.1


class LabelPlan:
    """A classifier's label set: stated by the caller, or selected privately.

    Built before the charge from public parameters only. With public
    ``classes`` it costs nothing; with ``classes=None`` it costs
    ``LABELS_SHARE`` of the fit's ``(epsilon, delta)`` and :meth:`run` calls
    :func:`select_labels` after the charge. Refusals (no δ to select with,
    labels outside the stated set) happen in :meth:`from_estimator`, before
    the charge.

    Parameters
    ----------
    classes : ndarray or None
        The public label set (sorted, at least two), or None to select it.
    epsilon, delta : float
        The selection's cost (0 for a public set).
    name : str
        The estimator's name, for messages.
    """

    def __init__(self, classes, epsilon, delta, name):
        self.classes = classes
        self.epsilon = epsilon
        self.delta = delta
        self.name = name

    @staticmethod
    def split(classes, epsilon, delta, model_delta=True):
        """``(selection, model)`` budgets ``(epsilon, delta)`` from public
        parameters: the selection's is None for a stated label set. A model
        that spends no δ (``model_delta=False``, pure ε-DP noise) leaves the
        whole ``delta`` to the selection, and none is spent with stated
        classes."""
        shares = [LABELS_SHARE, 1 - LABELS_SHARE]
        if classes is not None:
            return None, (epsilon, delta if model_delta else 0.0)
        eps_labels, eps_model = split_budget(epsilon, shares)
        if not model_delta:
            return (eps_labels, delta), (eps_model, 0.0)
        del_labels, del_model = split_budget(delta, shares)
        return (eps_labels, del_labels), (eps_model, del_model)

    @classmethod
    def from_estimator(cls, classes, epsilon, delta, y, name, model_delta=True):
        """The plan of an estimator's ``classes``, ``epsilon`` and ``delta``.

        Returns the plan and the ``(epsilon, delta)`` left for the model
        (see :meth:`split`).
        """
        if classes is not None:
            public = check_public_classes(classes, y, name)
            return cls(public, 0.0, 0.0, name), cls.split(
                classes, epsilon, delta, model_delta
            )[1]
        if not delta > 0:
            raise ValueError(
                f"{name}(classes=None) selects the label set privately "
                "(partition selection), which needs delta > 0; got delta=0. "
                "Pass the public label set as classes=[...], or a delta > 0. "
                "Nothing was charged."
            )
        selection, model = cls.split(classes, epsilon, delta, model_delta)
        try:
            check_partition_parameters(*selection)
        except ValueError as exc:
            raise ValueError(
                f"{name}(classes=None) selects its label set with "
                f"{LABELS_SHARE:.0%} of epsilon and delta, here "
                f"(epsilon={selection[0]!r}, delta={selection[1]!r}), which the "
                f"selection cannot run at: {exc} Pass the public label set as "
                "classes=[...], or a larger epsilon or delta. Nothing was charged."
            ) from exc
        return cls(None, *selection, name), model

    def cost_items(self):
        """The ledger item of the selection (none for a public set)."""
        if self.classes is not None:
            return []
        return [("label set (partition selection)", self.epsilon, self.delta)]

    def run(self, X, y, random_state):
        """``(classes, X, codes)`` after the charge: the label set, and the
        rows whose label is in it with their class indices. A stated set
        keeps every row (``X`` itself, no copy); a selected one drops the
        rows whose label was not released, a rule applied to each row alone.

        Raises
        ------
        ValueError
            When fewer than two labels are released: a function of the
            released label set only (post-processing), with the budget spent.
        """
        if self.classes is not None:
            return self.classes, X, np.searchsorted(self.classes, y)
        classes, codes = select_labels(
            y, self.epsilon, self.delta, random_state=random_state
        )
        if classes.size < 2:
            rows = partition_threshold(self.epsilon, self.delta)
            raise ValueError(
                f"{self.name}'s private label selection released "
                f"{classes.size} label(s), and a classifier needs at least 2 "
                f"classes (not 1 class or none): a label needs about {rows} "
                f"rows to be released at epsilon={self.epsilon:.3g}, "
                f"delta={self.delta:.3g}. The fit's budget is spent. Pass the "
                "public label set as classes=[...], or a larger epsilon or delta."
            )
        kept = codes >= 0
        return classes, X[kept], codes[kept]
