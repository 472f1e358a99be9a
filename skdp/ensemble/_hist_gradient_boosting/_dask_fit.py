"""The boosting's fit on Dask input: bins released from exact per-block
counts, then the rows' bin codes gathered into memory.

The rounds read every row again at every level of every tree, with the
gradients of the rounds before, so they run in memory. What they read is
only each row's bin codes (one byte per feature up to 256 bins) and its
target, so on Dask input the blocks are reduced to those where they live:

1. Before the charge, as in memory, from public parameters only: the
   schema (:func:`~skdp.utils._dask_xy.validate_dask_xy`), the public
   ``classes`` of a classifier (required: a private label release has no
   Dask path), the plan and its refusals. ``sample_weight`` and ``groups``
   are refused on Dask input before the charge.
2. Private bins (``feature_bounds=None``): the exact cell counts of every
   block (int64, :func:`~.binning.cell_counts`) are added up
   (:func:`~skdp.utils._dask.row_statistic`): the in-memory integers, so
   the same seed releases the same bins (:func:`~.binning.bins_of_counts`).
3. Each block is mapped to its bin codes and targets on the cluster and
   those are gathered, in block order, into the calling process
   (:func:`gather_codes`); the in-memory rounds then run on them.

Every block goes through the Dask rule of :mod:`skdp.utils._dask` (a row
with a NaN, or whose label is not one of ``classes``, is dropped; ``±inf``
becomes ``±`` the largest double); finite rows give exactly the in-memory
codes. A computation that fails raises the fixed ``RuntimeError`` of
:func:`~skdp.utils._dask.row_statistic`, the charge kept.
"""

import numpy as np

from skdp.ensemble._hist_gradient_boosting._plan import (
    check_plan,
    planned_trees,
)
from skdp.ensemble._hist_gradient_boosting._regressor_fit import (
    charge_regressor_plan,
    set_regressor_fitted,
)
from skdp.ensemble._hist_gradient_boosting._settings import resolved_setting
from skdp.ensemble._hist_gradient_boosting.binning import bins_of_counts, cell_counts
from skdp.ensemble._hist_gradient_boosting.loss import (
    BinaryLogistic,
    MultinomialLogistic,
    SquaredError,
    scaled_targets,
)
from skdp.linear_model._release import gaussian_fit_cost
from skdp.mechanisms import check_random_source
from skdp.mechanisms._labels import LabelPlan
from skdp.utils._dask import (
    COMPUTE_FAILED,
    _block_rows,
    finite_rows,
    row_statistic,
)
from skdp.utils._dask_xy import public_dask_classes, validate_dask_xy
from skdp.utils._sample_weight import check_row_weights
from skdp.utils._warnings import silenced

__all__ = [
    "fit_dask_classifier",
    "fit_dask_regressor",
    "gather_codes",
    "joined_cell_counts",
]


def _kept(rows, max_code):
    """The joined rows a fit keeps: all, or (a classifier with more public
    classes than ``max_classes``) those whose class index is below
    ``max_code``, as :func:`~._plan.keep_planned_classes` keeps in memory."""
    return rows if max_code is None else rows[rows[:, -1] < max_code]


def joined_cell_counts(rows, max_code=None):
    """Exact :func:`~.binning.cell_counts` of the features of joined rows
    (the target last): additive over blocks, for
    :func:`~skdp.utils._dask.row_statistic`."""
    return cell_counts(_kept(rows, max_code)[:, :-1])


def _block_codes(block, mapper, width, max_code):
    """A block's bin codes and targets: the Dask rule, then the mapper.
    Total: never raises or warns, whatever the block holds."""
    with silenced():
        rows = _kept(finite_rows(_block_rows(block, width)), max_code)
        return mapper.transform(rows[:, :-1]), rows[:, -1].copy()


def gather_codes(data, mapper, max_code=None):
    """The bin codes (Fortran order, as :meth:`~.binning.BinMapper.transform`)
    and targets of every row of the joined Dask rows ``data``, in block
    order, in memory: ``n * d`` bytes of codes (up to 256 bins) and ``8 n``
    of targets, an eighth of a float64 ``X``."""
    import dask  # only here: an optional dependency

    blocks = data.rows.to_delayed()[:, 0]  # whole rows: one column block
    tasks = [
        dask.delayed(_block_codes)(block, mapper, data.n_features, max_code)
        for block in blocks
    ]
    failed = False
    with silenced():
        try:
            parts = list(dask.compute(*tasks))
        except Exception:
            failed = True
    if failed:  # raised here, outside the handler: no chained cause either
        raise RuntimeError(COMPUTE_FAILED)
    n = sum(codes.shape[0] for codes, _ in parts)
    binned = np.empty((n, data.n_features - 1), dtype=parts[0][0].dtype, order="F")
    target = np.empty(n)
    at = 0
    for i, (codes, values) in enumerate(parts):
        binned[at : at + codes.shape[0]] = codes
        target[at : at + codes.shape[0]] = values
        at += codes.shape[0]
        parts[i] = None  # one block's copy at a time, not all of them
    return binned, target


def _binned(estimator, data, mapper, multipliers, source, max_code=None):
    """The mapper (public, or private bins from the blocks' exact cell
    counts with the first multiplier), the gathered codes and targets, and
    the multipliers left."""
    private = mapper is None
    if private:
        counts = row_statistic(data, joined_cell_counts, max_code)
        bins = resolved_setting(estimator, "max_bins")
        mapper = bins_of_counts(counts, multipliers[0], bins, source)
        multipliers = multipliers[1:]
    binned, target = gather_codes(data, mapper, max_code)
    if private:  # set once nothing can fail: a failed fit leaves no flag behind
        estimator._bins_collapsed = bool(np.all(mapper.n_bins == 1))  # released
    return mapper, binned, target, multipliers


def fit_dask_classifier(estimator, X, y, sample_weight, groups):
    """:meth:`PrivateHistGradientBoostingClassifier.fit` on Dask input (the
    public ``classes`` required); the same plan, charge and releases as in
    memory."""
    name = type(estimator).__name__
    classes = public_dask_classes(estimator.classes, name)
    data = validate_dask_xy(estimator, X, y, classes=classes)
    check_row_weights(estimator, sample_weight, data)  # refused on Dask
    labels, (epsilon, delta) = LabelPlan.from_estimator(
        estimator.classes, estimator.epsilon, estimator.delta, classes[:0], name
    )
    n, d = data.n_samples, data.n_features - 1
    mapper, extra = estimator._bin_plan(d)
    k = planned_trees(labels.classes, estimator.max_classes)
    unit = estimator._privacy_unit(groups, data)  # groups refused on Dask
    multipliers = estimator._multipliers(name, d, k, epsilon, delta, extra, unit)
    check_plan(
        estimator, name, (n, d), multipliers, len(extra) + 1, k, BinaryLogistic()
    )
    source = check_random_source(estimator.random_state)
    cost = (unit.label("boosted trees"), gaussian_fit_cost(epsilon, delta))
    estimator._charge([*labels.cost_items(), cost], unit=unit)

    kept = labels.classes[: estimator.max_classes]  # keep_planned_classes
    max_code = kept.size if kept.size < labels.classes.size else None
    loss = BinaryLogistic() if kept.size == 2 else MultinomialLogistic(kept.size)
    with np.errstate(all="ignore"):  # nothing data-dependent may warn now
        mapper, binned, codes, multipliers = _binned(
            estimator, data, mapper, multipliers, source, max_code
        )
        estimator._bin_mapper = mapper
        estimator._boost(binned, codes.astype(np.intp), loss, multipliers, source)
    estimator.classes_ = kept
    estimator._finish_fit(loss.n_trees_per_iteration)
    return estimator


def fit_dask_regressor(estimator, X, y, sample_weight, groups):
    """:meth:`PrivateHistGradientBoostingRegressor.fit` on Dask input; the
    same plan, charge and releases as in memory (the private target range
    from the blocks' exact histogram counts)."""
    data = validate_dask_xy(estimator, X, y)
    check_row_weights(estimator, sample_weight, data)  # refused on Dask
    shape = (data.n_samples, data.n_features - 1)
    plan = charge_regressor_plan(estimator, shape, groups, data)  # groups refused

    with np.errstate(all="ignore"):  # nothing data-dependent may warn now
        name = type(estimator).__name__
        (low, high), multipliers = plan.target_range(data, name)
        mapper, binned, y, multipliers = _binned(
            estimator, data, plan.mapper, multipliers, plan.source
        )
        estimator._bin_mapper = mapper
        z, mid, half = scaled_targets(y, low, high)
        estimator._boost(binned, z, SquaredError(), multipliers, plan.source)
    set_regressor_fitted(estimator, (low, high), mid, half)
    return estimator
