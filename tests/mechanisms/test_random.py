"""Tests for skdp.mechanisms._random: sources, reproducibility, distributions."""

import os
import pickle

import numpy as np
import pytest
from scipy import stats

from skdp.mechanisms import RandomSource, check_random_source
from skdp.mechanisms._random import SeededRandomSource, SystemRandomSource

ALPHA = 1e-7  # per test; ~200 draws-based tests must not flake in CI
N = 100_000


@pytest.fixture(params=["secure", "seeded"])
def source(request):
    return check_random_source(None if request.param == "secure" else 12345)


def test_none_gives_secure_source():
    source = check_random_source(None)
    assert isinstance(source, SystemRandomSource)
    assert source.is_secure


def test_seeded_sources_are_not_secure_and_reproducible():
    a, b = check_random_source(7), check_random_source(7)
    assert not a.is_secure
    np.testing.assert_array_equal(a.uint64(10), b.uint64(10))
    np.testing.assert_array_equal(a.integers(1000, 10), b.integers(1000, 10))
    assert not np.array_equal(check_random_source(8).uint64(10), a.uint64(10))


def test_random_state_instance_is_reproducible():
    a = check_random_source(np.random.RandomState(3))
    b = check_random_source(np.random.RandomState(3))
    assert isinstance(a, SeededRandomSource)
    np.testing.assert_array_equal(a.random(5), b.random(5))


def test_secure_source_is_not_reproducible():
    assert not np.array_equal(
        check_random_source(None).uint64(4), check_random_source(None).uint64(4)
    )


def test_source_passes_through():
    source = check_random_source(0)
    assert check_random_source(source) is source
    secure = check_random_source(None)
    assert check_random_source(secure) is secure
    assert isinstance(secure, RandomSource)


@pytest.mark.parametrize(
    "bad", [np.random.default_rng(0), "seed", 1.5, True, -1, [1, 2], object()]
)
def test_bad_random_state_rejected(bad):
    with pytest.raises(ValueError, match="random_state"):
        check_random_source(bad)


def test_generator_message_says_why():
    with pytest.raises(ValueError, match="Generator is not accepted"):
        check_random_source(np.random.default_rng(0))


def test_shapes_and_dtypes(source):
    assert source.uint64((2, 3)).dtype == np.uint64
    assert source.uint32(5).shape == (5,)
    assert source.uint8((4, 2)).dtype == np.uint8
    assert source.uint64().shape == ()
    assert source.random(3).dtype == np.float64
    assert source.integers(5, size=(2, 2)).dtype == np.int64
    assert source.random_bits(13).shape == (13,)
    assert source.integers(np.array([3, 10**12])).shape == (2,)


def test_bytes_are_uniform(source):
    counts = np.bincount(source.uint8(256 * 400), minlength=256)
    assert stats.chisquare(counts).pvalue > ALPHA


def test_bits_are_uniform_per_position(source):
    words = source.uint64(20_000)
    bits = (words[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)
    ones = bits.sum(axis=0).astype(float)
    chi2 = ((ones - 10_000) ** 2 / 5_000).sum()  # 64 binomial(20000, 1/2) cells
    assert stats.chi2.sf(chi2, 64) > ALPHA
    flips = source.random_bits(N)
    assert stats.binomtest(int(flips.sum()), N).pvalue > ALPHA


def test_random_is_uniform_on_53_bit_grid(source):
    u = source.random(N)
    assert u.min() >= 0.0 and u.max() < 1.0
    np.testing.assert_array_equal(u * 2.0**53, np.floor(u * 2.0**53))
    assert stats.kstest(u, "uniform").pvalue > ALPHA


def _bin_counts_expected(high, n_bins):
    edges = [-(-j * high // n_bins) for j in range(n_bins + 1)]  # ceil(j*h/b)
    return np.array(edges), np.diff(edges) / high


@pytest.mark.parametrize("high", [1, 2, 7, 1000, 2**32, 2**32 + 1, 3 * 2**40 + 5])
def test_integers_uniform(source, high):
    x = source.integers(high, size=N)
    assert x.min() >= 0 and x.max() < high
    if high == 1:
        return
    n_bins = min(high, 20)
    edges, probs = _bin_counts_expected(high, n_bins)
    counts = np.histogram(x, bins=edges)[0]  # last bin closed at high - 1 ... high
    assert stats.chisquare(counts, probs * N).pvalue > ALPHA


def test_integers_array_high(source):
    high = np.array([1, 2, 3, 2**33 + 1, 2**62] * 20_000)
    x = source.integers(high)
    assert np.all((x >= 0) & (x < high))
    ratio = x[high == 2**62] / 2.0**62
    assert stats.kstest(ratio, "uniform").pvalue > ALPHA


@pytest.mark.parametrize("bad", [0, -3, 2**63, 1.5])
def test_integers_bad_high(bad):
    with pytest.raises((ValueError, OverflowError)):
        check_random_source(0).integers(bad, size=3)


def test_bernoulli_frequency(source):
    x = source.bernoulli(1, 3, size=N)
    assert stats.binomtest(int(x.sum()), N, 1 / 3).pvalue > ALPHA
    with pytest.raises(ValueError):
        source.bernoulli(4, 3)


def test_exponential_ks(source):
    x = source.exponential(2.0, N)
    assert np.all(np.isfinite(x)) and x.min() >= 0
    assert stats.kstest(x, stats.expon(scale=2.0).cdf).pvalue > ALPHA


def test_gumbel_ks(source):
    x = source.gumbel(0.5, N)
    assert np.all(np.isfinite(x))
    assert stats.kstest(x, stats.gumbel_r(scale=0.5).cdf).pvalue > ALPHA


def test_secure_buffer_not_shared_after_fork_or_pickle():
    source = check_random_source(None)
    source.uint32(10)
    old_buffer = source._buf
    source._pid = -1  # as if this object had been inherited by a forked child
    source.uint32(10)
    assert source._pid == os.getpid()
    assert source._buf is not old_buffer
    clone = pickle.loads(pickle.dumps(source))
    assert clone.is_secure and clone._buf == b""
    assert clone.uint64(3).shape == (3,)


def test_large_secure_request_bypasses_buffer():
    source = check_random_source(None)
    words = source.uint64(1 << 16)  # 512 KiB, above the buffer size
    assert words.shape == (1 << 16,)
    assert len(np.unique(words)) == words.size


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")
def test_forked_child_never_reuses_buffered_bytes():
    source = check_random_source(None)
    source.uint8(16)  # fill the buffer in the parent
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report the next bytes, then exit at once
        os.write(write, source.uint8(64).tobytes())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 64)
    parent = source.uint8(64).tobytes()
    assert child != parent


def test_the_secure_source_is_shared_and_threads_never_get_the_same_bytes():
    # one buffer per process (a fit no longer pays for a fresh 256 KiB read);
    # its lock hands every byte out once, whatever the thread
    import threading

    assert check_random_source(None) is check_random_source(None)
    words, lock = [], threading.Lock()

    def draw():
        mine = check_random_source(None).uint64(5_000)
        with lock:
            words.append(mine)

    threads = [threading.Thread(target=draw) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    drawn = np.concatenate(words)
    assert len(np.unique(drawn)) == drawn.size == 20_000
