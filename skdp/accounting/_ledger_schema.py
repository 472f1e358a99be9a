"""The layout of a SQLite ledger file, and how older layouts are read.

The tables (budget, entries, running totals, per-label sums), the columns
added since the first layout (with defaults, so a file written before reads
as it meant: an entry without a unit is for one row), and the conversions
between :class:`~skdp.accounting.LedgerEntry` and a row of ``entries``.
"""

from skdp.accounting._composition import SpendTotals

__all__ = [
    "COUNTED_COLUMNS",
    "ENTRY_COLUMNS",
    "SCHEMA",
    "add_missing_columns",
    "decode_sums",
    "decode_totals",
    "encode_sums",
    "entry_fields",
    "entry_row",
    "full_budget",
    "same_budget",
]

SCHEMA = """
CREATE TABLE IF NOT EXISTS budget (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    epsilon TEXT NOT NULL,
    delta TEXT NOT NULL,
    slack TEXT NOT NULL,
    composition TEXT NOT NULL DEFAULT '',
    unit TEXT NOT NULL DEFAULT 'row',
    max_rows_per_group TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    label TEXT NOT NULL,
    epsilon REAL NOT NULL,
    delta REAL NOT NULL,
    time REAL NOT NULL,
    pid INTEGER NOT NULL,
    rho REAL,
    noise_multiplier REAL,
    mechanism TEXT,
    unit TEXT NOT NULL DEFAULT 'row',
    group_rows INTEGER,
    counted_epsilon REAL,
    counted_delta REAL,
    counted_rho REAL,
    counted_noise_multiplier REAL
);
CREATE TABLE IF NOT EXISTS totals (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    last_id INTEGER NOT NULL,
    sums TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS labels (
    label TEXT PRIMARY KEY,
    first_id INTEGER NOT NULL,
    sums TEXT NOT NULL
);
"""


def encode_sums(values):
    """Exact integer sums as text (they exceed 64 bits): hexadecimal, which
    converts in linear time."""
    return " ".join(format(int(value), "x") for value in values)


def decode_sums(text):
    return tuple(int(value, 16) for value in text.split())


def decode_totals(text):
    """The stored totals, or ``None`` if stored by an older layout (fewer sums)."""
    sums = decode_sums(text)
    return SpendTotals(*sums) if len(sums) == len(SpendTotals._fields) else None


# Columns added after the first layout: (table, column, declaration).
_ADDED_COLUMNS = (
    ("budget", "composition", "TEXT NOT NULL DEFAULT ''"),
    ("entries", "rho", "REAL"),
    ("entries", "noise_multiplier", "REAL"),
    ("entries", "mechanism", "TEXT"),
    ("budget", "unit", "TEXT NOT NULL DEFAULT 'row'"),
    ("budget", "max_rows_per_group", "TEXT NOT NULL DEFAULT ''"),
    ("entries", "unit", "TEXT NOT NULL DEFAULT 'row'"),
    ("entries", "group_rows", "INTEGER"),
    ("entries", "counted_epsilon", "REAL"),
    ("entries", "counted_delta", "REAL"),
    ("entries", "counted_rho", "REAL"),
    ("entries", "counted_noise_multiplier", "REAL"),
)

# The entries' columns, in the order of LedgerEntry (``counted`` spread over
# four columns, all NULL when the entry was counted as stated).
ENTRY_COLUMNS = (
    "label, epsilon, delta, time, rho, noise_multiplier, mechanism, unit, "
    "group_rows, counted_epsilon, counted_delta, counted_rho, "
    "counted_noise_multiplier"
)

# The cost the totals add: the counted one where there is one.
COUNTED_COLUMNS = (
    "coalesce(counted_epsilon, epsilon), coalesce(counted_delta, delta), "
    "CASE WHEN counted_epsilon IS NULL THEN rho ELSE counted_rho END, "
    "CASE WHEN counted_epsilon IS NULL THEN noise_multiplier "
    "ELSE counted_noise_multiplier END"
)


def entry_row(entry):
    """An entry as the values of :data:`ENTRY_COLUMNS`."""
    counted = entry.counted if entry.counted is not None else (None,) * 4
    return (*entry[:9], *counted)


def entry_fields(row):
    """The inverse of :func:`entry_row`."""
    counted = None if row[9] is None else tuple(row[9:13])
    return (*row[:9], counted)


# A process running skdp from before units inserts entries without a unit
# (read as one row) and adds their stated cost to the totals: in a ledger
# whose budget is for one group that undercounts a row-level charge m times.
# Such an entry (another unit than the ledger's, no counted cost) is refused
# by the file itself, so the older process's spend fails and nothing is
# recorded. (Executed on its own: its body holds a ';'.)
_UNIT_REFUSAL = (
    "this ledger counts its budget per group: an entry in another unit needs "
    "its converted cost; it was written by a version of skdp without privacy "
    "units. Upgrade skdp. Nothing was recorded."
)
UNIT_TRIGGER = f"""
CREATE TRIGGER IF NOT EXISTS entries_counted_in_the_ledgers_unit
BEFORE INSERT ON entries
WHEN NEW.counted_epsilon IS NULL
    AND NEW.unit != (SELECT unit FROM budget WHERE id = 0)
BEGIN
    SELECT RAISE(ABORT, '{_UNIT_REFUSAL}');
END
"""


def add_missing_columns(conn):
    """Bring a ledger of an older layout up to date (inside a transaction)."""
    for table, column, declaration in _ADDED_COLUMNS:
        names = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column not in names:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
    conn.execute(UNIT_TRIGGER)


def same_budget(given, stored):
    """Whether a given budget matches the stored one (an older file stores no
    composition: it is basic or advanced, as its slack says)."""
    if stored[3] == "":
        stored = (*stored[:3], "advanced" if float(stored[2]) > 0 else "basic")
    return tuple(given) == tuple(stored)


def full_budget(budget):
    """``(epsilon, delta, slack, composition, unit, max_rows_per_group)``
    strings; a budget of an older layout is for one row."""
    return (*budget, "row", "")[:6] if len(budget) < 6 else tuple(budget)
