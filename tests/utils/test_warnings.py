"""Where skdp's warnings point: the user's line, or skdp's own in a worker thread."""

import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from joblib import Parallel, delayed

import skdp
from skdp.ensemble._n_blocks import warn_if_noise_dominated

SKDP_DIR = str(Path(skdp.__file__).parent)


def _warn():
    warn_if_noise_dominated(ratio=10.0, n_blocks=2, what="a test")


def _caught(run):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    assert len(caught) == 1
    return caught[0]


def test_a_call_from_the_users_code_points_at_it():
    assert _caught(_warn).filename == __file__


def test_a_library_call_in_a_pool_thread_points_at_skdp_not_threading():
    def run():
        with ThreadPoolExecutor(1) as pool:
            # the thread's stack: concurrent.futures -> threading -> skdp
            pool.submit(warn_if_noise_dominated, 10.0, 2, "a test").result()

    warning = _caught(run)
    assert warning.filename.startswith(SKDP_DIR), warning.filename
    assert "noise-dominated" in str(warning.message)


def test_joblib_threads_point_at_skdp_not_threading():
    def run():
        Parallel(n_jobs=2, prefer="threads")(
            delayed(warn_if_noise_dominated)(10.0, 2, "a test") for _ in range(1)
        )

    assert _caught(run).filename.startswith(SKDP_DIR)
