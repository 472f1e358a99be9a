"""Privacy budget accounting: the accountant, its ledgers and composition."""

from skdp.accounting._budget_accountant import BudgetAccountant
from skdp.accounting._cost import PrivacyCost
from skdp.accounting._default import default_accountant, set_default_accountant
from skdp.accounting._ledger import LedgerEntry
from skdp.accounting._plan import plan_epsilon

__all__ = [
    "BudgetAccountant",
    "LedgerEntry",
    "PrivacyCost",
    "default_accountant",
    "plan_epsilon",
    "set_default_accountant",
]
