"""Pure, deterministic sensitivity computations (no noise, no accountant).

Everything here is derived for the add/remove-one-row neighbouring relation
(see ALGORITHMS_ADDREMOVE.md): the lower median's local sensitivity, ``A(x, k)``,
the distance to instability ``D(x, b)`` and the smooth sensitivity; the IQR's
instability distance ``A_j`` over a public log grid; windowed order statistics
for large ``n``; and clipped sums with the 1-sensitive SVT queries for every
candidate bound of a public grid. Inputs are clean float arrays and public
parameters; validation is the calling estimator's job.
"""

from skdp.sensitivity._clipped_sums import lower_clipped_sums, upper_clipped_sums
from skdp.sensitivity._iqr import (
    interquartile_range,
    iqr_instability_distance,
    log_grid_bin,
    log_grid_edges,
    quartile_ranks,
)
from skdp.sensitivity._linear import exact_clipped_gradient_sum, exact_clipped_gram
from skdp.sensitivity._mean import (
    centre_and_radius,
    exact_centred_sums,
    exact_count,
    exact_split_sums,
    float_average_error,
    normalised_centred_sums,
    normalised_split_sums,
)
from skdp.sensitivity._median import (
    median_A,
    median_distance_to_instability,
    median_local_sensitivity,
    median_rank,
    median_smooth_sensitivity,
)
from skdp.sensitivity._moments import (
    exact_histogram_counts,
    exact_moment_sums,
    moments_from_sums,
)
from skdp.sensitivity._order import padded_order_statistics, select_order_statistics
from skdp.sensitivity._soft_counts import soft_counts_above, soft_counts_below

__all__ = [
    "centre_and_radius",
    "exact_centred_sums",
    "exact_clipped_gradient_sum",
    "exact_clipped_gram",
    "exact_count",
    "exact_histogram_counts",
    "exact_moment_sums",
    "exact_split_sums",
    "float_average_error",
    "interquartile_range",
    "iqr_instability_distance",
    "log_grid_bin",
    "log_grid_edges",
    "lower_clipped_sums",
    "median_A",
    "median_distance_to_instability",
    "median_local_sensitivity",
    "median_rank",
    "median_smooth_sensitivity",
    "moments_from_sums",
    "normalised_centred_sums",
    "normalised_split_sums",
    "padded_order_statistics",
    "quartile_ranks",
    "select_order_statistics",
    "soft_counts_above",
    "soft_counts_below",
    "upper_clipped_sums",
]
