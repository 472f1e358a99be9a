"""Row weights in [0, 1] on the fixed-point grids of the exact sums.

A weighted sum ``Σ w_i t_i`` with ``w_i`` in [0, 1] has the sensitivity of
``Σ t_i`` under add/remove of one ``(x, y, w)`` row: the row adds
``w t``, and ``|w t| <= |t|``. The exact sums of skdp add integer terms
(multiples of a public ``2**-k``); a weighted term must stay such an integer
and keep ``|w t| <= |t|`` *as computed*, which two facts give:

* ``ŵ = trunc(w 2**32) 2**-32`` (the weight on the grid ``2**-32``) is
  exact (``w 2**32`` is a multiplication by a power of two, exact for every
  double in [0, 1], subnormals included) and lies in [0, w];
* for an integer-valued double ``t`` and ``0 <= ŵ <= 1``, the product
  ``fl(ŵ t)`` is the correctly rounded ``ŵ t``; rounding is monotone and
  ``t`` and ``W = ŵ 2**32`` are doubles, so ``|ŵ t| <= |t|`` and
  ``|ŵ t| <= W 2**-32 |t|`` carry over to ``fl(ŵ t)``, and truncation
  toward zero keeps them: ``trunc(fl(ŵ t))`` is an integer of magnitude at
  most ``|t|`` (and, for ``|t| <= 2**32``, at most ``W``).

With every weight 1, ``ŵ = 1`` and ``trunc(fl(t)) = t``: the weighted sums
are the unweighted ones, bit for bit.
"""

import numpy as np

__all__ = ["WEIGHT_BITS", "grid_weights", "weight_units", "weighted_terms"]

#: Weights are truncated to multiples of ``2**-WEIGHT_BITS``.
WEIGHT_BITS = 32


def grid_weights(sample_weight):
    """``trunc(w 2**32) 2**-32`` per row: in ``[0, w]``, exact doubles.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._weights import grid_weights
    >>> grid_weights(np.array([1.0, 0.5, 2.0**-40, 1 - 2.0**-53])).tolist()
    [1.0, 0.5, 0.0, 0.9999999997671694]
    """
    units = np.trunc(np.ldexp(np.asarray(sample_weight, dtype=np.float64), WEIGHT_BITS))
    return np.ldexp(units + 0.0, -WEIGHT_BITS)  # + 0.0 turns -0.0 into 0.0


def weight_units(sample_weight):
    """The weights on the grid as integers ``W = ŵ 2**32`` in ``[0, 2**32]``
    (doubles holding integers; a block of ``2**16`` of them sums exactly)."""
    return np.ldexp(grid_weights(sample_weight), WEIGHT_BITS)


def weighted_terms(terms, weights, out=None):
    """``trunc(fl(ŵ t))`` for integer-valued ``terms`` and grid ``weights``.

    ``weights`` broadcasts against ``terms`` (one per row). Each result is
    an integer of magnitude at most ``|t|`` (module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.sensitivity._weights import weighted_terms
    >>> weighted_terms(np.array([3.0, -3.0, 7.0]), np.array([0.5, 0.5, 1.0]))
    array([ 1., -1.,  7.])
    """
    out = np.multiply(terms, weights, out=out)
    return np.trunc(out, out=out)
