"""The privacy budget accountant shared by every skdp estimator."""

import contextvars
import math
import os
import threading
from fractions import Fraction

from skdp.accounting._composition import (
    advanced_filter_epsilon,
    decimal_units,
    exact,
    filter_slope,
)
from skdp.accounting._ledger import MemoryLedger, SQLiteLedger
from skdp.exceptions import AccountantCopyError, BudgetExceededError
from skdp.utils._validation import check_delta, check_epsilon

__all__ = ["BudgetAccountant", "default_accountant", "set_default_accountant"]


class BudgetAccountant:
    """A privacy budget, and the ledger of everything spent from it.

    One accountant is shared by all the estimators that analyse the same
    sensitive data. Each ``fit`` charges its whole cost here *before* it reads
    the data; when the budget would be exceeded it raises
    :class:`~skdp.exceptions.BudgetExceededError` and nothing is released.

    The accountant is built to survive scikit-learn's machinery: ``clone``,
    ``copy.copy`` and ``copy.deepcopy`` return the accountant itself, so a
    ``GridSearchCV`` or ``cross_validate`` over estimators that share it
    records every fit. A copy that reaches another process, by pickling or by
    ``fork``, either writes to the same durable SQLite ledger
    (``ledger="path.sqlite"``) or, for an in-memory ledger, refuses to spend
    with :class:`~skdp.exceptions.AccountantCopyError`: a spend is never
    silently lost.

    Parameters
    ----------
    epsilon : float, default=inf
        Total privacy budget ε (``inf`` records spends without a limit).
    delta : float, default=0.0
        Total δ budget, in [0, 1]; ``1.0`` places no limit on δ.
    slack : float, default=0.0
        If > 0 (with a finite ``epsilon``), spends are admitted by an
        advanced-composition privacy filter, valid when each spend is chosen
        after seeing earlier releases, whenever that admits more than the sum;
        ``slack`` of the δ budget is reserved for it (see Notes). Must not
        exceed ``delta``. Ignored with ``epsilon=inf`` (a filter needs a
        budget fixed in advance).
    ledger : str, os.PathLike or None, default=None
        ``None`` keeps the ledger in memory (one process). A path stores it in
        a SQLite file shared by every thread and process that opens it, durable
        across crashes and restarts; re-opening the file restores the spent
        budget. A file's budget is fixed when it is created. A relative path
        is resolved against the working directory when the accountant is
        created, so copies in workers with another working directory write
        to the same file.

    Attributes
    ----------
    epsilon, delta, slack : float
        The budget (read-only).
    entries : tuple of LedgerEntry
        Every spend, in order: ``(label, epsilon, delta, time)``.

    See Also
    --------
    default_accountant : The accountant used by estimators given none.

    Notes
    -----
    **Exact arithmetic.** Budgets and spends are taken as the decimal numbers
    written (the shortest repr of each float) and summed exactly: ten spends
    of 0.1 fit in a budget of 1.0, one of 1.0000001 does not. The advanced
    bound is evaluated in floating point and rounded up before it is
    compared.

    **Adaptive advanced composition.** Analysts choose the next fit after
    seeing earlier results, so the advanced composition theorem for fixed
    parameters (Kairouz, Oh and Viswanath 2015) does not apply as such. With
    ``slack > 0`` the accountant is a *privacy filter* (Rogers, Roth, Ullman
    and Vadhan 2016): a spend is accepted when, after it, ``Σ δ_i + slack <=
    δ`` and either ``Σ ε_i <= ε`` or ``t + ln(1/slack)/λ + λ s/2 <= ε``, with
    ``t = Σ ε_i tanh(ε_i/2)``, ``s = Σ ε_i²`` and a slope ``λ`` fixed by the
    budget alone (tangent to ``s/2 + sqrt(2 s ln(1/slack))`` where it reaches
    ``ε``; Whitehouse, Ramdas, Rogers and Wu 2023 show such filters match
    advanced composition, constants included). **Theorem:** every
    interaction whose spends this accountant accepted is ``(ε, δ)``-DP as a
    whole, for fully adaptive choices of the ``(ε_i, δ_i)``; the proof (a
    supermartingale and Ville's inequality, valid at any stopping time and
    hence for either rule) is in
    :func:`skdp.accounting._composition.advanced_filter_epsilon`.
    :meth:`total` reports the smaller of the two used ε, with the slack in
    δ; it is what the filter has consumed, while the guarantee of the
    interaction is the budget.

    **Atomicity.** ``spend`` checks and records under a lock (memory) or an
    immediate SQLite transaction (file), so concurrent threads or processes
    never overspend together.

    **Identity.** ``clone``/``deepcopy`` keep the same object. The accountant
    deliberately has no ``get_params``, ``__len__``, ``shape`` or
    ``__array__``, so scikit-learn never treats it as an estimator or as
    sample-aligned data.

    References
    ----------
    .. [1] P. Kairouz, S. Oh and P. Viswanath, "The composition theorem for
       differential privacy", ICML 2015.
    .. [3] R. Rogers, A. Roth, J. Ullman and S. Vadhan, "Privacy odometers and
       filters: pay-as-you-go composition", NeurIPS 2016.
    .. [4] J. Whitehouse, A. Ramdas, R. Rogers and Z. S. Wu, "Fully-adaptive
       composition in differential privacy", ICML 2023.
    .. [2] C. Dwork, G. N. Rothblum and S. Vadhan, "Boosting and differential
       privacy", FOCS 2010.

    Examples
    --------
    >>> from skdp import BudgetAccountant
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> for _ in range(10):
    ...     _ = acc.spend(0.1, label="query")
    >>> acc.total()
    (1.0, 0.0)
    >>> acc.spend(0.1, label="one too many")
    Traceback (most recent call last):
    ...
    skdp.exceptions.BudgetExceededError: Spending epsilon=0.1, delta=0.0 ...
    """

    def __init__(self, epsilon=math.inf, delta=0.0, *, slack=0.0, ledger=None):
        epsilon = check_epsilon(epsilon, allow_zero=True, allow_inf=True)
        delta = 1.0 if delta == 1 else check_delta(delta)
        slack = check_delta(slack, name="slack")
        if slack > delta:
            raise ValueError(
                f"slack must not exceed the delta budget: slack={slack} is the "
                f"part of delta={delta} spent on advanced composition."
            )
        budget = (repr(epsilon), repr(delta), repr(slack))
        if ledger is None:
            self._ledger = MemoryLedger()
        else:
            self._ledger = SQLiteLedger(ledger, budget)
        self._set_budget(budget)
        self._copy_of_pid = None
        self._owner_pid = os.getpid()
        self._context = threading.local()

    @classmethod
    def open(cls, ledger):
        """Open an existing SQLite ledger with the budget stored in it.

        Parameters
        ----------
        ledger : str or os.PathLike
            Path of a ledger created by ``BudgetAccountant(..., ledger=path)``.

        Returns
        -------
        accountant : BudgetAccountant
        """
        if not os.path.exists(ledger):
            raise FileNotFoundError(f"No ledger file at {os.fspath(ledger)!r}.")
        self = cls.__new__(cls)
        self._ledger = SQLiteLedger(ledger, None)
        self._set_budget(self._ledger.budget)
        self._copy_of_pid = None
        self._owner_pid = os.getpid()
        self._context = threading.local()
        return self

    def _set_budget(self, budget):
        self._epsilon, self._delta, self._slack = (float(v) for v in budget)
        # The budget in decimal units (None: no limit, or no slack) and the
        # largest float at most the ε budget, for the exact checks of _fits.
        finite = not math.isinf(self._epsilon)
        self._budget_units = (
            decimal_units(self._epsilon) if finite else None,
            None if self._delta == 1.0 else decimal_units(self._delta),
            decimal_units(self._slack) if self._slack and finite else None,
            _float_down(exact(self._epsilon)) if finite else math.inf,
        )

    # -- the budget ---------------------------------------------------------

    @property
    def epsilon(self):
        """Total ε budget."""
        return self._epsilon

    @property
    def delta(self):
        """Total δ budget."""
        return self._delta

    @property
    def slack(self):
        """δ set aside for advanced composition."""
        return self._slack

    @property
    def ledger(self):
        """Path of the SQLite ledger, or ``None`` for an in-memory ledger."""
        return self._ledger.path

    @property
    def entries(self):
        """Every spend so far, oldest first (a tuple of ``LedgerEntry``)."""
        return self._ledger.read()

    # -- composition --------------------------------------------------------

    def _compose(self, totals):
        """The (epsilon, delta) statements that hold for spends with these totals.

        Returns a list of ``(epsilon, delta)`` pairs of exact fractions; the
        budget is respected while any of them fits (class Notes). The first is
        basic composition. With ``slack > 0`` and a finite ε budget the second
        is the advanced-composition filter, and both carry the slack in δ.
        """
        if self._slack == 0 or math.isinf(self._epsilon):
            return [(totals.epsilon, totals.delta)]
        delta = totals.delta + exact(self._slack)
        statements = [(totals.epsilon, delta)]
        if totals.count:
            slope = filter_slope(self._epsilon, self._slack)
            adv = advanced_filter_epsilon(totals, self._slack, slope)
            statements.append((Fraction(adv), delta))
        return statements

    def _fits(self, totals):
        """Whether spends with these totals respect the budget (see _compose).

        The same rule as :meth:`_compose`, evaluated on the exact integer
        sums: the advanced statement is a float ``a``, and ``a <= B`` for the
        exact budget ``B`` exactly when ``a`` is at most the largest float
        below ``B``.
        """
        eps_budget, delta_budget, slack, eps_budget_down = self._budget_units
        advanced = slack is not None
        delta = totals.delta_units + (slack if advanced else 0)
        if delta_budget is not None and delta > delta_budget:
            return False
        if eps_budget is None or totals.epsilon_units <= eps_budget:
            return True
        if not (advanced and totals.count):
            return False
        slope = filter_slope(self._epsilon, self._slack)
        return advanced_filter_epsilon(totals, self._slack, slope) <= eps_budget_down

    def _check_spend(self, totals, items):
        after = totals.add_all((eps, delta) for _, eps, delta in items)
        if not self._fits(after):
            raise BudgetExceededError(self._refusal_message(totals, after, items))
        return after

    def _refusal_message(self, totals, after, items):
        """Who asked, which dimension is short, and what to do about it."""
        spent_eps, spent_delta = self._total_of(totals)
        eps = math.fsum(eps for _, eps, _ in items)
        delta = math.fsum(d for _, _, d in items)
        names = {label.split(": ", 1)[0] for label, _, _ in items if ": " in label}
        who = f"{', '.join(sorted(names))}: " if len(names) == 1 else ""
        _, delta_budget, slack, _ = self._budget_units
        delta_used = after.delta_units + (slack or 0)
        if delta_budget is not None and delta_used > delta_budget:
            if self._delta == 0:
                short = (
                    f"this charge needs delta={delta}, and the accountant was "
                    "created with delta=0.0 (pure epsilon-DP): create it with a "
                    "delta budget, e.g. BudgetAccountant(epsilon=..., "
                    "delta=1e-5), or use mechanisms that spend no delta"
                )
            else:
                short = (
                    f"delta is short: this charge needs delta={delta}; the budget "
                    f"is delta={self._delta} with delta={spent_delta} already "
                    "spent" + (" (the slack included)" if slack else "")
                )
        else:
            short = (
                f"epsilon is short: this charge needs epsilon={eps}; the budget "
                f"is epsilon={self._epsilon} with epsilon={spent_eps} already spent"
            )
        verb = "spending" if who else "Spending"
        return (
            f"{who}{verb} epsilon={eps}, delta={delta} would exceed the privacy "
            f"budget (epsilon={self._epsilon}, delta={self._delta}); already "
            f"spent epsilon={spent_eps}, delta={spent_delta} in {totals.count} "
            f"entries. {short[0].upper() + short[1:]}. Nothing was charged and "
            "no data was read."
        )

    def _total_of(self, totals):
        eps, delta = min(self._compose(totals))
        return _float_up(eps), _float_up(delta)

    def total(self):
        """The privacy spent so far, as ``(epsilon, delta)``.

        With ``slack > 0`` (and a finite budget) this is the smaller ε used
        by the basic sum and the advanced-composition filter, with the slack
        included in δ (class Notes). Values are rounded up where the exact
        sum is not a float.

        Returns
        -------
        epsilon, delta : float
        """
        return self._total_of(self._ledger.totals())

    def remaining(self):
        """The largest single further spend that fits, as ``(epsilon, delta)``.

        Under basic composition this is the budget minus :meth:`total`. Under
        advanced composition ε is found by bisection on :meth:`check`, with the
        whole remaining δ.

        Returns
        -------
        epsilon, delta : float
        """
        totals = self._ledger.totals()
        delta = max(exact(self._delta) - totals.delta, Fraction(0))
        if math.isinf(self._epsilon):
            return math.inf, _float_down(delta)
        eps = max(exact(self._epsilon) - totals.epsilon, Fraction(0))
        if self._slack == 0:
            return _float_down(eps), _float_down(delta)
        lo, hi = float(eps), 2.0 * self._epsilon + 1.0
        for _ in range(200):  # largest ε that fits, to float precision
            mid = (lo + hi) / 2.0
            if mid in (lo, hi):
                break
            if self._would_fit(totals, [("", mid, 0.0)]):
                lo = mid
            else:
                hi = mid
        return lo, _float_down(delta)

    def _would_fit(self, totals, items):
        try:
            self._check_spend(totals, items)
        except BudgetExceededError:
            return False
        return True

    # -- spending -----------------------------------------------------------

    def check(self, epsilon, delta=0.0):
        """Whether a spend would fit, without recording it.

        Parameters
        ----------
        epsilon : float
        delta : float, default=0.0

        Returns
        -------
        True
            When the spend fits.

        Raises
        ------
        BudgetExceededError
            When it does not.
        """
        items = [self._validate_item("check", epsilon, delta)]
        self._refuse_if_copy()
        self._check_spend(self._ledger.totals(), items)
        return True

    def spend(self, epsilon, delta=0.0, *, label):
        """Record a spend, or raise if it would exceed the budget.

        Parameters
        ----------
        epsilon : float
            ε of the release, ``>= 0``.
        delta : float, default=0.0
            δ of the release.
        label : str
            What was released (shown in the ledger).

        Returns
        -------
        entry : LedgerEntry
            The recorded entry.

        Raises
        ------
        BudgetExceededError
            When the spend does not fit; nothing is recorded.
        AccountantCopyError
            When this is a pickled copy of an in-memory accountant.
        """
        return self.spend_many([(label, epsilon, delta)])[0]

    def spend_many(self, items):
        """Record several spends atomically: all of them, or none.

        An estimator charges every step of a ``fit`` (for example bound
        selection and release) with one call, so the split is visible in the
        ledger and a fit is never half-charged.

        Parameters
        ----------
        items : iterable of (label, epsilon, delta)

        Returns
        -------
        entries : tuple of LedgerEntry
        """
        items = [self._validate_item(*item) for item in items]
        self._refuse_if_copy()
        return self._ledger.append_if(self._check_spend, items)

    @staticmethod
    def _validate_item(label, epsilon, delta=0.0):
        if not isinstance(label, str):
            raise TypeError(f"label must be a string; got {label!r}.")
        return (
            label,
            check_epsilon(epsilon, allow_zero=True),
            check_delta(delta),
        )

    def _refuse_if_copy(self):
        """Refuse to spend from a copy of an in-memory ledger.

        A copy made by pickling remembers the pid of the original's process; a
        copy made by ``fork`` (multiprocessing, ``ProcessPoolExecutor`` on
        Linux) is the same object in another process, recognised by its owner
        pid. Either way a spend would be recorded where the original never
        sees it.
        """
        if self._ledger.path is not None:
            return
        pid = os.getpid()
        if self._copy_of_pid is None and self._owner_pid == pid:
            return
        if self._copy_of_pid is None:
            how = f"inherited by a forked child process (pid {pid})"
        elif self._copy_of_pid != pid:
            how = "a pickled copy sent to another process"
        else:
            how = "a pickled copy made in this process"
        raise AccountantCopyError(
            f"This BudgetAccountant is {how} of an accountant with an in-memory "
            "ledger, so a spend here would not reach the original's record. "
            "Share the budget across processes with BudgetAccountant(..., "
            "ledger='budget.sqlite'), or run parallel work in threads with "
            "joblib.parallel_config(backend='threading')."
        )

    # -- reports ------------------------------------------------------------

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
        from skdp.accounting import _report

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
        from skdp.accounting import _report

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
        from skdp.accounting import _report

        snapshot = _report.take_snapshot(self, entries=True)
        return _report.plot_ledger(snapshot, ax, delta=delta)

    # -- sklearn, copying and pickling --------------------------------------

    def __sklearn_clone__(self):
        return self

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __getstate__(self):
        state = {
            "budget": (repr(self._epsilon), repr(self._delta), repr(self._slack)),
            "path": self._ledger.path,
            "pid": self._owner_pid if self._copy_of_pid is None else self._copy_of_pid,
        }
        if state["path"] is None:
            state["entries"] = self._ledger.read()
        return state

    def __setstate__(self, state):
        self._set_budget(state["budget"])
        self._context = threading.local()
        if state["path"] is None:
            self._ledger = MemoryLedger(state["entries"])
            self._copy_of_pid = state["pid"]
        else:
            self._ledger = SQLiteLedger(state["path"], state["budget"])
            self._copy_of_pid = None
        self._owner_pid = state["pid"]

    # -- default accountant -------------------------------------------------

    def __enter__(self):
        tokens = self._context.__dict__.setdefault("tokens", [])
        tokens.append(_current.set(self))
        with _process_lock:
            _process_stack.append(self)
        return self

    def __exit__(self, *exc_info):
        _current.reset(self._context.tokens.pop())
        with _process_lock:
            for i in range(len(_process_stack) - 1, -1, -1):
                if _process_stack[i] is self:
                    del _process_stack[i]
                    break

    def __repr__(self):
        eps, delta = self.total()
        ledger = "" if self.ledger is None else f", ledger={self.ledger!r}"
        slack = f", slack={self._slack}" if self._slack else ""
        return (
            f"BudgetAccountant(epsilon={self._epsilon}, delta={self._delta}"
            f"{slack}{ledger}; spent epsilon={eps}, delta={delta})"
        )


def _float_up(value):
    """The nearest float whose decimal reading is >= ``value``."""
    f = float(value)
    return f if exact(f) >= value else math.nextafter(f, math.inf)


def _float_down(value):
    """The nearest float whose decimal reading is <= ``value``."""
    f = float(value)
    return f if exact(f) <= value else math.nextafter(f, -math.inf)


# The default accountant: a context variable set by ``with accountant:``; a
# process-wide stack of the accountants entered, consulted by threads whose
# context has none (threads do not inherit context variables, so joblib's
# threading backend would otherwise miss the block's accountant); and the
# process-wide default.
_current = contextvars.ContextVar("skdp_default_accountant", default=None)
_process_lock = threading.Lock()
_process_stack = []
_process_default = []
_auto_default = []  # the unlimited default created on first use, if any


def _fresh_default_after_fork():
    """In a forked child, forget an inherited automatic default accountant.

    The automatic default (``epsilon=inf``) only records; its record lives in
    the parent, so a child gets a fresh one of its own (documented in
    :func:`default_accountant`). An accountant the user put in effect is kept:
    if its ledger is in memory it refuses to spend in the child.
    """
    global _process_lock
    _process_lock = threading.Lock()  # a lock held by another thread at fork
    if _auto_default and _process_default and _process_default[0] is _auto_default[0]:
        _process_default.clear()
    _auto_default.clear()


os.register_at_fork(after_in_child=_fresh_default_after_fork)


def check_accountant(accountant):
    """Return ``accountant`` if it is a :class:`BudgetAccountant`, else raise."""
    if not isinstance(accountant, BudgetAccountant):
        raise TypeError(
            "accountant must be a skdp.BudgetAccountant or None; got "
            f"{type(accountant).__name__}."
        )
    return accountant


def _explicit_default():
    """The accountant a user put in effect, or ``None``."""
    accountant = _current.get()
    if accountant is not None:
        return accountant
    with _process_lock:
        if _process_stack:
            return _process_stack[-1]
        if _process_default:
            return _process_default[0]
    return None


def default_accountant():
    """The accountant estimators use when their ``accountant`` is ``None``.

    Inside ``with accountant:`` it is that accountant (also in threads started
    inside the block); otherwise the one set with
    :func:`set_default_accountant`; otherwise a process-wide accountant with an
    unlimited budget (``epsilon=inf, delta=1.0``), which only records (a
    process started by ``fork`` records in a fresh one of its own; an
    accountant you put in effect and whose ledger is in memory refuses to
    spend in such a child, see :class:`BudgetAccountant`).
    Estimators look it up when ``fit`` is called, never when they are
    constructed.

    Returns
    -------
    accountant : BudgetAccountant

    Examples
    --------
    >>> from skdp import BudgetAccountant, default_accountant
    >>> acc = BudgetAccountant(epsilon=2.0)
    >>> with acc:
    ...     default_accountant() is acc
    True
    >>> default_accountant() is acc
    False
    """
    accountant = _explicit_default()
    if accountant is not None:
        return accountant
    with _process_lock:
        if not _process_default:
            _process_default.append(BudgetAccountant(math.inf, 1.0))
            _auto_default[:] = _process_default
        return _process_default[0]


def set_default_accountant(accountant):
    """Make ``accountant`` the process-wide default, and return the previous one.

    ``with accountant:`` blocks take precedence over it.

    Parameters
    ----------
    accountant : BudgetAccountant

    Returns
    -------
    previous : BudgetAccountant

    Examples
    --------
    >>> from skdp import BudgetAccountant, default_accountant, set_default_accountant
    >>> acc = BudgetAccountant(epsilon=2.0)
    >>> previous = set_default_accountant(acc)
    >>> default_accountant() is acc
    True
    >>> _ = set_default_accountant(previous)  # restore
    """
    if not isinstance(accountant, BudgetAccountant):
        raise TypeError(
            f"accountant must be a BudgetAccountant; got {type(accountant).__name__}."
        )
    previous = default_accountant()
    with _process_lock:
        _process_default[:] = [accountant]
    return previous
