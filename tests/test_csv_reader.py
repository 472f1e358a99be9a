"""The streaming CSV reader of ``skdp describe`` reads what the reference
reader reads (each line on its own, each cell on its own), cell for cell and
bit for bit, in every block layout."""

import gzip
import io
import math

import numpy as np
import pytest
from _csv_tables import assert_same_columns, reference_read, write_reference_table

from skdp._csv import read_numeric_csv, scan_numeric_csv
from skdp.utils._progress import ProgressMeter


@pytest.mark.parametrize("n_jobs", [None, 2])
@pytest.mark.parametrize("block_bytes", [7, 64, 1000, 1 << 18])
def test_reference_table_read_as_before_in_any_block_layout(
    tmp_path, block_bytes, n_jobs
):
    path = write_reference_table(tmp_path / "t.csv")
    data = scan_numeric_csv(path, block_bytes=block_bytes, n_jobs=n_jobs)
    assert_same_columns(data, reference_read(path))
    # a column of text is read like any other: every cell is missing
    assert np.isnan(data["city, state"]).all()
    assert data["score"][13] == 1000.0 and math.copysign(1, data["score"][104]) < 0


# Cells that exercise every branch: plain numbers of every shape, the ones
# left to ``float`` (exponents, signs, underscores, long digits, spaces),
# missing tokens, and text (a missing cell, in its row only).
TOKENS = [
    "0", "7", "-3", "42", "-0", "0.0", "-0.5", "3.25", "1.", ".5", "-.5",
    "123456789012345", "-12345678901234.5", "0.000000000000001",
    "1234567890123456", "9007199254740993", "0.1234567890123456789",
    "1e3", "-2.5E-3", "+4", "1_000", " 8 ", "inf", "nan", "", "?", "NA",
    "null", "None", "n/a",
]  # fmt: skip
TEXT = ["abc", "1.2.3", "-", ".", "5-", "--5", "1,5"]


def random_table(rng, n_rows, n_columns, *, text_share=0.0, newline="\n"):
    header = [f"c{j}" for j in range(n_columns)]
    lines = [",".join(header)]
    pool = TOKENS + [f"{x:.{d}f}" for x, d in zip(
        rng.normal(0, 1e4, 40), rng.integers(0, 9, 40), strict=True
    )]  # fmt: skip
    for _ in range(n_rows):
        cells = [str(rng.choice(pool)) for _ in range(n_columns)]
        if rng.random() < text_share:
            cells[rng.integers(n_columns)] = str(rng.choice(TEXT))
        cells = [f'"{c}"' if "," in c else c for c in cells]
        lines.append(",".join(cells))
    return newline.join(lines) + newline


@pytest.mark.parametrize("seed", range(12))
def test_random_cells_read_as_before(tmp_path, seed):
    rng = np.random.default_rng(seed)
    text = random_table(
        rng,
        int(rng.integers(1, 400)),
        int(rng.integers(1, 6)),
        text_share=float(rng.choice([0.0, 0.002, 0.05])),
        newline=["\n", "\r\n", "\r"][seed % 3],
    )
    path = tmp_path / "r.csv"
    path.write_bytes(text.encode())
    expected = reference_read(path)
    for block_bytes, n_jobs in ((16, None), (333, 2), (1 << 18, None)):
        got = scan_numeric_csv(path, block_bytes=block_bytes, n_jobs=n_jobs)
        assert_same_columns(got, expected)


@pytest.mark.parametrize("seed", range(4))
def test_decimals_are_correctly_rounded(tmp_path, seed):
    rng = np.random.default_rng(seed)
    digits = rng.integers(1, 16, 20_000)
    cells = [
        f"{'-' if rng.random() < 0.5 else ''}{rng.integers(10**d)}"
        + (f".{rng.integers(10**5):05d}" if d < 11 and rng.random() < 0.7 else "")
        for d in digits
    ]
    path = tmp_path / "d.csv"
    path.write_text("x\n" + "\n".join(cells) + "\n")
    got = read_numeric_csv(path)["x"]
    np.testing.assert_array_equal(got, [float(c) for c in cells])


def test_gzip_crlf_bom_and_no_final_newline(tmp_path):
    text = "\ufeffa,b\r\n1,x\r\n-2.5,y\r\n\r\n3,z"
    path = tmp_path / "t.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8", newline="") as handle:
        handle.write(text)
    data = scan_numeric_csv(path)
    np.testing.assert_array_equal(data["a"], [1.0, -2.5, 3.0])
    assert list(data) == ["a", "b"] and np.isnan(data["b"]).all()


LINE_ENDS = {"cr": ["\r"], "crlf": ["\r\n"], "mixed": ["\r", "\n", "\r\n"]}


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("kind", list(LINE_ENDS))
def test_every_line_end_ends_a_line(tmp_path, kind, gzipped):
    # main read a file with \r-only line ends (Excel's "CSV (Macintosh)")
    # up to its first \n: the whole file was its header, every cell a column
    # name. A line ends at \n, \r\n or a lone \r, in every block layout
    # (block_bytes=1 splits every \r\n between two reads)
    lines = ["age,income", "25,50000", '"37",62000', "", "41, 5.8e4", "x,-1"]
    ends = LINE_ENDS[kind] * len(lines)
    text = "".join(line + end for line, end in zip(lines, ends, strict=False))
    path = tmp_path / ("t.csv.gz" if gzipped else "t.csv")
    with (gzip.open if gzipped else open)(path, "wb") as handle:
        handle.write(text.encode())
    expected = {
        "age": np.array([25.0, 37.0, 41.0, np.nan]),
        "income": np.array([50000.0, 62000.0, 58000.0, -1.0]),
    }
    assert_same_columns(reference_read(path), expected)
    for block_bytes, n_jobs in ((1, None), (2, 2), (3, None), (7, 2), (1 << 18, 1)):
        got = scan_numeric_csv(path, block_bytes=block_bytes, n_jobs=n_jobs)
        assert_same_columns(got, expected)


def test_a_lone_carriage_return_ends_a_line_even_within_quotes(tmp_path):
    # as a quoted \n does: one line, one row, whatever the quotes
    path = tmp_path / "q.csv"
    path.write_bytes(b'a,b\r\n1,"x\ry"\r\n2,3\n"4\r5",6\r')
    expected = {
        "a": np.array([1.0, np.nan, 2.0, 4.0, np.nan]),
        "b": np.array([np.nan, np.nan, 3.0, np.nan, 6.0]),
    }
    assert_same_columns(reference_read(path), expected)
    for block_bytes in (1, 4, 1 << 18):
        assert_same_columns(scan_numeric_csv(path, block_bytes=block_bytes), expected)


def test_a_quoted_newline_ends_the_record(tmp_path):
    # one line, one row: a quoted field does not run on to the next line
    # (main read RFC 4180 records, so that one quote left open swallowed
    # every later row); here each record's second line is a row of its own
    rows = [f'{i},"line one\nline, two ""{i}""",{i / 4}' for i in range(300)]
    path = tmp_path / "q.csv"
    path.write_text("n,note,x\n" + "\n".join(rows) + "\n")
    for block_bytes in (5, 50, 1 << 18):
        data = scan_numeric_csv(path, block_bytes=block_bytes)
        assert_same_columns(data, reference_read(path))
        np.testing.assert_array_equal(data["n"][0::2], np.arange(300))
        assert np.isnan(data["x"][0::2]).all() and np.isnan(data["n"][1::2]).all()
        np.testing.assert_array_equal(data["x"][1::2], np.arange(300) / 4)


def test_only_the_wanted_columns_are_kept(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("a,b,c\n" + "".join(f"{i},t{i},{i * 2}\n" for i in range(50)))
    data = scan_numeric_csv(path, ["c"])
    assert list(data) == ["c"]
    np.testing.assert_array_equal(data["c"], np.arange(50) * 2.0)
    data = scan_numeric_csv(path, ["c", "b"])  # main: 'b' is not numeric
    assert list(data) == ["c", "b"] and np.isnan(data["b"]).all()


@pytest.mark.parametrize(
    "text, match",
    [("", "empty"), ("\n\n", "empty"), (b"\xff,a\n1,2\n", "not UTF-8")],
)
def test_read_errors(tmp_path, text, match):
    path = tmp_path / "e.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ValueError, match=match):
        scan_numeric_csv(path)


def test_text_only_file_reads_every_column_as_missing(tmp_path):
    # main: "has no numeric columns", an error that the cells decided
    path = tmp_path / "t.csv"
    path.write_text("a\nx\n")
    data = scan_numeric_csv(path)
    assert list(data) == ["a"] and np.isnan(data["a"]).all()


def test_header_only_gives_empty_columns(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("a,b\n")
    data = read_numeric_csv(path)
    assert list(data) == ["a", "b"] and data["a"].size == 0


# -- progress ------------------------------------------------------------------
class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_progress_waits_for_the_delay_then_reports_once_a_second():
    clock, out = Clock(), io.StringIO()
    progress = ProgressMeter("reading", 1000, delay=2.0, stream=out, clock=clock)
    for now, done in [(0.5, 100), (1.9, 200), (2.0, 300), (2.5, 400), (3.1, 500)]:
        clock.now = now
        progress.update(done)
    progress.finish(1000)
    lines = out.getvalue().splitlines()
    assert lines == [
        "reading:  30% (0.0 of 0.0 MB, 2.0 s)",
        "reading:  50% (0.0 of 0.0 MB, 3.1 s)",
        "reading: 100% (0.0 of 0.0 MB, 3.1 s)",
    ]


def test_short_work_prints_nothing_and_inf_never_prints():
    out = io.StringIO()
    quick = ProgressMeter("reading", 10, delay=2.0, stream=out, clock=Clock())
    quick.update(10)
    quick.finish(10)
    never = ProgressMeter("reading", 10, delay=math.inf, stream=out)
    never.update(5)
    never.finish(10)
    assert out.getvalue() == "" and not quick.shown and not never.shown


def test_scan_reports_the_bytes_read(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("x\n" + "".join(f"{i}\n" for i in range(5000)))
    seen = []

    class Recorder:
        def update(self, done):
            seen.append(done)

        def finish(self, done):
            seen.append(("finish", done))

    scan_numeric_csv(path, progress=Recorder(), block_bytes=1000)
    size = path.stat().st_size
    assert len(seen) > 20 and seen[-1] == ("finish", size)
    assert seen[:-1] == sorted(seen[:-1]) and seen[-2] == size


def test_columns_grow_past_the_first_estimate(tmp_path):
    # gzip: the size of the text is unknown, the first block reserves room
    # for 64 blocks like it, and the columns grow several times after that
    path = tmp_path / "g.csv.gz"
    values = np.arange(20_000) / 8
    with gzip.open(path, "wt") as handle:
        handle.write("x,y\n" + "".join(f"{v},{-v}\n" for v in values))
    data = scan_numeric_csv(path, block_bytes=64)
    np.testing.assert_array_equal(data["x"], values)
    np.testing.assert_array_equal(data["y"], -values)


def test_progress_on_a_terminal_rewrites_one_line():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    clock, out = Clock(), Terminal()
    progress = ProgressMeter("reading", 2_000_000, stream=out, clock=clock)
    progress.update(1_000_000)
    clock.now = 1.5
    progress.update(1_500_000)
    progress.finish(2_000_000)
    assert out.getvalue() == (
        "\rreading:  50% (1.0 of 2.0 MB, 0.0 s)"
        "\rreading:  75% (1.5 of 2.0 MB, 1.5 s)"
        "\rreading: 100% (2.0 of 2.0 MB, 1.5 s)\n"
    )


# Quoted cells as the csv module reads them, and quotes it reads literally.
QUOTED = [
    '"5"', '"-2.5"', '""', '" 7 "', '"a, b"', '"x""y"', '"""q"""', '"NA"',
    ' "5"', 'ab"c', '"5"x', '"5" ', '"line\nbreak"', '"1,5"', '"3"""',
]  # fmt: skip


@pytest.mark.parametrize("seed", range(12))
def test_quoted_cells_read_as_before(tmp_path, seed):
    rng = np.random.default_rng(100 + seed)
    plain = ["1", "-2", "3.5", "", "NA", "42"]
    pool = plain * 6 + QUOTED[: int(rng.integers(2, len(QUOTED) + 1))]
    n_columns = int(rng.integers(1, 5))
    lines = [",".join(f"c{j}" for j in range(n_columns))]
    for _ in range(int(rng.integers(1, 300))):
        lines.append(",".join(str(rng.choice(pool)) for _ in range(n_columns)))
    path = tmp_path / "q.csv"
    path.write_text("\n".join(lines) + "\n")
    expected = reference_read(path)
    for block_bytes, n_jobs in ((9, 2), (100, None), (1 << 18, 2)):
        got = scan_numeric_csv(path, block_bytes=block_bytes, n_jobs=n_jobs)
        assert_same_columns(got, expected)


def test_plain_quoted_fields_stay_on_the_numpy_path(tmp_path, monkeypatch):
    import skdp._csv

    def no_csv_module(block, columns):
        raise AssertionError("read by the csv module")

    monkeypatch.setattr(skdp._csv, "_add_csv_block", no_csv_module)
    path = tmp_path / "t.csv"
    rows = [f'{i},"city, {i % 7}","{i / 4}","x""y"' for i in range(2000)]
    path.write_text('n,"place",q,t\n' + "\n".join(rows) + "\n")
    data = scan_numeric_csv(path, block_bytes=4096)
    np.testing.assert_array_equal(data["q"], np.arange(2000) / 4)
    assert np.isnan(data["place"]).all() and np.isnan(data["t"]).all()


def test_a_quote_inside_an_unquoted_field_is_left_to_the_csv_module(tmp_path):
    # the csv module reads 'x"y', 'z"w', '5', '9' (a long row); pairing the
    # two quotes would make it 'x"y,z"w', '5', '9' and read 9 for c
    path = tmp_path / "l.csv"
    path.write_text('a,b,c\n1,2,3\nx"y,z"w,5,9\n4,5,6\n')
    data = scan_numeric_csv(path)
    assert_same_columns(data, reference_read(path))
    np.testing.assert_array_equal(data["c"], [3.0, 5.0, 6.0])
