"""The per-row statistics of PrivateLogisticRegression and its clipping rule.

Module-level functions, so that the workers of a Dask input can import them;
each statistic is a sum over rows of ``(x, class index)``: in memory or per
block (:func:`~skdp.utils._dask_xy.xy_statistic`), the same values.
"""

import math

import numpy as np
from scipy.special import expit, softmax

from skdp.linear_model._scaling import scale_rows
from skdp.sensitivity._linear import exact_clipped_gradient_sum, exact_clipped_gram
from skdp.sensitivity._mean import exact_count

__all__ = ["clip_norm"]

_BIG = 1e300
#: Target norm of the mean gradient's noise in :func:`clip_norm`. Public.
CLIP_NOISE = 0.01
#: Largest clipping norm of the rule (scaled units). Public.
CLIP_CAP = 2.0


def clip_norm(max_norm, count, step_multiplier, size):
    """The per-row clipping norm: ``min(max_norm, rule)``.

    ``rule = min(CLIP_CAP, max(1, τ Ñ / (r sqrt(D))))``, a public function of
    the released count ``Ñ``, a step's noise multiplier ``r`` and the number
    of weights per output ``D`` (post-processing). With clipping norm ``c``
    the noise of the mean gradient has norm about ``r c sqrt(D) / Ñ``; the
    rule takes the largest ``c`` that keeps it below ``τ = CLIP_NOISE``,
    between 1 and ``CLIP_CAP`` (in scaled units a typical row's gradient is
    below 1, and larger norms measured worse at every ``epsilon``: the ten
    majorise-minimise steps converge more slowly on unclipped heavy tails,
    see ``benchmarks/bench_linear_unscaled.py``). ``max_norm`` only lowers
    it: stating the true bound on the rows (or any larger number) gives the
    rule's norm, so it is never punished.
    """
    rule = min(
        CLIP_CAP, max(1.0, CLIP_NOISE * count / (step_multiplier * math.sqrt(size)))
    )
    return rule if max_norm is None else min(float(max_norm), rule)


def _residual_function(X, codes, weights, intercept):
    """``residuals(start, stop)``: ``p - onehot(y)`` of a block of rows.

    ``weights`` has one column per output (one for two classes, whose
    probability of the second class is ``expit``).
    """
    n_outputs = weights.shape[1]

    def residuals(start, stop):
        scores = X[start:stop] @ weights[: X.shape[1]]
        if intercept:
            scores += weights[-1]
        # an overflowing score is a function of its row: map it by a fixed rule
        scores = np.nan_to_num(scores, nan=0.0, posinf=_BIG, neginf=-_BIG)
        target = codes[start:stop]
        if n_outputs == 1:
            return expit(scores) - target[:, None]
        probs = softmax(scores, axis=1)
        probs[np.arange(target.size), target] -= 1.0
        return probs

    return residuals


# The statistics of a fit, each a sum over rows of (x, class index): in
# memory or per block of a Dask input (xy_statistic), the same values.


def _row_count(X, codes):
    return exact_count(X)


def _clipped_gram(X, codes, bound, intercept, affine=None):
    X = X if affine is None else scale_rows(X, *affine)
    return exact_clipped_gram(X, bound, intercept=intercept)[0]


def _clipped_gradient_sum(X, codes, weights, max_norm, intercept, affine=None):
    X = X if affine is None else scale_rows(X, *affine)
    codes = np.asarray(codes, dtype=np.intp)
    residuals = _residual_function(X, codes, weights, intercept)
    return exact_clipped_gradient_sum(X, residuals, max_norm, intercept=intercept)
