"""Tables and the reference reader shared by the tests of ``skdp describe``."""

import csv
import gzip
import io
import math

import numpy as np

from skdp._csv import parse_cell


def reference_read(path, columns=None):
    """The reader by its rules, one line at a time: each line (after the
    header; a line ends at ``\\n``, ``\\r\\n`` or a lone ``\\r``, Python's
    universal newlines; bytes that are not UTF-8 as U+FFFD) read by the csv
    module on its own, ``parse_cell`` on every cell, every column of the
    header kept (a byte-order mark is not part of a name)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as handle:
        raw = handle.read()
    # newline=None: io's own universal newlines, every line end read as \n
    text = io.TextIOWrapper(
        io.BytesIO(raw), encoding="utf-8-sig", errors="replace", newline=None
    ).read()
    rows = [next(csv.reader([line]), []) for line in text.split("\n")]
    header = [name.strip() for name in rows[0]]
    rows = [row for row in rows[1:] if row]
    data = {}
    for name in header if columns is None else columns:
        j = header.index(name)
        cells = [parse_cell(r[j]) if j < len(r) else math.nan for r in rows]
        data[name] = np.array(cells, dtype=np.float64)
    return data


def assert_same_columns(got, expected):
    assert list(got) == list(expected)
    for name in expected:
        # bit for bit: the same doubles, NaN in the same places, signed zeros
        np.testing.assert_array_equal(
            got[name].view(np.uint64), expected[name].view(np.uint64), err_msg=name
        )


def write_reference_table(path, n=3000):
    """A deterministic table with every kind of cell (no random generator)."""
    lines = ['id,age,"city, state",income,delta,score']
    odd = ["", "?", "NA", " 7.5 ", "1e3", "-0", "+2.5", ".5", "12345678901234567"]
    for i in range(n):
        age = 18 + (i * 37) % 73
        age = f" {age}" if i % 11 == 0 else str(age)
        city = '"Paris, FR"' if i % 5 == 0 else "Lyon"
        income = "" if i % 29 == 0 else f"{(i * 7919) % 100003 + 0.25 * (i % 4):.2f}"
        delta = f"{((i * 131) % 2001 - 1000) / 8:g}"
        score = odd[i % 9] if i % 13 == 0 else f"{(i % 97) / 3:.6f}"
        row = f"{i},{age},{city},{income},{delta},{score}"
        if i % 401 == 7:
            row = f"{i},{age},{city}"  # a short row: the rest is missing
        lines.append(row)
        if i % 997 == 3:
            lines.append("")  # a blank line is no row
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
