"""Standard Cauchy noise (floating point; not used by any estimator)."""

import math

import numpy as np

from skdp.mechanisms._random import check_random_source

__all__ = ["cauchy_noise"]


def cauchy_noise(scale=1.0, size=None, *, random_state=None):
    """Draw Cauchy(0, ``scale``) noise from a skdp random source.

    Parameters
    ----------
    scale : float or array-like of float, default=1.0
        Positive finite scale(s); broadcast against ``size``.
    size : int, tuple of int or None, default=None
        Output shape; ``None`` returns one float.
    random_state : None, int, RandomState or RandomSource, default=None
        ``None`` draws from the operating system's CSPRNG; see
        :func:`~skdp.mechanisms.check_random_source`.

    Returns
    -------
    noise : float or ndarray of float
        ``scale * tan(pi * (U - 1/2))`` with ``U`` uniform on the midpoints
        ``(m + 1/2) 2**-53``, ``0 <= m < 2**53``: always finite (at most
        about ``1.8e16 * scale`` in magnitude).

    Raises
    ------
    ValueError
        If a scale is not positive and finite.

    Notes
    -----
    **What is exact and what is not.** The uniform is exact (53 random bits
    from :class:`~skdp.mechanisms.RandomSource`, the operating system's CSPRNG
    by default), and the inverse-CDF transform ``tan(pi (U - 1/2))`` is
    computed in floating point. The result is therefore a *floating-point
    approximation* of the Cauchy distribution: its support is a finite set of
    floats with uneven spacing, the far tail is truncated at about
    ``1.8e16 * scale``, and a release ``value + noise`` computed in floating
    point can leak information through its low-order bits (Mironov, 2012).
    No skdp estimator uses this function: ``SmoothSensitivityMedian(noise=
    "cauchy")``, which added ``s * cauchy_noise()`` with a data-dependent
    ``s``, now adds exact discrete Cauchy-type integer noise on a public grid
    instead (``skdp.mechanisms._smooth_noise``, issue 13). Do not add this
    function's output to a private value; it is kept for experiments only.

    The standard Cauchy density is ``1 / (pi (1 + z**2))``; it has no mean
    and no variance, so report the median absolute error of Cauchy releases,
    never an RMSE.

    References
    ----------
    .. [1] I. Mironov, "On Significance of the Least Significant Bits for
       Differential Privacy", CCS 2012.
    .. [2] K. Nissim, S. Raskhodnikova and A. Smith, "Smooth Sensitivity and
       Sampling in Private Data Analysis", STOC 2007 (Cauchy-type noise for
       pure ε-DP smooth-sensitivity releases).

    Examples
    --------
    >>> from skdp.mechanisms import cauchy_noise
    >>> noise = cauchy_noise(2.0, size=1000, random_state=0)
    >>> noise.shape
    (1000,)
    >>> bool(abs(float(np.median(noise))) < 0.5)
    True
    """
    scales = np.asarray(scale, dtype=float)
    if not np.all(np.isfinite(scales) & (scales > 0)):
        raise ValueError(f"Cauchy scale must be positive and finite; got {scale!r}.")
    if size is None and scales.ndim:
        size = scales.shape
    source = check_random_source(random_state)
    uniform = source._open_unit(() if size is None else size)
    noise = np.tan(math.pi * (uniform - 0.5)) * scales
    if size is None:
        return float(noise)
    return noise
