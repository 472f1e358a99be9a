"""Progress of long work, in scikit-learn's style: ``verbose`` lines on
stdout (:class:`Progress`) and a meter of the amount read on stderr
(:class:`ProgressMeter`), local to the person running it.

Only public things are printed: counts, candidate parameters, timings, the
charged cost (computed from public parameters), the amount of input read,
and results after they are released. Never a score or a vote computed from
private rows that the function does not release: those are what the
private selection protects.
"""

import sys
import time

__all__ = ["Progress", "ProgressMeter", "format_params", "plural"]


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


class ProgressMeter:
    """Report how far a long task has got, on stderr, at most once a second.

    Parameters
    ----------
    label : str
        What is being done, e.g. ``"skdp describe: reading big.csv"``.
    total : int or None, default=None
        The amount of work (bytes); ``None`` reports the amount done only.
    delay : float, default=0.0
        Seconds of silence before the first line: a task that ends sooner
        prints nothing. ``float('inf')`` never prints.
    interval : float, default=1.0
        Seconds between two lines.
    stream : file-like or None, default=None
        Where to write; ``None`` is ``sys.stderr`` at the time of writing.
    clock : callable, default=time.monotonic
        Seconds; replaced in tests.

    Attributes
    ----------
    shown : bool
        Whether a line was printed.
    """

    def __init__(
        self,
        label,
        total=None,
        *,
        delay=0.0,
        interval=1.0,
        stream=None,
        clock=time.monotonic,
    ):
        self.label = label
        self.total = total
        self.delay = delay
        self.interval = interval
        self.stream = stream
        self.clock = clock
        self.start = clock()
        self.last = None
        self.shown = False

    def update(self, done):
        """Note that ``done`` units are finished; print a line if one is due."""
        now = self.clock()
        if now - self.start < self.delay:
            return
        if self.last is not None and now - self.last < self.interval:
            return
        self._write(done, now, final=False)

    def finish(self, done):
        """Print the closing line, if any line was printed or ``delay`` is 0."""
        if self.shown or self.delay <= 0:
            self._write(done, self.clock(), final=True)

    def _write(self, done, now, *, final):
        stream = sys.stderr if self.stream is None else self.stream
        tty = getattr(stream, "isatty", lambda: False)()
        start = "\r" if tty else ""
        end = "\n" if final or not tty else ""
        stream.write(start + self._line(done, now) + end)
        stream.flush()
        self.last = now
        self.shown = True

    def _line(self, done, now):
        elapsed = f"{now - self.start:.1f} s"
        if not self.total:
            return f"{self.label}: {_megabytes(done)} MB, {elapsed}"
        share = min(done / self.total, 1.0)
        return (
            f"{self.label}: {share:4.0%} ({_megabytes(done)} of "
            f"{_megabytes(self.total)} MB, {elapsed})"
        )


def _megabytes(n_bytes):
    return f"{n_bytes / 1e6:,.1f}"
