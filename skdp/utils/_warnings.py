"""Warnings attributed to the user's line, not to skdp's or scikit-learn's."""

import os
import sys
import warnings

import joblib
import sklearn

import skdp

__all__ = ["warn_at_caller"]

_LIBRARY_DIRS = tuple(
    os.path.dirname(os.path.abspath(module.__file__)) + os.sep
    # joblib: meta-estimators run their fits through it (in the caller's
    # thread when n_jobs=1)
    for module in (skdp, sklearn, joblib)
)


def _caller_stacklevel():
    """The ``stacklevel`` of the first frame outside skdp, scikit-learn, joblib."""
    frame, level = sys._getframe(2), 2  # 1: warn_at_caller, 2: its caller
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
        _LIBRARY_DIRS
    ):
        frame, level = frame.f_back, level + 1
    return level


def warn_at_caller(message, category):
    """``warnings.warn`` pointing at the user's call (through decorators,
    pipelines and meta-estimators), so the warning names their line."""
    warnings.warn(message, category, stacklevel=_caller_stacklevel())
