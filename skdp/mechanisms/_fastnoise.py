"""Fast exact samplers for the discrete Laplace and Gaussian (issue 18).

The samplers of :mod:`skdp.mechanisms._discrete` (Canonne, Kamath and Steinke,
2020, Algorithms 2 and 3) are exact but spend most of their time in masked
rejection loops: the uniform ``U`` of Algorithm 2 is kept with probability
``exp(-U/t)`` only about 63% of the time, Algorithm 3 rejects 24% of its
Laplace proposals, and its acceptance test splits its exponent into many
Bernoulli pieces. The samplers here draw the *same* distributions from one
64-bit word per proposal (plus two bytes for a Laplace scale above ``2**27``)
and at most about 1.07 (Laplace) or 1.05 (Gaussian) proposals per output.

Proposal. Pick a power of two ``w = 2**s`` (the bin width) with
``w <= t/8`` for the Laplace scale ``t`` and ``w <= sigma/8`` for the
Gaussian (``w = 1`` for small scales), and write a magnitude as
``|x| = J w + U`` with ``U`` uniform on ``{0..w-1}`` (the low ``s`` bits of the
word), a fair sign (``-0`` rejected, so that 0 is not counted twice) and a bin
index ``J`` drawn by inversion: ``J`` is the unique ``j`` with
``theta_{j+1} <= V < theta_j`` for a uniform real ``V`` in ``[0, 1)`` and the
survival function ``theta_j = P(J >= j)``.

* Laplace (:func:`_sample_laplace`): ``theta_j = exp(-j w / t)``, so a
  proposal has probability ``∝ exp(-J w / t)``; it is accepted with
  probability ``exp(-U / t)``, which leaves exactly ``∝ exp(-|x| / t)``
  (acceptance ``(t/w)(1 - exp(-w/t)) >= 0.94``).
* Gaussian (:func:`_sample_gaussian`): ``P(J = j) ∝ g_j =
  exp(-(j w)**2 / (2 sigma2))``, the density's value at the bin's left end
  (its largest on the bin); acceptance with probability
  ``exp(-U (2 J w + U) / (2 sigma2))`` leaves exactly
  ``g_J exp(-U (2Jw + U) / (2 sigma2)) = exp(-x**2 / (2 sigma2))``
  (acceptance about ``1 - w / (2.5 sigma) >= 0.95``).

Exactness. Every decision compares a uniform real ``V = (p + R) / 2**k``
(``p`` the ``k`` random bits already drawn, ``R`` uniform on ``[0, 1)`` and
drawn only if needed, 32 bits at a time) with a real threshold ``theta``:

* the survival thresholds ``theta_j`` come with integer bounds
  ``lo <= 2**P theta_j <= hi`` computed with Python integers: ``exp(-x)`` for
  rational ``x`` from the alternating Taylor series (whose consecutive
  partial sums bracket the limit, :func:`_exp_neg_bounds`), then products,
  sums and one division each rounded in the safe direction
  (:class:`_GeometricTable`, :class:`_GaussianTable`);
* acceptance probabilities ``exp(-f)``, ``0 <= f <= 1``, are realised by CKS
  Algorithm 1 with a single uniform: the trial stops at the first ``K`` with
  ``V >= T_K = f**K / K!`` and succeeds iff ``K`` is odd
  (``P(K >= k) = T_{k-1}`` since ``T_k`` decreases, so
  ``P(K odd) = sum_k (-f)**k / k! = exp(-f)``). The ``T_K`` are rationals.

The vectorised fast path decides ``V < theta`` only when the whole cell
``[p, p + 1) / 2**k`` lies on one side of a proven bracket of ``theta``: the
integer bounds above, or a float64 value ``T`` computed with the four basic
IEEE operations (correctly rounded) whose error bound is proved where it is
computed (``|T - theta| < 2**-43``), widened by ``2**-40``. Floats only ever
*skip* a comparison whose outcome is certain; undecided cells (probability
about ``2**-15`` per trial) go to :func:`_uniform_less`, which compares the
same ``V`` exactly with rational or integer-bracketed thresholds, refining
``V`` until the outcome is certain. So every output has exactly the stated
distribution.
"""

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

_U64 = np.uint64
#: Margin added around float thresholds; their proven error is below 2**-43.
_DELTA = 2.0**-40
#: Bits of the uniform of the acceptance trial when taken from the word.
_ACCEPT_BITS = 16
#: Fewest bits for the inversion uniform of ``J`` when it shares the word.
_MIN_J_BITS = 20
#: Trials stages handled by the float fast path (T_k for k <= _MAX_STAGE).
_MAX_STAGE = 16


# -- exact real arithmetic (Python integers) ----------------------------------
def _ceil_shift(value, shift):
    """``ceil(value / 2**shift)`` for an int ``value`` and ``shift >= 0``."""
    return -((-value) >> shift)


def _exp_neg_series_bounds(f, prec):
    """Integers ``lo <= 2**prec exp(-f) <= hi`` for a Fraction ``0 <= f <= 1``.

    The Taylor series of ``exp(-f)`` alternates and its terms
    ``f**i / i!`` decrease in magnitude (ratio ``f / (i + 1) <= 1``), so the
    limit lies between any two consecutive partial sums.
    """
    tol = Fraction(1, 1 << (prec + 2))
    partial = Fraction(0)
    term = Fraction(1)
    i = 0
    while True:
        partial += term
        term = -term * f / (i + 1)
        i += 1
        if abs(term) <= tol:
            a, b = partial, partial + term
            lo, hi = (a, b) if a <= b else (b, a)
            return math.floor(lo * (1 << prec)), math.ceil(hi * (1 << prec))


def _exp_neg_bounds(x, prec):
    """Integers ``lo <= 2**prec exp(-x) <= hi`` for a Fraction ``x >= 0``.

    ``exp(-x) = exp(-x / 2**r) ** (2**r)`` with ``x / 2**r <= 1``; the bounds
    of ``exp(-x / 2**r)`` at ``P = prec + r + 8`` bits are squared ``r`` times,
    rounding the lower bound down and the upper bound up, so both stay valid
    (all quantities are nonnegative). The width is a few units of
    ``2**-prec``.
    """
    x = Fraction(x)
    r = (math.ceil(x) - 1).bit_length() if x > 1 else 0
    p = prec + r + 8
    lo, hi = _exp_neg_series_bounds(x / (1 << r), p)
    for _ in range(r):
        lo = (lo * lo) >> p
        hi = _ceil_shift(hi * hi, p)
    return lo >> (p - prec), _ceil_shift(hi, p - prec)


def _fraction_bounds(value):
    """Bounds function of a nonnegative Fraction (exact floor and ceil)."""

    def bounds(prec):
        scaled = value * (1 << prec)
        return math.floor(scaled), math.ceil(scaled)

    return bounds


def _uniform_less(prefix, bits, bounds, source):
    """Exactly decide ``V < theta`` for the uniform ``V = (prefix + R) / 2**bits``.

    ``bounds(prec)`` returns integers ``lo <= 2**prec theta <= hi``. When the
    cell ``[prefix, prefix + 1) / 2**bits`` is not on one side of
    ``[lo, hi] / 2**prec``, 32 more random bits of ``V`` are drawn (``R`` is
    uniform, so its leading bits are fresh uniform bits) and the comparison
    repeats at a higher precision. Returns ``(V < theta, prefix, bits)`` with
    the refined prefix, to be reused for further comparisons of the same
    ``V``.
    """
    while True:
        lo, hi = bounds(bits + 32)
        if (prefix + 1) << 32 <= lo:
            return True, prefix, bits
        if prefix << 32 >= hi:
            return False, prefix, bits
        prefix = (prefix << 32) | int(source.uint32())
        bits += 32


# -- the bin index J by inversion ---------------------------------------------
_GUIDE_BITS = 12


class _InversionTable:
    """Integer brackets of decreasing survival thresholds ``theta_j = P(J >= j)``.

    ``J`` is the unique ``j`` with ``theta_{j+1} <= V < theta_j`` for a
    uniform ``V``. Subclasses fill ``lo[j] <= 2**prec theta_j <= hi[j]`` (Python
    ints, ``theta_0 = 1``) and give :meth:`_beyond` for other ``j`` or higher
    precisions. The ``kbits``-bit versions ``low``/``high`` (int64) decide a
    ``kbits``-bit cell of ``V``; they are made monotone (``low`` lowered to
    its running minimum, ``high`` raised to its running maximum from the
    right), which keeps them valid bounds. ``jmax`` is the first ``j`` with
    ``theta_j <= 2**-kbits``.
    """

    def _finish(self, lo, hi):
        shift = self.prec - self.kbits
        low = np.array([v >> shift for v in lo], dtype=object)
        high = np.array([_ceil_shift(v, shift) for v in hi], dtype=object)
        jmax = next(j for j in range(len(high)) if high[j] <= 1)
        while len(lo) < jmax + 2:  # theta_j <= theta_{jmax} for j > jmax
            lo.append(0)
            hi.append(hi[jmax])
            low = np.append(low, 0)
            high = np.append(high, high[jmax])
        self.lo, self.hi, self.jmax = lo, hi, jmax
        low = np.minimum.accumulate(low[: jmax + 2].astype(np.int64))
        high = np.maximum.accumulate(high[: jmax + 2].astype(np.int64)[::-1])[::-1]
        self.low, self.high = np.ascontiguousarray(low), np.ascontiguousarray(high)
        # guide[c]: a j with V < theta_j certain for every V in the c-th
        # 2**-_GUIDE_BITS cell (the largest j with low[j] >= (c + 1) 2**(k - g)).
        g = min(_GUIDE_BITS, self.kbits)
        self.guide_shift = self.kbits - g
        tops = (np.arange(1, (1 << g) + 1, dtype=np.int64)) << self.guide_shift
        self.guide = np.searchsorted(-self.low, -tops, side="right") - 1

    def bounds(self, j):
        """Bounds function of ``theta_j`` (any ``j >= 0``, any precision)."""

        def bounds(prec):
            if j < len(self.lo) and prec <= self.prec:
                shift = self.prec - prec
                return self.lo[j] >> shift, _ceil_shift(self.hi[j], shift)
            return self._beyond(j, prec)

        return bounds

    def invert(self, wj):
        """``J`` for the uniforms ``(wj + R) / 2**kbits``; ``-1`` where undecided.

        Starting from the guide's ``j`` (``V < theta_j`` certain), ``j`` is
        increased while ``V < theta_{j+1}`` is certain and returned once
        ``V >= theta_{j+1}`` is certain: then ``J = j`` exactly. A cell that
        straddles a bracket is left undecided (``-1``).
        """
        w = wj.astype(np.int64, copy=False)
        j = self.guide[w >> self.guide_shift]
        out = np.full(w.size, -1, dtype=np.int64)
        idx = None
        top = self.jmax
        while True:
            nxt = j + 1
            done = w >= self.high[nxt]
            up = (w < self.low[nxt]) & (j < top)
            if idx is None:
                out[done] = j[done]
            else:
                out[idx[done]] = j[done]
            sub = np.flatnonzero(up)
            if sub.size == 0:
                return out
            idx = sub if idx is None else idx[sub]
            w, j = w[sub], j[sub] + 1

    def invert_exact(self, prefix, bits, source):
        """Exact ``J`` for one uniform ``V = (prefix + R) / 2**bits``."""
        j = 0  # V < theta_0 = 1
        while True:
            less, prefix, bits = _uniform_less(prefix, bits, self.bounds(j + 1), source)
            if not less:
                return j
            j += 1


class _GeometricTable(_InversionTable):
    """``theta_j = exp(-j rho)``: ``J`` geometric with ratio ``exp(-rho)``.

    ``lo[j] <= 2**P theta_j <= hi[j]`` with ``P = kbits + 64``: bounds of
    ``exp(-rho)`` raised to the power ``j``, rounding down / up.
    """

    def __init__(self, rho, kbits):
        self.rho = rho
        self.kbits = kbits
        self.prec = kbits + 64
        q_lo, q_hi = _exp_neg_bounds(rho, self.prec)
        one = 1 << self.prec
        lo, hi = [one], [one]
        while hi[-1] > (1 << 64) or len(hi) < 2:
            lo.append((lo[-1] * q_lo) >> self.prec)
            hi.append(_ceil_shift(hi[-1] * q_hi, self.prec))
        self._finish(lo, hi)

    def _beyond(self, j, prec):
        return _exp_neg_bounds(j * self.rho, prec)


class _GaussianTable(_InversionTable):
    """``theta_j = sum_{i >= j} g_i / sum_{i >= 0} g_i``, ``g_i = exp(-c i**2)``.

    ``g_i = r**(i*i)`` with ``r = exp(-c)``, bracketed with integers at the
    working precision ``G = P + 16`` through ``g_{i+1} = g_i r**(2i+1)``
    (rounding down / up). The terms stop at the first ``N`` with
    ``g_N < 2**-(P+8)`` and ``r**(2N+1) <= 1/2``; then
    ``sum_{i >= N} g_i <= g_N / (1 - r**(2N+1)) <= 2 g_N`` (since
    ``g_{N+k} / g_N = r**(2Nk + k*k) <= r**((2N+1)k)``), so the tail sum is
    in ``[g_N, 2 g_N]``. Suffix sums and the total ``Z`` get integer bounds,
    and ``theta_j`` is bracketed by ``[T_j^lo / Z^hi, T_j^hi / Z^lo]``.
    """

    def __init__(self, c, kbits, prec=None):
        self.c = c
        self.kbits = kbits
        self.prec = p = prec if prec is not None else kbits + 64
        work = p + 16
        r_lo, r_hi = _exp_neg_bounds(c, work)
        r2_lo, r2_hi = (r_lo * r_lo) >> work, _ceil_shift(r_hi * r_hi, work)
        g_lo, g_hi = [1 << work], [1 << work]
        st_lo, st_hi = r_lo, r_hi  # bounds of r**(2i+1), i = len(g) - 1
        while True:
            g_lo.append((g_lo[-1] * st_lo) >> work)
            g_hi.append(_ceil_shift(g_hi[-1] * st_hi, work))
            st_lo = (st_lo * r2_lo) >> work
            st_hi = _ceil_shift(st_hi * r2_hi, work)
            if g_hi[-1] < (1 << (work - p - 8)) and 2 * st_hi <= (1 << work):
                break
        n = len(g_lo) - 1  # terms 0..n-1, tail from n
        t_lo, t_hi = [g_lo[n]], [2 * g_hi[n]]
        for i in range(n - 1, -1, -1):
            t_lo.append(t_lo[-1] + g_lo[i])
            t_hi.append(t_hi[-1] + g_hi[i])
        t_lo.reverse()
        t_hi.reverse()  # t_*[j] bounds sum_{i >= j} g_i, j = 0..n
        z_lo, z_hi = t_lo[0], t_hi[0]
        lo = [1 << p] + [(t_lo[j] << p) // z_hi for j in range(1, n + 1)]
        hi = [1 << p] + [-((-(t_hi[j] << p)) // z_lo) for j in range(1, n + 1)]
        self.n_terms = n
        self._finish(lo, hi)

    def _beyond(self, j, prec):
        if prec <= self.prec:  # j beyond the terms: 0 <= theta_j <= theta_n
            return 0, _ceil_shift(self.hi[-1], self.prec - prec)
        return _gaussian_table(
            self.c.numerator, self.c.denominator, self.kbits, prec + 32
        ).bounds(j)(prec)


@lru_cache(maxsize=128)
def _geometric_table(rho_num, rho_den, kbits):
    return _GeometricTable(Fraction(rho_num, rho_den), kbits)


@lru_cache(maxsize=128)
def _gaussian_table(c_num, c_den, kbits, prec=None):
    return _GaussianTable(Fraction(c_num, c_den), kbits, prec)


# -- CKS Algorithm 1 with one uniform per trial --------------------------------
def _exp_trial_exact(prefix, bits, f, k, source):
    """Finish one trial exactly: ``V < T_{k-1}`` is known; ``f`` a Fraction."""
    term = f**k / math.factorial(k)
    while True:
        less, prefix, bits = _uniform_less(prefix, bits, _fraction_bounds(term), source)
        if not less:
            return k % 2 == 1
        k += 1
        term = term * f / k


def _exp_trials(f_hat, wa, ka, exact_f, source):
    """Bernoulli(exp(-f_i)) for ``0 <= f_i <= 1``, one uniform per element.

    ``V_i = (wa_i + R_i) / 2**ka`` (``ka <= 32``); the trial stops at the first
    ``K`` with ``V_i >= T_K = f_i**K / K!`` and succeeds iff ``K`` is odd.
    ``f_hat`` approximates ``f_i`` with ``|f_hat - f_i| <= 2**-48`` (proved by
    the caller; the callers' bound is ``3 * 2**-53``). By induction the float
    recurrence ``T = fl(fl(T * f_hat) / k)`` then has error
    ``e_k <= e_{k-1} (1 + 2**-48) + 2**-48 + 2.1 * 2**-53`` (``T_k <= 1``), so
    ``e_k < k (2**-48 + 3 * 2**-53) < 2**-43`` for ``k <= 16``; a cell with
    ``lo >= fl(T + 2**-40)`` is therefore certainly above ``T_K`` and one with
    ``lo + 2**-ka <= fl(T - 2**-40)`` certainly below (the rounding of the
    margin addition is below ``2**-52``; ``lo`` and ``lo + 2**-ka`` are
    exact). Undecided elements finish in :func:`_exp_trial_exact` with the
    exact rational ``f_i = exact_f(i)``.
    """
    n = f_hat.size
    out = np.zeros(n, dtype=bool)
    if n == 0:
        return out
    scale = 2.0**-ka
    lo = wa.astype(np.float64) * scale
    idx = None  # None: all elements (avoids an index array in stage 1)
    f = f_hat
    t = f_hat
    undecided = []
    k = 1
    while True:
        above = lo >= t + _DELTA
        below = lo + scale <= t - _DELTA
        if k % 2:
            if idx is None:
                out |= above
            else:
                out[idx[above]] = True
        und = ~(above | below)
        if und.any():
            pos = np.flatnonzero(und)
            undecided.append((pos if idx is None else idx[pos], k))
        sub = np.flatnonzero(below)
        if sub.size == 0:
            break
        idx = sub if idx is None else idx[sub]
        lo, f, t = lo[sub], f[sub], t[sub]
        k += 1
        if k > _MAX_STAGE:
            undecided.append((idx, k))
            break
        t = t * f / k
    for pos, stage in undecided:
        for i in pos.tolist():
            out[i] = _exp_trial_exact(int(wa[i]), ka, exact_f(i), stage, source)
    return out


# -- proposals -----------------------------------------------------------------
def _layout(s):
    """Split a 64-bit word: ``s`` bits of ``U``, a sign bit, ``kj`` bits of the
    inversion uniform, and ``ka`` acceptance bits (``ka = 0``: drawn apart)."""
    avail = 63 - s
    if avail >= _MIN_J_BITS + _ACCEPT_BITS:
        kj = min(32, avail - _ACCEPT_BITS)
        return kj, avail - kj  # at most 32 acceptance bits
    if avail >= _MIN_J_BITS:
        return min(32, avail), 0
    return 0, 0  # the inversion uniform is drawn apart as a 32-bit word


def _bin_bits(t):
    """``s`` with ``2**s <= t/8`` (``s = 0`` for ``t < 16``); ``t`` a Fraction."""
    return max(0, math.floor(t / 8).bit_length() - 1)


def _propose(m, s, table, kj, ka, source):
    """``m`` proposals: ``(mag, u, negative, wa, ka_used)``; ``mag`` int64.

    ``mag = J * 2**s + U``; ``J`` from the table (exact fallback for the rare
    undecided cells); ``negative`` the sign bit; ``wa`` the acceptance
    uniform's ``ka`` bits.
    """
    x = source.uint64(m)
    w_mask = _U64((1 << s) - 1)
    u = (x & w_mask).view(np.int64)
    negative = ((x >> _U64(s)) & _U64(1)) != 0
    if kj:
        wj = (x >> _U64(s + 1)) & _U64((1 << kj) - 1)
        kbits = kj
    else:
        wj = source.uint32(m).astype(np.uint64)
        kbits = 32
    if ka:
        wa = x >> _U64(s + 1 + kj)
        ka_used = 64 - s - 1 - kj
    else:
        wa = source.uint8(2 * m).view(np.uint16)
        ka_used = 16
    j = table.invert(wj)
    bad = np.flatnonzero(j < 0)
    mag_cap = (1 << 62) >> s  # keeps J * 2**s + U below 2**62
    for i in bad.tolist():
        jj = table.invert_exact(int(wj[i]), kbits, source)
        if jj >= mag_cap:
            raise OverflowError(
                "discrete noise draw exceeds the representable range (probability "
                "below exp(-1000)); nothing was released."
            )
        j[i] = jj
    mag = (j << s) | u
    return mag, u, negative, wa, ka_used


def _table_for(rho, kbits):
    return _geometric_table(rho.numerator, rho.denominator, kbits)


def _kbits(kj):
    return kj if kj else 32


def _store_accepted(out, mag, negative, keep, pending):
    """Sign the proposals, drop ``-0``, and write the accepted ones to ``out``.

    ``pending`` holds the slots of ``out`` the proposals are for (``None``
    in the first round: all of them, in order). Returns the slots still
    pending.
    """
    keep &= ~(negative & (mag == 0))  # -0 would count 0 twice
    np.negative(mag, out=mag, where=negative)
    if pending is None:
        if keep.all():
            out[:] = mag
            return np.empty(0, dtype=np.intp)
        pos = np.flatnonzero(keep)
        out[pos] = mag[pos]
        return np.flatnonzero(~keep)
    out[pending[keep]] = mag[keep]
    return pending[~keep]


def _sample_laplace(num, den, n, source, max_abs=None):
    """Exact discrete Laplace, pmf ``∝ exp(-|x| den / num)``, int64 array.

    Bins of width ``w = 2**s <= t/8`` (``t = num/den``; ``w = 1`` for
    ``t < 16``): ``|x| = J w + U`` with ``P(J >= j) = exp(-j w / t)``
    (:class:`_GeometricTable`, exact inversion), ``U`` uniform on
    ``{0..w-1}`` and a fair sign with ``-0`` rejected, so a proposal has
    probability ``∝ exp(-J w / t)`` for each of the two signs of a nonzero
    magnitude and once for 0. Accepting with probability ``exp(-U/t)`` (one
    CKS Algorithm 1 trial with ``f = U den / num <= 1/8``, exact rational
    thresholds ``f**K / K!``) leaves ``∝ exp(-(J w + U)/t) = exp(-|x|/t)``:
    exactly the discrete Laplace. ``max_abs``: OverflowError if a draw is
    larger, before anything is returned.
    """
    out = np.empty(n, dtype=np.int64)
    if n == 0:
        return out
    t = Fraction(num, den)
    s = _bin_bits(t)
    kj, ka = _layout(s)
    table = _table_for((1 << s) / t, _kbits(kj))
    inv_t = den / num  # correctly rounded; U < 2**53 is exact
    pending = None
    m = n
    while m:
        mag, u, negative, wa, ka_used = _propose(m, s, table, kj, ka, source)
        # Acceptance exp(-U/t): f = U den / num <= 2**s / t <= 1/8 (or U = 0).
        # f_hat = fl(U * fl(den/num)) (U < 2**53 is exact) has relative error
        # below 3 * 2**-53, so |f_hat - f| < 2**-51 (f <= 1/8).
        f_hat = u.astype(np.float64) * inv_t
        keep = _exp_trials(
            f_hat, wa, ka_used, lambda i, u=u: Fraction(int(u[i]) * den, num), source
        )
        pending = _store_accepted(out, mag, negative, keep, pending)
        m = pending.size
    if max_abs is not None and n and np.abs(out).max() > max_abs:
        raise OverflowError(
            "discrete Laplace draw exceeds the representable range "
            "(probability below exp(-500) within the documented parameter "
            "limits); nothing was released."
        )
    return out


def _sample_gaussian(a, b, n, source):
    """Exact discrete Gaussian, pmf ``∝ exp(-x**2 b / (2 a))``, int64 array.

    Bins of width ``w = 2**s <= sigma / 8`` (``w = 1`` for ``sigma < 16``):
    ``|x| = J w + U`` with ``P(J = j) ∝ g_j = exp(-(j w)**2 b / (2a))`` (the
    density's largest value on bin ``j``, at its left end), ``U`` uniform in
    the bin and a fair sign with ``-0`` rejected; the proposal is accepted with
    probability ``exp(-gamma)``, ``gamma = U (2 J w + U) b / (2a)``, so that
    ``g_J exp(-gamma) = exp(-|x|**2 b / (2a))``: the output pmf is exactly the
    discrete Gaussian. ``J`` is inverted exactly from a uniform with
    :class:`_GaussianTable`; the acceptance is one CKS Algorithm 1 trial when
    ``gamma < 1`` (``J < 64`` suffices) and otherwise (``|x| > 8 sigma``,
    probability below ``1e-14``) ``m = floor(gamma) + 1`` exact trials with
    ``f = gamma / m``. Acceptance rate ``>= 0.95``.
    """
    out = np.empty(n, dtype=np.int64)
    if n == 0:
        return out
    floor_sigma = math.isqrt(a // b)
    s = max(0, (floor_sigma // 8).bit_length() - 1)
    kj, ka = _layout(s)
    kbits = _kbits(kj)
    c = Fraction((1 << (2 * s)) * b, 2 * a)  # w**2 / (2 sigma2)
    table = _gaussian_table(c.numerator, c.denominator, kbits)
    t = floor_sigma + 1
    # |x| <= ymax keeps all products below 2**62 (P(|x| > ymax) < e**-256).
    ymax = ((1 << 61) - a) // (b * t)
    c_scale = b / (2 * a)  # correctly rounded (Python int true division)
    pending = None
    m = n
    while m:
        mag, u, negative, wa, ka_used = _propose(m, s, table, kj, ka, source)
        if mag.max() > ymax:
            raise OverflowError(
                "discrete Gaussian proposal does not fit in int64 (probability "
                "below exp(-256)); nothing was released."
            )
        # N = U (2 J w + U) = U (2|x| - U) < 2**62 is exact in int64; fl(N) and
        # the product with c_scale = fl(b / (2a)) add relative errors below
        # 2**-53 each: |f_hat - gamma| <= 3 * 2**-53 * gamma.
        big_n = u * (2 * mag - u)
        f_hat = big_n.astype(np.float64) * c_scale
        # f_hat < 1 - 2**-30 proves gamma < 1 (one trial); the others (gamma
        # about 1 or more: |x| > 7 sigma, probability below 1e-11) go to the
        # exact path.
        slow = np.flatnonzero(f_hat >= 1 - 2.0**-30)
        if slow.size:
            f_hat[slow] = 0.0
        is_slow = np.zeros(m, dtype=bool)
        is_slow[slow] = True

        def exact_f(i, big_n=big_n, is_slow=is_slow):
            # the trial of a slow element is discarded below: any f in [0, 1]
            return Fraction(0) if is_slow[i] else Fraction(int(big_n[i]) * b, 2 * a)

        keep = _exp_trials(f_hat, wa, ka_used, exact_f, source)
        for i in slow.tolist():
            gamma = Fraction(int(big_n[i]) * b, 2 * a)
            reps = math.floor(gamma) + 1
            f = gamma / reps
            keep[i] = all(_exp_trial_exact(0, 0, f, 1, source) for _ in range(reps))
        pending = _store_accepted(out, mag, negative, keep, pending)
        m = pending.size
    return out
