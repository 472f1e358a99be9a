"""Brute-force add/remove sensitivity of every exact statistic behind the
private metrics, on small domains with extreme values."""

import itertools

import numpy as np
import pytest

from skdp.metrics._log_loss import log_loss_sums
from skdp.metrics._regression import regression_sums
from skdp.metrics._tables import contingency_counts, score_histogram_counts

TINY = np.nextafter(0.0, 1.0)  # the smallest subnormal
BIG = np.finfo(float).max


def _vector(fixed_point):
    return np.array(fixed_point.numerators, dtype=object) * 2.0**fixed_point.exponent


def _worst_change(statistic, domain, max_rows=2):
    """Largest L1 and L2 change of ``statistic`` when one row of ``domain``
    is added to any data set of at most ``max_rows`` rows of it."""
    width = len(domain[0])
    worst_l1 = worst_l2 = 0.0
    for size in range(max_rows + 1):
        for rows in itertools.product(domain, repeat=size):
            base = _vector(statistic(np.array(rows, dtype=object).reshape(size, width)))
            for extra in domain:
                grown = np.array([*rows, extra], dtype=object).reshape(size + 1, width)
                diff = np.abs(np.array(_vector(statistic(grown)) - base, dtype=float))
                worst_l1 = max(worst_l1, float(diff.sum()))
                worst_l2 = max(worst_l2, float(np.sqrt((diff**2).sum())))
    return worst_l1, worst_l2


def test_contingency_table_moves_by_one_cell():
    labels = np.array([0, 1, 2])
    domain = [(t, p) for t in (0, 1, 2) for p in (0, 1, 2)]
    l1, l2 = _worst_change(lambda r: contingency_counts(r, labels), domain)
    assert (l1, l2) == (1.0, 1.0)


def test_score_histograms_move_by_one_bin():
    edges = np.linspace(0.0, 1.0, 4)
    scores = (-BIG, -1.0, 0.0, TINY, 1 / 3, 0.5, 1.0, 2.0, BIG)
    domain = [(label, s) for label in (0.0, 1.0) for s in scores]
    statistic = lambda r: score_histogram_counts(r.astype(float), 1.0, edges)  # noqa: E731
    assert _worst_change(statistic, domain, max_rows=1) == (1.0, 1.0)


@pytest.mark.parametrize(
    "columns", [("abs",), ("y", "abs"), ("y", "e"), ("y", "e", "abs")]
)
@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-1e300, 1e300), (0.0, 4 * TINY)])
def test_regression_sums_move_by_at_most_one_per_column(columns, bounds):
    lower, upper = bounds
    values = (-BIG, lower, TINY, (lower + upper) / 2, upper, BIG)
    domain = [(y, p) for y in values for p in values]

    def statistic(rows):
        return regression_sums(rows.astype(float), lower, upper, columns)

    l1, l2 = _worst_change(statistic, domain, max_rows=1)
    d = len(columns)
    assert l1 <= d
    assert l2 <= np.sqrt(d) + 1e-12
    assert l1 == pytest.approx(d)  # a row always moves each column by 1


def test_log_loss_sums_move_by_at_most_one():
    domain = [(p,) for p in (0.0, TINY, 1e-15, 0.5, 1.0)]
    l1, l2 = _worst_change(lambda r: log_loss_sums(r.astype(float), 1e-15), domain)
    assert l1 == pytest.approx(1.0) and l2 <= 1.0 + 1e-12
