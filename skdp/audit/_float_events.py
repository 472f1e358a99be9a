"""Events on how a released float is represented, not only on its value.

A mechanism that is DP over the reals can leak through floating point: when
the set of doubles it can output depends on the data (noise rescaled by a
data-dependent factor, a uniform drawn between data-valued ends), a single
output can identify the dataset although every threshold event looks fine
(Mironov 2012). The events here look for that:

* :class:`FloatBitsEvent`: the number of trailing zero bits of the
  significand, or its lowest bits, lies in a set. Outputs on a coarse
  power-of-two grid have many trailing zeros; outputs of float arithmetic
  with data-valued operands have patterns of their own.
* :class:`LatticeEvent`: the output lies on the lattice ``anchor + step Z``
  estimated from the pilot outputs of one dataset, e.g. the lattice
  ``{fl(j h s_D)}`` of noise drawn on a grid and rescaled by a data-dependent
  ``s_D``; a neighbour's outputs miss it.
* :class:`SupportEvent`: the output cannot be produced from one dataset, by a
  support oracle the auditor is given (``audit_mechanism(support=...)``).

All three are chosen on the pilot sample only, so the final Clopper–Pearson
test on fresh samples stays valid whatever they are.
"""

from dataclasses import dataclass

import numpy as np

__all__ = [
    "FloatBitsEvent",
    "LatticeEvent",
    "SupportEvent",
    "estimate_lattice",
    "float_bits_keys",
    "lattice_member",
]

_SIGNIFICAND_MASK = np.uint64((1 << 52) - 1)
#: Keys of the bit events: trailing zeros of the significand, and its lowest
#: 1, 2, 4 and 8 bits.
BIT_KINDS = ("trailing_zeros", "low1", "low2", "low4", "low8")
#: A lattice member's coordinate ``(x - anchor) / step`` is within this of an
#: integer.
LATTICE_TOLERANCE = 1e-3


def float_bits_keys(column, kind):
    """Integer keys of ``kind`` for each value; -1 for non-finite values and 0.

    Parameters
    ----------
    column : ndarray of float64
    kind : {"trailing_zeros", "low1", "low2", "low4", "low8"}

    Returns
    -------
    keys : ndarray of int64

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.audit._float_events import float_bits_keys
    >>> float_bits_keys(np.array([1.0, 1.5, 0.1]), "trailing_zeros").tolist()
    [52, 51, 1]
    """
    column = np.ascontiguousarray(column, dtype=np.float64)
    significand = column.view(np.uint64) & _SIGNIFICAND_MASK
    if kind == "trailing_zeros":
        lowest = significand & (~significand + np.uint64(1))
        with np.errstate(divide="ignore"):
            keys = np.log2(lowest.astype(np.float64))
        keys = np.where(significand == 0, 52.0, keys).astype(np.int64)
    else:
        bits = int(kind[3:])
        keys = (significand & np.uint64((1 << bits) - 1)).astype(np.int64)
    return np.where(np.isfinite(column) & (column != 0), keys, -1)


@dataclass(frozen=True)
class FloatBitsEvent:
    """The event ``key(output[feature]) ∈ keys`` on the bits of a float.

    Attributes
    ----------
    feature : int
        Column of a vector output (0 for scalar outputs).
    kind : {"trailing_zeros", "low1", "low2", "low4", "low8"}
        Which bits: the number of trailing zero bits of the significand, or
        its lowest 1, 2, 4 or 8 bits as an integer.
    keys : frozenset of int
        The key values that belong to the event (-1 stands for 0, ±inf and
        NaN).

    Examples
    --------
    Outputs on the grid of multiples of 1/4 have at least 50 trailing zero
    bits when they lie in [1, 2):

    >>> import numpy as np
    >>> from skdp.audit._outputs import _normalise
    >>> from skdp.audit._float_events import FloatBitsEvent
    >>> event = FloatBitsEvent(0, "trailing_zeros", frozenset(range(50, 53)))
    >>> event.indicator(_normalise(np.array([1.25, 1.3]))).tolist()
    [True, False]
    """

    feature: int
    kind: str
    keys: frozenset

    def indicator(self, outputs):
        if outputs.values is None or self.feature >= outputs.values.shape[1]:
            return np.zeros(len(outputs), dtype=bool)
        keys = float_bits_keys(outputs.values[:, self.feature], self.kind)
        hit = np.isin(keys, np.fromiter(self.keys, dtype=np.int64))
        return hit & ~outputs.none

    def __str__(self):
        shown = sorted(self.keys)
        text = ", ".join(map(str, shown[:8])) + (", …" if len(shown) > 8 else "")
        return f"{self.kind}(output[{self.feature}]) in {{{text}}}"


def lattice_member(column, anchor, step):
    """Whether each value lies on ``anchor + step Z`` (to the tolerance).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.audit._float_events import lattice_member
    >>> lattice_member(np.array([0.3, 0.7, 0.75]), 0.1, 0.2).tolist()
    [True, True, False]
    """
    with np.errstate(invalid="ignore", over="ignore"):
        coord = (np.asarray(column, dtype=np.float64) - anchor) / step
        return np.abs(coord - np.round(coord)) <= LATTICE_TOLERANCE


def _consistent(values, anchor, step, min_share=0.99):
    return lattice_member(values, anchor, step).mean() >= min_share


def estimate_lattice(column, *, max_values=4096):
    """Estimate a lattice ``anchor + step Z`` holding the pilot values.

    The step starts as the smallest gap between distinct values and is
    refined on values ever farther from the anchor, each refinement dividing
    its relative error by the distance in steps, so that the membership of
    values millions of steps away is decided correctly.

    Parameters
    ----------
    column : ndarray of float64
        Pilot outputs of one dataset.
    max_values : int, default=4096
        At most this many distinct values (a central slice) are used.

    Returns
    -------
    lattice : tuple of (float, float) or None
        ``(anchor, step)``, or None when no lattice holds 99% of the values
        (continuous outputs, or too few distinct values).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.audit._float_events import estimate_lattice
    >>> rng = np.random.default_rng(0)
    >>> values = rng.integers(-10**6, 10**6, 5000) * 0.0123456789
    >>> anchor, step = estimate_lattice(values)
    >>> bool(abs(step / 0.0123456789 - 1) < 1e-9)
    True
    """
    values = np.unique(column[np.isfinite(column)])
    if values.size < 16:
        return None
    if values.size > max_values:
        middle = values.size // 2
        values = values[middle - max_values // 2 : middle + max_values // 2]
    anchor = values[values.size // 2]
    gaps = np.diff(values)
    step = float(gaps[gaps > 0].min())
    if not (np.isfinite(step) and step > 0):
        return None
    distance = np.abs(values - anchor)
    reach = 64.0
    while True:
        near = values[distance <= reach * step]
        if not _consistent(near, anchor, step):
            return None
        coord = np.round((near - anchor) / step)
        far = np.abs(coord) >= max(1.0, coord.max() / 2)
        if far.any():
            step = float(np.median((near[far] - anchor) / coord[far]))
        if near.size == values.size:
            break
        reach *= 256.0
    if not _consistent(values, anchor, step):
        return None
    return float(anchor), step


@dataclass(frozen=True)
class LatticeEvent:
    """The event ``output[feature] ∈ anchor + step Z`` (to a tolerance).

    Attributes
    ----------
    feature : int
        Column of a vector output (0 for scalar outputs).
    anchor, step : float
        The lattice, as estimated on one dataset's pilot outputs by
        :func:`estimate_lattice`.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.audit._outputs import _normalise
    >>> from skdp.audit._float_events import LatticeEvent
    >>> event = LatticeEvent(0, 0.0, 0.3)
    >>> event.indicator(_normalise(np.array([0.9, 1.0]))).tolist()
    [True, False]
    """

    feature: int
    anchor: float
    step: float

    def indicator(self, outputs):
        if outputs.values is None or self.feature >= outputs.values.shape[1]:
            return np.zeros(len(outputs), dtype=bool)
        hit = lattice_member(outputs.values[:, self.feature], self.anchor, self.step)
        return hit & ~outputs.none

    def __str__(self):
        return (
            f"output[{self.feature}] on the lattice {self.anchor:.17g} + "
            f"{self.step:.17g} Z"
        )


@dataclass(frozen=True)
class SupportEvent:
    """The event "the output cannot be produced from dataset ``source``".

    Built by :func:`~skdp.audit.audit_mechanism` from its ``support`` oracle,
    ``support(dataset, raw_outputs) -> bool array`` (True where the dataset
    can produce the output).

    Attributes
    ----------
    support : callable
        The oracle.
    dataset : object
        The dataset whose support is tested.
    name : str
        ``"d0"`` or ``"d1"``, for messages.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.audit._outputs import _normalise
    >>> from skdp.audit._float_events import SupportEvent
    >>> def even_only(dataset, outputs):
    ...     return np.asarray(outputs) % 2 == 0
    >>> event = SupportEvent(even_only, None, "d0")
    >>> event.indicator(_normalise(np.array([2.0, 3.0]))).tolist()
    [False, True]
    """

    support: object
    dataset: object
    name: str

    def indicator(self, outputs):
        if outputs.values is None:
            given = outputs.raw
        else:  # numbers: a 1-D array (scalar outputs) or 2-D, None as NaN
            given = np.where(outputs.none[:, None], np.nan, outputs.values)
            if given.shape[1] == 1:
                given = given[:, 0]
        reachable = np.asarray(self.support(self.dataset, given), dtype=bool)
        return ~reachable.reshape(len(outputs))

    def __str__(self):
        return f"output unreachable from {self.name}"

    def __hash__(self):
        return hash((id(self.support), id(self.dataset), self.name))

    def __eq__(self, other):
        return (
            isinstance(other, SupportEvent)
            and other.support is self.support
            and other.dataset is self.dataset
            and other.name == self.name
        )
