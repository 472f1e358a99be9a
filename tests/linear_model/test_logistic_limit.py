"""Issue 27: as epsilon grows, PrivateLogisticRegression becomes scikit-learn's
``make_pipeline(StandardScaler(), LogisticRegression(C=C))`` on unscaled data."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp import BudgetAccountant
from skdp.linear_model import PrivateLogisticRegression
from skdp.linear_model._logistic_sums import (
    CLIP_CAP,
    CURVATURE_NOISE,
    MAX_CLIP,
    MIN_FACTOR,
    clip_norm,
    curvature_factor,
    curvature_norm,
)


def _unscaled_data(n_rows=400, seed=0):
    """Three features in very different units, a logistic model of them."""
    rng = np.random.default_rng(seed)
    t = rng.normal(size=(n_rows, 3))
    y = (rng.random(n_rows) < 1 / (1 + np.exp(-t @ [2.0, -1.5, 1.0]))).astype(int)
    X = t * [1e-3, 10.0, 5e3] + [0.01, 40.0, 5e4]
    return X, y


def _limit_fit(X, y, **params):
    return PrivateLogisticRegression(
        1e9,
        0.1,
        classes=[0, 1],
        random_state=0,
        accountant=BudgetAccountant(delta=0.5),
        **params,
    ).fit(X, y)


@pytest.mark.parametrize("C", [0.05, 1.0])
def test_limit_is_sklearns_standardised_penalised_model(C):
    # the penalty ||u||² / (2C) acts on the coefficients of standardised
    # features in scikit-learn; before, it acted on the private scales' units
    # (a feature's magnitude, not its spread), and the row clipping capped at
    # 2 made the limit a Huber-like model: coef off by 25 % at C = 0.05
    X, y = _unscaled_data()
    reference = make_pipeline(StandardScaler(), LogisticRegression(C=C)).fit(X, y)
    scaler, sk = reference[0], reference[1]
    model = _limit_fit(X, y, C=C, max_iter=300)
    np.testing.assert_allclose(
        model.coef_ * scaler.scale_, sk.coef_, rtol=0.02, atol=1e-3
    )
    assert model.score(X, y) == pytest.approx(reference.score(X, y), abs=0.005)


def test_clipping_vanishes_in_the_limit():
    # the clipping norm grows to the released reach of the rows, which covers
    # every row as the noise vanishes (before: capped at 2 scaled units)
    X, y = _unscaled_data()
    X[0] *= 50.0  # a far row, in the released histogram's top bins
    model = _limit_fit(X, y)
    z = (X - model.feature_location_) / model.feature_scale_
    rows = np.linalg.norm(np.column_stack([z, np.ones(len(z))]), axis=1)
    assert model.clip_norm_ >= rows.max() > CLIP_CAP


def test_clip_norm_rule_with_a_reach():
    assert clip_norm(None, 1e9, 0.01, 10, reach=50.0) == 50.0  # ample: the reach
    assert clip_norm(None, 1e3, 1.0, 4, reach=50.0) == 5.0  # noise decides
    assert clip_norm(None, 10.0, 50.0, 4, reach=50.0) == 1.0  # at least 1
    assert clip_norm(None, 1e9, 0.01, 10, reach=0.5) == 1.0
    assert clip_norm(None, 1e300, 1e-300, 1, reach=1e308) == MAX_CLIP
    assert clip_norm(3.0, 1e9, 0.01, 10, reach=50.0) == 3.0  # max_norm lowers it
    assert clip_norm(None, 1e9, 0.01, 10) == CLIP_CAP  # nothing known of the rows


def test_clip_norm_keeps_the_curvature_noise_bounded():
    # the curvature, clipped at up to twice the norm, has noise growing with
    # its square: the norm stops where that noise reaches its target
    limit = np.sqrt(CURVATURE_NOISE * 569 / (1e-3 * 2)) / 2
    norm = clip_norm(None, 569.0, 1e-5, 31, reach=1e3, gram_multiplier=1e-3)
    assert norm == pytest.approx(limit)
    assert clip_norm(None, 569.0, 1e-5, 31, reach=1e3) == 1e3  # gradient only


def test_curvature_norm_is_twice_the_gradients_up_to_the_reach():
    assert curvature_norm(2.0) == 4.0  # nothing known of the rows: 2c
    assert curvature_norm(3.0, reach=100.0) == 6.0
    assert curvature_norm(41.0, reach=41.0) == 41.0  # nothing clipped
    assert curvature_norm(30.0, reach=41.0) == 41.0
    assert curvature_norm(1.0, reach=0.5) == 1.0


def test_curvature_factor_falls_to_its_minimum_as_the_noise_vanishes():
    assert curvature_factor(100.0, 50.0, 10, reach=5.0) == 1.0  # noisy
    assert curvature_factor(1e9, 1e-3, 10, reach=5.0) == MIN_FACTOR  # limit
    assert MIN_FACTOR < curvature_factor(1e3, 1.0, 4, reach=4.0) < 1.0
    assert curvature_factor(1e9, 1e-3, 10) == 1.0  # no reach: the majoriser
    assert curvature_factor(1e300, 1e-300, 10, reach=MAX_CLIP) == MIN_FACTOR
