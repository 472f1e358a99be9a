"""The training / held-out split of the holdout searches.

:class:`~skdp.model_selection.NoisyMaxSearchCV` (``method="holdout"``) and
:class:`~skdp.model_selection.RandomStoppingSearchCV` train their candidates
on one part of the rows and score them on the disjoint rest. Their privacy
argument is parallel composition: one privacy unit (a row, or with
``groups`` a whole group) lands in one part, never in both, by a rule that
does not depend on the other units. This module is that rule, for both.

* **One row:** each row is held out by its own coin, independent
  Bernoulli(``holdout_size``) draws from the search's random source.
* **One group:** a group is held out when the keyed hash of its label's
  **value** (:func:`~skdp.utils._label_hashes.label_hashes`), read as a
  number in ``[0, 1)``, is below ``holdout_size``. The key is one 64-bit
  draw from the search's source (never from the data). A group's side is
  then a function of the key and of its label only: adding or removing a
  group moves no other group, and its own rows all go to one side. The
  rows' content is not read (so any ``X`` the candidates take will do,
  a DataFrame of strings included), nor their order, nor the other labels
  (the codes of :func:`~skdp.utils._groups.group_codes`, ranks that shift
  when a group is added, only gather a group's rows).

  A hash that also read the group's rows (as
  :func:`~skdp.utils._groups.group_blocks` does) would still be a function
  of the group's own data, so just as private; the label suffices because
  the split needs nothing of the content, and reading none is what lets it
  take any ``X`` (and costs no pass over the rows).

The privacy argument does not rest on the hash being random: given the
key, every group's side is fixed, and the neighbouring data sets differ by
one group on one side; the search's release is within its bound for every
key, so also for the mixture over keys (the key has the same distribution
on both data sets). The hash matters for utility only: the key makes the
sides of distinct labels independent-looking draws of mean
``holdout_size`` (labels whose hashes collide share a side).
"""

import copy
from typing import NamedTuple

import numpy as np
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _num_samples

from skdp.utils._group_labels import GroupLabels
from skdp.utils._label_hashes import _group_keys

__all__ = [
    "HoldoutParts",
    "held_out_groups",
    "held_out_scorer",
    "holdout_split",
    "split_parts",
]

# salt of the holdout key: not the stream of contribution bounding's keys
_HOLDOUT_SALT = np.uint64(0x3C6EF372FE94F82B)
# a 64-bit key's top 53 bits, read as a multiple of 2**-53 in [0, 1)
_FRACTION_SHIFT = np.uint64(11)
_FRACTION_STEP = 2.0**-53


def held_out_groups(groups, holdout_size, key):
    """Whether each row's group is held out (one side per group).

    Parameters
    ----------
    groups : array-like of shape (n_samples,) or GroupLabels
        Group labels (checked: no missing label). A fit passes its unit's
        :class:`~skdp.utils._group_labels.GroupLabels`, whose label hashes
        were computed before the charge: no label is read here then.
    holdout_size : float
        The probability, over ``key``, that a group is held out.
    key : int
        In ``[0, 2**64)``, drawn from the search's random source.

    Returns
    -------
    held : ndarray of bool of shape (n_samples,)

    Examples
    --------
    >>> from skdp.model_selection._holdout_parts import held_out_groups
    >>> held = held_out_groups([7, 7, "a", 7], 0.5, key=3)
    >>> bool(held[0] == held[1] == held[3])
    True
    """
    labels = GroupLabels.of(groups)
    if len(labels) == 0:
        return np.zeros(0, dtype=bool)
    salted = int(np.uint64(key) ^ _HOLDOUT_SALT)
    keys = _group_keys(salted, labels.label_keys())  # equal labels: equal keys
    fraction = (keys >> _FRACTION_SHIFT).astype(np.float64) * _FRACTION_STEP
    return fraction < holdout_size


def holdout_split(n_samples, holdout_size, source, groups=None):
    """``(train, held)`` row indices: each row, or each whole group, held
    out with probability ``holdout_size``, independently of the data.

    Without ``groups`` each row draws its own coin from ``source``
    (``n_samples`` uniforms); with ``groups`` one 64-bit key is drawn and
    each group's side is :func:`held_out_groups`.

    Examples
    --------
    >>> from skdp.model_selection._holdout_parts import holdout_split
    >>> from skdp.mechanisms import check_random_source
    >>> source = check_random_source(0)
    >>> train, held = holdout_split(6, 0.5, source, groups=[0, 0, 1, 1, 2, 2])
    >>> sorted(train.tolist() + held.tolist())
    [0, 1, 2, 3, 4, 5]
    """
    if groups is None:
        held = source.random(n_samples) < holdout_size
    else:
        held = held_out_groups(groups, holdout_size, int(source.uint64()))
    return np.flatnonzero(~held), np.flatnonzero(held)


class HoldoutParts(NamedTuple):
    """The two parts of a holdout search's rows (:func:`split_parts`)."""

    X_train: object
    y_train: object
    fit_params: dict  # ``{"groups": the training rows' labels}``, or empty
    X_held: object
    y_held: object
    held_groups: object  # the held-out rows' labels, or None


def split_parts(X, y, holdout_size, source, groups=None):
    """:func:`holdout_split` applied to ``X``, ``y`` and ``groups``.

    Returns
    -------
    parts : HoldoutParts
    """
    train, held = holdout_split(_num_samples(X), holdout_size, source, groups)
    fit_params = {} if groups is None else {"groups": groups[train]}
    return HoldoutParts(
        _safe_indexing(X, train),
        _safe_indexing(y, train),
        fit_params,
        _safe_indexing(X, held),
        _safe_indexing(y, held),
        None if groups is None else groups[held],
    )


def held_out_scorer(scorer, held_groups, unit):
    """The private scorer of the held-out part, for the fit's privacy unit.

    As given for one row (``unit.groups`` None). With groups, a copy whose
    metric gets the part's ``groups`` and ``max_rows_per_group=k``: each
    group keeps at most ``k`` rows and the noise is ``k`` times a row's
    (the metric's Notes), so its cost, the same ``(ε, δ)``, is stated for
    a group of at most ``k`` rows.

    Parameters
    ----------
    scorer : PrivateScorer
        The search's scorer, with its public labels resolved.
    held_groups : ndarray of shape (n_held,) or None
        The held-out rows' group labels.
    unit : PrivacyUnit
        The fit's unit (:meth:`~skdp.utils._privacy_unit.GroupsMixin._privacy_unit`).

    Returns
    -------
    scorer : PrivateScorer
    """
    if unit.groups is None:
        return scorer
    grouped = copy.copy(scorer)
    grouped.kwargs = {
        **scorer.kwargs,
        "groups": held_groups,
        "max_rows_per_group": unit.max_rows,
    }
    grouped.cost = scorer.cost.in_unit("group", unit.max_rows)
    return grouped
