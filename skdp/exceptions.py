"""Exceptions and warnings raised by skdp."""

__all__ = [
    "AccountantCopyError",
    "BudgetExceededError",
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
