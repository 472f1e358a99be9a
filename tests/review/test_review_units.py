"""Adversarial review of the accountant's privacy unit (row / group charges).

Each test is one finding: the fixed ones pass, the open ones are strict
xfails that state the rule the code should meet. Figures are hand-derived:
a group-level (ε, δ) release counts (2ε, δ(1 + e^ε)) for one row (a row
added to or removed from an existing group removes that group and adds its
new version); a row-level one counts (mε, δ Σ_{i<m} e^{iε}) for a person of
at most m rows.
"""

import math
import sqlite3
import warnings
from fractions import Fraction

import numpy as np
import pytest

import skdp
from skdp import BudgetAccountant
from skdp.accounting import PrivacyCost, _units
from skdp.accounting._composition import exact
from skdp.accounting._cost import LedgerPart
from skdp.model_selection import fit_cost, privacy_utility_curve


class _CountingMath:
    """``math`` whose ``nextafter`` refuses to step more than ``limit`` times."""

    def __init__(self, limit):
        self.calls, self.limit = 0, limit

    def __getattr__(self, name):
        return getattr(math, name)

    def nextafter(self, x, y):
        self.calls += 1
        if self.calls > self.limit:
            raise AssertionError(f"more than {self.limit} ulp steps")
        return math.nextafter(x, y)


@pytest.mark.parametrize("m", [2**40, 2**53])
def test_a_subnormal_row_charge_is_converted_in_a_few_steps(monkeypatch, m):
    # 5e-324 reads 1.2% above its binary value; the conversion walked one
    # ulp at a time from the binary product up to m times the decimal
    # reading: ~1e10 steps for m = 2**40 (spend() hung). The result is the
    # smallest float whose each reading is at least m times the stated one.
    counting = _CountingMath(limit=100)
    monkeypatch.setattr(_units, "math", counting)
    epsilon = _units.convert_part(LedgerPart("tiny", 5e-324), m)[0]
    monkeypatch.undo()

    decimal, binary = m * exact(5e-324), m * Fraction(5e-324)

    def counts(value):  # both readings at least m times the stated one's
        return exact(value) >= decimal and Fraction(value) >= binary

    assert counts(epsilon) and not counts(math.nextafter(epsilon, 0.0))


def test_a_sweep_reports_what_the_accountant_counted_in_its_unit():
    # a row-level fit in a person-level accountant of <= 4 rows per person
    # counts 4 ε: two fits at 0.5 and 1.0 count 6, and the curve said 1.5
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    acc = BudgetAccountant(100.0, unit="group", max_rows_per_group=4)
    model = skdp.PrivateGaussianNB(classes=[0, 1], bounds=(-4, 4), accountant=acc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        curve = privacy_utility_curve(
            model, X, y, epsilons=[0.5, 1.0], n_repeats=1, random_state=0
        )
    assert acc.total() == (6.0, 0.0)
    assert (curve.epsilon_spent, curve.delta_spent) == (6.0, 0.0)


class _LoggingAccountant(BudgetAccountant):
    """A user's subclass written before charges had a unit."""

    def spend_many(self, items):
        self.seen = list(items)
        return super().spend_many(items)


def test_spend_works_with_a_subclass_that_overrides_spend_many_without_units():
    acc = _LoggingAccountant(1.0)
    assert acc.spend(0.25, label="a count").epsilon == 0.25  # was a TypeError
    assert acc.total() == (0.25, 0.0) and acc.seen[0][0] == "a count"


def test_a_cost_of_row_and_group_parts_is_not_restated_as_one_unit():
    # unit="group" relabelled the row part of a mixed cost as a group: in a
    # person accountant of <= 5 rows it counted 1 instead of 5
    acc = BudgetAccountant(100.0, unit="group", max_rows_per_group=5)
    mixed = PrivacyCost(1.0) + PrivacyCost(1.0).in_unit("group", 2)
    with pytest.raises(ValueError, match="one row for some parts"):
        acc.spend(mixed, label="mixed", unit="group", group_rows=2)
    assert acc.entries == ()
    assert acc.spend(mixed, label="mixed").epsilon == 1.0  # parts keep their own
    assert acc.total() == (6.0, 0.0)  # 5 · 1 + 1


def test_group_rows_without_a_unit_is_refused_not_dropped():
    acc = BudgetAccountant(1.0)
    with pytest.raises(ValueError, match="goes with unit='group'"):
        acc.spend(0.5, label="x", group_rows=3)
    assert acc.entries == ()


@pytest.mark.parametrize("method", ["ptr", "dwork_lei"])
def test_planned_delta_of_a_grouped_multi_step_fit_equals_the_recorded_one(method):
    # fit_cost stated a two-step fit as one (ε, δ) atom: converted for one row
    # its δ(1 + e^ε) exceeded the Σ δ_i(1 + e^ε_i) of the parts fit charges
    # (safe, but check_budget could refuse a fit that fits); now the parts
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, size=(120, 1))
    groups = np.arange(120) // 4
    acc = BudgetAccountant(10.0, 1e-3)
    model = (
        skdp.PTRMedian(bounds=(0, 10), proposed_sensitivity=0.5)
        if method == "ptr"
        else skdp.IQRScale(method="dwork_lei")
    ).set_params(max_rows_per_group=3, accountant=acc, random_state=0)
    planned = acc._validate_items([("plan", fit_cost(model))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, groups=groups)
    recorded = math.fsum(e.cost[1] for e in acc.entries)
    assert math.fsum(p.cost[1] for p in planned) == pytest.approx(recorded)


def test_a_person_ledger_refuses_an_unconverted_entry_of_an_older_skdp(tmp_path):
    # skdp before units inserts a row-level entry with no unit and no counted
    # cost, and adds its stated ε: in a person-level file of <= 10 rows per
    # person, two row spends of 0.5 counted 1.0 instead of 10 (checked with
    # the code of 9efadc0). The file now refuses such an insert.
    path = tmp_path / "person.sqlite"
    acc = BudgetAccountant(1.0, unit="group", max_rows_per_group=10, ledger=path)
    acc.spend(0.04, label="row fit")  # counted 0.4, converted here
    old_insert = (
        "INSERT INTO entries (label, epsilon, delta, time, pid, rho, "
        "noise_multiplier, mechanism) VALUES ('old', 0.5, 0.0, 0.0, 1, NULL, "
        "NULL, NULL)"
    )
    with sqlite3.connect(path) as conn:
        with pytest.raises(sqlite3.IntegrityError, match="without privacy units"):
            conn.execute(old_insert)
    assert [e.label for e in BudgetAccountant.open(path).entries] == ["row fit"]
    rows = BudgetAccountant(1.0, ledger=tmp_path / "rows.sqlite")
    with sqlite3.connect(rows.ledger) as conn:  # a row ledger takes it as before
        conn.execute(old_insert)
    assert rows.entries[0].unit == "row"
