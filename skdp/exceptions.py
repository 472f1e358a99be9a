"""Exceptions and warnings raised by skdp."""

__all__ = [
    "AccountantCopyError",
    "BudgetExceededError",
    "PTRRefusedError",
    "PTRRefusedWarning",
]


class BudgetExceededError(RuntimeError):
    """A spend would take the accountant past its privacy budget.

    Raised by :meth:`skdp.BudgetAccountant.spend` (and by every estimator's
    ``fit``) *before* any data is read, so nothing has been released and nothing
    has been charged when it is raised.
    """


class AccountantCopyError(RuntimeError):
    """A copy of an in-memory accountant was asked to spend.

    An accountant without a file ledger lives in one process. When it is pickled
    (for example by joblib's process-based backends, which send a copy of every
    estimator to each worker) the copy cannot reach the original's ledger, so it
    refuses to spend rather than lose the record. Share a ledger between
    processes with ``BudgetAccountant(..., ledger="budget.sqlite")`` or run the
    parallel work with ``joblib.parallel_config(backend="threading")``.
    """


class PTRRefusedWarning(UserWarning):
    """Propose-test-release refused (⊥) for at least one feature.

    The proposed sensitivity did not pass the private stability test; the
    budget of the fit is spent and the refused statistics are NaN.
    """


class PTRRefusedError(RuntimeError):
    """Propose-test-release refused (⊥) and ``on_refuse='raise'`` was set.

    Raised after the budget was charged: a refusal is a private output and
    costs the same as a release.
    """
