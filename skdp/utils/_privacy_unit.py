"""The privacy unit of a fit: one row, or one group of at most ``k`` rows.

An estimator that accepts ``fit(..., groups=...)`` mixes in
:class:`GroupsMixin`: it requests ``groups`` through scikit-learn's metadata
routing by default (so ``Pipeline``, ``cross_validate`` and the searches
pass it on once ``sklearn.set_config(enable_metadata_routing=True)``), and
checks ``groups`` against its public ``max_rows_per_group`` before any
charge (:meth:`GroupsMixin._privacy_unit`). The check numbers the labels
and hashes their values once
(:class:`~skdp.utils._group_labels.GroupLabels`); the unit carries that, so
after the charge no label object is hashed or compared again (a label whose
hash failed later would raise there). After the charge,
:meth:`PrivacyUnit.bound` keeps at most ``k`` rows per group
(:func:`~skdp.utils._groups.kept_rows`); the estimator then multiplies its
row-level sensitivities by ``unit_rows`` (``k``, or 1 without groups).
"""

from contextlib import contextmanager
from typing import NamedTuple

import numpy as np
from scipy import sparse

from skdp.accounting._group_privacy import row_budget_for_groups
from skdp.accounting._units import MAX_ROWS
from skdp.utils._group_labels import GroupLabels, as_group_labels
from skdp.utils._groups import kept_rows

__all__ = ["GroupsMixin", "PrivacyUnit"]


class PrivacyUnit(NamedTuple):
    """The unit of a fit: ``groups`` (or None for one row) and ``k``.

    ``groups`` is a :class:`~skdp.utils._group_labels.GroupLabels`, checked
    before the charge (``unit.groups[rows]`` keeps its codes and hashes).
    """

    groups: object
    max_rows: int

    @property
    def unit_rows(self):
        """Rows a unit may hold after bounding: ``k``, or 1 without groups."""
        return 1 if self.groups is None else self.max_rows

    def label(self, what):
        """A ledger label that names the unit (unchanged for one row)."""
        if self.groups is None:
            return what
        return f"{what} (unit: group of <= {self.max_rows} rows)"

    def row_budget(self, estimator, epsilon, delta=0.0):
        """The ``(ε_r, δ_r)`` at which to run a row-level mechanism so that
        it is ``(ε, δ)``-DP for the unit (group privacy,
        :func:`~skdp.accounting._group_privacy.row_budget_for_groups`):
        ``(ε, δ)`` itself for one row. The charge stays ``(ε, δ)``.

        Refuses (before the charge) a bound ``k`` that leaves nothing: ``ε_r``
        or, for ``δ > 0``, ``δ_r`` rounded to 0.
        """
        if self.groups is None:
            return epsilon, delta
        eps_r, delta_r = row_budget_for_groups(epsilon, delta, self.max_rows)
        if eps_r == 0.0 or (delta > 0.0 and delta_r == 0.0):
            raise ValueError(
                f"{type(estimator).__name__}: max_rows_per_group="
                f"{self.max_rows} leaves no row-level budget (epsilon={epsilon!r}, "
                f"delta={delta!r} shared over {self.max_rows} rows of a group "
                "round to 0); state a smaller bound or a larger epsilon/delta. "
                "Nothing was charged."
            )
        return eps_r, delta_r

    def refuse_private(self, estimator, what, fix, private):
        """Refuse (before the charge) a release chosen privately for one row
        when the unit is a group: ``what`` must then be stated (``fix``)."""
        if private and self.groups is not None:
            raise ValueError(
                f"{type(estimator).__name__}: with groups the {what} must be "
                "public (its private release is stated for one row); pass "
                f"{fix}. Nothing was charged."
            )

    def bound(self, source, *columns):
        """``columns`` (arrays, sparse matrices or None, one row per row of
        the data) restricted to the kept rows; unchanged without groups.

        The hash key is drawn from ``source`` (the estimator's random
        source: secret with ``random_state=None``, never from the data).
        """
        if self.groups is None:
            return columns
        kept = self.kept(source, *columns)
        return tuple(None if c is None else _take(c, kept) for c in columns)

    def kept(self, source, *columns):
        """Indices of the rows :meth:`bound` keeps (all rows without groups),
        for data whose content ``columns`` (numbers) stand for."""
        if self.groups is None:
            n = next(c for c in columns if c is not None).shape[0]
            return np.arange(n, dtype=np.intp)
        seed = int(source.uint64())
        return kept_rows(self.groups, self.max_rows, seed, columns)

    @contextmanager
    def planning_at_row_budget(self, estimator):
        """Name the bound in a refusal of a plan made at :meth:`row_budget`
        (raised before the charge): with a large ``k`` the row budget may
        be too small for a sampler."""
        try:
            yield
        except ValueError as exc:
            if self.groups is None:
                raise
            raise ValueError(
                f"{type(estimator).__name__}: with groups each private step "
                f"runs as for one row at the budget that max_rows_per_group="
                f"{self.max_rows} rows leave (epsilon / {self.max_rows}), and "
                f"it cannot run there: {exc} Lower max_rows_per_group or raise "
                "epsilon. Nothing was charged."
            ) from None


def _take(column, rows):
    if sparse.issparse(column):
        return column[rows]
    return np.asarray(column)[rows]


class GroupsMixin:
    """``groups`` as the privacy unit of ``fit``.

    Routing requests ``groups`` from every private estimator
    (:class:`~skdp.base.PrivateEstimatorMixin`): a meta-estimator given
    ``groups`` passes it to this estimator, so the unit is never dropped on
    the way. Subclasses have a ``max_rows_per_group`` parameter.
    """

    def _privacy_unit(self, groups, X):
        """Check ``groups`` and ``max_rows_per_group``; before any charge."""
        name = type(self).__name__
        k = self.max_rows_per_group
        if groups is None:
            if k is not None:
                raise ValueError(
                    f"{name}: max_rows_per_group={k} is set but fit got no "
                    "groups, so the privacy unit would be one row. Pass "
                    "fit(X, y, groups=...) (in a Pipeline, cross_validate or a "
                    "search, call sklearn.set_config(enable_metadata_routing="
                    "True) and pass groups to it), or set max_rows_per_group="
                    "None for row-level privacy. Nothing was charged."
                )
            return PrivacyUnit(None, 1)
        if k is None:
            raise ValueError(
                f"{name}: fit got groups but max_rows_per_group is None. State "
                f"a public bound on the rows of one group, e.g. {name}("
                "max_rows_per_group=5): each group keeps at most that many "
                "rows (a seeded choice among its own rows) and the noise "
                "grows with it. It must not be read from the data (e.g. the "
                "largest group's size). Nothing was charged."
            )
        if k > MAX_ROWS:
            raise ValueError(
                f"{name}: max_rows_per_group={k} is beyond 2**53, more rows than "
                "any data set in memory holds (and the sensitivities k d, k² d "
                "would no longer be exact floats); state the bound you mean, "
                "at most 2**53. Nothing was charged."
            )
        if not (isinstance(X, np.ndarray) or sparse.issparse(X)):
            raise ValueError(
                f"{name}: groups is supported for in-memory data only, not "
                "for a Dask input. Nothing was charged."
            )
        labels = groups if isinstance(groups, GroupLabels) else as_group_labels(groups)
        problem = None
        if isinstance(groups, GroupLabels):
            problem = groups.structure_problem()
        if problem is not None:  # bounding would index with them after the charge
            raise ValueError(
                f"{name}: groups is a GroupLabels whose {problem[4:]}; pass the "
                "labels themselves (or GroupLabels.of(labels)). Nothing was "
                "charged."
            )
        if labels.ndim != 1 or labels.shape[0] != X.shape[0]:
            raise ValueError(
                f"{name}: groups has shape {labels.shape}; it needs one label "
                f"per row of X, shape ({X.shape[0]},). Nothing was charged."
            )
        try:  # every label numbered and hashed here, none after the charge
            labels = GroupLabels.of(labels)
        except ValueError as exc:
            raise ValueError(
                f"{name}: {exc}; give every row its group. Nothing was charged."
            ) from None
        return PrivacyUnit(labels, int(k))
