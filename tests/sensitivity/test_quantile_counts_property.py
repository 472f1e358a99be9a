"""Cell counts against their definition on arbitrary doubles (review).

:func:`candidate_cell_counts` guesses each row's cell by interpolation and
checks it; whatever the candidates (uneven, repeated, subnormal, at the float
limit, signed zeros), each row must land in cell ``2 l + [x = c_l]`` with
``l = #{c < x}`` counted by brute force on the clipped row, and the scores
must be those of the sorted path bit for bit.
"""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skdp.sensitivity._quantile import (
    candidate_cell_counts,
    candidate_rank_scores,
    scores_from_cell_counts,
)
from skdp.stats._quantile_release import (
    candidate_grid,
    sorted_clipped_column,
)

BIG = np.finfo(np.float64).max
SPECIAL = [
    0.0,
    -0.0,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    BIG,
    -BIG,
    1.0,
    -1.0,
    2.0**53,
    2.0**53 + 2,
    0.1,
    0.3,
]
doubles = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(SPECIAL)
)


@st.composite
def columns(draw):
    if draw(st.booleans()):  # the estimators' default: an even grid
        a, b = sorted([draw(doubles), draw(doubles)])
        m = draw(st.integers(1, 40))
        candidates = candidate_grid(m, np.array([a]), np.array([b]))[:, 0]
    else:
        candidates = np.sort(np.array(draw(st.lists(doubles, max_size=10))))
    lower, upper = sorted([draw(doubles), draw(doubles)])
    near = [*candidates, lower, upper]
    values = draw(st.lists(st.one_of(doubles, st.sampled_from(near)), max_size=40))
    return np.array(values, dtype=np.float64), candidates, lower, upper


def cells_by_definition(column, candidates):
    counts = np.zeros(2 * candidates.size + 1, dtype=np.int64)
    for x in column:
        below = int(np.count_nonzero(candidates < x))
        on = below < candidates.size and candidates[below] == x
        counts[2 * below + on] += 1
    return counts


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(columns(), st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0]))
def test_cell_counts_are_the_counts_of_their_definition(column, q):
    values, candidates, lower, upper = column
    with np.errstate(all="ignore"):  # the default grid at the float limit
        counts = candidate_cell_counts(values, candidates, lower, upper)
    clipped = sorted_clipped_column(values, lower, upper)
    np.testing.assert_array_equal(counts, cells_by_definition(clipped, candidates))
    if candidates.size:
        scores = scores_from_cell_counts(counts, candidates, q)
        sorted_scores = candidate_rank_scores(clipped, candidates, q)
        assert scores.tobytes() == sorted_scores.tobytes()
