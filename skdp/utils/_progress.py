"""Progress lines of long work (``verbose``), in scikit-learn's style.

Only public things are printed: counts, candidate parameters, timings, the
charged cost (computed from public parameters), and results after they are
released. Never a score or a vote computed from private rows that the
function does not release: those are what the private selection protects.
"""

import time

__all__ = ["Progress", "format_params", "plural"]


def format_params(params):
    """``"C=0.1, penalty='l2'"``: a candidate as scikit-learn prints it."""
    return ", ".join(f"{key}={value!r}" for key, value in sorted(params.items()))


def plural(count, word):
    """``"1 fit"``, ``"3 fits"``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


class Progress:
    """Prints lines prefixed by ``[name]`` when ``verbose >= level``."""

    def __init__(self, name, verbose):
        self.name, self.verbose = name, int(verbose)

    def __call__(self, level, message):
        if self.verbose >= level:
            print(f"[{self.name}] {message}", flush=True)

    def timed(self, level, func, message):
        """Call ``func()``; then print ``message`` and its wall time."""
        start = time.perf_counter()
        result = func()
        self(level, f"{message}; total time={time.perf_counter() - start:.1f}s")
        return result
