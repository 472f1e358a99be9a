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
from skdp.sensitivity._mean import exact_count, exact_weighted_count

__all__ = ["clip_norm", "curvature_factor", "curvature_norm"]

_BIG = 1e300
#: Target norm of the mean gradient's noise in :func:`clip_norm`. Public.
CLIP_NOISE = 0.01
#: Largest clipping norm of the rule (scaled units). Public.
CLIP_CAP = 2.0
#: Largest clipping norm of any rule (scaled units; keeps twice it squared a
#: normal double and within the exact sums' range). Public.
MAX_CLIP = 2.0**100
#: Smallest multiplier of the curvature bound (see :func:`curvature_factor`).
MIN_FACTOR = 0.5
#: Smallest clipping norm of a row in the curvature estimate (scaled units).
CURVATURE_NORM = 2.0
#: Target noise of the curvature's entries in :func:`curvature_norm`. Public.
CURVATURE_NOISE = 0.01


def _noise_limited_norm(count, step_multiplier, size, gram_multiplier, intercept):
    """The largest gradient clipping norm whose releases stay below the noise targets.

    ``min(τ Ñ / (r sqrt(D)), sqrt(τ_G Ñ / (r_G (1 + intercept))) / 2)``: with
    clipping norm ``c`` the noise of the mean gradient has norm about ``r c
    sqrt(D) / Ñ`` (target ``τ = CLIP_NOISE``), and the curvature, clipped at
    ``b <= 2c``, has noise ``r_G b² (1 + intercept) / Ñ`` per entry in units
    of the mean second moment (target ``τ_G = CURVATURE_NOISE``). The Gram's
    noise grows with the norm squared: bounding only the gradient's made the
    curvature noise once the norm grew (Adult numeric at ε = 3: 0.799
    against 0.815). Without ``gram_multiplier`` only the gradient's target.
    """
    wanted = CLIP_NOISE * count / (step_multiplier * math.sqrt(size))
    if gram_multiplier is not None:
        gram = CURVATURE_NOISE * count / (gram_multiplier * (1 + intercept))
        wanted = min(wanted, math.sqrt(gram) / CURVATURE_NORM)
    return wanted


def clip_norm(
    max_norm,
    count,
    step_multiplier,
    size,
    reach=None,
    gram_multiplier=None,
    intercept=True,
):
    """The per-row clipping norm of the gradient steps: ``min(max_norm, rule)``.

    ``rule = max(1, min(wanted, reach))``, a public function of the released
    count ``Ñ``, the noise multipliers of a step ``r`` and of the curvature
    ``r_G``, the number of weights per output ``D`` and ``reach``, a public
    bound on the norm of every row's gradient term (from the released
    per-feature reach of the private scales, or the stated bounds;
    post-processing). ``wanted`` is the largest norm whose noise stays below
    the public targets (:func:`_noise_limited_norm`); the rule takes it (at
    least 1: in scaled units a typical row's gradient is below 1) but never
    more than ``reach``: as the noise vanishes the norm grows to ``reach``
    and nothing is clipped, so the fit converges to scikit-learn's model (a
    norm far above every row would only lose the rows' terms to the
    fixed-point grid of the exact sums). Without a reach
    (``feature_bounds="scaled"``: nothing is known of the rows) the rule is
    capped at ``CLIP_CAP``; every rule at ``MAX_CLIP``. ``max_norm`` only
    lowers it: stating the true bound on the rows (or any larger number)
    gives the rule's norm, so it is never punished.

    The sensitivity of every release is stated in units of the clipping
    norm (a row's clipped term has norm at most ``c`` whatever ``c`` is), so
    this rule, a function of released values and public parameters, does
    not change the privacy argument.
    """
    wanted = _noise_limited_norm(
        count, step_multiplier, size, gram_multiplier, intercept
    )
    cap = CLIP_CAP if reach is None else float(reach)
    rule = min(max(1.0, min(wanted, cap)), MAX_CLIP)
    return rule if max_norm is None else min(float(max_norm), rule)


def curvature_norm(clip, reach=None):
    """The clipping norm ``b`` of a row in the curvature estimate.

    ``min(CURVATURE_NORM c, max(reach, c))`` for the gradient's norm ``c``:
    twice it (rows whose gradient is not clipped can have any norm when
    their residual is small, and a curvature clipped at ``c`` alone made
    the steps too long: [0, 1]-scaled digits 0.69 at ε = 1e6 against
    0.905), but no more than the public bound ``reach`` on the rows (then
    nothing is clipped). ``CURVATURE_NORM c`` without a reach.
    Post-processing; the Gram's sensitivity is stated in units of ``b²``.
    """
    doubled = CURVATURE_NORM * clip
    return doubled if reach is None else min(doubled, max(float(reach), clip))


def curvature_factor(
    count, step_multiplier, size, reach=None, gram_multiplier=None, intercept=True
):
    """Multiplier of the curvature bound ``κ XᵀX``, in ``[MIN_FACTOR, 1]``.

    ``max(MIN_FACTOR, min(1, reach / wanted))`` with ``wanted = τ Ñ / (r
    sqrt(D))`` the norm whose gradient noise meets the target of
    :func:`clip_norm`: 1 (the Böhning-Lindsay majoriser) while that noise
    binds the clipping norm, falling to ``MIN_FACTOR`` once the norm that
    clips nothing (``reach``) has gradient noise at most ``MIN_FACTOR``
    times the target (the factor scales the steps, hence their noise). The
    majoriser is tight only where ``p = 1/2``; on
    near-separable data the fitted ``p (1 - p)`` is far below ``1/4`` and
    the majorise-minimise steps converge linearly and slowly (breast
    cancer, no noise: 0.975 after ten steps, 0.986 after 100, scikit-learn
    0.988). Halving ``κ`` doubles the steps where the bound is loose and
    stays stable where it is tight (heavy ball with momentum ``β`` is
    stable for steps up to ``2 (1 + β)`` times ``1 / L``), but doubles each
    step's noise, so it is taken only as the noise vanishes. ``1`` without a
    reach. Post-processing of released values and public parameters.
    """
    if reach is None:
        return 1.0
    wanted = _noise_limited_norm(count, step_multiplier, size, None, intercept)
    return max(MIN_FACTOR, min(1.0, float(reach) / wanted))


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


# With ``sample_weight`` (in [0, 1], in memory only) each is the weighted
# sum, at the same sensitivity (the functions of skdp.sensitivity).


def _row_count(X, codes, sample_weight=None):
    if sample_weight is None:
        return exact_count(X)
    return exact_weighted_count(sample_weight)


def _clipped_gram(X, codes, bound, intercept, affine=None, sample_weight=None):
    X = X if affine is None else scale_rows(X, *affine)
    return exact_clipped_gram(
        X, bound, intercept=intercept, sample_weight=sample_weight
    )[0]


def _clipped_gradient_sum(
    X, codes, weights, max_norm, intercept, affine=None, sample_weight=None
):
    X = X if affine is None else scale_rows(X, *affine)
    codes = np.asarray(codes, dtype=np.intp)
    residuals = _residual_function(X, codes, weights, intercept)
    return exact_clipped_gradient_sum(
        X, residuals, max_norm, intercept=intercept, sample_weight=sample_weight
    )
