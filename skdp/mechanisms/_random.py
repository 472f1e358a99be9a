"""Random sources: the one place where skdp obtains randomness.

Every mechanism in :mod:`skdp.mechanisms` draws its randomness from a
:class:`RandomSource`, obtained with :func:`check_random_source`:

* ``random_state=None`` gives a source backed by the operating system's
  cryptographically secure generator (:func:`os.urandom`, i.e. ``getrandom(2)``
  on Linux). This is the default and the only setting meant for real
  releases.
* an ``int`` or a :class:`numpy.random.RandomState` gives a reproducible
  source backed by :class:`numpy.random.PCG64`. PCG64 is **not**
  cryptographically secure; use it for tests, examples and experiments.

All methods are vectorised and return numpy arrays.
"""

import math
import os
import threading
import weakref
from numbers import Integral

import numpy as np

__all__ = ["RandomSource", "check_random_source"]

_TWO_32 = 1 << 32
_INT64_MAX = (1 << 63) - 1
# Requests smaller than this are served from a buffer refilled with one
# ``os.urandom`` call, so that the many small draws of a rejection loop do not
# each pay for a system call.
_BUFFER_BYTES = 1 << 18


def _as_size(size):
    if size is None:
        return ()
    if isinstance(size, Integral):
        return (int(size),)
    return tuple(int(s) for s in size)


class RandomSource:
    """A source of uniform random bits with vectorised samplers on top.

    Do not instantiate directly: use :func:`check_random_source`. Subclasses
    provide :meth:`uint64` and :meth:`uint32`; everything else is derived from
    them here, so the seeded and the secure source share the same samplers.
    The raw-word arrays of the secure source (:meth:`uint64`, :meth:`uint32`,
    :meth:`uint8`) are read-only views of the operating system's bytes; copy
    them before writing in place. All derived samplers return new arrays.

    Attributes
    ----------
    is_secure : bool
        True when the bits come from the operating system's CSPRNG.

    Examples
    --------
    >>> from skdp.mechanisms import check_random_source
    >>> check_random_source(None).is_secure  # the default: the OS's CSPRNG
    True
    >>> seeded = check_random_source(0)  # reproducible, for tests only
    >>> seeded.is_secure, seeded.random(2).shape
    (False, (2,))
    """

    is_secure = False

    # -- raw words (implemented by subclasses) ---------------------------------
    def uint64(self, size=None):
        """Return uniform 64-bit words.

        Parameters
        ----------
        size : int or tuple of int, default=None
            Output shape (``None`` for a 0-d array).

        Returns
        -------
        words : ndarray of uint64
        """
        raise NotImplementedError

    def uint32(self, size=None):
        """Return uniform 32-bit words (same conventions as :meth:`uint64`).

        Parameters
        ----------
        size : int or tuple of int, default=None
            Output shape (``None`` for a 0-d array).
        """
        raise NotImplementedError

    def uint8(self, size=None):
        """Return uniform bytes (same conventions as :meth:`uint64`).

        Parameters
        ----------
        size : int or tuple of int, default=None
            Output shape (``None`` for a 0-d array).
        """
        shape = _as_size(size)
        n = math.prod(shape)
        return self.uint32(-(-n // 4)).view(np.uint8)[:n].reshape(shape)

    # -- derived samplers ------------------------------------------------------
    def random_bits(self, size=None):
        """Return independent fair bits as a boolean array.

        Parameters
        ----------
        size : int or tuple of int, default=None
            Output shape (``None`` for a 0-d array).
        """
        shape = _as_size(size)
        n = int(np.prod(shape, dtype=np.int64))
        bits = np.unpackbits(self.uint8(-(-n // 8)))[:n]
        return bits.astype(bool).reshape(shape)

    def random(self, size=None):
        """Return float64 uniforms in [0, 1) with 53 random bits each.

        The output is ``m * 2**-53`` for a uniform integer ``m`` in
        ``[0, 2**53)``, so every value is exactly representable.

        Parameters
        ----------
        size : int or tuple of int, default=None
            Output shape (``None`` for a 0-d array).
        """
        return (self.uint64(size) >> np.uint64(11)) * (1.0 / (1 << 53))

    def _open_unit(self, size):
        # Uniform on the midpoints (m + 1/2) 2**-53: strictly inside (0, 1).
        return ((self.uint64(size) >> np.uint64(11)) + 0.5) * (1.0 / (1 << 53))

    def integers(self, high, size=None):
        """Return uniform integers in ``[0, high)``, without bias.

        Parameters
        ----------
        high : int or array-like of int
            Exclusive upper bound(s), ``1 <= high <= 2**63 - 1``. An array is
            broadcast against ``size``.
        size : int or tuple of int, default=None
            Output shape; ``None`` uses the shape of ``high``.

        Returns
        -------
        out : ndarray of int64

        Notes
        -----
        Bounds up to ``2**32`` use Lemire's multiply-and-reject method on
        32-bit words (rejection probability below ``high / 2**32``); larger
        bounds mask 64-bit words to the next power of two and reject values
        ``>= high`` (rejection probability below 1/2). Both are exact.
        """
        if isinstance(high, Integral) and not isinstance(high, bool):
            if not 1 <= high <= _INT64_MAX:
                raise ValueError(f"high must be in [1, 2**63 - 1]; got {high!r}.")
            shape = _as_size(size)
            return self._below(int(high), math.prod(shape)).reshape(shape)
        high_arr = np.asarray(high)
        if high_arr.dtype.kind not in "iu":
            if not np.all(np.mod(high_arr, 1) == 0):
                raise ValueError(f"high must be integer-valued; got {high!r}.")
        high_arr = high_arr.astype(np.int64)
        if high_arr.size and (high_arr.min() < 1):
            raise ValueError(f"high must be >= 1; got {high!r}.")
        shape = high_arr.shape if size is None else _as_size(size)
        high_arr = np.broadcast_to(high_arr, shape).ravel()
        out = np.empty(high_arr.shape, dtype=np.int64)
        if out.size == 0:
            return out.reshape(shape)
        small = high_arr <= _TWO_32
        if small.all():
            out[:] = self._integers32(high_arr)
        else:
            idx = np.flatnonzero(small)
            out[idx] = self._integers32(high_arr[idx])
            idx = np.flatnonzero(~small)
            out[idx] = self._integers64(high_arr[idx])
        return out.reshape(shape)

    def _below(self, high, n):
        """Uniform int64 in [0, high) for a Python int ``high`` (modulo, rejection).

        Each draw is a word of ``width`` random bytes, the fewest whole bytes
        with at least 4 bits to spare (at most 8). Words ``w >= limit`` (the
        largest multiple of ``high`` that fits the word range) are redrawn, so
        ``w % high`` is exactly uniform; a redraw happens with probability
        below 1/16 (below ``high / 2**64`` for ``high > 2**59``).
        """
        if high & (high - 1) == 0:  # a power of two: mask, never reject
            if high <= _TWO_32:
                words = self.uint32(n)
                return (words & np.uint32(high - 1)).astype(np.int64)
            return (self.uint64(n) & np.uint64(high - 1)).astype(np.int64)
        width = min((high.bit_length() + 4 + 7) // 8, 8)
        dtype = np.uint16 if width <= 2 else np.uint32 if width <= 4 else np.uint64
        word_bits = 8 * width
        limit = dtype((1 << word_bits) - (1 << word_bits) % high)
        h = dtype(high)
        words = self._words(n, width, dtype)
        bad = np.flatnonzero(words >= limit)
        if bad.size:
            words = words.copy()
            while bad.size:
                redraw = self._words(bad.size, width, dtype)
                words[bad] = redraw
                bad = bad[redraw >= limit]
        return (words % h).astype(np.int64)

    def _words(self, n, width, dtype):
        """``n`` uniform integers below ``2**(8 * width)``, as ``dtype``."""
        if width == 8:
            return self.uint64(n)
        if width == 4:
            return self.uint32(n)
        if width == 2:
            return self.uint8(2 * n).view(np.uint16)
        # Overlapping little-endian words read every ``width`` bytes, masked to
        # their low ``width`` bytes: each output uses its own ``width`` bytes.
        dtype = np.dtype(dtype).newbyteorder("<")
        raw = np.ascontiguousarray(self.uint8(n * width + dtype.itemsize - width))
        words = np.ndarray((n,), dtype=dtype, buffer=raw, strides=(width,))
        masked = words & dtype.type((1 << (8 * width)) - 1)
        return masked.astype(dtype.newbyteorder("="), copy=False)

    def _integers32(self, high):
        # Lemire (2019), "Fast random integer generation in an interval".
        high = high.astype(np.uint64)
        threshold = (np.uint64(_TWO_32) - high) % high  # == 2**32 mod high
        out = np.empty(high.shape, dtype=np.uint64)
        pending = np.arange(high.size)
        h, t = high, threshold
        while pending.size:
            prod = self.uint32(pending.size).astype(np.uint64) * h
            ok = (prod & np.uint64(_TWO_32 - 1)) >= t
            out[pending[ok]] = prod[ok] >> np.uint64(32)
            pending, h, t = pending[~ok], h[~ok], t[~ok]
        return out.astype(np.int64)

    def _integers64(self, high):
        high = high.astype(np.uint64)
        mask = high - np.uint64(1)
        for shift in (1, 2, 4, 8, 16, 32):
            mask |= mask >> np.uint64(shift)
        out = np.empty(high.shape, dtype=np.uint64)
        pending = np.arange(high.size)
        h, m = high, mask
        while pending.size:
            draw = self.uint64(pending.size) & m
            ok = draw < h
            out[pending[ok]] = draw[ok]
            pending, h, m = pending[~ok], h[~ok], m[~ok]
        return out.astype(np.int64)

    def bernoulli(self, num, den, size=None):
        """Return exact ``Bernoulli(num / den)`` draws for integers ``0 <= num <= den``.

        Parameters
        ----------
        num, den : int or array-like of int
            Numerator and denominator (``den >= 1``), broadcast together.
        size : int or tuple of int, default=None
            Output shape; ``None`` uses the broadcast shape of the inputs.

        Returns
        -------
        out : ndarray of bool
        """
        num, den = np.broadcast_arrays(
            np.asarray(num, dtype=np.int64), np.asarray(den, dtype=np.int64)
        )
        if size is not None:
            shape = _as_size(size)
            num, den = np.broadcast_to(num, shape), np.broadcast_to(den, shape)
        if num.size and (num.min() < 0 or np.any(num > den)):
            raise ValueError("bernoulli needs 0 <= num <= den.")
        return self.integers(den) < num

    def exponential(self, scale=1.0, size=None):
        """Return float Exponential(scale) draws, ``-scale * log(1 - U)``.

        This is a floating-point sampler. skdp uses it only inside selection
        mechanisms (report-noisy-max, permute-and-flip), where only the
        *argmax* of noisy scores is released, never a noisy value; Mironov's
        (2012) attack on the low-order bits of released floating-point noise
        therefore does not apply. Do not use it to release noisy values: use
        :func:`~skdp.mechanisms.laplace_mechanism` instead.

        Parameters
        ----------
        scale : float, default=1.0
            Scale of the distribution.
        size : int or tuple of int, default=None
            Output shape (``None`` for a 0-d array).
        """
        return -np.log1p(-self.random(size)) * scale

    def gumbel(self, scale=1.0, size=None):
        """Return float Gumbel(0, scale) draws, ``-scale * log(-log(U))``.

        ``U`` is uniform on the midpoints of the 2**-53 grid, strictly inside
        (0, 1), so the output is always finite. Like :meth:`exponential`, this
        is a floating-point sampler meant only for the argmax of a selection
        mechanism, where no noisy value is released.

        Parameters
        ----------
        scale : float, default=1.0
            Scale of the distribution.
        size : int or tuple of int, default=None
            Output shape (``None`` for a 0-d array).
        """
        return -np.log(-np.log(self._open_unit(size))) * scale


class SystemRandomSource(RandomSource):
    """Random source backed by the operating system's CSPRNG (``os.urandom``).

    Small requests are served from a buffer of ``os.urandom`` bytes. The buffer
    is private to the process that filled it (it is discarded after a
    ``fork``, and not pickled), so two processes never reuse the same bytes.
    """

    is_secure = True

    def __init__(self):
        self._lock = threading.Lock()
        self._reset()
        _SYSTEM_SOURCES.add(self)

    def _forget_after_fork(self):
        # The parent's lock may have been held by another thread at fork time.
        self._lock = threading.Lock()
        self._reset()

    def _reset(self):
        self._buf = b""
        self._pos = 0
        self._pid = os.getpid()

    def __getstate__(self):
        return {}

    def __setstate__(self, state):
        self.__init__()

    def __repr__(self):
        return "SystemRandomSource()"

    def _bytes(self, n):
        if n >= _BUFFER_BYTES:
            return os.urandom(n)
        with self._lock:
            if self._pid != os.getpid():
                self._reset()
            if self._pos + n > len(self._buf):
                self._buf = os.urandom(_BUFFER_BYTES)
                self._pos = 0
            out = self._buf[self._pos : self._pos + n]
            self._pos += n
        return out

    def uint64(self, size=None):
        shape = _as_size(size)
        n = int(np.prod(shape, dtype=np.int64))
        return np.frombuffer(self._bytes(8 * n), dtype=np.uint64).reshape(shape)

    def uint32(self, size=None):
        shape = _as_size(size)
        n = int(np.prod(shape, dtype=np.int64))
        return np.frombuffer(self._bytes(4 * n), dtype=np.uint32).reshape(shape)

    def uint8(self, size=None):
        shape = _as_size(size)
        return np.frombuffer(self._bytes(math.prod(shape)), dtype=np.uint8).reshape(
            shape
        )


# Every live secure source drops its buffered bytes in a forked child, so a
# parent and its children never use the same random bytes (the pid check in
# ``_bytes`` alone could be fooled by pid reuse).
_SYSTEM_SOURCES = weakref.WeakSet()


def _forget_buffers_after_fork():
    for source in list(_SYSTEM_SOURCES):
        source._forget_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_buffers_after_fork)

_SHARED = []
_SHARED_LOCK = threading.Lock()


def _shared_system_source():
    """The process's one secure source, so that a fit does not pay for a
    fresh 256 KiB ``os.urandom`` buffer: its bytes are handed out once each,
    under its lock, and a forked child drops them (above)."""
    if not _SHARED:
        with _SHARED_LOCK:
            if not _SHARED:
                _SHARED.append(SystemRandomSource())
    return _SHARED[0]


class SeededRandomSource(RandomSource):
    """Reproducible (not cryptographically secure) source backed by PCG64.

    Parameters
    ----------
    seed : int or sequence of int
        Entropy for :class:`numpy.random.SeedSequence`.
    """

    is_secure = False

    def __init__(self, seed):
        self._bit_generator = np.random.PCG64(seed)

    def __repr__(self):
        return "SeededRandomSource(...)"

    def uint64(self, size=None):
        shape = _as_size(size)
        n = int(np.prod(shape, dtype=np.int64))
        return self._bit_generator.random_raw(n).reshape(shape)

    def uint32(self, size=None):
        shape = _as_size(size)
        n = int(np.prod(shape, dtype=np.int64))
        words = self._bit_generator.random_raw(-(-n // 2)).view(np.uint32)
        return words[:n].reshape(shape)


def check_random_source(random_state=None):
    """Turn a ``random_state`` parameter into a :class:`RandomSource`.

    Parameters
    ----------
    random_state : None, int, numpy.random.RandomState or RandomSource
        * ``None`` (default): the operating system's cryptographically secure
          generator. Use this for every real release.
        * ``int`` (``>= 0``): a reproducible PCG64 source seeded with it.
        * :class:`numpy.random.RandomState`: a reproducible PCG64 source whose
          seed is drawn from it with ``randint`` (so an estimator can pass the
          result of :func:`sklearn.utils.check_random_state`).
        * :class:`RandomSource`: returned unchanged, so that one ``fit`` can
          share one source among several mechanisms.

        Seeded sources are **not** cryptographically secure: the noise they
        produce can be reproduced by anyone who knows or guesses the seed.

    Returns
    -------
    source : RandomSource

    Raises
    ------
    ValueError
        For a :class:`numpy.random.Generator` (its state cannot be shared
        with scikit-learn's ``check_random_state``), a negative seed, or any
        other type.

    Examples
    --------
    >>> from skdp.mechanisms import check_random_source
    >>> check_random_source(None).is_secure
    True
    >>> source = check_random_source(0)
    >>> source.is_secure, check_random_source(source) is source
    (False, True)
    >>> check_random_source(0).integers(10, size=5)
    array([...])
    """
    if random_state is None:
        return _shared_system_source()
    if isinstance(random_state, RandomSource):
        return random_state
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(
                f"random_state must be a non-negative integer seed; got {random_state}."
            )
        return SeededRandomSource(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        words = random_state.randint(0, _TWO_32, size=4, dtype=np.uint64)
        return SeededRandomSource([int(w) for w in words])
    if isinstance(random_state, np.random.Generator):
        raise ValueError(
            "random_state must be None, an int seed, a numpy.random.RandomState or "
            "a skdp RandomSource; numpy.random.Generator is not accepted (pass an "
            "int seed for reproducible results, or None for secure noise)."
        )
    raise ValueError(
        f"{random_state!r} cannot be used as random_state: pass None (secure "
        "noise from the operating system), an int seed, a numpy.random.RandomState "
        "or a skdp RandomSource."
    )
