"""RandomStoppingSearchCV: seeded searches give bit-identical releases.

The figures were recorded from the search before its repeat-and-select loop
was moved into :func:`~skdp.model_selection._random_stopping_cost.
repeat_and_select` (commit 1dc5496): the refactor must not change which
random draws are made, nor their order. The released score and the winning
model's coefficients are compared bit for bit (``float.hex``); with
``refit=True`` the refit draws from the source after the loop, so a change in
the number of draws in the loop shows there too.
"""

import numpy as np
import pytest

from skdp import BudgetAccountant, PrivateLogisticRegression
from skdp.metrics import make_private_scorer
from skdp.model_selection import RandomStoppingSearchCV

GRID = {"C": [0.1, 1.0, 10.0], "max_iter": [3, 6]}
TNB = "truncated_negative_binomial"

# (seed, stopping, eta, refit) -> (best_index_, best_score_, coef_), recorded
RECORDED = [
    (
        (0, TNB, 1.0, False),
        (3, "0x1.a1213b504aadap-1"),
        ("0x1.43f7ca1cb87a6p+2", "-0x1.a6777907757e8p-4", "-0x1.6b799bc5e190ap-4"),
    ),
    (
        (1, TNB, 1.0, False),
        (5, "0x1.bef534dd5c2c4p-1"),
        ("0x1.4975deaf2952ep+2", "0x1.0274807a01c40p-2", "-0x1.bb2f5175588b3p-2"),
    ),
    (
        (2, TNB, 0.0, False),
        (1, "0x1.9c5685f9b7a8cp-1"),
        ("0x1.d15114a416acfp+1", "-0x1.40304048c7f56p-2", "0x1.cf2f302f0c0a9p-2"),
    ),
    (
        (3, "poisson", 1.0, False),
        (0, "0x1.dea297da90edap-1"),
        ("0x1.b0e9020e335a3p+1", "-0x1.574a04946410cp-2", "0x1.4d314918c6b04p-6"),
    ),
    (
        (4, TNB, 1.0, True),
        (4, "0x1.c1a4a9a09dd92p-1"),
        ("0x1.0b0223253f0d7p+2", "-0x1.780a891eef1b6p-3", "0x1.cab89766b0222p-5"),
    ),
    (
        (5, "poisson", 1.0, True),
        (3, "0x1.e5683c3bf1637p-1"),
        ("0x1.c2f19c8f93e02p+2", "0x1.bad7f56db79dfp-2", "0x1.88742a59d71c6p-1"),
    ),
]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(600, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=600) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("case, released, coef", RECORDED)
def test_seeded_search_releases_what_it_released_before_the_refactor(
    data, case, released, coef
):
    seed, stopping, eta, refit = case
    search = RandomStoppingSearchCV(
        PrivateLogisticRegression(1.0, classes=[0, 1], feature_bounds=(-1, 1)),
        GRID,
        scoring=make_private_scorer("accuracy", epsilon=0.2),
        n_iter=4.0,
        stopping=stopping,
        eta=eta,
        refit=refit,
        random_state=seed,
        accountant=BudgetAccountant(50.0, 1e-5),
    ).fit(*data)
    index, score = released
    assert search.best_index_ == index
    assert (
        search.best_params_
        == [{"C": c, "max_iter": m} for c in GRID["C"] for m in GRID["max_iter"]][index]
    )
    assert search.best_score_.hex() == score
    assert tuple(c.hex() for c in search.best_estimator_.coef_.ravel()) == coef
