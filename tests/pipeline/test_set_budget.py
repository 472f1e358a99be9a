"""One budget for a whole pipeline: set_budget and make_private_pipeline."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp import (
    BudgetAccountant,
    BudgetExceededError,
    DPClipper,
    PrivateLogisticRegression,
    PrivateMean,
    PrivatePCA,
    PrivateStandardScaler,
)
from skdp.accounting._composition import exact
from skdp.model_selection import fit_cost
from skdp.pipeline import make_private_pipeline, private_steps, set_budget


def _data(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) * [1, 10, 100, 1000]
    y = (X[:, 0] + X[:, 1] / 10 + rng.logistic(size=n) > 0).astype(int)
    return X, y


def _three_default_steps(budget):
    return (
        PrivateStandardScaler(accountant=budget, random_state=0),
        PrivatePCA(n_components=2, accountant=budget, random_state=0),
        PrivateLogisticRegression(classes=[0, 1], accountant=budget, random_state=0),
    )


def test_three_default_steps_fit_one_budget_given_once():
    X, y = _data()
    budget = BudgetAccountant(epsilon=1.0, delta=1e-6)
    with pytest.raises(BudgetExceededError):  # the defaults: 1 + 1 + 1
        make_pipeline(*_three_default_steps(budget)).fit(X, y)
    budget = BudgetAccountant(epsilon=1.0, delta=1e-6)
    pipe = make_private_pipeline(*_three_default_steps(budget), epsilon=1.0)
    pipe.fit(X, y)
    spent_epsilon, spent_delta = budget.total()
    assert 0.999999 <= spent_epsilon <= 1.0 and spent_delta <= 1e-6


def test_shares_follow_the_weights_and_delta_goes_to_its_users():
    pipe = set_budget(
        make_pipeline(PrivateStandardScaler(), PrivateLogisticRegression()),
        epsilon=2.0,
        delta=1e-5,
        weights={"privatestandardscaler": 1, "privatelogisticregression": 3},
    )
    assert pipe[0].epsilon == 0.5 and pipe[1].epsilon == 1.5
    assert pipe[0].delta == 0.0  # pure: keeps its own
    assert pipe[1].delta == 1e-5
    cost = fit_cost(pipe)
    assert exact(cost.epsilon) <= 2 and exact(cost.delta) <= exact(1e-5)


def test_paths_reach_into_column_transformers_and_skip_free_steps():
    columns = ColumnTransformer(
        [
            ("num", PrivateStandardScaler(), [0, 1]),
            ("clip", DPClipper(bounds=(0, 1)), [2]),  # public bounds: free
            ("plain", StandardScaler(), [3]),
        ]
    )
    pipe = make_pipeline(columns, PrivateLogisticRegression())
    assert list(private_steps(pipe)) == [
        "columntransformer__num",
        "columntransformer__clip",
        "privatelogisticregression",
    ]
    set_budget(pipe, 1.0, weights=[1, 1])  # the clipper costs nothing
    assert columns.transformers[0][1].epsilon == 0.5
    assert columns.transformers[1][1].epsilon == 1.0  # untouched default
    assert pipe[-1].epsilon == 0.5


@pytest.mark.parametrize(
    "make, kwargs, message",
    [
        (
            lambda: make_pipeline(
                PrivateMean(bounds=(0, 1)),
                GridSearchCV(PrivateMean(bounds=(0, 1)), {"epsilon": [0.1]}),
            ),
            {},
            "many times",
        ),
        (
            lambda: make_pipeline(PrivateStandardScaler(), PrivateLogisticRegression()),
            {"delta": 0.0},
            "delta > 0",
        ),
        (
            lambda: make_pipeline(PrivateStandardScaler(), PrivateMean()),
            {"weights": [1]},
            "one per step",
        ),
        (lambda: make_pipeline(StandardScaler(), LinearRegression()), {}, "no private"),
    ],
)
def test_refusals_name_the_cause_and_change_nothing(make, kwargs, message):
    pipe = make()
    before = repr(pipe.get_params())
    with pytest.raises(ValueError, match=message):
        set_budget(pipe, 1.0, **kwargs)
    assert repr(pipe.get_params()) == before


@settings(max_examples=60, deadline=None)
@given(
    epsilon=st.floats(1e-300, 1e300),
    delta=st.floats(1e-300, 0.999),
    weights=st.lists(st.floats(1e-200, 1e200), min_size=3, max_size=3),
)
def test_the_split_never_exceeds_the_total(epsilon, delta, weights):
    pipe = make_pipeline(
        PrivateStandardScaler(), PrivatePCA(), PrivateLogisticRegression()
    )
    before = repr(pipe.get_params())
    try:
        set_budget(pipe, epsilon, delta, weights=weights)
    except ValueError as exc:  # a share too small for a step: nothing changed
        assert "Nothing was changed" in str(exc)
        assert repr(pipe.get_params()) == before
        return
    cost = fit_cost(pipe)
    assert exact(cost.epsilon) <= exact(epsilon)
    assert exact(cost.delta) <= exact(delta)
