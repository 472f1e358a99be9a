"""Why released bounds are useless: post-processing of a bound search.

:func:`bounds_problems` reads an
:class:`~skdp.stats._svt_search.SVTBoundsRelease` and the public plan
only, never the data (SVTClipSelector, Notes, "Warnings").
"""

import numpy as np

__all__ = ["bounds_problems", "collapse_width"]

# A side's search is noise-dominated when its released count is below this
# many scales of the query noise, and a bound has collapsed when the interval
# is no wider than the grid's candidate at this fraction of its length.
_RELIABLE_SCALES = 8.0
_COLLAPSE_FRACTION = 0.1


def collapse_width(widths):
    """The width at or below which released bounds have collapsed: the grid's
    candidate distance at ``_COLLAPSE_FRACTION`` of its length (public)."""
    return widths[int(_COLLAPSE_FRACTION * (widths.size - 1))]


def bounds_problems(release, plan):
    """Why released bounds are useless: ``{feature: (kind, cause)}``.

    ``kind`` is "collapsed", "top" or "noise"; ``cause`` says it with the
    feature's released values.

    A function of the release (:class:`SVTBoundsRelease`) and the public
    plan only, i.e. post-processing (SVTClipSelector, Notes, "Warnings"):

    - **collapsed**: the released interval is no wider than the grid's
      candidate at ``_COLLAPSE_FRACTION`` of its length (the search stopped
      at the bottom of the grid);
    - **at the top**: a bound is at least the grid's candidate at
      ``1 - _COLLAPSE_FRACTION`` of its length from the origin (the search
      ran past the data, or ``upper_limit`` is too small);
    - **noise-dominated** (``lower=None`` only): a searched side's released
      count is below ``_RELIABLE_SCALES`` scales ``1/ε₂`` of its search's
      query noise, so the search cannot tell where that side's values lie
      and its bound may cut most of them.
    """
    n_features = plan.origin.size
    widths = plan.widths
    floor = collapse_width(widths)
    problems = {}
    with np.errstate(over="ignore", invalid="ignore"):
        width = np.asarray(release.upper, float) - np.asarray(release.lower, float)
    top = widths[int((1 - _COLLAPSE_FRACTION) * (widths.size - 1))]
    with np.errstate(over="ignore", invalid="ignore"):
        reach = np.maximum(
            np.asarray(release.upper, float) - plan.origin,
            plan.origin - np.asarray(release.lower, float),
        )
    for f in np.flatnonzero(reach >= top):
        problems[int(f)] = (
            "top",
            f"released bounds [{release.lower[f]:.4g}, {release.upper[f]:.4g}] "
            f"reach the top of the public grid (at least {top:.3g} from the "
            "origin): the search ran past the data, or upper_limit is too small",
        )
    for f in np.flatnonzero(~(width > floor)):
        problems[int(f)] = (
            "collapsed",
            f"released bounds [{release.lower[f]:.4g}, {release.upper[f]:.4g}] "
            f"collapsed to the bottom of the public grid (width at most "
            f"{floor:.3g}): the feature is clipped to about a constant",
        )
    if release.side_counts is None:
        return problems
    for side, name in ((0, "negative"), (1, "positive")):
        for f in np.flatnonzero(release.searched[side]):
            if int(f) in problems:
                continue
            n_sides = int(release.searched[0, f]) + int(release.searched[1, f])
            count = float(release.side_counts[side, f])
            epsilon_run, _, share = plan.side_run(n_features, n_sides, count)
            noise = 1.0 / ((1.0 - share) * epsilon_run)
            if count < _RELIABLE_SCALES * noise:
                problems[int(f)] = (
                    "noise",
                    f"released count of {name} values (about {count:.0f}) is "
                    f"below {_RELIABLE_SCALES:g} scales of its search's noise "
                    f"({noise:.3g} rows): the bound may cut most of them",
                )
    return problems
