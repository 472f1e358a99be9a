"""Private descriptive statistics of a table: the engine of ``skdp describe``.

Each column's statistics are the releases of :class:`~skdp.SVTClipSelector`,
:class:`~skdp.PrivateMean` and :class:`~skdp.PrivateQuantile` with the
parameters below, called as functions (``_svt_search``, ``_mean_release``,
``_quantile_release``) rather than through the estimators: the same
releases, seed for seed, without importing scikit-learn (about a second of a
command's start-up).
"""

import math
import numbers
import sys
import time
import warnings
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np
from joblib import Parallel, delayed

from skdp._csv import parse_cell, read_numeric_csv
from skdp.accounting._composition import equal_shares, exact, split_budget
from skdp.accounting._default import charged_default, check_accountant
from skdp.mechanisms import check_random_source
from skdp.sensitivity._quantile import candidate_cell_counts
from skdp.stats._mean_release import (
    mean_from_release,
    mean_statistic,
    plan_mean_release,
    release_count_and_sums,
)
from skdp.stats._quantile_release import (
    candidate_grid,
    check_quantile_levels,
    permute_and_flip_release,
)
from skdp.stats._svt_search import plan_svt_bounds, run_svt_bounds
from skdp.utils._validation import check_bounds, check_epsilon

__all__ = ["describe", "read_numeric_csv", "tail_share"]

QUANTILES = (0.25, 0.5, 0.75)
LEVELS = check_quantile_levels(QUANTILES)
#: SVTClipSelector's default: the largest plausible magnitude of a value.
UPPER_LIMIT = 1e9
# Shares of a column's epsilon; without public bounds part goes to finding them.
# The count is the one released with the mean (PrivateMean.count_), not a
# separate charge.
SHARES_PRIVATE_BOUNDS = {"bounds": 0.2, "mean": 0.4, "quantiles": 0.4}
SHARES_PUBLIC_BOUNDS = {"mean": 0.5, "quantiles": 0.5}
STATISTICS = ("count", "mean", "median", "iqr", "lower", "upper")
#: A privately chosen upper bound gets a note when the rows that its search
#: lets lie above it would carry at least this share of the mean at the bound
#: (see :func:`tail_share`).
TAIL_SHARE_NOTE = 0.05


def _column_plan(epsilon, public_bounds):
    shares = SHARES_PRIVATE_BOUNDS if public_bounds is None else SHARES_PUBLIC_BOUNDS
    return dict(zip(shares, split_budget(epsilon, shares.values()), strict=True))


def _ledger_items(plans):
    return [
        (f"describe {name!r}: {part}", eps, 0.0)
        for name, plan in plans.items()
        for part, eps in plan.items()
    ]


class _Releases(NamedTuple):
    """The public plans of a column's releases, fixed before the charge.

    ``svt``: the bound search of ``SVTClipSelector(epsilon_bounds)`` (default
    parameters), or None for public bounds; ``mean``: the plan of
    ``PrivateMean(epsilon_mean, bounds=...)`` (Laplace, one feature).
    """

    svt: object
    mean: object


def _plan_releases(plan):
    """Validate a column's release parameters; raises before any charge."""
    svt = None
    if "bounds" in plan:
        svt = plan_svt_bounds(
            1,
            plan["bounds"],
            lower=None,
            upper_limit=UPPER_LIMIT,
            grid="geometric",
            n_above=None,
        )
    return _Releases(svt, plan_mean_release(plan["mean"], 0.0, 1, "laplace"))


def _seed_stream(random_state):
    """``None`` forever (secure), or reproducible integer seeds from an int."""
    if random_state is None:
        while True:
            yield None
    rng = np.random.RandomState(random_state)
    while True:
        yield int(rng.randint(2**31 - 1))


def tail_share(n_tail, count, mean, lower, upper):
    """Share of a clipped mean that the rows at its upper bound would carry.

    A post-processing of released values only: ``count``, ``mean``,
    ``lower``, ``upper`` and ``n_tail``, a public number of rows (the
    tolerance of the bound search, fixed by epsilon). The private search
    (:class:`~skdp.SVTClipSelector`) returns the candidate after the first
    one with at most about ``n_tail`` rows above it, so up to about
    ``n_tail`` rows may lie above ``upper``, and the mean counts them as
    ``upper``. This is their part of the
    mean measured from ``lower``: ``n_tail (upper - lower) / (count (mean -
    lower))``. A large share says the rows at the bound matter to the mean,
    so whatever they exceed it by, cut off, may matter too; a small share
    says the cut cannot be large unless they exceed the bound many times
    over. It never reads the data.

    Returns
    -------
    share : float or None
        In [0, 1]; ``None`` when the released values leave it undefined
        (``count < 1`` or ``mean <= lower``).
    """
    if count < 1 or not mean > lower:
        return None
    return min(1.0, n_tail * (upper - lower) / (count * (mean - lower)))


def _private_bounds(values, svt, seed):
    """``(lower, upper, n_tail)`` chosen by SVT; n_tail is public.

    :class:`~skdp.SVTClipSelector`'s fit on one column: the search of the
    plan ``svt`` with the noise of ``seed``.
    """
    found = run_svt_bounds(values.reshape(-1, 1), svt, check_random_source(seed))
    lower, upper = float(found[0][0]), float(found[1][0])
    if upper <= lower:  # a public rule on released values: never empty
        upper = lower + max(1.0, abs(lower)) * 1e-9
    # the selector's n_above_; both sides searched (lower < 0) halves each
    # search's epsilon
    n_tail = svt.run_parameters(1, 1)[1] * (2 if lower < 0 else 1)
    return lower, upper, n_tail


def _private_mean(values, plan, lower, upper, seed):
    """``(count, mean)``: :class:`~skdp.PrivateMean`'s fit on one column
    with public ``bounds=(lower, upper)`` and the release plan ``plan``."""
    lower, upper = np.array([lower]), np.array([upper])
    statistic = mean_statistic(values.reshape(-1, 1), lower, upper, plan.paired)
    count, sums = release_count_and_sums(statistic, plan, check_random_source(seed))
    return count, float(mean_from_release(count, sums, lower, upper)[0])


def _private_quartiles(values, epsilon, lower, upper, seed):
    """:class:`~skdp.PrivateQuantile`'s fit on one column: ``QUANTILES``
    with ``bounds=(lower, upper)`` by permute-and-flip over the default
    public grid (exact on tied values), ``epsilon`` split over the levels."""
    source = check_random_source(seed)
    grid = candidate_grid(None, np.array([lower]), np.array([upper]))[:, 0]
    with np.errstate(all="ignore"):  # after the charge nothing may warn
        counts = candidate_cell_counts(values, grid, lower, upper)
        return permute_and_flip_release(
            counts, grid, LEVELS, equal_shares(epsilon, LEVELS.size), source
        )


def _column_seeds(random_state, plans):
    """Per column, its estimators' seeds, drawn in column order as when the
    columns were described one after the other (3 with private bounds, 2
    with public ones), so that the order of the work does not matter."""
    stream = _seed_stream(random_state)
    return {
        name: [next(stream) for _ in range(3 if "bounds" in plan else 2)]
        for name, plan in plans.items()
    }


def _timed_column(values, plan, releases, public_bounds, seeds, label, verbose):
    start = time.monotonic()
    # numpy's error state is per thread: set here, in the column's own thread
    with np.errstate(all="ignore"):
        row = _describe_column(values, plan, releases, public_bounds, iter(seeds))
    row["epsilon"] = float(sum(exact(e) for e in plan.values()))
    if verbose > 0:
        print(
            f"[describe] {label} done in {time.monotonic() - start:.1f} s",
            file=sys.stderr,
            flush=True,
        )
    return row


def _describe_column(values, plan, releases, public_bounds, seeds):
    if public_bounds is None:
        lower, upper, n_tail = _private_bounds(values, releases.svt, next(seeds))
    else:
        (lower, upper), n_tail = public_bounds, None
    count, mean = _private_mean(values, releases.mean, lower, upper, next(seeds))
    quantiles = _private_quartiles(values, plan["quantiles"], lower, upper, next(seeds))
    row = {
        "count": max(0, round(float(count))),
        "mean": mean,
        "median": float(quantiles[1]),
        # Python floats: a difference beyond the float range is inf, silently
        "iqr": max(float(quantiles[2]) - float(quantiles[0]), 0.0),
        "lower": lower,
        "upper": upper,
    }
    row["tail_rows"] = n_tail
    row["tail_share"] = (
        None
        if n_tail is None
        else tail_share(n_tail, row["count"], row["mean"], lower, upper)
    )
    return row


def _cell_value(cell):
    """One cell as a float: NaN unless it is a finite real number.

    Never raises: a cell whose conversion fails in any way (a list or an
    array, an object whose ``__float__`` raises) is not a number, so missing.
    """
    if isinstance(cell, float):  # the common case first (np.float64 too)
        return cell if math.isfinite(cell) else math.nan
    if isinstance(cell, str):
        return parse_cell(cell)
    if cell is np.ma.masked or (isinstance(cell, np.ndarray) and cell.ndim):
        return math.nan  # masked; or like a list: a sequence is not a number
    if isinstance(cell, complex | np.complexfloating):
        cell = cell.real if cell.imag == 0 else math.nan
    try:
        value = float(cell)
    except Exception:  # any cell, any failure: missing in this cell only
        return math.nan
    return value if math.isfinite(value) else math.nan


def _check_column(name, values):
    """Refuse a column that is not a one-dimensional sequence of cells.

    A property of the container's type and shape, which the caller states,
    never of its values: a 2-D array is several columns (reading it as one
    would flatten its rows), a scalar or a string is not a column.
    """
    ndim = getattr(values, "ndim", None)
    if ndim is not None and ndim != 1:
        raise ValueError(
            f"Column {name!r} is a {ndim}-dimensional {type(values).__name__}; "
            "describe reads one-dimensional columns: pass each column under its "
            "own key (for a 2-D array X, {'x0': X[:, 0], 'x1': X[:, 1], ...}). "
            "Nothing was charged."
        )
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise TypeError(
            f"Column {name!r} is a {type(values).__name__}, not a sequence of "
            "values: pass a list or a 1-D array of its cells. Nothing was charged."
        )


def _typed_array(values):
    """The cells of a 1-D container with a numeric numpy dtype, as float64,
    or None for any other container.

    The dtype is the container's, not inferred from the cells, and the cast
    is the per-cell ``float(cell)`` (bool 0/1, ints and long doubles rounded
    to the nearest double, float32 and float16 exact); a masked cell of a
    masked array is missing.
    """
    dtype = getattr(values, "dtype", None)
    if not (isinstance(dtype, np.dtype) and dtype.kind in "biuf"):
        return None
    array = np.asarray(values)
    if array.dtype != dtype or array.ndim != 1:
        return None
    with np.errstate(all="ignore"):  # long doubles beyond the double range
        array = array.astype(np.float64)
    array[np.ma.getmaskarray(values)] = np.nan  # a masked cell is missing
    return array


def _finite_values(values):
    """A column's finite values, by a per-cell rule that never raises.

    Every cell is read on its own (:func:`_cell_value`): a cell that is not
    a finite real number (NaN, ``±inf``, ``None``, text that
    :func:`~skdp._csv.parse_cell` does not read as a number, a complex
    number with an imaginary part, a list) is missing and left out of that
    column only. Nothing here depends on another cell (the column is never
    read as a whole by ``np.asarray``, whose dtype the cells would choose),
    and nothing is refused or warned: a refusal decided by one cell would
    tell that the cell is there. ``values`` has passed :func:`_check_column`.
    """
    array = _typed_array(values)
    if array is None:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            array = np.fromiter(map(_cell_value, values), np.float64)
    return array[np.isfinite(array)]


def describe(
    data,
    *,
    epsilon=1.0,
    bounds=None,
    accountant=None,
    random_state=None,
    n_jobs=None,
    verbose=0,
):
    """Private count, mean, median, IQR and clip bounds of every column.

    Parameters
    ----------
    data : dict of str to sequence or 1-D array
        Column name to its cells. Every key is described (the keys are the
        schema, stated by the caller); a cell that is not a finite real
        number (NaN, ``±inf``, ``None``, text, a list, a masked cell) is
        missing, left out of that column's statistics only. A column that is
        not one-dimensional (a 2-D array, a scalar, a string) is refused
        before anything is charged.
    epsilon : float, default=1.0
        Total budget, split equally between the keys of ``data`` (basic
        composition: one row touches every column).
    bounds : dict of str to (float, float) or None, default=None
        Public bounds per column, from domain knowledge. Columns without them
        get bounds chosen privately (:class:`~skdp.SVTClipSelector`).
    accountant : BudgetAccountant or None, default=None
        Charged for everything, up front, before any statistic is computed;
        ``None`` uses the default accountant.
    random_state : None or int, default=None
        ``None`` draws from the operating system's secure generator; an int
        makes the output reproducible and is for tests only.
    n_jobs : int or None, default=None
        Columns described at the same time, in threads (``None``: 1, ``-1``:
        all processors). The release is the same for any value: each column
        has its own seeds, drawn in column order.
    verbose : int, default=0
        Above 0, a line on stderr as each column is done (it is local
        progress, not part of the release).

    Returns
    -------
    rows : dict of str to dict
        Per described column: ``count``, ``mean``, ``median``, ``iqr``,
        ``lower``, ``upper`` (the clip bounds, public or private),
        ``epsilon``, and for private bounds ``tail_rows`` (the bound search's
        public tolerance: about how many rows may lie above ``upper``) and
        ``tail_share`` (:func:`tail_share`, from released values; ``None``
        for public bounds).

    Notes
    -----
    Each column gets ``ε/d``. Within a column: 20% for the bounds (SVT), 40%
    for the mean (:class:`~skdp.PrivateMean` within the bounds, whose release
    carries the row count, reported as ``count`` at no extra cost) and 40%
    for the quartiles (:class:`~skdp.PrivateQuantile`); with public bounds
    the bound share goes to the others (50/50). Everything is released by
    the release functions of these estimators (the same releases as their
    ``fit``, seed for seed) and is ``epsilon``-DP in total under add/remove
    of one row.
    **The schema is the caller's.** ``d`` is the number of keys of
    ``data``, and which columns are described, their shares of ``epsilon``,
    the ledger entries, and every error are functions of the keys,
    ``bounds``, the other parameters and the columns' container types and
    shapes (a 2-D array is refused) alone, never of the values: a
    column whose values are all missing is described like any other (its
    released count is about 0, its other statistics are the mechanisms'
    answers on no rows). Each cell is read on its own (a per-cell rule:
    not a finite real number means missing; a column is never converted as
    a whole, so the other cells cannot change how a cell reads, as
    ``np.asarray`` would by choosing a dtype for all of them), so adding or
    removing one row adds or removes at most one value in each column and
    the per-column releases keep their add/remove sensitivities. Reading
    the schema from the values would not be private: one row holding ``abc`` or ``inf``
    would remove its column (doubling the others' shares), and one row
    holding the only value of an empty column would add it, each with
    certainty.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant
    >>> from skdp._describe import describe
    >>> rng = np.random.default_rng(0)
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> rows = describe({"age": rng.uniform(18, 90, 5000)}, epsilon=1.0,
    ...                 bounds={"age": (0, 120)}, accountant=acc, random_state=0)
    >>> sorted(rows["age"])  # doctest: +NORMALIZE_WHITESPACE
    ['count', 'epsilon', 'iqr', 'lower', 'mean', 'median', 'tail_rows',
     'tail_share', 'upper']
    >>> acc.total()
    (1.0, 0.0)
    """
    if not data:
        raise ValueError("No columns to describe: pass at least one column.")
    epsilon = check_epsilon(epsilon)
    integer = isinstance(n_jobs, numbers.Integral) and not isinstance(n_jobs, bool)
    if n_jobs is not None and not (integer and n_jobs != 0):
        raise ValueError(f"n_jobs must be a non-zero integer or None; got {n_jobs!r}.")
    for name, values in data.items():
        _check_column(name, values)
    bounds = dict(bounds or {})
    unknown = sorted(set(bounds) - set(data))
    if unknown:
        raise ValueError(f"bounds given for unknown columns: {unknown}.")
    public = {
        name: tuple(float(b[0]) for b in check_bounds(bounds[name], 1, name=name))
        for name in bounds
    }
    per_column = split_budget(epsilon, [1.0] * len(data))
    plans = {
        name: _column_plan(eps, public.get(name))
        for name, eps in zip(data, per_column, strict=True)
    }
    releases = {name: _plan_releases(plan) for name, plan in plans.items()}
    if accountant is None:
        accountant = charged_default("describe (skdp describe)")
    check_accountant(accountant)
    columns = {name: _finite_values(values) for name, values in data.items()}
    accountant.spend_many(_ledger_items(plans))

    seeds = _column_seeds(random_state, plans)
    jobs = (
        delayed(_timed_column)(
            values,
            plans[name],
            releases[name],
            public.get(name),
            seeds[name],
            f"column {i} of {len(columns)} ({name!r})",
            verbose,
        )
        for i, (name, values) in enumerate(columns.items(), start=1)
    )
    # After the charge nothing may warn on the data (a warning shown, or raised
    # under -W error, would leak): the filters are per process, so they are
    # set here, around all the columns' threads.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = Parallel(n_jobs=n_jobs, prefer="threads")(jobs)
    return dict(zip(columns, rows, strict=True))


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
