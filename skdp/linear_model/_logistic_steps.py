"""The parts of a :class:`~skdp.PrivateLogisticRegression` fit.

The budget shares and the plan of its releases (before the charge), then
the steps that follow the charge: the preconditioner from the noisy Gram
matrix, the penalty read off the released second moments, the noisy,
preconditioned gradient steps and the weights in the user's units. The
derivations are in the Notes of :class:`~skdp.PrivateLogisticRegression`.
"""

import math

import numpy as np
from scipy.special import expit, softmax
from sklearn.utils.validation import check_is_fitted

from skdp.linear_model._logistic_sums import _clipped_gradient_sum, _clipped_gram
from skdp.linear_model._release import (
    floored_inverse,
    gram_noise_dominated,
    noisy_gram,
    release_sum,
    spectral_noise_bound,
    sum_noise_dominated,
)
from skdp.linear_model._scaling import (
    N_BINS,
    SCALE_SHARE,
    histogram_sensitivity,
    to_user_units,
)
from skdp.utils._dask_xy import xy_statistic

__all__ = ["LogisticStepsMixin", "ProbabilityMixin"]

#: Shares of the squared GDP parameter: the row count, the curvature (Gram
#: matrix) and all gradient steps together. Public constants.
COUNT_SHARE = 0.01
CURVATURE_SHARE = 0.3
#: Heavy-ball momentum of the steps (post-processing; 0 is the plain
#: Böhning-Lindsay iteration).
MOMENTUM = 0.5
#: The preconditioner's eigenvalues are raised to this fraction of a
#: high-probability bound on the curvature noise's spectral norm (measured on
#: Adult: 0.2 to 1 agree within 0.3 points; near 0 noise directions blow up).
NOISE_FLOOR = 0.5


def _shares(n_steps, private_scales=False):
    """One weight per release: (feature scales), count, Gram matrix, steps."""
    step = (1.0 - COUNT_SHARE - CURVATURE_SHARE) / n_steps
    shares = [COUNT_SHARE, CURVATURE_SHARE] + [step] * n_steps
    if not private_scales:
        return shares
    return [SCALE_SHARE] + [(1.0 - SCALE_SHARE) * share for share in shares]


class LogisticStepsMixin:
    """The plan of a fit's releases and its steps after the charge.

    Reads the estimator's ``C``, ``fit_intercept``, ``max_iter`` and what
    its ``fit`` sets before the steps: ``clip_norm_``, ``_affine``,
    ``_sample_weight``, ``_curvature_norm``, ``_curvature_factor`` and
    ``_noise_causes``.
    """

    def _statistic(self, data, function, *args):
        """``function``'s sum over the rows (:func:`xy_statistic`), weighted
        by the fit's ``sample_weight`` when there is one (in memory)."""
        if self._sample_weight is None:
            return xy_statistic(data, function, *args)
        return function(*data, *args, sample_weight=self._sample_weight)

    def _preconditioner(self, data, d, count, multiplier, n_outputs, source):
        """``P`` of the class Notes, from the noisy Gram matrix (post-processing)."""
        intercept = bool(self.fit_intercept)
        size = d + intercept
        bound = self._curvature_norm
        gram = self._statistic(data, _clipped_gram, bound, intercept, self._affine)
        # q = D^-1 [clip(x), 1] / (c sqrt(1 + intercept)), D = diag(1, .., 1/c)
        columns = np.ones(size)
        if intercept:
            columns[-1] = 1.0 / bound
        kappa = self._curvature_factor * (0.25 if n_outputs == 1 else 0.5)
        unit = bound**2 * (1 + intercept) / count
        noisy = noisy_gram(gram, size, multiplier, source)
        if gram_noise_dominated(noisy, multiplier):
            self._noise_causes.append("curvature (Gram matrix)")
        moments = noisy * np.outer(columns, columns) * unit
        penalty = self._penalty(moments, count, multiplier * unit)
        curvature = kappa * moments + np.diag(penalty)
        noise_level = spectral_noise_bound(size, multiplier) * kappa * unit
        floor = NOISE_FLOOR * noise_level * columns.max() ** 2 + penalty.min()
        return floored_inverse(curvature, floor), penalty

    def _penalty(self, moments, count, noise_sd):
        """``λ v_j`` per weight row, ``λ = 1 / (C Ñ)``, 0 for the intercept.

        ``v_j`` is feature ``j``'s variance in scaled units read off the
        released second moments ``moments = E[[z, 1][z, 1]ᵀ]`` (its centred
        second moment ``E z_j² - (E z_j)²``; the uncentred one without an
        intercept), raised to ``noise_sd``, the noise deviation of a diagonal
        entry: scikit-learn's penalty ``||u||² / (2C)`` on the coefficients
        ``u_j = w_j sqrt(v_j)`` of standardised features. Post-processing.
        Capped at ``2**60``, so that a tiny ``C`` (down to 5e-324) gives
        weights of about 0, not an overflow to a NaN model.
        """
        second = np.diag(moments).copy()
        if self.fit_intercept:
            second[:-1] -= np.square(moments[:-1, -1])
        variance = np.maximum(second, noise_sd)
        with np.errstate(over="ignore"):
            penalty = np.minimum(variance / (self.C * count), 2.0**60)
        if self.fit_intercept:
            penalty[-1] = 0.0
        return penalty

    def _steps(self, data, d, n_outputs, count, multipliers, source):
        size = d + bool(self.fit_intercept)
        precondition, penalty = self._preconditioner(
            data, d, count, multipliers[1], n_outputs, source
        )
        weights = np.zeros((size, n_outputs))
        velocity = np.zeros_like(weights)
        for step, multiplier in enumerate(multipliers[2:]):
            total = self._statistic(
                data,
                _clipped_gradient_sum,
                weights,
                self.clip_norm_,
                self.fit_intercept,
                self._affine,
            )
            noisy = release_sum(total, multiplier, source).reshape(size, n_outputs)
            if step == 0 and sum_noise_dominated(noisy, multiplier):
                self._noise_causes.append("first gradient")
            gradient = noisy * (self.clip_norm_ / count) + penalty[:, None] * weights
            velocity = MOMENTUM * velocity - precondition @ gradient
            weights = weights + velocity
        return weights

    def _release_plan(self, scaling, multipliers, d, size, n_outputs):
        """``(what, sensitivity, multiplier, n_values)`` of every release."""
        plan = []
        if scaling.private:
            sensitivity = histogram_sensitivity(d)
            plan.append(("feature scales", sensitivity, multipliers[0], d * N_BINS))
            multipliers = multipliers[1:]
        return [
            *plan,
            ("row count", 1.0, multipliers[0], 1),
            ("curvature", 1.0, multipliers[1], size * (size + 1) // 2),
            ("gradient steps", 1.0, multipliers[2], size * n_outputs),
        ]

    def _release_label(self, scaling):
        steps = f"count, curvature and {self.max_iter} gradient steps"
        return ("feature scales, " + steps) if scaling.private else steps

    def _set_weights(self, weights, d, n_outputs, affine):
        """``coef_`` and ``intercept_`` in the user's units (post-processing)."""
        intercept = weights[d].copy() if self.fit_intercept else np.zeros(n_outputs)
        location, scale = (np.zeros(d), np.ones(d)) if affine is None else affine
        self.feature_location_, self.feature_scale_ = location, scale
        if affine is not None:
            coef, shift = to_user_units(weights, *affine, d)
            weights = coef
            intercept = intercept - shift
        self.coef_ = np.ascontiguousarray(weights[:d].T)
        self.intercept_ = intercept

    def _row_reach(self, scaling):
        """Public bound on a scaled row's norm ``||[z, 1]||``, or None.

        ``|z_j|`` is bounded by the released reach of the private scales
        (:func:`~skdp.linear_model._scaling.released_reach`, post-processing)
        or by 1 with stated bounds (rows within them); ``None`` with
        ``feature_bounds="scaled"`` (nothing is known of the rows). A row's
        gradient term is this times ``||p - onehot(y)||``, below 1 for two
        classes and ``sqrt(2)`` otherwise.
        """
        if scaling.kind == "none":
            return None
        reach = scaling.reach_ if scaling.private else np.ones(scaling.lower.size)
        with np.errstate(all="ignore"):
            squared = float(np.sum(np.square(reach))) + bool(self.fit_intercept)
        return math.sqrt(min(squared, 2.0**1000))


class ProbabilityMixin:
    """Class probabilities of a fitted linear classifier (post-processing)."""

    def predict_proba(self, X):
        """Class probabilities (post-processing of the private model; free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        scores = self.decision_function(X)
        if scores.ndim == 1:
            positive = expit(scores)
            return np.column_stack([1.0 - positive, positive])
        return softmax(scores, axis=1)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))
