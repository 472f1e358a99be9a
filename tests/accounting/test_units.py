"""The accountant's privacy unit: every charge records its unit, and a charge
stated for another unit than the accountant's is converted by group privacy
(never composed as if the units were the same).

Hand-derived figures. A group-level (ε, δ) release in a row-level
accountant: one row added or removed either adds/removes a whole new group
or changes an existing group (remove it, add its new version), so for one
row it is (2ε, δ(1 + e^ε))-DP; a Gaussian release with noise multiplier
σ/Δ becomes σ/(2Δ) (ρ → 4ρ, μ² → 4μ²). A row-level release in a
person-level accountant with at most m rows per person: (m ε, δ Σ_{i<m}
e^{iε}), ρ → m²ρ.
"""

import math
import multiprocessing
import pickle
import sqlite3
import sys
import warnings
from decimal import Decimal, localcontext

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

import skdp
from skdp import BudgetAccountant
from skdp.accounting import LedgerEntry, PrivacyCost, plan_epsilon
from skdp.accounting._composition import exact
from skdp.exceptions import BudgetExceededError
from skdp.mechanisms import gaussian_cost, laplace_cost
from skdp.model_selection import check_budget, fit_cost
from skdp.pipeline import set_budget

SAVED_ENTRY = (
    b"\x80\x05\x95R\x00\x00\x00\x00\x00\x00\x00\x8c\x17skdp.accounting._ledger"
    b"\x94\x8c\x0bLedgerEntry\x94\x93\x94(\x8c\x01a\x94G?\xb9\x99\x99\x99\x99"
    b"\x99\x9aG\x00\x00\x00\x00\x00\x00\x00\x00G\x00\x00\x00\x00\x00\x00\x00"
    b"\x00NNNt\x94\x81\x94."
)
GROUPS = np.arange(12) // 3
X = np.linspace(0, 1, 12)[:, None]


def _delta_factor(epsilon, c):
    """Σ_{i<c} e^{iε}, to 50 digits."""
    with localcontext() as ctx:
        ctx.prec = 50
        e = Decimal(epsilon)
        return sum((e * i).exp() for i in range(c))


def _close_above(got, exact_value, rel=1e-12):
    return exact_value <= Decimal(got) <= exact_value * (1 + Decimal(rel))


def _mean(**params):
    return skdp.PrivateMean(bounds=(0, 1), random_state=0, **params)


def _fit_quietly(estimator, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(*args, **kwargs)


# -- the figures of each composition rule -------------------------------------


@pytest.mark.parametrize("composition", ["basic", "advanced"])
def test_a_group_charge_counts_two_group_steps_in_a_row_accountant(composition):
    slack = 1e-7 if composition == "advanced" else 0.0
    acc = BudgetAccountant(5.0, 1e-5, slack=slack, composition=composition)
    entry = acc.spend(1.0, 1e-7, label="g", unit="group", group_rows=3)
    assert (entry.epsilon, entry.delta) == (1.0, 1e-7)  # as stated
    assert (entry.unit, entry.group_rows) == ("group", 3)
    eps, delta, rho, multiplier = entry.counted
    assert eps == 2.0 and rho is None and multiplier is None
    assert _close_above(delta, Decimal("1e-7") * _delta_factor(1.0, 2))
    # the totals add the counted cost: as a row-level spend of (2, δ(1+e))
    twin = BudgetAccountant(5.0, 1e-5, slack=slack, composition=composition)
    twin.spend(eps, delta, label="as one row")
    assert acc.total() == twin.total() and acc.remaining() == twin.remaining()
    assert acc.total()[0] == 2.0


def test_a_gaussian_group_charge_doubles_its_sensitivity_under_zcdp_and_pld():
    cost = gaussian_cost(0.5, 1e-6)
    m = cost.noise_multiplier
    for composition in ("zcdp", "pld"):
        acc = BudgetAccountant(10.0, 1e-5, composition=composition)
        entry = acc.spend(cost, label="g", unit="group", group_rows=4)
        _, _, rho, multiplier = entry.counted
        assert multiplier == m / 2  # σ/(2Δ): exact in binary
        assert rho == 4 * cost.rho
        totals = acc._ledger.totals()
        if composition == "zcdp":  # ρ = 1/(2 (m/2)²) = 2/m²
            assert totals.rho == pytest.approx(2 / m**2, rel=1e-12)
        else:  # μ² = 1/(m/2)² = 4/m²
            assert totals.mu_squared == pytest.approx(4 / m**2, rel=1e-12)
        row = BudgetAccountant(10.0, 1e-5, composition=composition)
        row.spend(cost, label="one row")
        assert acc.total()[0] > row.total()[0]


def test_a_pure_group_charge_keeps_its_stated_rho_times_four_under_zcdp():
    acc = BudgetAccountant(10.0, 1e-5, composition="zcdp")
    cost = PrivacyCost(1.0, rho=1.0 / 8, mechanism="exponential")  # ε²/8
    acc.spend(cost, label="g", unit="group", group_rows=2)
    twin = BudgetAccountant(10.0, 1e-5, composition="zcdp")
    twin.spend(PrivacyCost(2.0, rho=0.5, mechanism="exponential"), label="row")
    assert acc._ledger.totals().rho == twin._ledger.totals().rho  # 4 · 1/8
    assert acc._ledger.totals().rho == pytest.approx(0.5, rel=1e-14)


def test_a_row_charge_counts_m_rows_in_a_person_accountant():
    acc = BudgetAccountant(10.0, 1e-3, unit="group", max_rows_per_group=3)
    entry = acc.spend(0.5, 1e-6, label="row fit")
    assert (entry.unit, entry.group_rows) == ("row", None)
    eps, delta, _, _ = entry.counted
    assert eps == 1.5
    assert _close_above(delta, Decimal("1e-6") * _delta_factor(0.5, 3))
    zcdp = BudgetAccountant(
        10.0, 1e-5, composition="zcdp", unit="group", max_rows_per_group=3
    )
    zcdp.spend(PrivacyCost(0.5, rho=0.125), label="row")
    assert zcdp._ledger.totals().rho == pytest.approx(9 * 0.125, rel=1e-14)


def test_a_group_charge_in_a_person_accountant_is_charged_as_stated():
    acc = BudgetAccountant(2.0, unit="group")
    entry = acc.spend(1.5, label="g", unit="group", group_rows=7)
    assert entry.counted is None and acc.total() == (1.5, 0.0)


def test_a_row_charge_in_a_person_accountant_without_a_bound_is_refused():
    acc = BudgetAccountant(5.0, unit="group")
    with pytest.raises(ValueError, match=r"max_rows_per_group=m\).*groups=") as info:
        acc.spend(0.5, label="row fit")
    assert "Nothing was charged" in str(info.value)
    with pytest.raises(ValueError, match="max_rows_per_group"):
        acc.check(0.5)
    with pytest.raises(ValueError, match="max_rows_per_group"):
        _fit_quietly(_mean(accountant=acc), X)  # an estimator's row-level fit
    assert acc.entries == () and acc.total() == (0.0, 0.0)


# -- floats at the extremes ----------------------------------------------------


def test_converted_costs_are_rounded_up_in_both_readings():
    acc = BudgetAccountant(delta=1.0)
    # 0.3 reads as 3/10 (decimal) and 0.2999...889 (binary): 2ε is 0.6 in both
    assert acc.spend(0.3, label="a", unit="group").counted[0] == 0.6
    # 0.1 is 0.1000...0555 in binary: 3 rows of it exceed the float 0.3
    person = BudgetAccountant(delta=1.0, unit="group", max_rows_per_group=3)
    counted = person.spend(0.1, label="b").counted[0]
    assert exact(counted) >= 3 * exact(0.1) and counted > 0.3
    tiny = acc.spend(5e-324, label="subnormal", unit="group").counted[0]
    assert tiny == 1e-323
    # δ(1 + e^ε) beyond 1 is stated as 1: every mechanism is (ε, 1)-DP
    assert acc.spend(700.0, 0.5, label="c", unit="group").counted[1] == 1.0


def test_a_conversion_beyond_the_floats_is_refused_before_the_charge():
    acc = BudgetAccountant(delta=1.0)
    with pytest.raises(ValueError, match="beyond the largest float"):
        acc.spend(sys.float_info.max, label="huge", unit="group")
    assert acc.entries == ()


# -- the ledgers keep the unit ----------------------------------------------


def test_a_file_ledger_keeps_units_and_counted_costs(tmp_path):
    path = tmp_path / "person.sqlite"
    acc = BudgetAccountant(5.0, 1e-5, unit="group", max_rows_per_group=2, ledger=path)
    acc.spend(0.5, 1e-7, label="row")
    acc.spend(1.0, label="group", unit="group", group_rows=4)
    again = BudgetAccountant.open(path)
    assert (again.unit, again.max_rows_per_group) == ("group", 2)
    assert [e[4:] for e in again.entries] == [e[4:] for e in acc.entries]
    assert again.entries[0].counted[0] == 1.0 and again.total() == acc.total()
    copy = pickle.loads(pickle.dumps(acc))
    assert copy.total() == acc.total() and copy.unit == "group"
    with pytest.raises(ValueError, match="unit='group', max_rows_per_group=2"):
        BudgetAccountant(5.0, 1e-5, ledger=path)  # another unit: refused


def test_entries_and_ledgers_written_before_units_read_as_rows(tmp_path):
    # LedgerEntry("a", 0.1, 0.0, 0.0, None, None, None) pickled (protocol 5)
    # by skdp 9efadc0, when entries had seven fields
    old = pickle.loads(SAVED_ENTRY)
    assert isinstance(old, LedgerEntry)
    assert (old.unit, old.group_rows, old.counted, old.cost[0]) == (
        "row",
        None,
        None,
        0.1,
    )
    # a file of the layout before units: no unit columns in budget or entries
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE budget (id INTEGER PRIMARY KEY CHECK (id = 0), epsilon TEXT "
        "NOT NULL, delta TEXT NOT NULL, slack TEXT NOT NULL, composition TEXT NOT "
        "NULL DEFAULT '');"
        "CREATE TABLE entries (id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT "
        "NOT NULL, epsilon REAL NOT NULL, delta REAL NOT NULL, time REAL NOT NULL,"
        " pid INTEGER NOT NULL, rho REAL, noise_multiplier REAL, mechanism TEXT);"
        "INSERT INTO budget VALUES (0, '3.0', '0.0', '0.0', 'basic');"
        "INSERT INTO entries (label, epsilon, delta, time, pid) "
        "VALUES ('old', 1.0, 0.0, 0, 0);"
    )
    conn.commit()
    conn.close()
    acc = BudgetAccountant.open(path)
    assert acc.unit == "row" and acc.entries[0].unit == "row"
    assert acc.total() == (1.0, 0.0)
    acc.spend(1.0, label="new", unit="group")  # counts 2: fills the budget
    assert acc.total() == (3.0, 0.0)


def test_reports_show_the_stated_unit_and_the_counted_cost():
    acc = BudgetAccountant(5.0, unit="group", max_rows_per_group=4)
    acc.spend(0.5, label="row fit")
    text = acc.report(by="entry")
    assert "stated for" in text and "row: epsilon=0.5, delta=0" in text
    assert "per group (a person), <= 4 rows each" in acc.report()
    assert "budget per group" in acc._repr_html_()
    assert "unit='group', max_rows_per_group=4" in repr(acc)


# -- estimators and planning --------------------------------------------------


def test_a_person_accountant_counts_a_row_fit_by_its_bound_and_a_group_fit_as_is():
    acc = BudgetAccountant(3.0, unit="group", max_rows_per_group=4)
    row_fit = _fit_quietly(_mean(epsilon=0.5, accountant=acc), X)
    _fit_quietly(_mean(max_rows_per_group=3, accountant=acc), X, groups=GROUPS)
    assert acc.total() == (3.0, 0.0)  # 4 · 0.5 + 1
    assert row_fit.epsilon_spent_ == 0.5  # the fit's own, stated cost
    assert [e.unit for e in acc.entries] == ["row", "group"]


def test_planned_costs_carry_the_unit_and_match_what_fit_records():
    grouped = _mean(max_rows_per_group=3)
    cost = fit_cost(grouped)
    assert (cost.unit, cost.group_rows) == ("group", 3)
    assert fit_cost(_mean()).unit == "row"
    for budget, fits in ((2.0, True), (1.9, False)):
        acc = BudgetAccountant(budget)  # a row budget: the group fit counts 2
        planned = acc._would_fit(
            acc._ledger.totals(), acc._validate_items([("p", cost)])
        )
        assert planned is fits
        try:
            _fit_quietly(grouped.set_params(accountant=acc), X, groups=GROUPS)
        except BudgetExceededError:
            assert not fits
        else:
            assert fits and acc.total() == (2.0, 0.0)


def test_set_budget_refuses_steps_of_different_units():
    pipe = make_pipeline(
        skdp.PrivateStandardScaler(bounds=(0, 1), max_rows_per_group=2),
        skdp.PrivateStandardScaler(bounds=(0, 1)),
    )
    with pytest.raises(ValueError, match="different privacy units"):
        set_budget(pipe, 1.0)
    assert pipe[0].epsilon == pipe[1].epsilon == 1.0  # nothing changed
    pipe[1].set_params(max_rows_per_group=5)
    set_budget(pipe, 1.0)
    assert fit_cost(pipe).unit == "group"
    assert math.isclose(fit_cost(pipe).epsilon, 1.0)


def test_plan_epsilon_states_a_plan_in_one_unit():
    group_fit = laplace_cost(0.1).in_unit("group", 2)
    assert plan_epsilon([group_fit] * 10, 1e-5, "basic") == 2.0  # 10 · 2 · 0.1
    person = {"unit": "group", "max_rows_per_group": 4}
    assert plan_epsilon([laplace_cost(0.25)] * 2, 1e-5, "basic", **person) == 2.0
    with pytest.raises(ValueError, match="max_rows_per_group"):
        plan_epsilon([laplace_cost(0.25)], 1e-5, "basic", unit="group")


def _spend_a_row_level_half(accountant):
    try:
        return accountant.spend(0.5, label="worker row fit").counted
    except BudgetExceededError:
        return "refused"


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="POSIX only"
)
def test_a_worker_spends_through_the_owner_in_the_owners_unit():
    acc = BudgetAccountant(3.0, unit="group", max_rows_per_group=4)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        first = pool.apply(_spend_a_row_level_half, (acc,))
        second = pool.apply(_spend_a_row_level_half, (acc,))
    assert first == (2.0, 0.0, None, None) and second == "refused"  # 2 + 2 > 3
    assert acc.total() == (2.0, 0.0) and acc.entries[0].unit == "row"


def test_check_budget_of_a_grouped_search_counts_what_its_fits_will():
    search = GridSearchCV(_mean(max_rows_per_group=2), {"epsilon": [0.1, 0.2]}, cv=3)
    # 3 splits x (0.1 + 0.2) + refit 0.2 = 1.1 per group, 2.2 per row
    assert check_budget(search, BudgetAccountant(2.2)).epsilon == 1.1
    with pytest.raises(BudgetExceededError, match=r"group: epsilon=2\.2 for one row"):
        check_budget(search, BudgetAccountant(2.1))


def test_a_search_over_row_and_group_candidates_has_no_single_cost():
    grid = {"max_rows_per_group": [None, 2], "epsilon": [0.5]}
    with pytest.raises(ValueError, match="different privacy units"):
        fit_cost(GridSearchCV(_mean(), grid, cv=2))


def test_a_prepaid_accountant_holds_a_cost_in_its_own_unit():
    from skdp.model_selection._cost import prepaid_accountant

    group = PrivacyCost(1.0).in_unit("group", 3)
    held = prepaid_accountant(group)
    held.spend(group, label="inner grouped fit")  # counted as stated
    mixed = PrivacyCost(0.5) + group  # one row: 0.5 + 2 · 1
    held = prepaid_accountant(mixed)
    held.spend(mixed, label="inner fits")
    assert held.total()[0] == 2.5
