"""The spending methods of :class:`~skdp.BudgetAccountant`: check, spend,
spend_many, and the validation that turns items into ledger parts counted
in the accountant's privacy unit (:mod:`skdp.accounting._units`); the
accountant inherits them.
"""

from skdp.accounting._cost import ledger_parts
from skdp.accounting._units import check_charge_unit, convert_part, unit_factor

__all__ = ["Spending"]


class Spending:
    """``check``, ``spend`` and ``spend_many`` of an accountant."""

    def check(self, epsilon, delta=0.0, *, unit=None, group_rows=None):
        """Whether a spend would fit, without recording it.

        Parameters
        ----------
        epsilon : float or PrivacyCost
            The ε of the spend, or its whole cost (e.g. from
            :func:`~skdp.model_selection.fit_cost`), whose parts are composed
            as this accountant composes (then ``delta`` is ignored).
        delta : float, default=0.0
        unit, group_rows :
            The unit the cost is stated for, as in :meth:`spend_many`.

        Returns
        -------
        True
            When the spend fits.

        Raises
        ------
        BudgetExceededError
            When it does not.
        """
        items = self._validate_items([("check", epsilon, delta)], unit, group_rows)
        self._check_spend(self._ledger.totals(), items)
        return True

    def spend(self, epsilon, delta=0.0, *, label, unit=None, group_rows=None):
        """Record a spend, or raise if it would exceed the budget.

        Parameters
        ----------
        epsilon : float or PrivacyCost
            ε of the release, ``>= 0``; or its cost, which says what the
            mechanism was (a sum of costs is recorded as one entry per part).
        delta : float, default=0.0
            δ of the release (ignored with a ``PrivacyCost``).
        label : str
            What was released (shown in the ledger).
        unit, group_rows :
            The unit the cost is stated for, as in :meth:`spend_many`.

        Returns
        -------
        entry : LedgerEntry
            The recorded entry (the last, for a sum of costs).

        Raises
        ------
        BudgetExceededError
            When the spend does not fit; nothing is recorded.
        AccountantCopyError
            When this is a copy of an in-memory accountant in another process
            and the owner cannot be reached (it exited, or the accountant was
            garbage-collected there).
        """
        items = [(label, epsilon, delta)]
        # the unit only when stated: a subclass may override spend_many(items)
        # with the signature it had before charges carried a unit
        stated = {} if unit is None and group_rows is None else {"unit": unit}
        if group_rows is not None:
            stated["group_rows"] = group_rows
        return self.spend_many(items, **stated)[-1]

    def spend_many(self, items, *, unit=None, group_rows=None):
        """Record several spends atomically: all of them, or none.

        An estimator charges every step of a ``fit`` (for example bound
        selection and release) with one call, so the split is visible in the
        ledger and a fit is never half-charged.

        Parameters
        ----------
        items : iterable of (label, epsilon, delta) or (label, PrivacyCost)
        unit : {"row", "group"} or None, default=None
            The privacy unit the costs are stated for; ``None``: a
            :class:`~skdp.accounting.PrivacyCost`'s own ``unit``, one row
            for plain numbers. A cost in another unit than the accountant's
            is converted (class Notes); the entries keep both.
        group_rows : int or None, default=None
            With ``unit="group"``: the public bound on a group's rows (for
            the ledger).

        Returns
        -------
        entries : tuple of LedgerEntry

        Raises
        ------
        ValueError
            For a row-level cost in a ``unit="group"`` accountant that
            states no ``max_rows_per_group`` (nothing is charged).
        """
        items = self._validate_items(items, unit, group_rows)
        return self._ledger.append_if(self._check_spend, items)

    def _validate_items(self, items, unit=None, group_rows=None):
        """The items as ledger parts, each with the cost this accountant
        counts for it; refuses (before any charge) what cannot be counted."""
        if unit is not None or group_rows is not None:
            unit, group_rows = check_charge_unit(unit or "row", group_rows)
        parts = []
        for item in items:
            atoms = ledger_parts(*item)
            if unit is not None and {a.unit for a in atoms} == {"row", "group"}:
                raise ValueError(
                    f"{atoms[0].label!r}: its cost states one row for some parts "
                    f"and one group for others; unit={unit!r} would restate them "
                    "all. Charge it without unit= (each part keeps its own). "
                    "Nothing was charged."
                )
            for part in atoms:
                if unit is not None:
                    part = self._restated(part, unit, group_rows)
                parts.append(self._counted(part))
        self._rule.check_parts(parts)
        return parts

    @staticmethod
    def _restated(part, unit, group_rows):
        if part.unit != "row" and (part.unit, part.group_rows) != (unit, group_rows):
            raise ValueError(
                f"{part.label!r}: its cost is stated for unit={part.unit!r} and "
                f"the charge for unit={unit!r}; state one unit. Nothing was "
                "charged."
            )
        return part._replace(unit=unit, group_rows=group_rows)

    def _counted(self, part):
        """``part`` with the cost counted in this accountant's unit."""
        c = unit_factor(part.label, part.unit, self._unit, self._max_rows_per_group)
        return part._replace(counted=convert_part(part, c))
