"""The accountant's modules were split; what was saved before still loads.

The pickles below were made by skdp before the split (commit 426e7dd), with
``pickle.dumps(accountant, protocol=5)``: they name ``BudgetAccountant`` and
``_memory_copy``/``_file_copy`` in ``skdp.accounting._accountant``, as every
model saved with joblib or pickle before the split does. (The in-memory
accountant's key is zeroed: its owner process is long gone. The file
accountant's path was made relative, so it opens in the test's directory.)
"""

import pickle
import sys
from fractions import Fraction

import pytest

import skdp
from skdp import BudgetAccountant
from skdp.accounting import _accountant, _channel
from skdp.exceptions import AccountantCopyError

# BudgetAccountant(1.0, 1e-5, composition="zcdp"), one spend of 0.1, pickled
# in its owner process (pid 31142); loaded elsewhere it is a copy that
# spends through that owner.
SAVED_MEMORY_ACCOUNTANT = (
    b"\x80\x05\x95\xde\x00\x00\x00\x00\x00\x00\x00\x8c\x1bskdp.accounting."
    b"_accountant\x94\x8c\x0c_memory_copy\x94\x93\x94h\x00\x8c\x10BudgetAccoun"
    b"tant\x94\x93\x94(\x8c\x031.0\x94\x8c\x051e-05\x94\x8c\x051e-05\x94\x8c"
    b"\x04zcdp\x94t\x94(\x8c$/tmp/pymp-lmn0o6bk/listener-626bx940\x94C "
    + b"\x00" * 32
    + b"\x94\x8c 5c9fb6b926934b32ca185f1a27b598ed\x94M\xa6yt\x94\x87\x94R\x94."
)

# BudgetAccountant(2.0, 1e-6, slack=1e-7, ledger="compat.sqlite").
SAVED_FILE_ACCOUNTANT = (
    b"\x80\x05\x95}\x00\x00\x00\x00\x00\x00\x00\x8c\x1bskdp.accounting._accou"
    b"ntant\x94\x8c\n_file_copy\x94\x93\x94h\x00\x8c\x10BudgetAccountant\x94"
    b"\x93\x94(\x8c\x032.0\x94\x8c\x051e-06\x94\x8c\x051e-07\x94\x8c\x08advanc"
    b"ed\x94t\x94\x8c\rcompat.sqlite\x94\x87\x94R\x94."
)


def test_an_in_memory_accountant_saved_before_the_split_loads():
    acc = pickle.loads(SAVED_MEMORY_ACCOUNTANT)
    assert type(acc) is BudgetAccountant
    assert (acc.epsilon, acc.delta, acc.slack, acc.composition) == (
        1.0,
        1e-5,
        1e-5,
        "zcdp",
    )
    assert _channel.is_remote(acc)
    with pytest.raises(AccountantCopyError, match="cannot be reached"):
        acc.spend(0.1, label="after the owner exited")
    assert "not reachable" in repr(acc)  # printing a loaded model never fails


def test_a_file_accountant_saved_before_the_split_opens_its_ledger(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    original = BudgetAccountant(2.0, 1e-6, slack=1e-7, ledger="compat.sqlite")
    original.spend(0.5, label="before")
    acc = pickle.loads(SAVED_FILE_ACCOUNTANT)
    assert type(acc) is BudgetAccountant
    assert acc.ledger == original.ledger
    assert (acc.composition, acc.total()) == ("advanced", original.total())
    acc.spend(0.25, label="after")
    assert [e.label for e in original.entries] == ["before", "after"]
    assert original.remaining()[0] == 1.25


def test_the_old_module_still_exports_the_names_imported_from_it():
    assert _accountant.BudgetAccountant is skdp.BudgetAccountant
    assert _accountant.default_accountant is skdp.default_accountant
    assert _accountant.set_default_accountant is skdp.set_default_accountant
    for name in (
        "_explicit_default",
        "_file_copy",
        "_float_down",
        "_float_up",
        "_memory_copy",
        "check_accountant",
    ):
        assert callable(getattr(_accountant, name))
    assert _accountant._float_up(Fraction(1, 10)) == 0.1  # exact in, float out
    assert _accountant._float_down(Fraction(10**400)) == sys.float_info.max


def test_new_pickles_round_trip_through_the_new_homes(tmp_path):
    acc = BudgetAccountant(1.0, ledger=tmp_path / "new.sqlite")
    acc.spend(0.25, label="fit")
    copy = pickle.loads(pickle.dumps(acc))
    assert copy.total() == (0.25, 0.0)
    in_memory = BudgetAccountant(1.0)
    assert pickle.loads(pickle.dumps(in_memory)) is in_memory  # its own process
