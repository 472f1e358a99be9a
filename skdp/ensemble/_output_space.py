"""Public output spaces of sample-and-aggregate and the noisy average over them."""

import math
from numbers import Real

import numpy as np

from skdp.mechanisms._additive import additive_release, additive_release_problem
from skdp.sensitivity import float_average_error
from skdp.utils._validation import check_bounds


def _check_release_feasible(space, n_blocks, epsilon, delta, size, output_bounds):
    """Raise before any charge if the noisy average cannot be released.

    Everything checked is public: the output space, ``n_blocks``, ``epsilon``,
    ``delta`` and the number of released values. The sum of ``n_blocks``
    outputs (and the box's centre) must be finite floats, and the noise scale
    for the sensitivities must be representable (the mechanisms raise
    otherwise, which after the charge would be a failure with the budget
    spent).
    """
    peak = float(np.max(np.abs(space.extremes())))
    with np.errstate(over="ignore", invalid="ignore"):
        l1, l2 = averaging_sensitivities(space, n_blocks)
    problem = None
    if not math.isfinite(2.0 * n_blocks * peak):
        problem = (
            f"the sum of n_blocks={n_blocks} block outputs of magnitude up to "
            f"{peak:g} overflows the float range"
        )
    elif not (math.isfinite(l1) and math.isfinite(l2) and l1 > 0 and l2 > 0):
        problem = "the sensitivity (diameter of output_bounds / n_blocks) is not finite"
    else:
        problem = additive_release_problem(l1, l2, epsilon, delta, size)
    if problem is not None:
        raise ValueError(
            f"SampleAggregateEstimator cannot release {size} noisy value(s) with "
            f"output_bounds={output_bounds!r}, n_blocks={n_blocks}, "
            f"epsilon={epsilon!r} and delta={delta!r}: {problem}. Nothing was "
            "charged. Use smaller output_bounds or a larger epsilon."
        )


# -- public output spaces ----------------------------------------------------
class _Box:
    """Public box ``[lower, upper]`` (per coordinate) for block outputs."""

    def __init__(self, lower, upper):
        self.lower, self.upper = lower, upper

    def extremes(self):
        return np.concatenate([self.lower, self.upper])

    def magnitudes(self):
        """Public bound on the magnitude of each coordinate."""
        return np.maximum(np.abs(self.lower), np.abs(self.upper))

    @property
    def centre(self):
        return (self.lower + self.upper) / 2.0

    def project(self, values):
        values = np.asarray(values, dtype=np.float64)
        finite = np.where(np.isfinite(values), values, self.centre)
        return np.clip(finite, self.lower, self.upper)

    def diameter(self, norm):
        width = self.upper - self.lower
        return float(width.sum()) if norm == 1 else float(np.sqrt((width**2).sum()))


class _Ball:
    """Public L2 ball of radius ``radius`` centred at the origin."""

    def __init__(self, radius, size):
        self.radius, self.size = radius, size

    def extremes(self):
        return np.array([self.radius])

    def magnitudes(self):
        """Public bound on the magnitude of each coordinate."""
        return np.full(self.size, self.radius)

    @property
    def centre(self):
        return np.zeros(self.size)

    def project(self, values):
        values = np.asarray(values, dtype=np.float64)
        values = np.where(np.isfinite(values), values, 0.0)
        # divide by the largest entry first: the norm of huge vectors overflows
        peak = np.abs(values).max(axis=-1, keepdims=True, initial=0.0)
        safe_peak = np.where(peak > 0, peak, 1.0)
        scaled = values / safe_peak
        norms = np.linalg.norm(scaled, axis=-1, keepdims=True)
        outside = norms > self.radius / safe_peak
        return np.where(
            outside, scaled * (self.radius / np.where(outside, norms, 1.0)), values
        )

    def diameter(self, norm):
        # two antipodal points on the diagonal maximise the L1 distance
        return 2.0 * self.radius * (math.sqrt(self.size) if norm == 1 else 1.0)


class _Sphere(_Ball):
    """Public sphere of radius ``radius``: only the direction of a block is kept.

    Every non-zero vector is rescaled to norm ``radius``; a zero vector (and
    the public centre used for degenerate blocks) stays at the origin. The
    outputs lie in the ball of the same radius, whose diameters bound the
    sensitivity; both are attained by antipodal points of the sphere.
    """

    def project(self, values):
        values = np.asarray(values, dtype=np.float64)
        values = np.where(np.isfinite(values), values, 0.0)
        # divide by the largest entry first: the norm of huge vectors overflows
        peak = np.abs(values).max(axis=-1, keepdims=True, initial=0.0)
        scaled = values / np.where(peak > 0, peak, 1.0)
        norms = np.linalg.norm(scaled, axis=-1, keepdims=True)
        return scaled * (self.radius / np.where(norms > 0, norms, 1.0))


def _check_output_space(output_bounds, size, *, mode):
    """Validate ``output_bounds`` (public) for outputs of ``size`` coordinates."""
    what = (
        f"the flattened [coef_, intercept_] vector ({size} values)"
        if mode == "parameters"
        else f"the predictions ({size} output(s))"
    )
    if output_bounds is None:
        raise ValueError(
            f"aggregate={mode!r} needs public output_bounds for {what}: "
            "(lower, upper) scalars or arrays"
            + (", ('l2', radius) or ('sphere', radius)" if mode == "parameters" else "")
            + ". They must not be derived from the sensitive data."
        )
    first = output_bounds[0] if isinstance(output_bounds, tuple | list) else None
    if isinstance(first, str):
        if (
            mode != "parameters"
            or first not in ("l2", "sphere")
            or len(output_bounds) != 2
        ):
            raise ValueError(
                f"output_bounds={output_bounds!r} is not valid for aggregate="
                f"{mode!r}: use ('l2', radius) or ('sphere', radius) (parameters "
                "only) or (lower, upper)."
            )
        radius = output_bounds[1]
        if isinstance(radius, bool) or not isinstance(radius, Real):
            raise ValueError(
                f"output_bounds: the {first} radius must be a number; got {radius!r}."
            )
        if not (0 < radius < math.inf):
            raise ValueError(
                f"output_bounds: the {first} radius must be finite and > 0; "
                f"got {radius}."
            )
        return (_Ball if first == "l2" else _Sphere)(float(radius), size)
    lower, upper = check_bounds(output_bounds, size, name="output_bounds")
    return _Box(lower, upper)


def averaging_sensitivities(space, n_blocks):
    """L1 and L2 sensitivities of the float average of the block outputs.

    Replacing one block's output inside the public space moves the exact
    average by at most ``diameter / n_blocks``; the float average of each
    neighbour is within :func:`skdp.sensitivity.float_average_error` of the
    exact one per coordinate (``n_blocks`` and the space are public), so twice
    that error is added: the stated sensitivity holds for the computed
    averages, not only for the exact ones.
    """
    error = float_average_error(n_blocks, space.magnitudes())
    l1 = space.diameter(1) / n_blocks + 2.0 * float(error.sum())
    l2 = space.diameter(2) / n_blocks + 2.0 * float(np.sqrt((error**2).sum()))
    return l1, l2


def _release_average(average, space, n_blocks, epsilon, delta, source):
    """Laplace (L1) or Gaussian (L2) release of the average of the blocks."""
    l1, l2 = averaging_sensitivities(space, n_blocks)
    return additive_release(average, l1, l2, epsilon, delta, source)
