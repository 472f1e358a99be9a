"""The nearest point of a public grid by exact rational distances: the
oracle of the joint quantiles' snapping (``RelativeGrid.nearest_index``)."""

from fractions import Fraction

import numpy as np


def nearest_grid_index(grid, values):
    """Grid index of the point nearest each value (clipped to the grid).

    The bracketing points come from ``grid.locate`` (checked against the
    points themselves elsewhere); the distances to both are exact
    fractions; a value halfway goes to the even index.
    """
    low, high = grid.points(np.array([grid.first, grid.last]))
    clipped = np.clip(np.asarray(values, dtype=float), low, high)
    floor = grid.locate(clipped)[0]
    nearest = []
    for v, i in zip(clipped.tolist(), floor.tolist(), strict=True):
        below = float(grid.points(np.array([i]))[0])
        if below == v:
            nearest.append(i)
            continue
        above = float(grid.points(np.array([i + 1]))[0])
        down, up = Fraction(v) - Fraction(below), Fraction(above) - Fraction(v)
        nearest.append(i + 1 if up < down or (up == down and i % 2 == 1) else i)
    return np.array(nearest, dtype=np.int64)


def snapped(grid, values):
    """Each value moved to its nearest grid point (the oracle's)."""
    return grid.points(nearest_grid_index(grid, values))
