"""Seeded outputs of the estimators moved or split by the layout refactor.

Each case fits one public estimator with a fixed seed on a fixed small
data set and hashes what it released (its fitted attributes and, for a
transformer, the transformed rows). The hashes in ``RECORDED`` were written
by running this file's ``_fingerprints`` on commit 3045e36, before the
descriptive statistics moved from ``skdp.preprocessing`` to ``skdp.stats``
and before ``_logistic.py``, ``_smooth.py`` and ``_search.py`` were split;
main at 1dc5496 (the base of the moves) gives the same hashes.
A refactor that moves code must leave every hash unchanged: a changed
hash is a changed release, bit for bit.

Regenerate (only for a deliberate change of behaviour) with
``python tests/test_seeded_outputs.py`` and paste its output.
"""

import hashlib
import warnings

import numpy as np
import pytest

from skdp import BudgetAccountant

# Import through the public paths that existed before the move, so the
# test also checks that they keep working.
from skdp.linear_model import PrivateLinearRegression, PrivateLogisticRegression
from skdp.model_selection import NoisyMaxSearchCV
from skdp.preprocessing import (
    DPClipper,
    IQRScale,
    PrivateHistogram,
    PrivateJointHistogram,
    PrivateKBinsDiscretizer,
    PrivateMean,
    PrivateMinMaxScaler,
    PrivateOneHotEncoder,
    PrivateQuantile,
    PrivateRobustScaler,
    PrivateStandardScaler,
    PTRMedian,
    SmoothSensitivityMedian,
    SVTClipSelector,
)

BOUNDS = (-4.0, 4.0)


def _data():
    rng = np.random.default_rng(20261126)
    X = rng.normal(size=(3000, 3)) * np.array([1.0, 0.5, 2.0]) + np.array(
        [0.5, -1.0, 0.0]
    )
    y = (X @ np.array([1.0, -2.0, 0.5]) + rng.normal(size=3000) > 0).astype(int)
    return X, y


def _linear_target(X):
    return X @ np.array([0.3, -0.2, 0.1])


def _cases():
    """Name -> (estimator factory, fit(estimator, X, y) -> transformed or None)."""

    def transform(est, X, y):
        return est.fit(X).transform(X)

    def fit_only(est, X, y):
        est.fit(X)

    def fit_xy(est, X, y):
        est.fit(X, y)
        return est.predict(X)

    def fit_regression(est, X, y):
        est.fit(X, _linear_target(X))
        return est.predict(X)

    def encode(est, X, y):
        cats = np.column_stack([np.round(X[:, :2]).astype(int), y])
        return est.fit(cats).transform(cats).toarray()

    def search(est, X, y):
        est.fit(X, y)
        return est.predict(X)

    def search_estimator():
        from sklearn.linear_model import LogisticRegression

        return NoisyMaxSearchCV(
            LogisticRegression(),
            {"C": [0.01, 1.0, 100.0]},
            epsilon=1.0,
            n_blocks=10,
            refit=lambda params: PrivateLogisticRegression(
                C=params["C"], feature_bounds=BOUNDS, classes=[0, 1]
            ),
            random_state=0,
        )

    return {
        "DPClipper": (lambda: DPClipper(bounds=BOUNDS, random_state=0), transform),
        "DPClipper_svt": (lambda: DPClipper(random_state=0), transform),
        "IQRScale": (lambda: IQRScale(bounds=BOUNDS, random_state=0), transform),
        "IQRScale_dwork_lei": (
            lambda: IQRScale(20.0, method="dwork_lei", random_state=0),
            transform,
        ),
        "PTRMedian": (
            lambda: PTRMedian(bounds=BOUNDS, proposed_sensitivity=0.5, random_state=0),
            transform,
        ),
        "PrivateHistogram": (
            lambda: PrivateHistogram(bins=8, bounds=BOUNDS, random_state=0),
            fit_only,
        ),
        "PrivateJointHistogram": (
            lambda: PrivateJointHistogram(bins=4, bounds=BOUNDS, random_state=0),
            fit_only,
        ),
        "PrivateKBinsDiscretizer": (
            lambda: PrivateKBinsDiscretizer(
                n_bins=4, encode="ordinal", bounds=BOUNDS, random_state=0
            ),
            transform,
        ),
        "PrivateMean": (lambda: PrivateMean(bounds=BOUNDS, random_state=0), transform),
        "PrivateMean_svt": (lambda: PrivateMean(random_state=0), transform),
        "PrivateMean_gaussian": (
            lambda: PrivateMean(
                bounds=BOUNDS, mechanism="gaussian", delta=1e-6, random_state=0
            ),
            transform,
        ),
        "PrivateMinMaxScaler": (
            lambda: PrivateMinMaxScaler(bounds=BOUNDS, random_state=0),
            transform,
        ),
        "PrivateOneHotEncoder": (
            lambda: PrivateOneHotEncoder(epsilon=5.0, random_state=0),
            encode,
        ),
        "PrivateQuantile": (
            lambda: PrivateQuantile((0.1, 0.5, 0.9), bounds=BOUNDS, random_state=0),
            fit_only,
        ),
        "PrivateQuantile_svt": (
            lambda: PrivateQuantile((0.25, 0.75), random_state=0),
            fit_only,
        ),
        "PrivateRobustScaler": (
            lambda: PrivateRobustScaler(
                bounds=BOUNDS, proposed_sensitivity=0.5, random_state=0
            ),
            transform,
        ),
        "PrivateRobustScaler_dwork_lei": (
            lambda: PrivateRobustScaler(
                bounds=BOUNDS,
                proposed_sensitivity=0.5,
                scale_method="dwork_lei",
                random_state=0,
            ),
            transform,
        ),
        "PrivateStandardScaler": (
            lambda: PrivateStandardScaler(bounds=BOUNDS, random_state=0),
            transform,
        ),
        "SVTClipSelector": (lambda: SVTClipSelector(random_state=0), fit_only),
        "SmoothSensitivityMedian": (
            lambda: SmoothSensitivityMedian(bounds=BOUNDS, random_state=0),
            transform,
        ),
        "SmoothSensitivityMedian_cauchy": (
            lambda: SmoothSensitivityMedian(
                bounds=BOUNDS, noise="cauchy", random_state=0
            ),
            transform,
        ),
        "PrivateLogisticRegression": (
            lambda: PrivateLogisticRegression(
                feature_bounds=BOUNDS, classes=[0, 1], random_state=0
            ),
            fit_xy,
        ),
        "PrivateLogisticRegression_max_norm": (
            lambda: PrivateLogisticRegression(
                max_norm=3.0, max_iter=5, classes=[0, 1], random_state=0
            ),
            fit_xy,
        ),
        "PrivateLinearRegression": (
            lambda: PrivateLinearRegression(
                feature_bounds=BOUNDS, target_bounds=(-3.0, 3.0), random_state=0
            ),
            fit_regression,
        ),
        "NoisyMaxSearchCV": (search_estimator, search),
        "NoisyMaxSearchCV_holdout": (
            lambda: NoisyMaxSearchCV(
                PrivateLogisticRegression(feature_bounds=BOUNDS, classes=[0, 1]),
                {"C": [0.1, 10.0]},
                method="holdout",
                random_state=0,
            ),
            search,
        ),
    }


def _feed(digest, value):
    """Hash ``value`` by content: arrays by dtype, shape and bytes."""
    if isinstance(value, np.ndarray) and value.dtype != object:
        digest.update(f"{value.dtype.str}{value.shape}".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (list, tuple, np.ndarray)):
        digest.update(f"{type(value).__name__}{len(value)}".encode())
        for item in value:
            _feed(digest, item)
    elif isinstance(value, dict):
        for key in sorted(value, key=repr):
            digest.update(repr(key).encode())
            _feed(digest, value[key])
    elif value is None or isinstance(value, (bool, int, float, str, np.generic)):
        digest.update(repr(value).encode())
    else:  # fitted sub-estimators, accountants, costs: their released numbers
        digest.update(type(value).__name__.encode())
        fitted = {k: v for k, v in vars(value).items() if k.endswith("_")}
        _feed(digest, fitted)


def _fingerprint(name):
    factory, run = _cases()[name]
    X, y = _data()
    estimator = factory()
    estimator.set_params(accountant=BudgetAccountant(delta=1e-3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        output = run(estimator, X, y)
    digest = hashlib.sha256()
    fitted = {
        k: v
        for k, v in vars(estimator).items()
        if k.endswith("_") and not k.startswith("_")
    }
    _feed(digest, fitted)
    _feed(digest, output)
    return digest.hexdigest()[:32]


RECORDED = {
    "DPClipper": "e0935eb6d6fb8d971f68fc09da302d79",
    "DPClipper_svt": "f0d4a3bb91e6bd5dd9b955eb4cfb39fb",
    "IQRScale": "48423eb23a2328eaf33f6e1ac2bcbc1a",
    "IQRScale_dwork_lei": "0680db039032bab876d96c26c981e55e",
    "NoisyMaxSearchCV": "4e073cf334c6713c3d6e2a6539f1bca3",
    "NoisyMaxSearchCV_holdout": "afc94564edda7591e4942f64a2d3faf9",
    "PTRMedian": "d4d6fc6795d7a16d162abc2a5e5b5946",
    "PrivateHistogram": "76abb98535b7c24e501a35d3e5b9677a",
    "PrivateJointHistogram": "33f4bf8b98bb974e84fd6c2664046045",  # on 1dc5496
    "PrivateKBinsDiscretizer": "98eaedb545a3d1903002254b6be25e77",
    # re-recorded on c3913c4 (before the moves): targets map onto [-1, 1] by
    # ((y - low) - (high - y)) / width since then, a deliberate change
    "PrivateLinearRegression": "9df722210b880ad9e7d51c50e7e0b20b",
    "PrivateLogisticRegression": "4abc7b570bed6f963933cc0589d2a6b6",
    "PrivateLogisticRegression_max_norm": "6196a8f8cfbc7e0dfe711ef3cbe92bd8",
    "PrivateMean": "729b15790b7acc0227e5c7be37705cf5",
    "PrivateMean_gaussian": "a2b0f0bcb199c004407b68ad019dadae",
    "PrivateMean_svt": "33a010ccaee83db4e1413dc2a97d5bdf",
    "PrivateMinMaxScaler": "ccf9b85378b1e197216083c6c1edef8e",
    "PrivateOneHotEncoder": "c109c9b063839d3d2415922b7c2b6f13",
    "PrivateQuantile": "b0519b7389d60c432d1a8583ed029c04",
    "PrivateQuantile_svt": "313ea30858c541c3fc2f992e6d452852",
    "PrivateRobustScaler": "8be897530e25eb73c9ac081876627713",
    "PrivateRobustScaler_dwork_lei": "eeae1cc05241718d8b937e3c7fcb6e97",
    "PrivateStandardScaler": "2c089115fc5f6c5b5b1666ccf6379710",
    "SVTClipSelector": "a83a73fc0bb6d7c34ba899d753b60467",
    "SmoothSensitivityMedian": "398143f152cd73c4b6be0bc57af0d7be",
    "SmoothSensitivityMedian_cauchy": "ab14feec5ccb8e80e35bef238129adb4",
}


@pytest.mark.parametrize("name", sorted(_cases()))
def test_seeded_outputs_unchanged(name):
    assert _fingerprint(name) == RECORDED[name]


def _fingerprints():
    return {name: _fingerprint(name) for name in sorted(_cases())}


if __name__ == "__main__":
    for name, value in _fingerprints().items():
        print(f"    {name!r}: {value!r},")
