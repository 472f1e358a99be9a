"""Progress lines on stderr for long work, in the spirit of scikit-learn's
``verbose``: local to the person running it, never part of a release."""

import sys
import time

__all__ = ["Progress"]


class Progress:
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
