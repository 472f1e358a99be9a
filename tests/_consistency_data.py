"""Data for the consistency tests: unscaled, skewed, zero-inflated and 0/1.

Built with a fixed seed, so every test sees the same table. The columns
have very different magnitudes (1e-3 to 1e5), as a user's own table has
before anyone scaled it.
"""

from functools import cache

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes

#: Rows of the synthetic table: a few thousand, as in a small survey.
N_ROWS = 3000

#: What each synthetic column is, in order.
COLUMNS = (
    "tiny normal (mean 5e-3, sd 1e-3)",
    "lognormal(7, 1): skewed, median ~1,100, max ~1e5",
    "zero-inflated: 85 % zeros, else lognormal(8, 1)",
    "0/1 (30 % ones)",
    "age-like normal (mean 40, sd 12)",
    "large uniform (5e4, 1.5e5)",
)


@cache
def synthetic_features(n_rows=N_ROWS, seed=0):
    """The synthetic table ``X`` of shape (n_rows, 6), read-only."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            rng.normal(5e-3, 1e-3, n_rows),
            rng.lognormal(7.0, 1.0, n_rows),
            np.where(rng.random(n_rows) < 0.85, 0.0, rng.lognormal(8.0, 1.0, n_rows)),
            (rng.random(n_rows) < 0.3).astype(float),
            rng.normal(40.0, 12.0, n_rows),
            rng.uniform(5e4, 1.5e5, n_rows),
        ]
    )
    X.flags.writeable = False
    return X


def _standardized(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


@cache
def synthetic_classification(seed=0):
    """``(X, y)``: a logistic model of the standardized synthetic columns."""
    X = synthetic_features(seed=seed)
    rng = np.random.default_rng(seed + 1)
    logit = _standardized(X) @ np.array([1.0, 1.5, 1.0, -1.0, 0.8, -0.5])
    y = (rng.random(len(X)) < 1.0 / (1.0 + np.exp(-logit))).astype(int)
    y.flags.writeable = False
    return X, y


@cache
def synthetic_regression(seed=0):
    """``(X, y)``: a linear target in the synthetic columns' own units."""
    X = synthetic_features(seed=seed)
    rng = np.random.default_rng(seed + 2)
    y = _standardized(X) @ np.array([2.0, 1.0, 1.5, -1.0, 0.5, 1.0])
    y = 100.0 + 10.0 * (y + rng.normal(0.0, 1.0, len(X)))
    y.flags.writeable = False
    return X, y


@cache
def breast_cancer():
    """scikit-learn's bundled breast-cancer set, unscaled (569 x 30)."""
    return load_breast_cancer(return_X_y=True)


@cache
def diabetes():
    """scikit-learn's bundled diabetes set in its original units (442 x 10)."""
    return load_diabetes(return_X_y=True, scaled=False)


#: Public per-column bounds of the synthetic table, as a user who knows the
#: columns' units would state them (an order of magnitude above the data).
SYNTHETIC_BOUNDS = (
    np.array([0.0, 0.0, 0.0, 0.0, -50.0, 0.0]),
    np.array([0.01, 1e5, 1e6, 1.0, 150.0, 2e5]),
)


# --- distances to the counterpart -----------------------------------------
# Each returns a non-negative number; 0 is the counterpart itself.


def _unit(true, X):
    """|true|, or the column's standard deviation where the true value is 0.

    A relative error is undefined at 0 (a median of a zero-inflated column);
    there the column's own spread is the unit instead.
    """
    true = np.asarray(true, dtype=float)
    sd = np.broadcast_to(X.std(axis=0), true.shape)
    return np.where(true != 0, np.abs(true), sd)


def relative_error(released, true, X):
    """Largest ``|released - true| / unit`` over features (see `_unit`)."""
    released = np.asarray(released, dtype=float)
    return float(np.max(np.abs(released - true) / _unit(true, X)))


def rank_errors(X, released, q):
    """How many ranks each released quantile is from quantile ``q``.

    ``released`` has shape (n_features,). A value occupies the ranks
    ``[#(X < r), #(X <= r)]``; its error is the distance from ``q * n`` to
    that interval (0 inside it, so an atom of any size is exact).
    """
    n = X.shape[0]
    below = (X < released).sum(axis=0)
    at_or_below = (X <= released).sum(axis=0)
    return np.maximum(0.0, np.maximum(below - q * n, q * n - at_or_below))


def quantile_error(X, released, quantiles, rel_tol=1e-3):
    """Largest error over quantiles and features, in units of the tolerance.

    An answer within ``rel_tol`` relative (see `_unit`) *or* one rank of
    the true quantile scores at most 1; a refusal (NaN) scores the largest
    rank error, ``max(q, 1 - q) * n``.
    """
    worst = 0.0
    for row, q in zip(np.atleast_2d(released), quantiles, strict=True):
        true = np.quantile(X, q, axis=0)
        rel = np.abs(row - true) / _unit(true, X) / rel_tol
        error = np.minimum(rel, rank_errors(X, row, q))
        # a refusal (NaN) answers nothing: as far off as a value can be
        error[np.isnan(row)] = max(q, 1 - q) * len(X)
        worst = max(worst, float(np.max(error)))
    return worst


def bounds_error(lower, upper, X):
    """Distance of released bounds from the data's range, tolerance 1.

    The searches around the origin 0 promise bounds that cover the data
    (up to about ``3 / (0.8 ε)`` rows per side) on a grid of ratio
    ``2**(1/4)``: a side without data is bounded at 0, the other side at one
    of the first grid points past the extreme. So the target range is
    ``[min(x, 0), max(x, 0)]``; scored 1 are 0.1 % of the rows clipped, or a
    width two grid steps (a factor ``2**(1/2)``) wider than the target.
    """
    clipped = ((X < lower) | (X > upper)).mean(axis=0) / 1e-3
    target = np.maximum(X.max(axis=0), 0) - np.minimum(X.min(axis=0), 0)
    wider = np.maximum(0.0, np.log2((upper - lower) / target)) / 0.5
    return float(np.max(np.maximum(clipped, wider)))


def subspace_error(components, reference):
    """Sine of the largest principal angle between two row spaces."""
    q1, _ = np.linalg.qr(np.asarray(components).T)
    q2, _ = np.linalg.qr(np.asarray(reference).T)
    cosines = np.linalg.svd(q1.T @ q2, compute_uv=False)
    return float(np.sqrt(max(0.0, 1.0 - cosines.min() ** 2)))
