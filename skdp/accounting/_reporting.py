"""The reading methods of :class:`~skdp.BudgetAccountant`: report, HTML, plot.

They render one consistent snapshot of the ledger with
:mod:`skdp.accounting._report`; the accountant inherits them.
"""

from skdp.accounting import _report

__all__ = ["LedgerReports"]


class LedgerReports:
    """``report``, ``_repr_html_`` and ``plot`` of an accountant's ledger."""

    def report(self, *, by="label"):
        """A text report of the ledger: what was spent, on what, and what remains.

        The table sums the entries exactly (as the accountant does) and is
        followed by the budget, the privacy spent (with ``slack > 0``, both
        the basic sum and the composed total of :meth:`total`, naming the
        composition used) and the :meth:`remaining` budget. Numbers are shown
        to six significant digits.

        Parameters
        ----------
        by : {"label", "estimator", "entry"}, default="label"
            ``"label"`` groups the entries by label and ``"estimator"`` by the
            part of the label before its first ``": "`` (the estimator's
            class), both in order of first appearance, with the number of
            spends and their total epsilon and delta. ``"entry"`` lists every
            entry with its time (UTC) and the cumulative epsilon and delta.

        Returns
        -------
        report : str

        See Also
        --------
        plot : The cumulative spend as a plot.

        Examples
        --------
        >>> from skdp import BudgetAccountant
        >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
        >>> _ = acc.spend(0.25, 1e-6, label="PrivateMean: clipped sums")
        >>> _ = acc.spend(0.1, label="PrivateMean: count")
        >>> _ = acc.spend(0.25, 1e-6, label="PrivateMean: clipped sums")
        >>> print(acc.report())
        BudgetAccountant ledger (in memory): 3 spends
        <BLANKLINE>
        label                      spends  epsilon  delta
        -------------------------  ------  -------  -----
        PrivateMean: clipped sums       2      0.5  2e-06
        PrivateMean: count              1      0.1      0
        <BLANKLINE>
        budget     epsilon=1    delta=1e-05
        spent      epsilon=0.6  delta=2e-06  basic composition: the sum of the entries
        remaining  epsilon=0.4  delta=8e-06
        >>> print(acc.report(by="estimator"))
        BudgetAccountant ledger (in memory): 3 spends
        <BLANKLINE>
        estimator    spends  epsilon  delta
        -----------  ------  -------  -----
        PrivateMean       3      0.6  2e-06
        ...
        """
        _report.check_by(by)
        snapshot = _report.take_snapshot(self, entries=by == "entry")
        return _report.format_report(snapshot, by=by)

    def _repr_html_(self):
        """An HTML summary for notebooks: budget, spent, remaining, labels.

        At most 50 labels are listed, so that a long ledger renders quickly.

        Returns
        -------
        html : str

        Examples
        --------
        >>> from skdp import BudgetAccountant
        >>> acc = BudgetAccountant(epsilon=1.0)
        >>> _ = acc.spend(0.5, label="<PrivateMean>")
        >>> "&lt;PrivateMean&gt;" in acc._repr_html_()
        True
        """
        return _report.format_html(_report.take_snapshot(self))

    def plot(self, ax=None, *, delta=True):
        """Plot the cumulative privacy spent against the entry number.

        The curve is the *basic* composition (the running sum of epsilon);
        with ``slack > 0``, when advanced composition gives a smaller total, a
        marker at the last entry shows the composed epsilon of :meth:`total`.
        A dashed line marks a finite epsilon budget. Requires matplotlib.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; a new figure when ``None``.
        delta : bool, default=True
            Also draw the cumulative delta, on a twin y axis, if any delta was
            spent.

        Returns
        -------
        ax : matplotlib Axes
            The Axes of the epsilon curve.

        See Also
        --------
        report : The same ledger as a text table.

        Examples
        --------
        >>> from skdp import BudgetAccountant
        >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
        >>> for _ in range(5):
        ...     _ = acc.spend(0.1, 1e-6, label="PrivateMean: clipped sums")
        >>> ax = acc.plot()
        >>> [float(eps) for eps in ax.get_lines()[0].get_ydata()]
        [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
        """
        snapshot = _report.take_snapshot(self, entries=True)
        return _report.plot_ledger(snapshot, ax, delta=delta)
