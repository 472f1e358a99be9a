"""Where the accountant's names lived before its modules were split.

Kept so that what was saved or written against this path still works:
accountants pickled before the split name ``BudgetAccountant``,
``_file_copy`` and ``_memory_copy`` here, and code outside skdp may import
the default-accountant functions from here. New code imports from the
homes below; nothing in skdp imports this module.
"""

from skdp.accounting._budget_accountant import BudgetAccountant
from skdp.accounting._copies import _file_copy, _memory_copy
from skdp.accounting._default import (
    _explicit_default,
    _fresh_default_after_fork,
    _is_automatic,
    check_accountant,
    default_accountant,
    set_default_accountant,
)
from skdp.accounting._rounding import float_down as _float_down
from skdp.accounting._rounding import float_up as _float_up
from skdp.accounting._rules import COMPOSITIONS
from skdp.accounting._rules import check_composition as _check_composition
from skdp.accounting._rules.pld import pld_refusal as _pld_refusal

__all__ = [
    "COMPOSITIONS",
    "BudgetAccountant",
    "_check_composition",
    "_explicit_default",
    "_file_copy",
    "_float_down",
    "_float_up",
    "_fresh_default_after_fork",
    "_is_automatic",
    "_memory_copy",
    "_pld_refusal",
    "check_accountant",
    "default_accountant",
    "set_default_accountant",
]
