"""Streaming, typed reading of a CSV file's numeric columns (``skdp describe``).

The file is read in blocks of whole records and only the wanted columns are
kept, as float64 arrays. A block whose rows all have the header's number of
fields, and whose quotes (if any) are plain quoted fields, is parsed with
numpy (:mod:`skdp._csv_numbers`), exactly: a plain cell gets the same double
as ``float(cell)``. Every other cell of a wanted column (``1e3``, ``+2``,
``NA``, ``"5"``, long numbers) is read by the :mod:`csv` module and
:func:`parse_cell`, and so is a whole block with ragged rows or quotes the
csv module reads otherwise (a quote inside an unquoted field). The values
are therefore exactly those of the reference reader, which applied
:func:`parse_cell` to every cell the csv module read.
"""

import csv
import gzip
import io
import math
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
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
    """The value of one cell: NaN for a missing token, else ``float``.

    Raises ``ValueError`` when the cell is neither (the column is then not
    numeric).
    """
    cell = cell.strip()
    if cell.lower() in MISSING:
        return math.nan
    return float(cell)


class NotNumericError(ValueError):
    """A column that was asked for by name has a cell that is not a number."""


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
    """The wanted columns, block by block; drops a column that turns out
    not to be numeric (or raises, for a column asked for by name).

    ``blocks_hint`` is about how many blocks the file has: the first block
    reserves room for that many like it.
    """

    def __init__(self, header, wanted, explicit, blocks_hint=64):
        self.n_fields = len(header)
        self.index = {name: header.index(name) for name in wanted}
        self.explicit = explicit
        self.columns = {name: _Column(blocks_hint) for name in wanted}
        self.not_numeric = []

    def reject(self, name):
        if self.explicit:
            raise NotNumericError(f"Column {name!r} is not numeric.")
        del self.index[name], self.columns[name]
        self.not_numeric.append(name)

    def arrays(self):
        """One float64 array per numeric column."""
        return {name: column.array() for name, column in self.columns.items()}


def _open_binary(path):
    """``(stream, raw)``: the decompressed byte stream and the file under it,
    whose position is the progress."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No such file: {path}")
    raw = open(path, "rb")
    if path.suffix == ".gz":
        return gzip.GzipFile(fileobj=raw), raw
    return raw, raw


def _record_end(data, start=0):
    """Index after the first newline that ends a record (quotes balanced)."""
    end = data.find(b"\n", start)
    while end >= 0 and data.count(b'"', 0, end) % 2:
        end = data.find(b"\n", end + 1)
    return end + 1 if end >= 0 else 0


def _blocks(stream, size):
    """Blocks of whole records: ends at a newline outside quotes."""
    carry = b""
    while data := stream.read(size):
        data = carry + data
        cut = data.rfind(b"\n") + 1
        if cut and data.count(b'"', 0, cut) % 2:  # a quoted field spans the cut
            cut = 0
        if cut == 0:
            carry = data
            continue
        carry = data[cut:]
        yield data[:cut]
    if carry:
        yield carry + b"\n"


def _read_header(blocks, path):
    """The header (stripped names) and the rest of the first block."""
    first = b""
    for block in blocks:
        first += block
        end = _record_end(first)
        if end:
            break
    else:
        if not first.strip():
            raise ValueError(f"{path} is empty: no header row.")
        end = len(first)
    text = first[:end].decode("utf-8-sig")
    header = next(csv.reader(io.StringIO(text)), None)
    if not header:
        raise ValueError(f"{path} is empty: no header row.")
    return [name.strip() for name in header], first[end:]


def _store_parsed(parsed, columns):
    """Store a parsed block's wanted columns, irregular cells read one by one."""
    n_fields = columns.n_fields
    for name, j in list(columns.index.items()):
        column = columns.columns[name].extend(parsed.values.shape[0])
        column[:] = parsed.values[:, j]
        for row in np.flatnonzero(parsed.irregular[:, j]):
            k = row * n_fields + j
            start = parsed.ends[k - 1] + 1 if k else 0
            cell = parsed.block[start : parsed.ends[k]].decode("utf-8")
            if '"' in cell:  # one quoted field, no newline: the csv reading
                cell = next(csv.reader([cell]))[0]
            try:
                column[row] = parse_cell(cell)
            except ValueError:
                columns.reject(name)
                break


def _add_csv_block(block, columns):
    """Parse a block with the :mod:`csv` module, cell by cell."""
    rows = [
        row for row in csv.reader(io.StringIO(block.decode("utf-8"), newline="")) if row
    ]
    for name, j in list(columns.index.items()):
        try:
            column = [parse_cell(row[j]) if j < len(row) else math.nan for row in rows]
        except ValueError:
            columns.reject(name)
            continue
        columns.columns[name].extend(len(column))[:] = column


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
    """Read the numeric columns of a CSV file, streaming, with their schema.

    Parameters
    ----------
    path : str or path-like
        The CSV file (``.gz`` too), with a header row.
    columns : list of str or None, default=None
        Columns to read (each must be numeric); ``None`` reads every numeric
        column. Only these columns are kept in memory.
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
        Column name to float values (NaN where missing), in file order.
    not_numeric : list of str
        Columns left out because a cell is not a number (``columns=None``).
    """
    stream, raw = _open_binary(path)
    with stream, raw:
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
            header,
            wanted,
            explicit=columns is not None,
            blocks_hint=64 if gzipped else raw_size / block_bytes,
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
            if not table.index:  # nothing numeric left: the error below
                parsed_blocks.close()
                break
    if progress is not None:
        progress.finish(raw_size)
    data = table.arrays()
    if not data:
        raise ValueError(f"{path} has no numeric columns (columns: {header}).")
    return data, table.not_numeric


def _chain(first, blocks):
    if first:
        yield first
    yield from blocks


def read_numeric_csv(path, columns=None, *, verbose=0):
    """Read the numeric columns of a CSV file (``.gz`` too) without pandas.

    A column is numeric when every non-missing cell parses as a number;
    missing cells (empty, ``?``, ``NA``, ``NaN``, ``null``) become NaN. Which
    columns are numeric is the file's *schema*, treated as public; pass
    ``columns`` to fix it in advance. The file is read in blocks and only
    the wanted columns are kept, 8 bytes per cell.

    Parameters
    ----------
    path : str or path-like
        The CSV file, with a header row.
    columns : list of str or None, default=None
        Columns to read (each must be numeric); ``None`` reads every numeric
        column.
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
    return scan_numeric_csv(path, columns, progress=progress)[0]
