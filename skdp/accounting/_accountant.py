"""The privacy budget accountant shared by every skdp estimator."""

import contextvars
import math
import os
import sys
import threading
from fractions import Fraction

from skdp.accounting import _channel
from skdp.accounting._composition import (
    BINARY_ONE,
    DECIMAL_ONE,
    TIGHT_COMPOSITIONS,
    advanced_filter_epsilon,
    binary_units,
    decimal_units,
    exact,
    filter_slope,
)
from skdp.accounting._cost import PrivacyCost
from skdp.accounting._ledger import MemoryLedger, SQLiteLedger
from skdp.accounting._pld import gaussian_mu_budget, pld_epsilon
from skdp.accounting._zcdp import zcdp_epsilon, zcdp_rho_budget
from skdp.exceptions import AccountantCopyError, BudgetExceededError
from skdp.utils._validation import check_delta, check_epsilon

__all__ = ["BudgetAccountant", "default_accountant", "set_default_accountant"]

COMPOSITIONS = ("basic", "advanced", "zcdp", "pld")


class BudgetAccountant:
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
    """

    def __init__(
        self, epsilon=math.inf, delta=0.0, *, slack=0.0, composition=None, ledger=None
    ):
        epsilon = check_epsilon(epsilon, allow_zero=True, allow_inf=True)
        delta = 1.0 if delta == 1 else check_delta(delta)
        slack = check_delta(slack, name="slack")
        composition = _check_composition(composition, epsilon, delta, slack)
        if composition == "zcdp" and slack == 0:
            slack = delta
        budget = (repr(epsilon), repr(delta), repr(slack), composition)
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
        self._epsilon, self._delta, self._slack = (float(v) for v in budget[:3])
        composition = budget[3] if len(budget) > 3 else ""
        if not composition:  # a ledger file of an older layout
            composition = "advanced" if self._slack > 0 else "basic"
        self._composition = composition
        # The budget in decimal units (None: no limit, or no slack) and the
        # largest float at most the ε budget, for the exact checks of _fits.
        finite = not math.isinf(self._epsilon)
        advanced = composition == "advanced" and finite
        self._budget_units = (
            decimal_units(self._epsilon) if finite else None,
            None if self._delta == 1.0 else decimal_units(self._delta),
            decimal_units(self._slack) if composition == "zcdp" or advanced else None,
            _float_down(exact(self._epsilon)) if finite else math.inf,
        )
        self._mu2_budget_units = self._rho_budget_units = None
        if composition == "zcdp":
            rho = zcdp_rho_budget(self._budget_units[3], self._slack)
            self._rho_budget_units = binary_units(rho) if math.isfinite(rho) else None
        if composition == "pld":
            mu2 = gaussian_mu_budget(self._budget_units[3], self._delta)
            self._mu2_budget_units = (
                binary_units(mu2) if math.isfinite(mu2) else math.inf
            )

    def _budget_strings(self):
        return (
            repr(self._epsilon),
            repr(self._delta),
            repr(self._slack),
            self._composition,
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
        first is basic composition (the sum of the entries). With
        ``"advanced"`` (and a finite ε budget) the second is the filter's, and
        both carry the slack in δ; :meth:`total` reports the smaller. With
        ``"zcdp"`` and ``"pld"`` the second is what that composition gives,
        and :meth:`total` reports it (class Notes).
        """
        basic = (totals.epsilon, totals.delta)
        mode = self._composition
        if mode == "basic" or (mode == "advanced" and math.isinf(self._epsilon)):
            return [basic]
        if mode == "advanced":
            delta = totals.delta + exact(self._slack)
            statements = [(totals.epsilon, delta)]
            if totals.count:
                slope = filter_slope(self._epsilon, self._slack)
                adv = advanced_filter_epsilon(totals, self._slack, slope)
                statements.append((Fraction(adv) if math.isfinite(adv) else adv, delta))
            return statements
        if not totals.count:
            return [basic, (Fraction(0), Fraction(0))]
        if mode == "zcdp":
            eps = zcdp_epsilon(totals.rho, self._slack)
            delta = Fraction(totals.reveal_units, DECIMAL_ONE) + exact(self._slack)
            return [basic, (Fraction(eps) if math.isfinite(eps) else eps, delta)]
        eps = pld_epsilon(self._delta, totals.mu_squared, [], 0.0)
        return [
            basic,
            (Fraction(eps) if math.isfinite(eps) else eps, exact(self._delta)),
        ]

    def _fits(self, totals):
        """Whether spends with these totals respect the budget (see _compose).

        ``basic`` and ``advanced`` are decided on the exact integer sums: the
        advanced statement is a float ``a``, and ``a <= B`` for the exact
        budget ``B`` exactly when ``a`` is at most the largest float below
        ``B``. ``zcdp`` and ``pld`` compare outward-rounded floats with the
        same exact budget.
        """
        eps_budget, delta_budget, slack, eps_budget_down = self._budget_units
        mode = self._composition
        if mode == "zcdp":
            if delta_budget is not None and totals.reveal_units + slack > delta_budget:
                return False
            budget = self._rho_budget_units
            return budget is None or totals.rho_units <= budget
        if mode == "pld":
            return totals.mu2_units <= self._mu2_budget_units
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
        tight = self._composition in TIGHT_COMPOSITIONS
        after = totals.add_all((item[1:5] for item in items), tight=tight)
        if not self._fits(after):
            raise BudgetExceededError(self._refusal_message(totals, after, items))
        return after

    def _refusal_message(self, totals, after, items):
        """Who asked, which dimension is short, and what to do about it."""
        spent_eps, spent_delta = self._total_of(totals)
        eps = math.fsum(item[1] for item in items)
        delta = math.fsum(item[2] for item in items)
        labels = [item[0] for item in items]
        names = {label.split(": ", 1)[0] for label in labels if ": " in label}
        who = f"{', '.join(sorted(names))}: " if len(names) == 1 else ""
        short = self._what_is_short(after, eps, delta, spent_eps, spent_delta)
        verb = "spending" if who else "Spending"
        how = "" if self._composition == "basic" else f" ({self._composition})"
        return (
            f"{who}{verb} epsilon={eps}, delta={delta} would exceed the privacy "
            f"budget (epsilon={self._epsilon}, delta={self._delta}); already "
            f"spent{how} epsilon={spent_eps}, delta={spent_delta} in "
            f"{totals.count} entries. {short[0].upper() + short[1:]}. Nothing "
            "was charged and no data was read."
        )

    def _what_is_short(self, after, eps, delta, spent_eps, spent_delta):
        _, delta_budget, slack, _ = self._budget_units
        mode = self._composition
        if mode in ("basic", "advanced"):
            used = after.delta_units + (slack or 0)
        elif mode == "zcdp":
            used = after.reveal_units + slack
        else:
            used = after.reveal_units
        if delta_budget is None or used <= delta_budget:
            return (
                f"epsilon is short: this charge needs epsilon={eps}; the budget "
                f"is epsilon={self._epsilon} with epsilon={spent_eps} already spent"
                + ("" if mode == "basic" else f" under {mode} composition")
            )
        if self._delta == 0:
            return (
                f"this charge needs delta={delta}, and the accountant was "
                "created with delta=0.0 (pure epsilon-DP): create it with a "
                "delta budget, e.g. BudgetAccountant(epsilon=..., "
                "delta=1e-5), or use mechanisms that spend no delta"
            )
        if mode == "zcdp":
            return (
                f"delta is short: this charge needs delta={delta} outside the "
                f"zCDP conversion, and slack={self._slack} of delta={self._delta} "
                "is reserved for the conversion: create the accountant with "
                "a smaller slack to leave delta for (epsilon, delta) charges "
                "such as PTR"
            )
        return (
            f"delta is short: this charge needs delta={delta}; the budget "
            f"is delta={self._delta} with delta={spent_delta} already spent"
            + (" (the slack included)" if slack else "")
        )

    def _total_of(self, totals):
        statements = self._compose(totals)
        tight = self._composition in TIGHT_COMPOSITIONS
        eps, delta = statements[-1] if tight else min(statements)
        eps = math.inf if eps == math.inf else _float_up(eps)
        return eps, _float_up(delta)

    def total(self):
        """The privacy spent so far, as ``(epsilon, delta)``.

        Under ``"basic"`` composition, the exact sums of the entries. Under
        ``"advanced"`` the smaller ε of the basic sum and the
        advanced-composition filter, with the slack included in δ. Under
        ``"zcdp"`` the ε of the zCDP conversion at ``δ = slack`` plus the δ of
        ``(ε, δ)``-only charges; under ``"pld"`` the ε of the PLD composition
        at the δ budget (class Notes). Values are rounded up where the exact
        value is not a float.

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
        delta = self._remaining_delta(totals)
        if math.isinf(self._epsilon):
            return math.inf, delta
        eps = max(exact(self._epsilon) - totals.epsilon, Fraction(0))
        if self._composition == "basic":
            return _float_down(eps), delta
        if self._composition == "pld":
            return self._remaining_gaussian(totals), delta
        lo, hi = 0.0, min(2.0 * self._epsilon + 1.0, sys.float_info.max)
        if self._composition == "advanced":
            lo = _float_down(eps)  # what the exact sum admits
        for _ in range(200):  # largest ε that fits, to float precision
            mid = lo + (hi - lo) / 2.0  # no overflow near the largest float
            if mid in (lo, hi) or hi - lo <= 1e-9 * hi:
                break
            item = ("", mid, 0.0, None, None, None)
            if self._would_fit(totals, [item]):
                lo = mid
            else:
                hi = mid
        return lo, delta

    def _remaining_delta(self, totals):
        """What remains of the δ budget, the reserved slack set aside."""
        used = totals.delta
        if self._composition in TIGHT_COMPOSITIONS:
            used = Fraction(totals.reveal_units, DECIMAL_ONE)
        if self._budget_units[2] is not None:  # zcdp, or a finite advanced filter
            used += exact(self._slack)
        return _float_down(max(exact(self._delta) - used, Fraction(0)))

    def _remaining_gaussian(self, totals):
        """The ε (at the δ budget) of the largest further Gaussian release that
        :meth:`check` accepts as ``gaussian_cost(ε, delta)``."""
        left = self._mu2_budget_units - totals.mu2_units
        if left <= 0:
            return 0.0
        eps = pld_epsilon(self._delta, left / BINARY_ONE * (1.0 - 1e-12), [], 0.0)
        if not (math.isfinite(eps) and 0.0 < self._delta < 1.0):
            return eps
        step = 1e-12
        while eps > 0:  # gaussian_cost's own calibration may differ slightly
            if self._gaussian_would_fit(totals, eps):
                return eps
            eps, step = eps * (1.0 - step), min(2.0 * step, 0.5)
        return 0.0

    def _gaussian_would_fit(self, totals, epsilon):
        from skdp.mechanisms import gaussian_cost

        try:
            cost = gaussian_cost(epsilon, self._delta)
        except ValueError:  # no multiplier calibrates to it
            return False
        return self._would_fit(totals, self._validate_items([("", cost)]))

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
        epsilon : float or PrivacyCost
            The ε of the spend, or its whole cost (e.g. from
            :func:`~skdp.model_selection.fit_cost`), whose parts are composed
            as this accountant composes (then ``delta`` is ignored).
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
        items = self._validate_items([("check", epsilon, delta)])
        self._check_spend(self._ledger.totals(), items)
        return True

    def spend(self, epsilon, delta=0.0, *, label):
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
        return self.spend_many([(label, epsilon, delta)])[-1]

    def spend_many(self, items):
        """Record several spends atomically: all of them, or none.

        An estimator charges every step of a ``fit`` (for example bound
        selection and release) with one call, so the split is visible in the
        ledger and a fit is never half-charged.

        Parameters
        ----------
        items : iterable of (label, epsilon, delta) or (label, PrivacyCost)

        Returns
        -------
        entries : tuple of LedgerEntry
        """
        items = self._validate_items(items)
        return self._ledger.append_if(self._check_spend, items)

    def _validate_items(self, items):
        parts = [part for item in items for part in self._validate_item(*item)]
        if self._composition == "pld":
            for label, eps, delta, _, multiplier, mechanism in parts:
                if multiplier is None and (eps > 0 or delta > 0):
                    raise ValueError(_pld_refusal(label, eps, delta, mechanism))
        return parts

    @staticmethod
    def _validate_item(label, epsilon, delta=0.0):
        """``[(label, epsilon, delta, rho, noise_multiplier, mechanism), ...]``."""
        if not isinstance(label, str):
            raise TypeError(f"label must be a string; got {label!r}.")
        if isinstance(epsilon, PrivacyCost):
            return [
                (label, c.epsilon, c.delta, c.rho, c.noise_multiplier, c.mechanism)
                for c in epsilon.atoms
            ]
        eps = check_epsilon(epsilon, allow_zero=True)
        return [(label, eps, check_delta(delta), None, None, None)]

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

    def __reduce__(self):
        budget = self._budget_strings()
        if self._ledger.path is not None:
            return (_file_copy, (type(self), budget, self._ledger.path))
        return (_memory_copy, (type(self), budget, _channel.reference(self)))

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
        return (
            f"BudgetAccountant(epsilon={self._epsilon}, delta={self._delta}"
            f"{slack}{mode}{ledger}; {spent})"
        )


def _file_copy(cls, budget, path):
    """A copy of an accountant with a file ledger: the same file."""
    self = cls.__new__(cls)
    self._set_budget(budget)
    self._ledger = SQLiteLedger(path, budget)
    self._context = threading.local()
    return self


def _memory_copy(cls, budget, ref):
    """An unpickled accountant with an in-memory ledger: in its owner's
    process the original itself; elsewhere a copy that spends through the
    owner (:mod:`skdp.accounting._channel`)."""
    original = _channel.original_in_this_process(ref)
    if original is not None:
        return original
    self = cls.__new__(cls)
    self._set_budget(budget)
    self._ledger = _channel.RemoteLedger(ref)
    self._context = threading.local()
    return self


def _pld_refusal(label, epsilon, delta, mechanism):
    what = f"a {mechanism} release" if mechanism else "a release without a noise"
    what += "" if mechanism else " multiplier"
    return (
        f"{label!r}: composition='pld' composes Gaussian releases only (it is "
        "valid for fully adaptive use by the Gaussian-DP filter of Smith and "
        f"Thakurta 2022); this is {what} (epsilon={epsilon}, delta={delta}). "
        "No PLD filter is known for mixed mechanisms chosen adaptively: use "
        "composition='zcdp' for this ledger, or compute the PLD of a plan "
        "fixed in advance with skdp.accounting.plan_epsilon. Nothing was charged."
    )


def _check_composition(composition, epsilon, delta, slack):
    """The composition rule, checked against the budget (class Notes)."""
    if composition is not None and composition not in COMPOSITIONS:
        raise ValueError(
            f"composition must be one of {COMPOSITIONS} or None; got {composition!r}."
        )
    if slack > delta:
        raise ValueError(
            f"slack must not exceed the delta budget: slack={slack} is the part "
            f"of delta={delta} spent on {composition or 'advanced'} composition."
        )
    if composition is None:
        return "advanced" if slack > 0 else "basic"
    if composition == "advanced" and slack == 0:
        raise ValueError(
            "composition='advanced' needs slack > 0: the part of delta reserved "
            "for the advanced-composition filter, e.g. slack=1e-6."
        )
    if composition in TIGHT_COMPOSITIONS and not 0 < delta < 1:
        raise ValueError(
            f"composition={composition!r} states its total as (epsilon, delta) "
            f"with delta in (0, 1); got delta={delta}. With delta=0 use "
            "composition='basic' (pure epsilon-DP)."
        )
    if composition == "basic" and slack > 0:
        raise ValueError(
            "slack is the part of delta reserved for advanced composition or the "
            "zCDP conversion; composition='basic' uses none: pass slack=0."
        )
    if composition == "pld" and slack > 0:
        raise ValueError(
            "composition='pld' needs no slack: the PLD accounts the whole delta "
            "budget at once; pass slack=0."
        )
    return composition


def _float_up(value):
    """The nearest float whose decimal reading is >= ``value`` (``inf``
    beyond the floats)."""
    try:
        f = float(value)
    except OverflowError:
        return math.inf
    if math.isinf(f):
        return f
    return f if exact(f) >= value else math.nextafter(f, math.inf)


def _float_down(value):
    """The nearest float whose decimal reading is <= ``value`` (the largest
    float beyond the floats)."""
    try:
        f = float(value)
    except OverflowError:
        return sys.float_info.max
    if math.isinf(f):
        return sys.float_info.max
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
    if its ledger is in memory the child spends it through the parent.
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
    """The accountant a user put in effect, or ``None``.

    Never the automatic default: a worker process that created its own
    (anything called :func:`default_accountant` there) would otherwise
    charge it instead of the accountant an estimator carried from its owner
    (:meth:`~skdp.base.PrivateEstimatorMixin._resolve_accountant`), a spend
    missing from the owner's ledger and unchecked against its budget.
    """
    accountant = _current.get()
    if accountant is not None:
        return accountant
    with _process_lock:
        if _process_stack:
            return _process_stack[-1]
        if _process_default and not _is_automatic(_process_default[0]):
            return _process_default[0]
    return None


def _is_automatic(accountant):
    return bool(_auto_default) and accountant is _auto_default[0]


def default_accountant():
    """The accountant estimators use when their ``accountant`` is ``None``.

    Inside ``with accountant:`` it is that accountant (also in threads started
    inside the block); otherwise the one set with
    :func:`set_default_accountant`; otherwise a process-wide accountant with an
    unlimited budget (``epsilon=inf, delta=1.0``), which only records (a
    process started by ``fork`` records in a fresh one of its own; an
    accountant you put in effect is inherited, and a child spends it through
    the parent, see :class:`BudgetAccountant`).
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
            _channel.exempt_from_fork(_process_default[0])
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
