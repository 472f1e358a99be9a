"""The privacy budget accountant shared by every skdp estimator.

:class:`BudgetAccountant` keeps the ledger (in memory, in a SQLite file, or
a copy that spends through its owner process), its locking, the budget and
the public API; the arithmetic of each composition is one rule of
:mod:`skdp.accounting._rules`, which the accountant asks whether a spend
fits, what the entries compose to and what remains.
"""

import math
import os
import threading

from skdp.accounting import _channel, _context
from skdp.accounting._composition import TIGHT_COMPOSITIONS
from skdp.accounting._copies import _file_copy, _memory_copy
from skdp.accounting._ledger import MemoryLedger, SQLiteLedger
from skdp.accounting._ledger_schema import full_budget
from skdp.accounting._reporting import LedgerReports
from skdp.accounting._rules import check_composition, make_rule
from skdp.accounting._spending import Spending
from skdp.accounting._units import check_accountant_unit
from skdp.exceptions import AccountantCopyError, BudgetExceededError
from skdp.utils._validation import check_delta, check_epsilon

__all__ = ["BudgetAccountant"]


class BudgetAccountant(Spending, LedgerReports):
    """A privacy budget, and the ledger of everything spent from it.

    One accountant is shared by all the estimators that analyse the same
    sensitive data. Each ``fit`` charges its whole cost here *before* it reads
    the data; when the budget would be exceeded it raises
    :class:`~skdp.exceptions.BudgetExceededError` and nothing is released.

    The accountant is built to survive scikit-learn's machinery: ``clone``,
    ``copy.copy`` and ``copy.deepcopy`` return the accountant itself (so does
    unpickling in its own process), so a ``GridSearchCV`` or
    ``cross_validate`` over estimators that share it records every fit. A
    copy that reaches another process, by pickling or by ``fork``, either
    writes to the same durable SQLite ledger (``ledger="path.sqlite"``) or,
    for an in-memory ledger, spends and reads through the process that owns
    the accountant (Notes); when that process is gone it refuses with
    :class:`~skdp.exceptions.AccountantCopyError`: a spend is never silently
    lost.

    Parameters
    ----------
    epsilon : float, default=inf
        Total privacy budget ε (``inf`` records spends without a limit).
    delta : float, default=0.0
        Total δ budget, in [0, 1]; ``1.0`` places no limit on δ.
    slack : float, default=0.0
        The part of the δ budget reserved for a composition rule: for
        ``"advanced"`` (then > 0; with ``composition=None``, a positive slack
        selects ``"advanced"``), or for the conversion of ``"zcdp"`` (``0``
        means the whole ``delta``). Must not exceed ``delta``. The advanced
        filter is ignored with ``epsilon=inf`` (a filter needs a budget fixed
        in advance).
    composition : {"basic", "advanced", "zcdp", "pld"} or None, default=None
        How spends add up (see Notes); the budget is always stated as
        ``(epsilon, delta)``. ``None``: ``"advanced"`` if ``slack > 0``,
        otherwise ``"basic"``. ``"basic"`` sums the entries exactly;
        ``"advanced"`` admits a spend when the sum or the advanced-composition
        filter fits; ``"zcdp"`` adds up zero-concentrated DP and converts
        the total at ``δ = slack``; ``"pld"`` takes Gaussian releases only
        and composes their exact privacy curve, the tightest. All four hold
        for fully adaptive use (see Notes). Gaussian releases gain most from
        the last two; a few pure ε-DP spends are best summed.
    ledger : str, os.PathLike or None, default=None
        ``None`` keeps the ledger in memory (one process). A path stores it in
        a SQLite file shared by every thread and process that opens it, durable
        across crashes and restarts; re-opening the file restores the spent
        budget. A file's budget is fixed when it is created. A relative path
        is resolved against the working directory when the accountant is
        created, so copies in workers with another working directory write
        to the same file.
    unit : {"row", "group"}, default="row"
        What the budget protects: one row (add/remove-one-row neighbours),
        or one group of rows, e.g. every row of one person (add/remove one
        whole group). Charges stated for the other unit are converted (see
        Notes); the unit of a file ledger is fixed when it is created.
    max_rows_per_group : int or None, default=None
        With ``unit="group"``: a public bound, stated by the caller, on how
        many rows any one group has in *all* the data this accountant's
        releases read. Row-level charges then count as that many rows; they
        are refused without it.

    Attributes
    ----------
    epsilon, delta, slack : float
        The budget (read-only).
    unit : str
        ``"row"`` or ``"group"``.
    max_rows_per_group : int or None
        The stated bound on a group's rows (``unit="group"``).
    entries : tuple of LedgerEntry
        Every spend, in order: ``(label, epsilon, delta, time, ...)``, each
        with its unit and, if converted, the cost counted.

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

    **zCDP (``composition="zcdp"``).** Each entry enters with a zCDP parameter
    ``ρ_i`` and a "reveal" probability ``r_i``
    (:func:`skdp.accounting._composition.entry_profile`): a Gaussian release
    with noise multiplier ``m`` has ``ρ = 1/(2m²)`` (exact also for the
    discrete Gaussian, Canonne, Kamath and Steinke 2020) and ``r = 0``; any
    other ``(ε, δ)`` release is a post-processing of the canonical pair of
    Kairouz, Oh and Viswanath (2015), which reveals with probability ``δ`` and
    is otherwise ``ε``-randomised response, ``ε²/2``-zCDP (Bun and Steinke
    2016; smaller where the mechanism states it, e.g. ``ε²/8`` for the
    exponential mechanism). A spend is accepted while ``Σ r_i + slack <= δ``
    and the conversion of ``Σ ρ_i`` at ``δ' = slack`` (Canonne, Kamath and
    Steinke 2020, Cor. 13, minimised over the order) is ``<= ε``; as the
    conversion increases in ``ρ``, this is ``Σ ρ_i <= ρ_B`` for a ``ρ_B``
    fixed by the budget (:func:`skdp.accounting._zcdp.zcdp_rho_budget`,
    compared with the exact integer sum of the ``ρ_i``). **Theorem:** every
    interaction this accountant accepted is ``(ε, δ)``-DP, for fully adaptive
    choices of the releases and their parameters. Proof: on the paths where no
    release revealed (under either neighbour the non-reveal parts have the
    same weights ``Π(1 - r_i)``, which depend only on earlier outputs), the
    losses are those of Gaussian and randomised-response releases with
    predictable ``ρ_i``, so ``exp((α-1)(L_n - α Σ_{i<=n} ρ_i))`` is a
    supermartingale and the Rényi filter of Feldman and Zrnic (2021, Thm 3.1)
    bounds ``E[exp((α-1)L)]`` by ``exp((α-1)α ρ_B)`` for every ``α > 1``; the
    conversion's pointwise inequality bounds ``P(S) - e^ε Q(S)`` on those
    paths by the conversion's δ; the reveal events add at most the largest ``Σ
    r_i`` of a path, ``<= δ - slack``.

    **PLD (``composition="pld"``), for Gaussian releases.** Gaussian
    releases with multipliers ``m_i`` compose exactly to one with ``μ² = Σ
    1/m_i²`` (Dong, Roth and Su 2022, Cor. 3.3); a spend is accepted while
    ``Σ 1/m_i² <= μ_B²``, the largest ``μ²`` whose exact curve (Balle and
    Wang 2018, evaluated with outward margins by
    :mod:`skdp.accounting._pld`) gives ``δ(ε) <= δ``, and :meth:`total`
    reports the ε of ``μ`` at the δ budget. **Theorem** (Smith and Thakurta
    2022): every interaction this accountant accepted is ``(ε, δ)``-DP, for
    fully adaptive choices of the releases and their multipliers. Other
    mechanisms are refused (``ValueError``, nothing charged): for a mix of
    mechanisms chosen adaptively no PLD filter is known, and a sequence of
    PLD checks is *not* one (an analyst who picks the next releases after
    seeing the first can exceed δ); use ``"zcdp"`` for such ledgers, and
    :func:`~skdp.accounting.plan_epsilon` for the PLD of a plan fixed in
    advance. The discrete Gaussian's curve is taken to be the continuous
    one, as in :func:`~skdp.mechanisms.gaussian_mechanism`.

    **Privacy unit.** Every charge is stated for a unit: one row, or one
    group (an estimator fitted with ``groups=`` and ``max_rows_per_group=k``
    states its cost for one group of at most ``k`` kept rows). A charge in
    the accountant's own unit counts as stated (a group charge whatever its
    ``k``: contribution bounding makes it group-level DP; the fit's groups
    must then be the accountant's, e.g. persons, or unions of them: the
    accountant cannot check it). Otherwise it is
    converted by group privacy (:mod:`skdp.accounting._group_privacy`;
    Dwork and Roth 2014, Thm 2.2; Vadhan 2017, Lemma 2.2) to ``c`` of its
    units: ``(c ε, δ Σ_{i<c} e^{iε})``, ``c² ρ`` and a Gaussian noise
    multiplier ``σ/(cΔ)`` (which is ``cμ``-GDP, Dong, Roth and Su 2022,
    Thm 2.14), so every composition rule above takes the converted release
    as it is. **A group charge in a row accountant** has ``c = 2``: adding
    or removing one row adds or removes a whole new group, or changes the
    rows of an existing group, which is removing that group and adding its
    new version. **A row charge in a group accountant** has ``c = m``,
    ``max_rows_per_group``; without it the charge is refused
    (``ValueError``, nothing charged). Converted costs are rounded up, in
    the decimal reading the sums use and in the binary value the tight
    compositions use. The entry keeps the stated cost and unit and the
    ``counted`` cost; :meth:`total`, :meth:`remaining` and the reports are
    in the accountant's unit.

    **Atomicity.** ``spend`` checks and records under a lock (memory) or an
    immediate SQLite transaction (file), so concurrent threads or processes
    never overspend together. A copy of an in-memory accountant in a worker
    process sends each spend to the owner, which applies it under the same
    lock and replies with the entries or the refusal
    (:mod:`skdp.accounting._channel`).

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
    .. [5] M. Bun and T. Steinke, "Concentrated differential privacy:
       simplifications, extensions, and lower bounds", TCC 2016.
    .. [6] C. L. Canonne, G. Kamath and T. Steinke, "The discrete Gaussian for
       differential privacy", NeurIPS 2020.
    .. [7] V. Feldman and T. Zrnic, "Individual privacy accounting via a
       Rényi filter", NeurIPS 2021.
    .. [8] J. Dong, A. Roth and W. J. Su, "Gaussian differential privacy",
       JRSS B 2022.
    .. [9] A. Koskela, J. Jälkö and A. Honkela, "Computing tight differential
       privacy guarantees using FFT", AISTATS 2020.
    .. [10] A. Smith and A. Thakurta, "Fully adaptive composition for Gaussian
       differential privacy", arXiv:2210.17520, 2022.

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

    A grid of 100 Gaussian fits at ``(0.1, 1e-7)`` each sums to ε = 10; its
    PLD composition at δ = 1e-5 is below 1:

    >>> from skdp.mechanisms import gaussian_cost
    >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-5, composition="pld")
    >>> for _ in range(100):
    ...     _ = acc.spend(gaussian_cost(0.1, 1e-7), label="fit")
    >>> round(acc.total()[0], 3)
    0.894

    A fit stated for one group (``groups=`` with ``max_rows_per_group``)
    counts ``2 ε`` in a row-level budget; a row-level fit counts ``m ε`` in a
    person-level budget with at most ``m`` rows per person:

    >>> acc = BudgetAccountant(epsilon=3.0)
    >>> _ = acc.spend(1.0, label="row fit")
    >>> acc.spend(1.0, label="grouped fit", unit="group").counted
    (2.0, 0.0, None, None)
    >>> acc.total()
    (3.0, 0.0)
    >>> person = BudgetAccountant(epsilon=3.0, unit="group", max_rows_per_group=4)
    >>> person.spend(0.5, label="row fit").counted[0]
    2.0
    """

    def __init__(
        self,
        epsilon=math.inf,
        delta=0.0,
        *,
        slack=0.0,
        composition=None,
        ledger=None,
        unit="row",
        max_rows_per_group=None,
    ):
        epsilon = check_epsilon(epsilon, allow_zero=True, allow_inf=True)
        delta = 1.0 if delta == 1 else check_delta(delta)
        slack = check_delta(slack, name="slack")
        composition = check_composition(composition, epsilon, delta, slack)
        unit, rows = check_accountant_unit(unit, max_rows_per_group)
        if composition == "zcdp" and slack == 0:
            slack = delta
        rows = "" if rows is None else str(rows)
        budget = (repr(epsilon), repr(delta), repr(slack), composition, unit, rows)
        if ledger is None:
            self._ledger = MemoryLedger(tight=composition in TIGHT_COMPOSITIONS)
            self._token = _channel.register(self)
        else:
            self._ledger = SQLiteLedger(ledger, budget)
        self._set_budget(budget)
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
        self._context = threading.local()
        return self

    def _set_budget(self, budget):
        budget = full_budget(budget)  # an older pickle or file: one row
        self._epsilon, self._delta, self._slack = (float(v) for v in budget[:3])
        composition = budget[3]
        if not composition:  # a ledger file of an older layout
            composition = "advanced" if self._slack > 0 else "basic"
        self._composition = composition
        self._rule = make_rule(composition, self._epsilon, self._delta, self._slack)
        self._unit = budget[4]
        self._max_rows_per_group = int(budget[5]) if budget[5] else None

    def _budget_strings(self):
        rows = self._max_rows_per_group
        return (
            repr(self._epsilon),
            repr(self._delta),
            repr(self._slack),
            self._composition,
            self._unit,
            "" if rows is None else str(rows),
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
        """δ set aside for advanced composition or the zCDP conversion."""
        return self._slack

    @property
    def composition(self):
        """The composition rule: basic, advanced, zcdp or pld."""
        return self._composition

    @property
    def unit(self):
        """What the budget protects: ``"row"`` or ``"group"`` (a person)."""
        return self._unit

    @property
    def max_rows_per_group(self):
        """The stated bound on a person's rows (``unit="group"``), or ``None``."""
        return self._max_rows_per_group

    @property
    def ledger(self):
        """Path of the SQLite ledger, or ``None`` for an in-memory ledger."""
        return self._ledger.path

    @property
    def entries(self):
        """Every spend so far, oldest first (a tuple of ``LedgerEntry``)."""
        return self._ledger.read()

    # -- composition (the rule's arithmetic) --------------------------------

    def _compose(self, totals):
        """The (epsilon, delta) statements that hold for spends with these
        totals, basic composition first (see the rule's ``compose``)."""
        return self._rule.compose(totals)

    def _check_spend(self, totals, items):
        after = self._rule.after(totals, items)
        if not self._rule.fits(after):
            raise BudgetExceededError(self._rule.refusal_message(totals, after, items))
        return after

    def _total_of(self, totals):
        return self._rule.spent(totals)

    def total(self):
        """The privacy spent so far, as ``(epsilon, delta)``.

        Under ``"basic"`` composition, the exact sums of the entries. Under
        ``"advanced"`` the smaller ε of the basic sum and the
        advanced-composition filter, with the slack included in δ. Under
        ``"zcdp"`` the ε of the zCDP conversion at ``δ = slack`` plus the δ of
        ``(ε, δ)``-only charges; under ``"pld"`` the ε of the PLD composition
        at the δ budget (class Notes). Values are rounded up where the exact
        value is not a float. In the accountant's :attr:`unit` (a charge
        stated for the other unit counts its converted cost).

        Returns
        -------
        epsilon, delta : float
        """
        return self._total_of(self._ledger.totals())

    def remaining(self):
        """The largest single further spend that fits, as ``(epsilon, delta)``.

        Conservative by construction: ``check(epsilon, delta)`` accepts what
        this returns (under ``"pld"``: ``check(gaussian_cost(epsilon,
        self.delta))``). Under basic composition ε is the budget minus
        :meth:`total`, rounded down. Under ``"advanced"`` and ``"zcdp"`` it
        is the largest pure ε-DP spend that :meth:`check` accepts, found by
        bisection on :meth:`check`'s own rule (to ``1e-9`` relative, from
        below); under ``"pld"`` it is the ε (at the δ budget) of the largest
        further Gaussian release, lowered until :meth:`check` accepts it. δ is
        what remains of the δ budget once the slack a composition rule
        reserves is set aside, rounded down.

        Returns
        -------
        epsilon, delta : float
        """
        totals = self._ledger.totals()
        delta = self._rule.remaining_delta(totals)
        if math.isinf(self._epsilon):
            return math.inf, delta
        return self._rule.remaining_epsilon(totals), delta

    def _would_fit(self, totals, items):
        try:
            self._check_spend(totals, items)
        except BudgetExceededError:
            return False
        return True

    # -- sklearn, copying and pickling --------------------------------------

    def __sklearn_clone__(self):
        return self

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        budget = self._budget_strings()
        if self._ledger.path is not None:
            return (_file_copy, (type(self), budget, self._ledger.path))
        return (_memory_copy, (type(self), budget, _channel.reference(self)))

    # -- default accountant -------------------------------------------------

    def __enter__(self):
        _context.enter(self)
        return self

    def __exit__(self, *exc_info):
        _context.leave(self)

    def __repr__(self):
        try:
            spent = "spent epsilon={}, delta={}".format(*self.total())
        except AccountantCopyError:
            # a copy whose owner process is gone (e.g. a model saved with
            # joblib and loaded later): printing the model must not fail
            owner = getattr(self._ledger, "ref", (None, None, None, "?"))[3]
            spent = f"a copy of process {owner}'s ledger, which is not reachable"
        ledger = "" if self.ledger is None else f", ledger={self.ledger!r}"
        slack = f", slack={self._slack}" if self._slack else ""
        mode = (
            ""
            if self._composition in ("basic", "advanced")
            else (f", composition={self._composition!r}")
        )
        unit = ""
        if self._unit != "row":
            unit = f", unit={self._unit!r}"
            if self._max_rows_per_group is not None:
                unit += f", max_rows_per_group={self._max_rows_per_group}"
        return (
            f"BudgetAccountant(epsilon={self._epsilon}, delta={self._delta}"
            f"{slack}{mode}{unit}{ledger}; {spent})"
        )
