"""Streaming, typed reading of a CSV file's columns (``skdp describe``).

**One line, one row, its own cells.** Which columns are read is fixed by
the header and the caller (``columns``), never by the cells, and every row
reaches the output only through its own cells: a cell that is not a finite
number (text, ``NA``, ``inf``, bytes that are not UTF-8) is missing (NaN)
in that row and column only, and a record ends at the end of its line (a
quote left open there closes; a quoted field cannot swallow later lines).
A line ends at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (universal newlines),
in the header as in the rows: with ``\\n`` alone, a file with ``\\r`` line
ends (Excel's "CSV (Macintosh)") would be one header line whose width, the
number of columns, grows with its rows.
These are the per-cell rules that keep the release differentially private
under add/remove of one row: one line can change its own row's cells and
nothing else (the header's width, the other rows, which columns exist).

The file is read in blocks of whole lines and only the wanted columns are
kept, as float64 arrays. A block whose rows all have the header's number of
fields, and whose quotes (if any) are plain quoted fields on one line, is
parsed with numpy (:mod:`skdp._csv_numbers`), exactly: a plain cell gets
the same double as ``float(cell)``. Every other cell of a wanted column
(``1e3``, ``+2``, ``NA``, ``"5"``, long numbers) is read by the :mod:`csv`
module and :func:`parse_cell`, and so is a whole block with ragged rows or
quotes the csv module reads otherwise (a quote inside an unquoted field),
line by line. The values are therefore exactly those of the reference
reader, which applies :func:`parse_cell` to every cell the csv module reads
from each line on its own.
"""

import csv
import gzip
import math
import sys
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from joblib import effective_n_jobs

from skdp._csv_numbers import Workspace, parse_fast_block
from skdp.utils._progress import ProgressMeter

__all__ = ["MISSING", "parse_cell", "read_numeric_csv", "scan_numeric_csv"]

MISSING = frozenset({"", "?", "na", "n/a", "nan", "null", "none"})
#: Bytes per block read from the file; a block's temporaries are about 40
#: times this.
BLOCK_BYTES = 1 << 18


def parse_cell(cell):
    """The value of one cell: ``float(cell)`` if finite, else NaN (missing).

    A per-cell rule that never raises: a missing token (``""``, ``?``,
    ``NA``, ...), text, and numbers that are not finite (``inf``, ``nan``,
    ``1e999``) are all missing, in this cell only.
    """
    cell = cell.strip()
    if cell.lower() in MISSING:
        return math.nan
    try:
        value = float(cell)
    except ValueError:
        return math.nan
    return value if math.isfinite(value) else math.nan


class _Column:
    """A float64 column that grows in place: no per-block arrays to join."""

    def __init__(self, blocks_hint):
        self.blocks_hint = blocks_hint
        self.data = np.empty(0)
        self.size = 0

    def extend(self, n):
        """A view of the next ``n`` values, to be filled by the caller."""
        end = self.size + n
        if end > self.data.size:
            if self.size == 0:  # the first block: room for the whole file
                capacity = max(end, int(n * self.blocks_hint * 1.05) + 1024)
            else:
                capacity = max(end, int(self.data.size * 1.5))
            grown = np.empty(capacity)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        view = self.data[self.size : end]
        self.size = end
        return view

    def array(self):
        return self.data[: self.size]


class _Columns:
    """The wanted columns, block by block (the header fixes which).

    ``blocks_hint`` is about how many blocks the file has: the first block
    reserves room for that many like it.
    """

    def __init__(self, header, wanted, blocks_hint=64):
        self.n_fields = len(header)
        self.index = {name: header.index(name) for name in wanted}
        self.columns = {name: _Column(blocks_hint) for name in wanted}

    def arrays(self):
        """One float64 array per wanted column."""
        return {name: column.array() for name, column in self.columns.items()}


def _open_binary(path):
    """``(stream, raw)``: the decompressed byte stream and the file under it,
    whose position is the progress."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(
            f"{path} is a directory; give the path of a CSV file (.csv or .csv.gz)."
        )
    if not path.is_file():
        raise FileNotFoundError(f"No such file: {path}")
    raw = open(path, "rb")
    if path.suffix == ".gz":
        return gzip.GzipFile(fileobj=raw), raw
    return raw, raw


def _newlines_as_lf(data):
    """``\\r\\n`` and a lone ``\\r`` as ``\\n``: every line end is one byte.

    A carriage return is never part of a UTF-8 sequence, so this is safe on
    bytes that are not decoded yet.
    """
    if b"\r" not in data:  # memchr: most files have none
        return data
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def _blocks(stream, size):
    """Blocks of whole lines, each ending at a ``\\n``: a record is a line.

    A line ends at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (universal
    newlines, as Python's text files read them; Excel's "CSV (Macintosh)"
    has ``\\r`` only), and every line end becomes ``\\n``: no block holds a
    ``\\r``. A ``\\r`` at the end of a read waits for the next byte, which
    tells whether it is the first half of ``\\r\\n``.
    """
    carry = b""
    held_cr = False
    while data := stream.read(size):
        if held_cr:
            data = b"\r" + data
        held_cr = data.endswith(b"\r")
        data = carry + _newlines_as_lf(data[:-1] if held_cr else data)
        cut = data.rfind(b"\n") + 1
        carry = data[cut:]
        if cut:
            yield data[:cut]
    if carry or held_cr:  # the file's last line, ended by its end
        yield carry + b"\n"


def _read_header(blocks, path):
    """The header (the first line's stripped names) and the rest of the
    first block."""
    first = b""
    for block in blocks:
        first += block
        end = first.find(b"\n") + 1
        if end:
            break
    else:
        if not first.strip():
            raise ValueError(f"{path} is empty: no header row.")
        end = len(first)
    try:
        text = first[:end].decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"The header of {path} is not UTF-8 text: {exc}.") from None
    header = _fields(text.rstrip("\n"))
    if not header:
        raise ValueError(f"{path} is empty: no header row.")
    return [name.strip() for name in header], first[end:]


def _fields(line):
    """The csv module's fields of one line (``str``, its newline removed;
    it holds no carriage return, see :func:`_blocks`).

    A quote left open closes at the end of the line. ``[]`` for an empty
    line, and for a line the csv module cannot read. Without a quote the
    csv module's reading is the split at commas, done here directly.
    """
    if '"' not in line:
        return line.split(",") if line else []
    try:
        return next(csv.reader([line]), [])
    except csv.Error:  # only past the (lifted) field size limit
        return []


def _store_parsed(parsed, columns):
    """Store a parsed block's wanted columns, irregular cells read one by one."""
    n_fields = columns.n_fields
    for name, j in columns.index.items():
        column = columns.columns[name].extend(parsed.values.shape[0])
        column[:] = parsed.values[:, j]
        for row in np.flatnonzero(parsed.irregular[:, j]):
            k = row * n_fields + j
            start = parsed.ends[k - 1] + 1 if k else 0
            cell = parsed.block[start : parsed.ends[k]].decode("utf-8", "replace")
            if '"' in cell:  # one quoted field, no newline: the csv reading
                cell = (_fields(cell) or [""])[0]
            column[row] = parse_cell(cell)


def _lines(block):
    """The lines of a block, each without its ``\\n``; bytes that are not
    UTF-8 become U+FFFD (never a separator or a quote)."""
    lines = block.decode("utf-8", "replace").split("\n")
    if lines and not lines[-1]:
        lines.pop()
    return lines


def _add_csv_block(block, columns):
    """Parse a block with the :mod:`csv` module, line by line, cell by cell."""
    rows = [row for row in map(_fields, _lines(block)) if row]
    for name, j in columns.index.items():
        column = [parse_cell(row[j]) if j < len(row) else math.nan for row in rows]
        columns.columns[name].extend(len(column))[:] = column


@contextmanager
def _no_field_size_limit():
    """Lift the csv module's field size limit (128 KiB) while reading.

    Past it the csv module raises: one long cell would stop the reading, a
    refusal decided by one row. The limit is the module's, for the whole
    process; it is restored afterwards.
    """
    limit = csv.field_size_limit()
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    try:
        yield
    finally:
        csv.field_size_limit(limit)


def _parsed_blocks(blocks, n_fields, n_jobs):
    """``(block, parsed)`` in file order, parsed in ``n_jobs`` threads (numpy
    releases the GIL); parsed is None for a block left to the csv module."""
    if n_jobs == 1:
        work = Workspace()
        for block in blocks:
            yield block, parse_fast_block(block, n_fields, work)
        return
    local = threading.local()

    def parse(block):
        if not hasattr(local, "work"):
            local.work = Workspace()
        return parse_fast_block(block, n_fields, local.work)

    with ThreadPoolExecutor(n_jobs) as pool:
        pending = deque()
        for block in blocks:
            pending.append((block, pool.submit(parse, block)))
            if len(pending) > 2 * n_jobs:  # a few blocks ahead, no more
                block, parsed = pending.popleft()
                yield block, parsed.result()
        while pending:
            block, parsed = pending.popleft()
            yield block, parsed.result()


def scan_numeric_csv(
    path, columns=None, *, progress=None, block_bytes=BLOCK_BYTES, n_jobs=None
):
    """Read columns of a CSV file as numbers, streaming, by a per-cell rule.

    Parameters
    ----------
    path : str or path-like
        The CSV file (``.gz`` too), with a header row (its first line).
    columns : list of str or None, default=None
        Columns to read, by their names in the header; ``None`` reads every
        column of the header. Only these columns are kept in memory.
    progress : ProgressMeter or None, default=None
        Told the bytes of the file read so far after every block (its
        ``total`` should be the file's size).
    block_bytes : int, default=BLOCK_BYTES
        Bytes read at a time.
    n_jobs : int or None, default=None
        Threads parsing blocks (``None``: 1, ``-1``: all processors); the
        blocks are stored in file order, so the result is the same.

    Returns
    -------
    data : dict of str to ndarray
        Column name to float values in file order, one per line after the
        header; NaN where the cell is missing or is not a finite number
        (:func:`parse_cell`), and where the line is short. A line without
        any value (blank, or spaces) may be left out instead of giving a
        row of NaN: no statistic tells the two apart.

    Notes
    -----
    The columns returned are a function of the header and ``columns``
    alone, and each line gives its own cells to one row and nothing else
    (see the module's docstring): the input of a private release may not
    be shaped by its cells. The only errors are a missing file, no header,
    a header that is not UTF-8, and names of ``columns`` not in the header.
    """
    stream, raw = _open_binary(path)
    with stream, raw, _no_field_size_limit():
        raw_size = Path(path).stat().st_size
        blocks = _blocks(stream, block_bytes)
        header, rest = _read_header(blocks, path)
        if columns is not None:
            unknown = [c for c in columns if c not in header]
            if unknown:
                raise ValueError(f"Columns not in {path}: {unknown}; it has {header}.")
        wanted = list(dict.fromkeys(header if columns is None else columns))
        gzipped = stream is not raw
        table = _Columns(
            header, wanted, blocks_hint=64 if gzipped else raw_size / block_bytes
        )
        parsed_blocks = _parsed_blocks(
            _chain(rest, blocks), len(header), effective_n_jobs(n_jobs)
        )
        for block, parsed in parsed_blocks:
            if parsed is None:
                _add_csv_block(block, table)
            else:
                _store_parsed(parsed, table)
            if progress is not None:
                progress.update(raw.tell())
    if progress is not None:
        progress.finish(raw_size)
    return table.arrays()


def _chain(first, blocks):
    if first:
        yield first
    yield from blocks


def read_numeric_csv(path, columns=None, *, verbose=0):
    """Read columns of a CSV file (``.gz`` too) as numbers, without pandas.

    Every cell is read on its own: a cell that is not a finite number
    (empty, ``?``, ``NA``, ``NaN``, ``null``, text, ``inf``) becomes NaN, in
    its row only. Which columns are read is decided by the header and
    ``columns``, never by the cells (see :func:`scan_numeric_csv`). The
    file is read in blocks and only the wanted columns are kept, 8 bytes per
    cell.

    Parameters
    ----------
    path : str or path-like
        The CSV file, with a header row.
    columns : list of str or None, default=None
        Columns to read, by name; ``None`` reads every column of the header.
    verbose : int, default=0
        Above 0, report the bytes read on stderr once a second.

    Returns
    -------
    data : dict of str to ndarray
        Column name to float values (NaN where missing), in file order.
    """
    progress = None
    if verbose > 0:
        size = Path(path).stat().st_size if Path(path).is_file() else None
        progress = ProgressMeter(f"reading {Path(path).name}", size)
    return scan_numeric_csv(path, columns, progress=progress)
