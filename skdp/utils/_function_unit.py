"""The privacy unit of a function's release: one row, or one group of rows.

The functions of :mod:`skdp.tools` and :mod:`skdp.metrics` that release
their own statistic take ``groups=`` and a public ``max_rows_per_group=k``
as the estimators do (:class:`~skdp.utils._privacy_unit.GroupsMixin`): the
same checks before any charge, the same bounding after it
(:meth:`~skdp.utils._privacy_unit.PrivacyUnit.bound`), and costs that carry
the unit in the ledger.
"""

from numbers import Integral

from skdp.utils._privacy_unit import GroupsMixin

__all__ = ["function_unit", "stated_for_unit"]


def function_unit(function, groups, max_rows_per_group, X):
    """The :class:`~skdp.utils._privacy_unit.PrivacyUnit` of a call of
    ``function`` on rows ``X`` (an in-memory array); raises before any
    charge, with the estimators' messages, on a bound without groups,
    groups without a bound, or groups that do not label every row."""
    k = max_rows_per_group
    if k is not None and (isinstance(k, bool) or not isinstance(k, Integral) or k < 1):
        raise ValueError(
            f"{function}: max_rows_per_group must be an int >= 1 or None; got "
            f"{k!r}. Nothing was charged."
        )
    caller = type(function, (GroupsMixin,), {})()
    caller.max_rows_per_group = None if k is None else int(k)
    return caller._privacy_unit(groups, X)


def stated_for_unit(items, unit):
    """``(label, PrivacyCost)`` items whose labels and costs name ``unit``
    (a group of at most ``k`` rows); unchanged for one row."""
    if unit.groups is None:
        return list(items)
    return [
        (unit.label(label), cost.in_unit("group", unit.max_rows))
        for label, cost in items
    ]
