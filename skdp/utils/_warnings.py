"""Warnings attributed to the user's line, not to skdp's or scikit-learn's."""

import os
import sys
import sysconfig
import warnings
from contextlib import contextmanager

import joblib
import numpy as np
import sklearn

import skdp

__all__ = ["silenced", "warn_at_caller"]


def _module_dir(module):
    return os.path.dirname(os.path.abspath(module.__file__)) + os.sep


_LIBRARY_DIRS = tuple(
    # joblib: meta-estimators run their fits through it (in the caller's
    # thread when n_jobs=1)
    _module_dir(module)
    for module in (skdp, sklearn, joblib)
)


def _dir(path):
    return os.path.abspath(path) + os.sep


_PATHS = sysconfig.get_paths()
_STDLIB_DIR = _dir(_PATHS["stdlib"])
_SITE_DIRS = (_dir(_PATHS["purelib"]), _dir(_PATHS["platlib"]))


def _path(frame):
    return os.path.abspath(frame.f_code.co_filename)


def _is_library(frame):
    return _path(frame).startswith(_LIBRARY_DIRS)


def _is_standard_library(frame):
    """Python's own modules (threading, multiprocessing.pool, ...), which run
    worker threads: never the user's line."""
    path = _path(frame)
    return path.startswith(_STDLIB_DIR) and not path.startswith(_SITE_DIRS)


def _caller_stacklevel():
    """The ``stacklevel`` of the first frame outside skdp, scikit-learn, joblib
    and Python's standard library.

    In a worker thread (joblib's threading backend, a thread pool) the stack
    may hold no user frame at all: it starts in :mod:`threading` or
    :mod:`multiprocessing.pool`. The warning then points at skdp's line that
    raised it, which names the cause, instead of at the thread machinery.
    """
    frame, level = sys._getframe(2), 2  # 1: warn_at_caller, 2: its caller
    while frame is not None and (_is_library(frame) or _is_standard_library(frame)):
        frame, level = frame.f_back, level + 1
    return 2 if frame is None else level


def warn_at_caller(message, category):
    """``warnings.warn`` pointing at the user's call (through decorators,
    pipelines and meta-estimators), so the warning names their line."""
    warnings.warn(message, category, stacklevel=_caller_stacklevel())


@contextmanager
def silenced():
    """Silence warnings and floating-point errors of the work after a charge.

    Whether a block fit warns (``ConvergenceWarning``, overflow) depends on
    its rows, so a warning shown or raised (``-W error``) after the charge
    would leak one bit. Every worker enters this context (warning filters
    and numpy's error state are per process, and numpy's per thread), and so
    does the caller around the whole parallel run, so threads that restore
    their filters in any order never show a warning. Nothing is recorded or
    counted: a count of failed blocks would itself be private.
    """
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield
