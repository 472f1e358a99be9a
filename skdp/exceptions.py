"""Exceptions and warnings raised by skdp."""

__all__ = [
    "AccountantCopyError",
    "BudgetExceededError",
    "NoiseDominatedWarning",
    "PTRRefusedError",
    "PTRRefusedWarning",
]


class BudgetExceededError(RuntimeError):
    """A spend would take the accountant past its privacy budget.

    Raised by :meth:`skdp.BudgetAccountant.spend` (and by every estimator's
    ``fit``) *before* any data is read, so nothing has been released and nothing
    has been charged when it is raised.

    Examples
    --------
    >>> from skdp import BudgetAccountant, BudgetExceededError
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> try:
    ...     acc.spend(1.5, label="too much")
    ... except BudgetExceededError:
    ...     print("refused; spent:", acc.total())
    refused; spent: (0.0, 0.0)
    """


class AccountantCopyError(RuntimeError):
    """A copy of an in-memory accountant cannot reach the accountant it copies.

    A copy of an accountant without a file ledger in another process (pickled
    by joblib's process backends, or inherited by ``fork``) spends through
    the process that owns the accountant. When that process has exited, the
    accountant was garbage-collected there, or the copy cannot prove it holds
    the owner's key, the copy refuses to spend or read rather than lose the
    record: nothing is released. Keep the owner running and the accountant
    referenced while workers spend, or share a ledger between processes (and
    runs) with ``BudgetAccountant(..., ledger="budget.sqlite")``.

    Also raised, before anything is charged, by a release with
    ``accountant=None`` in a worker process where no accountant is in effect
    and none was carried from the process that started it (see
    :func:`~skdp.default_accountant`): the worker's own default would record
    it where nobody sees it. Pass ``accountant=`` explicitly.

    Examples
    --------
    >>> import gc, pickle
    >>> from skdp import AccountantCopyError, BudgetAccountant
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> saved = pickle.dumps(acc)
    >>> del acc; _ = gc.collect()  # the original is gone
    >>> try:
    ...     pickle.loads(saved).spend(0.1, label="in a worker process")
    ... except AccountantCopyError:
    ...     print("refused: the original accountant no longer exists")
    refused: the original accountant no longer exists
    """


class PTRRefusedWarning(UserWarning):
    """Propose-test-release refused (⊥) for at least one feature.

    The proposed sensitivity did not pass the private stability test; the
    budget of the fit is spent and the refused statistics are NaN.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skdp import PTRMedian, PTRRefusedWarning
    >>> X = np.random.default_rng(0).uniform(0, 100, size=(50, 1))
    >>> ptr = PTRMedian(epsilon=1.0, delta=1e-6, bounds=(0, 100),
    ...                 proposed_sensitivity=1e-3, random_state=0)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = ptr.fit(X)
    >>> caught[0].category is PTRRefusedWarning, ptr.refused_
    (True, array([ True]))
    """


class NoiseDominatedWarning(UserWarning):
    """A released value, or the public setting itself, is dominated by noise.

    Raised after a release, from the released values only (they are public
    by then), e.g. when :class:`~skdp.DPClipper` with ``method="quantile"``
    returns bounds near the ends of its domain ``±upper_limit``; or before
    anything is charged, from public parameters only, when the expected noise
    exceeds the largest possible signal whatever the data, e.g.
    :class:`~skdp.SampleAggregateEstimator` with too few ``n_blocks`` for
    its ε and number of released values.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skdp import DPClipper, NoiseDominatedWarning
    >>> ages = np.random.default_rng(0).integers(17, 90, size=(32_000, 1))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = DPClipper(epsilon=0.01, method="quantile",
    ...                   random_state=0).fit(ages)
    >>> any(w.category is NoiseDominatedWarning for w in caught)
    True
    """


class PTRRefusedError(RuntimeError):
    """Propose-test-release refused (⊥) and ``on_refuse='raise'`` was set.

    Raised after the budget was charged: a refusal is a private output and
    costs the same as a release.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant, PTRMedian, PTRRefusedError
    >>> X = np.random.default_rng(0).uniform(0, 100, size=(50, 1))
    >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    >>> ptr = PTRMedian(epsilon=1.0, delta=1e-6, bounds=(0, 100),
    ...                 proposed_sensitivity=1e-3, on_refuse="raise",
    ...                 accountant=acc, random_state=0)
    >>> try:
    ...     ptr.fit(X)
    ... except PTRRefusedError:
    ...     print("refused; the budget is spent:", acc.total())
    refused; the budget is spent: (1.0, 1e-06)
    """
