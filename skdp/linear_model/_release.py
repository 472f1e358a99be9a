"""The releases shared by the private linear models.

A fit is a fixed, public sequence of releases (a row count, a clipped Gram
matrix, clipped gradient or cross-product sums): its composition is
calibrated once, as Gaussian releases by
:func:`~skdp.mechanisms.gaussian_noise_multipliers` or, where every release
gets less noise that way, as Laplace releases
(:func:`~skdp.linear_model._noise_plan.plan_noise`), and everything else is
post-processing of the released values.
"""

import math

import numpy as np

from skdp.exceptions import NoiseDominatedWarning
from skdp.linear_model._noise_plan import (
    LaplaceNoise,
    gaussian_fit_cost,
    is_laplace,
    noise_multiplier,
    release,
    unit_multipliers,
)
from skdp.mechanisms import gaussian_release
from skdp.mechanisms._gaussian import _gaussian_grid
from skdp.mechanisms._grid import FixedPoint
from skdp.mechanisms._laplace import _laplace_grid
from skdp.utils._warnings import warn_at_caller

__all__ = [
    "GaussianFitMixin",
    "check_laplace_recordable",
    "check_release_plan",
    "features_under_noise",
    "floored_inverse",
    "gaussian_fit_cost",
    "gram_noise_dominated",
    "noise_dominated_releases",
    "noisy_count",
    "noisy_gram",
    "release_sum",
    "spectral_noise_bound",
    "sum_noise_dominated",
    "unit_multipliers",
    "warn_features_under_noise",
    "warn_noise_dominated",
]


class GaussianFitMixin:
    """Cost and tags shared by the linear models (CSR or dense input, one charge)."""

    def _fit_cost(self, n_features=None):
        return gaussian_fit_cost(self.epsilon, self.delta)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = False
        return tags

    def score(self, X, y, sample_weight=None):
        """The model's default score on ``(X, y)`` (not private: it reads ``y``).

        Accuracy for the classifier, R² for the regressor. On private rows
        the score is a release: exact, and charged to no accountant.
        Evaluate privately with :mod:`skdp.metrics` (e.g.
        :func:`~skdp.metrics.private_accuracy_score`,
        :func:`~skdp.metrics.private_r2_score`); see :ref:`evaluating`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        return super().score(X, y, sample_weight=sample_weight)


def check_release_plan(name, plan, accountant=None):
    """Refuse, before the charge, a planned release the sampler cannot draw,
    or a Laplace plan that ``accountant`` cannot record.

    ``plan`` lists ``(what, l2_sensitivity, noise, n_values)`` of the fit's
    releases, all public; ``noise`` is a Gaussian noise multiplier or a
    :class:`~skdp.linear_model._noise_plan.LaplaceNoise`. The exact Gaussian
    sampler holds noise of about ``2**26 / sqrt(n_values)`` multipliers at
    most (:func:`~skdp.mechanisms.gaussian_release` raises beyond); the
    Laplace one needs a release's ``epsilon`` share to be positive and at
    least about ``n_values * 2**-44`` (its integer scale, at least
    ``n_values / epsilon`` grid steps, is capped at ``2**44``:
    :func:`~skdp.mechanisms.laplace_mechanism`), whatever the sensitivity.
    A small ``epsilon`` with many features used to be charged and then
    refused. An accountant with ``composition="pld"`` composes Gaussian
    releases only: it would refuse the Laplace plan, without naming the
    estimator's own fix, ``mechanism="gaussian"``; this refusal names it.
    """
    if plan and isinstance(plan[0][2], LaplaceNoise):
        check_laplace_recordable(name, "laplace", accountant)
    for what, sensitivity, noise, size in plan:
        try:
            if isinstance(noise, LaplaceNoise):
                if not noise.epsilon > 0:  # a share of a subnormal epsilon
                    raise ValueError("an epsilon share rounded down to 0")
                _laplace_grid(noise.l1, noise.epsilon, int(size))
            else:
                _gaussian_grid(float(sensitivity), float(noise), int(size))
        except (ValueError, OverflowError) as exc:
            kind = "Laplace" if isinstance(noise, LaplaceNoise) else "Gaussian"
            raise ValueError(
                f"{name}: the noise of its {what} ({size} values, noise "
                f"multiplier {noise_multiplier(noise):.3g}) is too large for "
                f"skdp's exact {kind} sampler. Raise epsilon or delta, or use "
                "fewer features. Nothing was charged."
            ) from exc


def check_laplace_recordable(name, mechanism, accountant):
    """Refuse, before the charge, a Laplace plan (``mechanism``) that an
    accountant with ``composition="pld"`` cannot record, naming the
    estimator's fix, ``mechanism="gaussian"``."""
    if mechanism == "laplace" and getattr(accountant, "composition", None) == "pld":
        raise ValueError(
            f"{name}: its noise plan is Laplace (mechanism='auto' takes it "
            "where every release gets less noise that way, or it was "
            "stated), which an accountant with composition='pld' cannot "
            "record: it composes Gaussian releases only. Pass "
            "mechanism='gaussian' (the PLD accountant then charges the fit "
            "as before the switch), or use composition='zcdp'. Nothing was "
            "charged."
        )


def noisy_count(count, multiplier, source):
    """The exact row count (:func:`~skdp.sensitivity.exact_count`) with
    Gaussian noise (sensitivity 1), at least 1."""
    value = gaussian_release(count, 1.0, multiplier, random_state=source)
    return max(float(value), 1.0)


def noisy_gram(gram, size, noise, source):
    """Symmetric ``size x size`` matrix from the noisy upper triangle ``gram``
    (L2 sensitivity 1; ``noise``: a Gaussian multiplier or a
    :class:`~skdp.linear_model._noise_plan.LaplaceNoise`)."""
    upper = np.triu_indices(size)
    if is_laplace(noise):
        noisy = release(gram, 1.0, noise, source)
    else:
        noisy = np.asarray(gaussian_release(gram, 1.0, noise, random_state=source))
    matrix = np.zeros((size, size))
    matrix[upper] = noisy
    return matrix + np.triu(matrix, 1).T


def release_sum(total, noise, source):
    """Release of an exact sum with L2 sensitivity 1 (a FixedPoint), with
    its planned noise (:func:`~skdp.linear_model._noise_plan.release`)."""
    assert isinstance(total, FixedPoint)
    if is_laplace(noise):
        return release(total, 1.0, noise, source)
    return np.asarray(gaussian_release(total, 1.0, noise, random_state=source))


def spectral_noise_bound(size, multiplier):
    """A public bound on the spectral norm of the symmetric noise matrix.

    The noise of :func:`noisy_gram` is a symmetric matrix with independent
    entries of standard deviation ``multiplier`` on and above the diagonal;
    its spectral norm concentrates at ``2 sqrt(size)`` standard deviations
    (the semicircle law) with Gaussian tails of width about one standard
    deviation (Bandeira and van Handel 2016). The bound adds six of them.
    """
    return multiplier * (2.0 * math.sqrt(size) + 6.0)


def floored_inverse(matrix, floor):
    """Inverse of ``matrix`` with its eigenvalues first raised to ``floor > 0``.

    A noisy Gram matrix can be indefinite; raising its spectrum to a public
    floor (post-processing) gives a positive definite inverse, as AdaSSP's
    adaptive ridge does (Wang 2018). Never raises on finite input.
    """
    values, vectors = np.linalg.eigh(matrix)
    return (vectors / np.maximum(values, floor)) @ vectors.T


def gram_noise_dominated(matrix, multiplier):
    """Whether a released Gram matrix is no larger than its noise.

    True when the largest eigenvalue of the released (symmetric) matrix is
    below :func:`spectral_noise_bound`, the public bound on the noise's
    spectral norm: then no direction of the released curvature can be told
    from noise. A function of the released matrix and public parameters.
    """
    top = np.linalg.eigvalsh(matrix)[-1]
    return bool(top < spectral_noise_bound(matrix.shape[0], multiplier))


def sum_noise_dominated(noisy, multiplier):
    """Whether a released sum is no larger than its noise.

    With independent noise of standard deviation ``multiplier`` (units of
    the sensitivity) on ``m`` entries, ``E ||S̃||² = ||S||² + m r²``; the
    released squared norm below ``2 m r²`` estimates ``||S||² < m r²``: the
    noise's norm exceeds the signal's. A function of the released values and
    public parameters.
    """
    noisy = np.asarray(noisy, dtype=float)
    with np.errstate(all="ignore"):
        energy = float(np.sum(np.square(noisy)))
    return bool(energy < 2.0 * noisy.size * multiplier**2)


def warn_noise_dominated(name, causes):
    """NoiseDominatedWarning naming the noise-dominated releases and the fix."""
    if not causes:
        return
    warn_at_caller(
        f"{name}: the noise of the released {' and '.join(causes)} exceeds "
        "its released signal, so the model is mostly noise. Raise epsilon, "
        "fit on more rows, or use fewer features (the noise grows with "
        "their number).",
        NoiseDominatedWarning,
    )


def noise_dominated_releases(matrix, rhs, gram_multiplier, cross_multiplier):
    """Names of the released Gram matrix and cross products that are no larger
    than their noise (:func:`gram_noise_dominated`, :func:`sum_noise_dominated`)."""
    causes = []
    if gram_noise_dominated(matrix, gram_multiplier):
        causes.append("Gram matrix")
    if sum_noise_dominated(rhs, cross_multiplier):
        causes.append("cross products")
    return causes


def features_under_noise(matrix, n_features, floor):
    """Features whose released energy is below the noise floor.

    A feature's released Gram diagonal ``G̃_jj`` bounds the smallest
    eigenvalue of the released matrix from above; below ``floor`` (the
    public bound on the noise's spectral norm,
    :func:`spectral_noise_bound`, which :func:`floored_inverse` raises the
    spectrum to), the feature's direction is mostly noise floor, and its
    coefficient mostly shrinkage towards 0. The ridge penalty the solver
    adds to the floor without an intercept is not part of ``floor``: a
    feature under it is shrunk by the caller's ``alpha``, which no change of
    units or epsilon undoes. A function of the released matrix and public
    parameters (post-processing).
    """
    diagonal = np.diagonal(matrix)[:n_features]
    return np.flatnonzero(~(diagonal >= floor))


def warn_features_under_noise(name, lost, n_features, feature_names=None):
    """NoiseDominatedWarning for a stated ``data_norm`` that loses features.

    Called for a fit whose rows are used in their own units (a stated
    ``data_norm`` without feature ranges, public) with the features ``lost``
    of :func:`features_under_noise`. Features on different scales lose the
    small ones to the noise and to the grid of the exact sums (``data_norm
    2**-16`` per coordinate) whatever epsilon; when every feature is lost,
    epsilon may be the cause too.
    """
    if len(lost) == 0:
        return
    labels = [str(j if feature_names is None else feature_names[j]) for j in lost]
    more = len(labels) - 10
    shown = ", ".join(labels[:10]) + (f" and {more} more" if more > 0 else "")
    units = (
        "a stated data_norm uses the rows in their own units, and a feature "
        "much smaller than data_norm is lost whatever epsilon: leave "
        "data_norm=None (the model then scales each feature privately) or put "
        "the features on one scale first"
    )
    if len(lost) == n_features:  # noise or units: the release cannot tell
        which, fix = "every feature", f"Raise epsilon or fit on more rows; or {units}."
    else:
        which, fix = f"feature(s) {shown}", f"Other features stand above it: {units}."
    warn_at_caller(
        f"{name}: the released energy of {which} is below the noise floor, so "
        f"their coefficients are mostly shrinkage towards 0. {fix}",
        NoiseDominatedWarning,
    )
