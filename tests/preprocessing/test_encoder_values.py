"""PrivateOneHotEncoder keeps every kept training value exactly (issue 26, item 6).

Categories keep the column's own values and dtype (float64, int64, str or
Python objects), so each kept training value encodes as itself; nothing
warns or raises after the charge, whatever the values; privacy parameters
the selection cannot honour are refused before the charge.
"""

import math
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdp import BudgetAccountant, PrivateOneHotEncoder
from skdp.mechanisms import partition_noise_std, partition_threshold

MANY = 400  # rows per value: every value is kept at epsilon=1, delta=1e-6


def fit_many(values, **params):
    """Fit on ``MANY`` rows of each value (one column); return encoder, X, acc."""
    X = np.array([[v] for v in values for _ in range(MANY)], dtype=object)
    acc = BudgetAccountant(epsilon=math.inf, delta=0.5)
    enc = PrivateOneHotEncoder(accountant=acc, random_state=0, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning after the charge fails
        enc.fit(X)
        out = enc.transform(X).toarray()
    return enc, X, out, acc


def test_float_values_stay_float64_and_encode_as_themselves():
    X = np.array([[0.1]] * MANY + [[0.3]] * MANY)
    enc = PrivateOneHotEncoder(random_state=0, sparse_output=False).fit(X)
    assert enc.categories_[0].dtype == np.float64
    assert enc.categories_[0].tolist() == [0.1, 0.3]
    assert (enc.transform(X).sum(axis=1) == 1).all()
    assert enc.get_feature_names_out().tolist() == ["x0_0.1", "x0_0.3"]


def test_large_ints_stay_distinct_int64():
    X = np.array([[16777216]] * MANY + [[16777217]] * MANY + [[2**62 + 1]] * MANY)
    enc = PrivateOneHotEncoder(random_state=0, sparse_output=False).fit(X)
    assert enc.categories_[0].dtype == np.int64
    assert enc.categories_[0].tolist() == [16777216, 16777217, 2**62 + 1]
    assert (enc.transform(X).argmax(axis=1) == np.repeat([0, 1, 2], MANY)).all()
    assert enc.get_feature_names_out().tolist() == [
        "x0_16777216",
        "x0_16777217",
        f"x0_{2**62 + 1}",
    ]


def test_a_value_above_float32_range_does_not_warn_after_the_charge():
    X = np.array([[1e300]] * MANY + [[-sys.float_info.max]] * MANY)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = PrivateOneHotEncoder(random_state=0).fit(X)
        assert (enc.transform(X).sum(axis=1) == 1).all()
    assert enc.categories_[0].tolist() == [-sys.float_info.max, 1e300]


def test_python_ints_in_an_object_column_are_kept_exactly():
    enc, _, out, _ = fit_many([2**53, 2**53 + 1, 2**70, -(2**80) - 1])
    assert enc.categories_[0].dtype == object
    assert enc.categories_[0].tolist() == [-(2**80) - 1, 2**53, 2**53 + 1, 2**70]
    codes = out.argmax(axis=1).reshape(4, MANY)
    assert (codes == np.array([1, 2, 3, 0])[:, None]).all()


def test_mixed_types_none_and_nan_are_categories_not_errors():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    X = pd.DataFrame({"c": ["a", 1.5, 2, None, np.nan, True] * MANY})
    enc = PrivateOneHotEncoder(accountant=acc, random_state=0).fit(X)
    cats = enc.categories_[0].tolist()
    assert cats[:4] == [True, 1.5, 2, "a"]
    assert math.isnan(cats[4]) and cats[5] is None
    assert (enc.transform(X).sum(axis=1) == 1).all()
    assert enc.get_feature_names_out().tolist() == [
        "c_True",
        "c_1.5",
        "c_2",
        "c_a",
        "c_nan",
        "c_None",
    ]


def test_nan_in_a_float_column_is_a_category():
    X = np.array([[np.nan]] * MANY + [[1.0]] * MANY)
    enc = PrivateOneHotEncoder(random_state=0, sparse_output=False).fit(X)
    assert enc.categories_[0].dtype == np.float64
    assert (enc.transform(X).sum(axis=1) == 1).all()


def test_the_released_nan_carries_no_row_s_payload():
    payload = np.array([0x7FF8DEADBEEF0001], dtype=np.int64).view(np.float64)
    X = np.concatenate([payload, -payload, [np.nan]]).repeat(MANY)[:, None]
    enc = PrivateOneHotEncoder(random_state=0).fit(X)
    released = enc.categories_[0].view(np.int64)
    assert released.tolist() == np.array([np.nan]).view(np.int64).tolist()


def test_one_differently_typed_row_changes_no_other_category():
    """A list is read cell by cell: one float row must not turn the kept
    ints into floats (their names and dtype), nor one string row them into
    strings."""
    base = [[1]] * MANY + [[2]] * MANY
    for extra in ([2.5], ["abc"]):
        names = [
            PrivateOneHotEncoder(random_state=0).fit(X).get_feature_names_out().tolist()
            for X in (base, [*base, extra])
        ]
        assert names[0] == names[1] == ["x0_1", "x0_2"]


def test_an_integral_float_and_an_int_are_one_category_with_one_name():
    """Equal numbers of different types are one category whose name does not
    depend on which type the rows hold (nor on their order)."""
    for values in ([1, 1.0, -0.0, 0, 2**60, 2.0**60], [0.0, 0, 1.0, 1, 2.0**60, 2**60]):
        enc, _, out, _ = fit_many(values)
        assert enc.get_feature_names_out().tolist() == [
            "x0_0",
            "x0_1",
            f"x0_{2.0**60}",
        ]
        assert (out.sum(axis=1) == 1).all()


doubles = st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True)
cells = st.one_of(
    doubles,
    st.integers(min_value=-(2**100), max_value=2**100),
    st.text(max_size=3),
    st.booleans(),
    st.none(),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(cells, min_size=1, max_size=4))
def test_fuzz_kept_values_encode_as_themselves_without_warnings(values):
    acc = BudgetAccountant(epsilon=math.inf, delta=0.5)
    X = np.array([[v] for v in values for _ in range(MANY)], dtype=object)
    enc = PrivateOneHotEncoder(accountant=acc, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc.fit(X)
        out = enc.transform(X).toarray()
        enc.get_feature_names_out()
    assert (out.sum(axis=1) == 1).all()  # every value kept, encodes to one column
    assert out.shape[1] == len(set(enc.get_feature_names_out()))


@settings(max_examples=40, deadline=None)
@given(st.lists(doubles, min_size=1, max_size=4))
def test_fuzz_float64_columns(values):
    X = np.repeat(np.array(values, dtype=float), MANY)[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = PrivateOneHotEncoder(random_state=0).fit(X)
        out = enc.transform(X).toarray()
    assert enc.categories_[0].dtype == np.float64
    assert (out.sum(axis=1) == 1).all()


# -- privacy parameters: refused before the charge, or honoured after it -------


@pytest.mark.parametrize("epsilon", [1e-12, 1e-300, 5e-324])
def test_epsilon_too_small_for_the_sampler_is_refused_before_the_charge(epsilon):
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    enc = PrivateOneHotEncoder(epsilon=epsilon, accountant=acc, random_state=0)
    with pytest.raises(ValueError, match="epsilon"):
        enc.fit(np.array([["a"]] * 10))
    assert acc.total() == (0.0, 0.0) and acc.entries == ()


def test_the_smallest_accepted_epsilon_works_after_the_charge():
    smallest = math.ldexp(1.0, -32)  # 2**20 / 2**52: the sampler's largest scale
    assert partition_threshold(smallest, 1e-6) > 0
    assert math.isfinite(partition_noise_std(smallest))
    enc = PrivateOneHotEncoder(epsilon=smallest, random_state=0)
    enc.fit(np.array([["a"]] * 10))
    assert enc.epsilon_spent_ == smallest
    with pytest.raises(ValueError, match="epsilon"):
        PrivateOneHotEncoder(epsilon=math.nextafter(smallest, 0)).fit([["a"]])


@pytest.mark.parametrize("epsilon", [1e6, 1e154, 1e300, sys.float_info.max])
def test_a_huge_epsilon_works_after_the_charge(epsilon):
    acc = BudgetAccountant(delta=1.0)
    enc = PrivateOneHotEncoder(epsilon=epsilon, accountant=acc, random_state=0)
    enc.fit(np.array([["a"]] * 10 + [["b"]] * 3 + [["rare"]]))
    # threshold 2 at any epsilon: a value of one row is never kept
    assert enc.threshold_ == 2 and enc.categories_[0].tolist() == ["a", "b"]
    assert acc.total()[0] == epsilon


@pytest.mark.parametrize("delta", [5e-324, 1e-300, 0.5, math.nextafter(1.0, 0)])
def test_delta_at_both_ends_works_after_the_charge(delta):
    acc = BudgetAccountant(delta=1.0)
    enc = PrivateOneHotEncoder(delta=delta, accountant=acc, random_state=0)
    enc.fit(np.array([["a"]] * 2000))
    assert enc.threshold_ >= 2 and acc.total()[1] == delta


def test_a_delta_that_vanishes_per_column_is_refused_before_the_charge():
    acc = BudgetAccountant(delta=1.0)
    with pytest.raises(ValueError, match="delta"):
        PrivateOneHotEncoder(delta=5e-324, accountant=acc).fit([["a", "b"]])
    assert acc.entries == ()


@pytest.mark.parametrize(
    "base, extra",
    [
        (np.repeat([[0.5], [2.0]], MANY, axis=0), [np.nan]),
        (np.repeat([[0.5], [2.0]], MANY, axis=0), [sys.float_info.max]),
        (np.repeat([[0.5], [2.0]], MANY, axis=0), [-0.0]),
        (np.repeat([[3], [2**62]], MANY, axis=0), [-(2**63)]),
        (np.repeat(np.array([["a"], [1]], dtype=object), MANY, axis=0), ["zz" * 50]),
        (np.repeat(np.array([["a"], [1]], dtype=object), MANY, axis=0), [None]),
        (np.repeat(np.array([["a"], [1]], dtype=object), MANY, axis=0), [pd.NA]),
        (np.repeat(np.array([["a"], [1]], dtype=object), MANY, axis=0), [2.5]),
        (np.repeat(np.array([["a"], [1]], dtype=object), MANY, axis=0), [True]),
    ],
)
def test_one_adversarial_row_changes_nothing_released(base, extra):
    """Neighbours D and D + one rare row: the same kept categories, names
    and dtype, no warning and no exception."""
    grown = np.vstack([base, np.array([extra], dtype=base.dtype)])
    fitted = []
    for X in (base, grown):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            enc = PrivateOneHotEncoder(random_state=0).fit(X)
        fitted.append(enc)
    a, b = fitted
    assert a.categories_[0].dtype == b.categories_[0].dtype
    assert a.get_feature_names_out().tolist() == b.get_feature_names_out().tolist()
    assert [type(v) for v in a.categories_[0]] == [type(v) for v in b.categories_[0]]
