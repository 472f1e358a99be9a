"""Losses with bounded per-row gradients and hessians, on a public grid.

A row's gradient ``g`` and hessian ``h`` enter the histograms after
:func:`on_grid`: rounded to multiples of ``2**-GRID_BITS`` (a function of the
row alone), so that every histogram sum is an exact float and a row moves it
by at most ``g_max`` and ``h_max`` (which are multiples of the grid step).
"""

import numpy as np
from scipy.special import expit, softmax

from skdp.mechanisms import gaussian_release
from skdp.sensitivity._weights import grid_weights, weighted_terms

__all__ = [
    "GRID_BITS",
    "BinaryLogistic",
    "MultinomialLogistic",
    "RowWeighted",
    "SquaredError",
    "on_grid",
    "release_baseline",
    "scaled_targets",
    "weighted_on_grid",
]

#: Gradients and hessians are multiples of ``2**-GRID_BITS``. Sums of ``n``
#: of them, at most 1 in magnitude, are integers times the step below
#: ``n 2**GRID_BITS``: exact in float64 for ``n < 2**(53 - GRID_BITS)``
#: (``MAX_ROWS``), in any order of summation.
GRID_BITS = 20
MAX_ROWS = 2 ** (53 - GRID_BITS - 1)  # g_max up to 2


def on_grid(values, bound):
    """``values`` clipped to ``[-bound, bound]`` and rounded to the grid.

    ``bound`` is a multiple of the grid step, so the result stays within it;
    NaN (a non-finite intermediate) becomes 0, a public rule.
    """
    values = np.array(values, dtype=float)  # a copy, worked on in place
    np.copyto(values, 0.0, where=np.isnan(values))
    np.clip(values, -bound, bound, out=values)  # ±inf to ±bound
    # times powers of two, exact: |values| <= bound, so no overflow, and
    # after rint a value is 0 or at least 1 step, so no underflow
    values *= 2.0**GRID_BITS
    np.rint(values, out=values)
    values *= 2.0**-GRID_BITS
    return values


def scaled_targets(y, low, high):
    """The regressor's targets: clipped to the public range ``[low, high]``
    and mapped onto ``[-1, 1]`` on the grid, with the map's ``(mid, half)``
    (predictions are ``mid + half * score``)."""
    mid, half = low / 2 + high / 2, high / 2 - low / 2
    return on_grid((np.clip(y, low, high) - mid) / half, 1.0), mid, half


def weighted_on_grid(values, weights):
    """On-grid ``values`` times each row's weight, truncated to the grid.

    ``values`` (shape ``(n,)`` or ``(n, k)``) are multiples of
    ``2**-GRID_BITS`` (:func:`on_grid`); ``weights`` are the rows' weights
    in [0, 1] on the grid ``2**-32``
    (:func:`~skdp.sensitivity._weights.grid_weights`). Each result is
    ``trunc(fl(ŵ t)) 2**-GRID_BITS`` for ``t = value 2**GRID_BITS``: again
    on the grid, of magnitude at most ``|value|`` (so within ``g_max`` and
    ``h_max``) and the value itself for weight 1
    (:func:`~skdp.sensitivity._weights.weighted_terms`).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.ensemble._hist_gradient_boosting.loss import weighted_on_grid
    >>> weighted_on_grid(np.array([0.75, -0.75, 0.25]), np.array([0.5, 0.5, 1.0]))
    array([ 0.375, -0.375,  0.25 ])
    """
    values = np.asarray(values, dtype=float)
    if values.ndim == 2:
        weights = weights[:, None]
    terms = weighted_terms(np.ldexp(values, GRID_BITS), weights)
    return np.ldexp(terms, -GRID_BITS)


def release_baseline(loss, target, n_outputs, multiplier, source):
    """The private step of the losses: the raw score every tree starts from.

    ``loss.baseline_sums`` are exact sums (integers, or multiples of the
    grid step below ``2**53`` steps) of L2 sensitivity
    ``loss.baseline_sensitivity``, released with Gaussian noise; the
    baseline is ``loss.baseline`` of the release (post-processing).
    ``multiplier=None`` releases the exact sums (the noise-free limit).
    """
    sums = loss.baseline_sums(target, n_outputs)
    if multiplier is not None:
        sens = loss.baseline_sensitivity
        sums = np.asarray(gaussian_release(sums, sens, multiplier, random_state=source))
    with np.errstate(all="ignore"):
        return loss.baseline(np.asarray(sums, dtype=float))


class _ClassCounts:
    """Baseline of the log losses: the class counts (a row adds 1 to one
    count: L2 sensitivity 1), as scikit-learn's prior."""

    baseline_sensitivity = 1.0

    @staticmethod
    def baseline_sums(codes, n_outputs):
        """Counts of the classes: ``n_outputs`` of them, two for one raw
        score (a public length: the codes of a binary fit may all be 0)."""
        n_classes = max(n_outputs, 2)
        return np.bincount(codes, minlength=n_classes).astype(float)

    @staticmethod
    def _priors(counts):
        counts = np.maximum(counts, 1.0)  # a public floor: no log(0)
        return counts / counts.sum()


class BinaryLogistic(_ClassCounts):
    """Log loss of one raw score: ``g = p - y`` in [-1, 1], ``h = p(1 - p)``
    in [0, 1/4]: bounded without clipping, so the limit ε → ∞ is
    scikit-learn's ``"log_loss"``."""

    g_max, h_max = 1.0, 0.25
    n_trees_per_iteration = 1

    def baseline(self, counts):
        """Log-odds of the released prior of class 1."""
        priors = self._priors(counts)
        return np.log(priors[1:] / priors[:1])

    def gradients(self, raw, codes):
        p = expit(raw[:, 0])
        g = on_grid(p - (codes == 1), self.g_max)
        h = on_grid(p * (1.0 - p), self.h_max)
        return g[:, None], h[:, None]

    @staticmethod
    def proba(raw):
        positive = expit(raw[:, 0])
        return np.column_stack([1.0 - positive, positive])


class MultinomialLogistic(_ClassCounts):
    """Softmax log loss, one tree per class and round: ``g_k = p_k - y_k`` in
    [-1, 1], ``h_k = p_k (1 - p_k)`` in [0, 1/4] (scikit-learn's diagonal
    hessian)."""

    g_max, h_max = 1.0, 0.25

    def __init__(self, n_classes):
        self.n_trees_per_iteration = n_classes

    def baseline(self, counts):
        """Log of the released class priors (scikit-learn's start)."""
        return np.log(self._priors(counts))

    def gradients(self, raw, codes):
        p = softmax(raw, axis=1)
        onehot = codes[:, None] == np.arange(raw.shape[1])
        return on_grid(p - onehot, self.g_max), on_grid(p * (1.0 - p), self.h_max)

    @staticmethod
    def proba(raw):
        return softmax(raw, axis=1)


class SquaredError:
    """Half squared error on a target scaled to [-1, 1]: ``g = raw - z``
    clipped to [-2, 2] (the largest residual of a prediction within the
    target's range), ``h = 1``."""

    g_max, h_max = 2.0, 1.0
    n_trees_per_iteration = 1
    #: ``(Σ z, n)``: a row moves each by at most 1.
    baseline_sensitivity = 2.0**0.5

    @staticmethod
    def baseline_sums(z, n_outputs):
        """``Σ z`` and ``n``, exact: ``z`` is on the grid (:func:`on_grid`)."""
        return np.array([np.sum(z), float(z.size)])

    @staticmethod
    def baseline(sums):
        """The released mean of the scaled target, clipped to [-1, 1]."""
        mean = sums[0] / max(sums[1], 1.0)
        return np.array([np.clip(np.nan_to_num(mean), -1.0, 1.0)])

    def gradients(self, raw, z):
        g = on_grid(raw[:, 0] - z, self.g_max)
        return g[:, None], np.ones((raw.shape[0], 1))


class RowWeighted:
    """A loss whose every row term is scaled by the row's weight in [0, 1].

    The gradients and hessians of a row, and its terms of the baseline sums
    (its class's count, or ``(z, 1)``), are multiplied by its weight and
    truncated to the grid (:func:`weighted_on_grid`): each stays within
    the loss's ``g_max``, ``h_max`` and baseline sensitivity, so every
    release keeps its noise; the split gains and leaf values read the
    weighted sums, as scikit-learn's ``sample_weight`` does. Weights 1 give
    the unweighted loss bit for bit.

    Parameters
    ----------
    loss : BinaryLogistic, MultinomialLogistic or SquaredError
    sample_weight : ndarray of shape (n_samples,)
        Validated weights in [0, 1], one per row of the target.
    """

    def __init__(self, loss, sample_weight):
        self.loss = loss
        self.weights = grid_weights(sample_weight)
        self.g_max, self.h_max = loss.g_max, loss.h_max
        self.n_trees_per_iteration = loss.n_trees_per_iteration
        self.baseline_sensitivity = loss.baseline_sensitivity

    def gradients(self, raw, target):
        g, h = self.loss.gradients(raw, target)
        return weighted_on_grid(g, self.weights), weighted_on_grid(h, self.weights)

    def baseline_sums(self, target, n_outputs):
        """The loss's baseline sums of the weighted row terms: weighted
        class counts, or ``(Σ w z, Σ w)``; a row moves each by at most 1."""
        ones = weighted_on_grid(np.ones(self.weights.size), self.weights)
        if isinstance(self.loss, SquaredError):
            return np.array(
                [np.sum(weighted_on_grid(target, self.weights)), ones.sum()]
            )
        n_classes = max(n_outputs, 2)
        return np.bincount(target, weights=ones, minlength=n_classes)

    def baseline(self, sums):
        return self.loss.baseline(sums)
