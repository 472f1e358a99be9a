"""Private descriptive statistics of a table: the engine of ``skdp describe``."""

import csv
import gzip
import io
import math
from pathlib import Path

import numpy as np

from skdp.accounting import PrivacyCost, default_accountant
from skdp.accounting._accountant import check_accountant
from skdp.accounting._composition import exact, split_budget
from skdp.model_selection._cost import prepaid_accountant, route_accountant
from skdp.preprocessing import PrivateMean, PrivateQuantile, SVTClipSelector
from skdp.utils._validation import check_bounds, check_epsilon

__all__ = ["describe", "read_numeric_csv"]

MISSING = frozenset({"", "?", "na", "n/a", "nan", "null", "none"})
QUANTILES = (0.25, 0.5, 0.75)
# Shares of a column's epsilon; without public bounds part goes to finding them.
# The count is the one released with the mean (PrivateMean.count_), not a
# separate charge.
SHARES_PRIVATE_BOUNDS = {"bounds": 0.2, "mean": 0.4, "quantiles": 0.4}
SHARES_PUBLIC_BOUNDS = {"mean": 0.5, "quantiles": 0.5}
STATISTICS = ("count", "mean", "median", "iqr", "lower", "upper")


def _open_text(path):
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No such file: {path}")
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def _parse(cell):
    cell = cell.strip()
    if cell.lower() in MISSING:
        return math.nan
    return float(cell)


def read_numeric_csv(path, columns=None):
    """Read the numeric columns of a CSV file (``.gz`` too) without pandas.

    A column is numeric when every non-missing cell parses as a number;
    missing cells (empty, ``?``, ``NA``, ``NaN``, ``null``) become NaN. Which
    columns are numeric is the file's *schema*, treated as public; pass
    ``columns`` to fix it in advance.

    Parameters
    ----------
    path : str or path-like
        The CSV file, with a header row.
    columns : list of str or None, default=None
        Columns to read (each must be numeric); ``None`` reads every numeric
        column.

    Returns
    -------
    data : dict of str to ndarray
        Column name to float values (NaN where missing), in file order.
    """
    with _open_text(path) as handle:
        reader = csv.reader(handle)
        try:
            header = [name.strip() for name in next(reader)]
        except StopIteration:
            raise ValueError(f"{path} is empty: no header row.") from None
        cells = [row for row in reader if row]
    if columns is not None:
        unknown = [c for c in columns if c not in header]
        if unknown:
            raise ValueError(f"Columns not in {path}: {unknown}; it has {header}.")
    wanted = header if columns is None else list(columns)
    data = {}
    for name in wanted:
        j = header.index(name)
        try:
            values = np.array(
                [_parse(row[j]) if j < len(row) else math.nan for row in cells]
            )
        except ValueError:
            if columns is not None:
                raise ValueError(f"Column {name!r} is not numeric.") from None
            continue
        data[name] = values
    if not data:
        raise ValueError(f"{path} has no numeric columns (columns: {header}).")
    return data


def _column_plan(epsilon, public_bounds):
    shares = SHARES_PRIVATE_BOUNDS if public_bounds is None else SHARES_PUBLIC_BOUNDS
    return dict(zip(shares, split_budget(epsilon, shares.values()), strict=True))


def _ledger_items(plans):
    return [
        (f"describe {name!r}: {part}", eps, 0.0)
        for name, plan in plans.items()
        for part, eps in plan.items()
    ]


def _fit(estimator, epsilon, values):
    """Fit under an accountant prepaid by the describe-wide charge."""
    route_accountant(estimator, prepaid_accountant(PrivacyCost(epsilon)))
    return estimator.fit(values.reshape(-1, 1))


def _seed_stream(random_state):
    """``None`` forever (secure), or reproducible integer seeds from an int."""
    if random_state is None:
        while True:
            yield None
    rng = np.random.RandomState(random_state)
    while True:
        yield int(rng.randint(2**31 - 1))


def _describe_column(values, plan, public_bounds, seeds):
    if public_bounds is None:
        selector = _fit(
            SVTClipSelector(plan["bounds"], random_state=next(seeds)),
            plan["bounds"],
            values,
        )
        lower, upper = float(selector.lower_[0]), float(selector.upper_[0])
        if upper <= lower:  # a public rule on released values: never empty
            upper = lower + max(1.0, abs(lower)) * 1e-9
    else:
        lower, upper = public_bounds
    mean = _fit(
        PrivateMean(plan["mean"], bounds=(lower, upper), random_state=next(seeds)),
        plan["mean"],
        values,
    )
    quantiles = _fit(
        PrivateQuantile(
            QUANTILES,
            epsilon=plan["quantiles"],
            bounds=(lower, upper),
            method="permute_and_flip",  # a public grid: exact on tied values
            random_state=next(seeds),
        ),
        plan["quantiles"],
        values,
    ).quantiles_[:, 0]
    return {
        "count": max(0, round(float(mean.count_))),
        "mean": float(mean.mean_[0]),
        "median": float(quantiles[1]),
        "iqr": float(max(quantiles[2] - quantiles[0], 0.0)),
        "lower": lower,
        "upper": upper,
    }


def describe(data, *, epsilon=1.0, bounds=None, accountant=None, random_state=None):
    """Private count, mean, median, IQR and clip bounds of every column.

    Parameters
    ----------
    data : dict of str to array-like
        Column name to 1-D numeric values; NaN marks a missing value, which is
        left out of that column's statistics.
    epsilon : float, default=1.0
        Total budget, split equally between the columns (basic composition:
        one row touches every column).
    bounds : dict of str to (float, float) or None, default=None
        Public bounds per column, from domain knowledge. Columns without them
        get bounds chosen privately (:class:`~skdp.SVTClipSelector`).
    accountant : BudgetAccountant or None, default=None
        Charged for everything, up front, before any value is read; ``None``
        uses the default accountant.
    random_state : None or int, default=None
        ``None`` draws from the operating system's secure generator; an int
        makes the output reproducible and is for tests only.

    Returns
    -------
    rows : dict of str to dict
        Per column: ``count``, ``mean``, ``median``, ``iqr``, ``lower``,
        ``upper`` (the clip bounds, public or private) and ``epsilon``.

    Notes
    -----
    Each column gets ``ε/d``. Within a column: 20% for the bounds (SVT), 40%
    for the mean (:class:`~skdp.PrivateMean` within the bounds, whose release
    carries the row count, reported as ``count`` at no extra cost) and 40%
    for the quartiles (:class:`~skdp.PrivateQuantile`); with public bounds
    the bound share goes to the others (50/50). Everything is released by
    skdp's estimators and mechanisms and is ``epsilon``-DP in total under
    add/remove of one row.
    The number of columns, their names, and whether a column has any value
    at all are public (the schema).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant
    >>> from skdp._describe import describe
    >>> rng = np.random.default_rng(0)
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> rows = describe({"age": rng.uniform(18, 90, 5000)}, epsilon=1.0,
    ...                 bounds={"age": (0, 120)}, accountant=acc, random_state=0)
    >>> sorted(rows["age"])
    ['count', 'epsilon', 'iqr', 'lower', 'mean', 'median', 'upper']
    >>> acc.total()
    (1.0, 0.0)
    """
    if not data:
        raise ValueError("No columns to describe.")
    epsilon = check_epsilon(epsilon)
    bounds = dict(bounds or {})
    unknown = sorted(set(bounds) - set(data))
    if unknown:
        raise ValueError(f"bounds given for unknown columns: {unknown}.")
    columns = {}
    for name, values in data.items():
        values = np.asarray(values, dtype=np.float64).ravel()
        if np.isinf(values).any():
            raise ValueError(f"Column {name!r} has infinite values.")
        values = values[~np.isnan(values)]
        if values.size == 0:
            raise ValueError(f"Column {name!r} has no values.")
        columns[name] = values
    public = {
        name: tuple(float(b[0]) for b in check_bounds(bounds[name], 1, name=name))
        for name in bounds
    }
    per_column = split_budget(epsilon, [1.0] * len(columns))
    plans = {
        name: _column_plan(eps, public.get(name))
        for name, eps in zip(columns, per_column, strict=True)
    }
    if accountant is None:
        accountant = default_accountant()
    check_accountant(accountant)
    accountant.spend_many(_ledger_items(plans))

    seeds = _seed_stream(random_state)
    rows = {}
    for name, values in columns.items():
        rows[name] = _describe_column(values, plans[name], public.get(name), seeds)
        rows[name]["epsilon"] = float(sum(exact(e) for e in plans[name].values()))
    return rows


def format_table(rows):
    """The result of :func:`describe` as an aligned text table."""
    header = ["column", *STATISTICS]
    lines = [
        [name] + [_number(row[s]) for s in STATISTICS] for name, row in rows.items()
    ]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *lines, strict=True)]
    out = [
        "  ".join(
            h.rjust(w) if i else h.ljust(w)
            for i, (h, w) in enumerate(zip(header, widths, strict=True))
        )
    ]
    for line in lines:
        out.append(
            "  ".join(
                x.rjust(w) if i else x.ljust(w)
                for i, (x, w) in enumerate(zip(line, widths, strict=True))
            )
        )
    return "\n".join(out)


def _number(value):
    return str(value) if isinstance(value, int) else format(value, ".6g")
