"""Joint exponential mechanism over ordered rank states (several quantiles at once).

The sampler of :func:`joint_quantile_states`: the exponential mechanism over
strictly increasing sequences of ``m`` states with the gap utility of
:mod:`skdp.sensitivity._joint_quantile`, sampled exactly as a chain. The
forward pass computes, for every state ``i`` and quantile ``j``, the log of

    A_j(i) = Σ_{p < i} A_{j-1}(p) exp(-β |r_i - r_p - T_j|),

splitting the sum at ``r_p = r_i - T_j`` into a prefix and a window of
exponentials in ``r_p``, both evaluated with additions of positive terms
only (a running ``logaddexp``; for the window, sums inside chunks of 64
and dyadic runs of whole chunks), time ``O(m N log N)`` and memory
``O(m N)`` for ``N`` states. States come in blocks of equal rank (the empty
runs of the grid, and the top states of a small atom), so ``N`` is the
number of blocks (``min(a, 2**split) + 2`` at most for a distinct value of
``a`` rows: about 54,000 for Adult's fnlwgt at any ε, where one block per
split state made 33 million at ε >= 128, 493 s and 12.5 GB for five
levels), and ``k`` outputs may share a block. The
backward pass draws the last state, then each earlier one given the next
(Gillenwater, Joseph and Kulesza 2021, Algorithm 1, on a public grid).
"""

import math

import numpy as np

from skdp.mechanisms._quantile_sampling import sample_log_weights
from skdp.mechanisms._random import check_random_source

__all__ = ["joint_quantile_blocks", "joint_quantile_states"]


#: Blocks per chunk of the window sums: a window is a suffix of a chunk, a run
#: of whole chunks (a sum of dyadic runs of chunks) and a prefix of a chunk, or
#: a short run inside one chunk (summed term by term).
CHUNK = 64


def _chunk_sums(values):
    """In-chunk prefix and suffix log-sums, and the chunks' dyadic log-sums.

    The third result is the flat array of the log-sums of the dyadic runs of
    chunks, level by level (level ``k`` holds runs of ``2**k`` chunks), and
    the offset of each level in it: O(n) memory (a table of every run of
    chunks, as before, took n² / 64² and ran out of memory on 500,000
    distinct values).
    """
    n_chunks = max(1, -(-values.size // CHUNK))
    padded = np.full(n_chunks * CHUNK, -np.inf)
    padded[: values.size] = values
    rows = padded.reshape(n_chunks, CHUNK)
    prefix = np.logaddexp.accumulate(rows, axis=1)  # chunk start .. p
    suffix = np.logaddexp.accumulate(rows[:, ::-1], axis=1)[:, ::-1]  # p .. end
    levels = [prefix[:, -1]]
    while levels[-1].size > 1:
        last = levels[-1]
        if last.size % 2:
            last = np.append(last, -np.inf)
        levels.append(np.logaddexp(last[0::2], last[1::2]))
    offsets = np.cumsum([0] + [level.size for level in levels[:-1]])
    return prefix.ravel(), suffix.ravel(), (np.concatenate(levels), offsets)


def _run_logsumexp(dyadic, first, stop):
    """``log Σ_{first <= c < stop} exp(chunk total_c)`` for each pair.

    Each run is cut greedily into at most ``2 log2(n)`` aligned dyadic runs
    (the largest that starts at the current chunk and fits), all pairs at
    once, one level per step; an empty run gives ``-inf``.
    """
    flat, offsets = dyadic
    top = offsets.size - 1
    total = np.full(first.shape, -np.inf)
    pos = first.astype(np.int64)
    stop = stop.astype(np.int64)
    while True:
        active = np.flatnonzero(pos < stop)
        if not active.size:
            return total
        at = pos[active]
        fits = np.frexp((stop[active] - at).astype(np.float64))[1] - 1
        aligned = np.where(at > 0, np.frexp((at & -at).astype(np.float64))[1] - 1, top)
        level = np.minimum(np.minimum(fits, aligned), top)
        term = flat[offsets[level] + (at >> level)]
        total[active] = np.logaddexp(total[active], term)
        pos[active] = at + (np.int64(1) << level)


def _short_windows(values, start, end):
    """``log Σ_{start <= p <= end} exp(v_p)`` term by term (short windows)."""
    total = np.full(start.shape, -np.inf)
    for d in range(int((end - start).max()) + 1):
        term = values[np.minimum(start + d, end)]
        total = np.logaddexp(total, np.where(start + d <= end, term, -np.inf))
    return total


def _window_logsumexp(values, start):
    """``log Σ_{start_b <= p < b} exp(v_p)`` for every ``b`` (``start_b <= b``).

    Only sums of positive terms (no subtraction of prefix sums, which would
    lose the small windows): a window over several chunks is the suffix of
    its first chunk, the run of whole chunks between and the prefix of its
    last chunk; a window inside one chunk is its prefix if it starts the
    chunk, else summed term by term.
    """
    prefix, suffix, dyadic = _chunk_sums(values)
    end = np.arange(values.size) - 1  # inclusive
    first, last = start // CHUNK, np.maximum(end, 0) // CHUNK
    total = np.full(values.size, -np.inf)
    wide = np.flatnonzero((start <= end) & (first < last))
    if wide.size:
        lo, hi = first[wide], last[wide]
        ends = np.logaddexp(suffix[start[wide]], prefix[end[wide]])
        inner = _run_logsumexp(dyadic, lo + 1, hi)  # whole chunks between
        total[wide] = np.logaddexp(ends, inner)
    inside = (start <= end) & (first == last)
    head = inside & (start % CHUNK == 0)  # from the chunk's start: its prefix
    total[head] = prefix[end[head]]
    narrow = np.flatnonzero(inside & ~head)
    if narrow.size:
        total[narrow] = _short_windows(values, start[narrow], end[narrow])
    return total


def _kernel_sum(current, ranks, target, beta):
    """``log Σ_{p < b} exp(current_p - β |r_b - r_p - target|)`` for every ``b``.

    Split at ``r_p = r_b - target``: below it a prefix of ``exp(current_p +
    β r_p)``, above it a window of ``exp(current_p - β r_p)`` (segment tree).
    """
    index = np.arange(ranks.size)
    split = np.minimum(np.searchsorted(ranks, ranks - target, side="right"), index)
    prefix = np.logaddexp.accumulate(np.append(-np.inf, current + beta * ranks))
    below = prefix[split] - beta * (ranks - target)
    window = _window_logsumexp(current - beta * ranks, split)
    return np.logaddexp(below, window + beta * (ranks - target))


def _log_choose(sizes, m):
    """``log binom(sizes, k)`` for ``k = 0..m`` (``-inf`` where ``k > size``)."""
    table = [np.zeros(sizes.shape)]
    with np.errstate(divide="ignore"):
        for k in range(1, m + 1):
            free = np.maximum(sizes - (k - 1), 0.0)  # 0 states left: weight 0
            table.append(table[-1] + np.log(free) - math.log(k))
    return table


def _forward(ranks, log_choose, targets, beta):
    """The ``log S_j`` and ``log A_j`` tables of the blocked chain.

    ``A_j(b)``: total weight of the first ``j`` outputs with the ``j``-th in
    block ``b``; ``S_j(b)``: weight of the first ``j`` outputs before block
    ``b`` followed by a state of ``b`` (``S_0``: the start, rank 0). The last
    ``k`` outputs share block ``b`` in ``binom(size_b, k)`` ways, with gaps
    of rank 0 between them.
    """
    m = len(targets) - 1
    inner = np.concatenate(([0.0], np.cumsum(targets[1:m])))  # T_2 + ... + T_j
    starts = [-beta * np.abs(ranks - targets[0])]
    ends = []
    for j in range(1, m + 1):
        terms = [
            starts[j - k] + log_choose[k] - beta * (inner[j - 1] - inner[j - k])
            for k in range(1, j + 1)
        ]
        ends.append(np.logaddexp.reduce(terms, axis=0) if j > 1 else terms[0])
        if j < m:
            starts.append(_kernel_sum(ends[-1], ranks, targets[j], beta))
    return starts, ends, inner


def _uniform_below(high, source):
    """A uniform integer of ``[0, high)`` for any Python int ``high >= 1``.

    ``source.integers`` up to ``2**63 - 1``; beyond, words of 62 bits form a
    uniform integer below ``2**(62 w)``, and draws at or above the largest
    multiple of ``high`` below it are rejected (exact; rejection probability
    below 1/2).
    """
    if high < (1 << 62):
        return int(source.integers(high))
    words = -(-high.bit_length() // 62)
    limit = ((1 << (62 * words)) // high) * high
    while True:
        value = 0
        for _ in range(words):
            value = (value << 62) | int(source.integers(1 << 62))
        if value < limit:
            return value % high


def _distinct_offsets(size, k, source):
    """``k`` distinct uniform integers of ``[0, size)``, sorted (exact)."""
    chosen = []
    for i in range(k):
        r = _uniform_below(int(size) - i, source)
        for c in sorted(chosen):  # the r-th integer not yet chosen
            r += c <= r
        chosen.append(r)
    return sorted(chosen)


def joint_quantile_blocks(ranks, sizes, n, levels, epsilon, *, random_state=None):
    """Sample ``m`` increasing states by the joint exponential mechanism.

    The states come in blocks of equal rank
    (:func:`skdp.sensitivity._joint_quantile.rank_blocks`); the output is
    exactly that of :func:`joint_quantile_states` on the expanded states.

    Parameters
    ----------
    ranks : ndarray of shape (n_blocks,)
        Non-decreasing rank of each block's states.
    sizes : ndarray of shape (n_blocks,)
        Number of states in each block (integer-valued, ``>= 1``). Integers
        (int64, or Python ints in an object array, of any size) are used
        exactly to draw the states inside a block; the weights use their
        nearest floats.
    n : int
        The row count (exact).
    levels : ndarray of shape (m,)
        Strictly increasing quantile levels in (0, 1).
    epsilon : float
        ε of the release; the utility has sensitivity 2, so ``β = ε / 4``.
    random_state : None, int, RandomState or RandomSource, default=None
        Source of randomness, see :func:`check_random_source`.

    Returns
    -------
    blocks : ndarray of int64 of shape (m,)
        Block of each output, non-decreasing.
    offsets : ndarray of object of shape (m,)
        State of each output inside its block (Python ints), increasing
        within a block.

    Notes
    -----
    The exponential mechanism over strictly increasing sequences of states,
    probability ``∝ exp(β u)`` with the gap utility ``u``. All states of a
    block have one rank, so the weight of a sequence depends only on its
    blocks and on how many outputs share each: ``k`` outputs in a block of
    ``s`` states can be placed in ``binom(s, k)`` ways, with gaps of rank 0
    between them (error ``T_j`` each). The forward pass sums over the number
    of outputs sharing the last block; the backward pass draws the last
    block, how many outputs it holds, their states (uniform distinct ones:
    every placement has the same weight), then the block before, and so on.
    This is the law of :func:`joint_quantile_states` on the ``Σ sizes``
    states (checked against enumeration in the tests), at a cost that
    depends on the number of blocks, not of states.
    """
    source = check_random_source(random_state)
    ranks = np.asarray(ranks, dtype=np.float64)
    exact_sizes = np.asarray(sizes)
    sizes = exact_sizes.astype(np.float64)
    q = np.concatenate(([0.0], levels, [1.0]))
    targets = np.diff(q) * n
    beta = epsilon / 4.0
    m = len(levels)
    log_choose = _log_choose(sizes, m)
    starts, ends, inner = _forward(ranks, log_choose, targets, beta)
    blocks = np.empty(m, dtype=np.int64)
    offsets = np.empty(m, dtype=object)
    block = sample_log_weights(
        ends[-1] - beta * np.abs(n - ranks - targets[-1]), random_state=source
    )
    j = m  # outputs 1..j are still to place, the j-th in ``block``
    while j > 0:
        shares = [
            starts[j - k][block]
            + log_choose[k][block]
            - beta * (inner[j - 1] - inner[j - k])
            for k in range(1, j + 1)
        ]
        k = 1 + sample_log_weights(np.array(shares), random_state=source)
        blocks[j - k : j] = block
        offsets[j - k : j] = _distinct_offsets(exact_sizes[block], k, source)
        j -= k
        if j > 0:
            gap = ranks[block] - ranks[:block] - targets[j]
            block = sample_log_weights(
                ends[j - 1][:block] - beta * np.abs(gap), random_state=source
            )
    return blocks, offsets


def joint_quantile_states(ranks, n, levels, epsilon, *, random_state=None):
    """Sample ``m`` increasing states by the joint exponential mechanism.

    Parameters
    ----------
    ranks : ndarray of shape (n_states,)
        Non-decreasing ranks of the public states
        (:func:`skdp.sensitivity._joint_quantile.rank_states`).
    n : int
        The row count (exact).
    levels : ndarray of shape (m,)
        Strictly increasing quantile levels in (0, 1).
    epsilon : float
        ε of the release; the utility has sensitivity 2, so ``β = ε / 4``.
    random_state : None, int, RandomState or RandomSource, default=None
        Source of randomness, see :func:`check_random_source`.

    Returns
    -------
    states : ndarray of int64 of shape (m,)
        Strictly increasing state indices.

    Notes
    -----
    The output is drawn with probability ``∝ exp(ε u / (2 Δ))``, ``Δ = 2``,
    over the public set of strictly increasing state sequences (the
    exponential mechanism: ε-DP under add/remove one row for a utility of
    sensitivity Δ, McSherry and Talwar 2007): :func:`joint_quantile_blocks`
    with every state a block of its own. The weights are computed in
    floating point, in log space; as for every sampler in
    :mod:`skdp.mechanisms._quantile_sampling`, the probabilities carry a
    relative rounding error, here of order ``(β n + N log N) 2**-53`` (the
    log-weights reach ``β n``): about ``1e-6`` at ``n = 1e9``, ``ε = 10``.
    """
    ranks = np.asarray(ranks, dtype=np.float64)
    blocks, _ = joint_quantile_blocks(
        ranks, np.ones(ranks.shape), n, levels, epsilon, random_state=random_state
    )
    return blocks
