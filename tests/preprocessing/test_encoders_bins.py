"""PrivateOneHotEncoder, PrivateMinMaxScaler and PrivateKBinsDiscretizer."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler

from skdp import (
    BudgetAccountant,
    BudgetExceededError,
    PrivateHistogram,
    PrivateKBinsDiscretizer,
    PrivateLogisticRegression,
    PrivateMinMaxScaler,
    PrivateOneHotEncoder,
)
from skdp.audit import audit_mechanism
from skdp.mechanisms import partition_threshold
from skdp.stats import _histogram


def colours(n_common=2_000, n_rare=3, seed=0):
    rng = np.random.default_rng(seed)
    common = rng.choice(["red", "green", "blue"], n_common)
    values = np.concatenate([common, ["mauve"] * n_rare])
    return pd.DataFrame({"colour": values, "size": rng.choice(["S", "L"], values.size)})


# -- one-hot encoding ----------------------------------------------------------


def test_discovery_keeps_common_values_and_drops_rare_ones():
    X = colours()
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    enc = PrivateOneHotEncoder(accountant=acc, random_state=0).fit(X)
    assert enc.categories_[0].tolist() == ["blue", "green", "red"]
    assert enc.categories_[1].tolist() == ["L", "S"]
    assert enc.threshold_ == partition_threshold(0.5, 5e-7)
    assert [e.label for e in acc.entries] == [
        "PrivateOneHotEncoder: categories of 2 column(s)"
    ]
    assert acc.total() == (1.0, 1e-6)
    counts = dict(zip(enc.categories_[0], enc.category_counts_[0], strict=True))
    assert abs(counts["red"] - (X["colour"] == "red").sum()) < 40
    out = enc.transform(X)
    assert out.shape == (X.shape[0], 5)
    assert out[-1].toarray().tolist() == [
        [0, 0, 0] + ([1, 0] if X["size"].iloc[-1] == "L" else [0, 1])
    ]
    names = enc.get_feature_names_out()
    assert names.tolist() == [
        "colour_blue",
        "colour_green",
        "colour_red",
        "size_L",
        "size_S",
    ]


def test_public_categories_charge_nothing_and_unknowns_follow_the_rule():
    X = colours(200, 0)
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    enc = PrivateOneHotEncoder(
        [["red", "green", "blue", "mauve"], ["S", "M", "L"]],
        sparse_output=False,
        accountant=acc,
    ).fit(X)
    assert acc.total() == (0.0, 0.0) and enc.epsilon_spent_ == 0.0
    assert enc.category_counts_ is None
    assert enc.transform(X).sum(axis=1).tolist() == [2.0] * len(X)
    strict = PrivateOneHotEncoder(
        [["red"], ["S"]], handle_unknown="error", accountant=acc
    ).fit(X)
    with pytest.raises(ValueError, match="outside the fitted categories"):
        strict.transform(X)


def test_longer_strings_are_not_truncated_into_a_known_category():
    enc = PrivateOneHotEncoder([["ab"]], sparse_output=False).fit([["ab"]])
    assert enc.transform([["abc"], ["ab"]]).tolist() == [[0.0], [1.0]]


@pytest.mark.parametrize(
    "X, match",
    [
        (pd.DataFrame({"c": ["a", b"bytes", "b"]}), "type bytes"),
        (np.array([[b"a"], [b"b"]]), "dtype"),
    ],
)
def test_bad_columns_raise_before_any_charge(X, match):
    # None, NaN and mixed strings and numbers are categories (cell by cell,
    # test_encoder_values.py); only values of no supported kind are refused
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    with pytest.raises(ValueError, match=match):
        PrivateOneHotEncoder(accountant=acc).fit(X)
    assert acc.total() == (0.0, 0.0)


def test_numeric_categories_and_a_column_with_none_kept():
    X = np.array([[1.0, 7.0]] * 300 + [[2.0, 8.0]])
    enc = PrivateOneHotEncoder(sparse_output=False, random_state=0).fit(X)
    assert enc.categories_[0].tolist() == [1.0]
    assert enc.transform([[2.0, 7.0]]).tolist() == [[0.0, 1.0]]
    lonely = PrivateOneHotEncoder(random_state=0).fit(np.array([["x"]] * 3))
    assert lonely.categories_[0].size == 0  # all rare: no column, no error
    assert lonely.transform([["x"]]).shape == (1, 0)


def test_in_a_column_transformer_with_a_private_model():
    rng = np.random.default_rng(0)
    X = colours(4_000)
    X["age"] = rng.uniform(17, 90, len(X))
    y = (X["colour"] == "red").to_numpy().astype(int)
    pre = ColumnTransformer(
        [
            ("cat", PrivateOneHotEncoder(random_state=0), ["colour", "size"]),
            ("num", PrivateMinMaxScaler(bounds=(0, 100)), ["age"]),
        ]
    )
    model = make_pipeline(pre, PrivateLogisticRegression(random_state=0))
    assert model.fit(X, y).score(X, y) > 0.9


# -- min-max scaling -----------------------------------------------------------


def test_minmax_with_public_bounds_is_free_and_matches_sklearn():
    X = np.array([[0.0, 10.0], [100.0, 20.0], [50.0, 15.0]])
    acc = BudgetAccountant(epsilon=1.0)
    est = PrivateMinMaxScaler(bounds=([0, 10], [100, 20]), accountant=acc).fit(X)
    np.testing.assert_allclose(est.transform(X), MinMaxScaler().fit_transform(X))
    np.testing.assert_allclose(est.inverse_transform(est.transform(X)), X)
    assert acc.total() == (0.0, 0.0) and est._fit_cost().epsilon == 0


def test_minmax_private_bounds_charge_and_cover_the_data():
    X = np.random.default_rng(0).uniform(17, 90, size=(20_000, 1))
    acc = BudgetAccountant(epsilon=1.0)
    est = PrivateMinMaxScaler(
        bounds=(0, None),
        clip=True,
        feature_range=(-1, 1),
        accountant=acc,
        random_state=0,
    ).fit(X)
    assert acc.total()[0] == pytest.approx(1.0)
    assert est._fit_cost().epsilon == 1.0
    assert 85 < est.data_max_[0] < 120 and est.data_min_[0] == 0
    out = est.transform(X)
    assert out.min() >= -1 and out.max() <= 1


def test_minmax_bad_feature_range_charges_nothing():
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError, match="feature_range"):
        PrivateMinMaxScaler(feature_range=(1, 0), accountant=acc).fit([[1.0]])
    with pytest.raises(BudgetExceededError):
        PrivateMinMaxScaler(2.0, accountant=acc).fit([[1.0]])
    assert acc.total() == (0.0, 0.0)


# -- binning -------------------------------------------------------------------


def test_uniform_bins_are_free_and_exact():
    acc = BudgetAccountant(epsilon=1.0)
    est = PrivateKBinsDiscretizer(
        4, encode="onehot-dense", strategy="uniform", bounds=(0, 8), accountant=acc
    ).fit([[0.0], [3.0]])
    assert acc.total() == (0.0, 0.0)
    np.testing.assert_array_equal(est.bin_edges_[0], [0, 2, 4, 6, 8])
    out = est.transform([[-5.0], [2.0], [7.9], [100.0]])
    assert out.argmax(axis=1).tolist() == [0, 1, 3, 3]


def test_quantile_bins_follow_the_data_and_keep_their_number():
    X = np.random.default_rng(0).exponential(10.0, size=(20_000, 2))
    acc = BudgetAccountant(epsilon=1.0)
    est = PrivateKBinsDiscretizer(
        4, encode="ordinal", bounds=(0, 200), accountant=acc, random_state=0
    ).fit(X)
    assert acc.total() == (1.0, 0.0)
    truth = np.quantile(X[:, 0], [0.25, 0.5, 0.75])
    np.testing.assert_allclose(est.bin_edges_[0][1:-1], truth, rtol=0.1)
    shares = np.bincount(est.transform(X)[:, 0].astype(int), minlength=4) / len(X)
    np.testing.assert_allclose(shares, 0.25, atol=0.02)
    ties = PrivateKBinsDiscretizer(5, bounds=(0, 10), random_state=0).fit(
        np.ones((1_000, 1))
    )
    assert ties.transform(np.ones((3, 1))).shape == (3, 5)  # never fewer bins
    assert ties.get_feature_names_out().tolist() == [f"x0_{k}" for k in range(5)]


def test_bins_need_public_bounds_before_any_charge():
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError, match="bounds"):
        PrivateKBinsDiscretizer(accountant=acc).fit([[1.0]])
    assert acc.total() == (0.0, 0.0)


# -- histograms ----------------------------------------------------------------


def test_histogram_counts_noise_and_intervals():
    X = np.random.default_rng(0).uniform(0, 10, size=(5_000, 2))
    truth = np.array([np.histogram(X[:, j], np.linspace(0, 10, 6))[0] for j in (0, 1)])
    acc = BudgetAccountant(epsilon=200.0)
    misses = 0
    spread = []
    for seed in range(200):
        hist = PrivateHistogram(5, bounds=(0, 10), accountant=acc, random_state=seed)
        hist.fit(X)
        low, high = hist.confidence_interval(alpha=0.2)
        misses += int(np.any((truth < low) | (truth > high)))
        spread.append(hist.counts_ - truth)
    assert hist.noise_std_ == pytest.approx(np.sqrt(2) * 2.0)  # Laplace, d/ε = 2
    assert np.std(spread) == pytest.approx(hist.noise_std_, rel=0.1)
    # intervals at alpha=0.2 for all cells at once (a union bound, so the true
    # miss rate is about 0.18): a miss count this high would reject coverage
    # 0.8 in a one-sided binomial test at level 1e-3
    assert misses <= binom.ppf(1 - 1e-3, 200, 0.2)
    assert acc.total() == (200.0, 0.0)


def test_histogram_bad_input_charges_nothing():
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError, match="bounds"):
        PrivateHistogram(accountant=acc).fit([[1.0]])
    with pytest.raises(ValueError, match="delta > 0"):
        PrivateHistogram(bounds=(0, 1), mechanism="gaussian", accountant=acc).fit(
            [[1.0]]
        )
    assert acc.total() == (0.0, 0.0)


# -- histogram audit -----------------------------------------------------------

# sized by the twin: at 2,000 samples its bound is 1.31 (seeds 0-2: 1.31-1.41,
# the honest 0.0-0.18), at a third of the time of 3,000
HIST_AUDIT = {"n_samples": 2_000, "n_pilot": 500, "random_state": 0}
D0 = np.full((3, 4), 0.5)  # four features, every row in bin 0 of each
D1 = np.vstack([D0, np.full((1, 4), 0.5)])


def released_bin_total(data, seed):
    """The four released counts of the added row's bins, summed
    (post-processing of the release)."""
    hist = PrivateHistogram(2, bounds=(0, 2), random_state=seed).fit(data)
    return float(hist.counts_[:, 0].sum())


def test_histogram_audit_passes_and_a_missing_split_over_features_is_caught(
    monkeypatch,
):
    honest = audit_mechanism(released_bin_total, D0, D1, **HIST_AUDIT)
    assert honest.epsilon_lower_bound <= 1.0, str(honest)
    # the twin calibrates to one feature's sensitivity: a row moves four
    # counts by 1 each, so it spends 4 epsilon while claiming 1
    monkeypatch.setattr(
        _histogram, "per_feature_sensitivities", lambda d, rows=1: (rows, rows)
    )
    mutant = audit_mechanism(released_bin_total, D0, D1, **HIST_AUDIT)
    assert mutant.epsilon_lower_bound > 1.0, str(mutant)
