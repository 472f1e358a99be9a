"""``describe()`` reads every cell of a column on its own (the review's L1).

main read a column with ``np.asarray`` first, so the dtype numpy inferred
from all the cells decided how each cell was read: one row holding ``abc``
turned a column of ``True`` into text (every ``True`` then missing, count
6 -> 1), float32 cells into their shortest decimal strings (0.1f read as
0.1, not 0.100000001), and complex cells into strings (all missing); a
column of equal-length lists was flattened (3 rows -> 6 values).
"""

import math
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from skdp import BudgetAccountant
from skdp._describe import _finite_values, describe

F32 = float(np.float32(0.1))  # 0.10000000149011612

# (column, its values read cell by cell)
COLUMNS = {
    "bool": ([True] * 5 + [2.5], [1.0] * 5 + [2.5]),
    "float32": ([np.float32(0.1)] * 3, [F32] * 3),
    "complex": ([complex(1.5, 0)] * 3, [1.5] * 3),
    "complex128": ([np.complex128(-2 + 0j), np.complex64(1 + 1j)], [-2.0]),
    "lists": ([[1.0, 2.0]] * 3, []),  # a list is not a number: missing
    "arrays": ([np.array([1.0, 2.0])] * 2 + [np.array([3.0])], []),
    "mixed": ([Fraction(1, 3), Decimal("0.1"), np.int64(7), 10**400], [1 / 3, 0.1, 7]),
}
CELLS = ["abc", None, 2.5, [1.0, 2.0], complex(1, 2), True, np.float32(0.1)]


def same_bits(got, expected):
    expected = np.asarray(expected, dtype=np.float64)
    np.testing.assert_array_equal(got.view(np.uint64), expected.view(np.uint64))


@pytest.mark.parametrize("name", list(COLUMNS))
def test_each_cell_is_read_on_its_own(name):
    column, values = COLUMNS[name]
    same_bits(_finite_values(column), values)
    cells = np.empty(len(column), dtype=object)  # 1-D, whatever the cells
    for i, cell in enumerate(column):
        cells[i] = cell
    same_bits(_finite_values(cells), values)


@pytest.mark.parametrize("cell", CELLS, ids=repr)
@pytest.mark.parametrize("name", list(COLUMNS))
def test_one_more_cell_changes_only_its_own_value(name, cell):
    # D plus a cell reads as D's values plus that cell's own reading
    column, values = COLUMNS[name]
    alone = _finite_values([cell])
    assert alone.size <= 1
    same_bits(_finite_values([*column, cell]), [*values, *alone])


def test_review_bool_column_with_a_text_row_keeps_its_count():
    # main: count 6 on D, 1 on D plus 'abc'
    column = [True] * 5 + [2.5]
    counts = []
    for data in (column, [*column, "abc"]):
        accountant = BudgetAccountant(epsilon=1e6)
        rows = describe(
            {"a": data},
            epsilon=1e6,
            bounds={"a": (0.0, 3.0)},
            accountant=accountant,
            random_state=0,
        )
        counts.append(rows["a"]["count"])
    assert counts == [6, 6]


def test_typed_arrays_read_as_their_cells():
    # the fast path of a numeric numpy array gives each cell's float
    cells = [np.float32(0.1), np.float32(-3e38), np.float32(1e-45)]
    same_bits(_finite_values(np.array(cells)), [float(c) for c in cells])
    big = np.array([2**63 - 1, -(2**63)], dtype=np.int64)
    same_bits(_finite_values(big), [float(2**63), -float(2**63)])
    same_bits(_finite_values(np.array([True, False])), [1.0, 0.0])
    same_bits(_finite_values(np.array([1e308, np.inf, np.nan])), [1e308])


@pytest.mark.parametrize("dtype", [np.float32, object])
def test_a_masked_cell_is_missing(dtype):
    # main read the data under the mask (2.0 here)
    column = np.ma.array(np.array([1.0, 2.0, 3.0], dtype=dtype), mask=[0, 1, 0])
    same_bits(_finite_values(column), [1.0, 3.0])


@pytest.mark.parametrize(
    "column, error, match",
    [
        (np.zeros((3, 2)), ValueError, "2-dimensional"),
        (np.zeros((3, 1)), ValueError, "2-dimensional"),
        (np.float64(1.0), ValueError, "0-dimensional"),
        (np.array(5.0), ValueError, "0-dimensional"),
        ("12", TypeError, "str"),
        (b"12", TypeError, "bytes"),
        (5.0, TypeError, "float"),
        (None, TypeError, "NoneType"),
    ],
)
def test_a_column_that_is_not_one_dimensional_is_refused_before_the_charge(
    column, error, match
):
    # a property of the container's type and shape, stated by the caller,
    # never of the values: refused before anything is charged
    accountant = BudgetAccountant(epsilon=10.0)
    with pytest.raises(error, match=match) as caught:
        describe({"a": [1.0, 2.0], "b": column}, accountant=accountant)
    assert "'b'" in str(caught.value) and "Nothing was charged" in str(caught.value)
    assert accountant.entries == () and accountant.total() == (0.0, 0.0)


def test_a_cell_whose_conversion_raises_or_warns_is_missing_or_silent():
    # nothing is refused or warned on a cell: that would tell it is there
    class Odd:
        def __float__(self):
            raise ZeroDivisionError("odd")

    class Warns:
        def __float__(self):
            warnings.warn("a cell", UserWarning, stacklevel=1)
            return 4.0

    with np.errstate(all="raise"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = _finite_values([1.0, Odd(), Warns(), math.inf])
    same_bits(got, [1.0, 4.0])
